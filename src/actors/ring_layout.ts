// Shared-memory layout of the SPSC ring (ring_buffer.ts): the one source of truth for header slot
// offsets, frame format and size limits. native/src/layout.rs mirrors these numbers and a test
// compares the two; change both together and bump RING_LAYOUT_VERSION.
// Thread: constants only; imported by the network thread, shard workers and the layout checks.
//
//   SharedArrayBuffer = [ header: RING_HEADER_BYTES | data: capacity bytes (power of two) ]
//
// The header is Int32 slots grouped into 128-byte lines by writer, so the producer's and the
// consumer's per-message stores never share a cache line (128, not 64: adjacent-line
// prefetchers pull 64-byte lines in pairs).
//   [  0,128) written once by allocate(): magic, layoutVersion, capacityBytes, dataOffsetBytes
//   [128,256) producer writes: tail, messagesWritten, consumerWakeups, producerWaits
//   [256,384) consumer writes: head, messagesRead, producerWakeups, consumerWaits
//   [384,512) written around sleeps only: consumerWaiting (consumer sets, producer clears),
//             producerWaiting (producer sets, consumer clears)
//
// head and tail are byte counters modulo 2^32 stored as Int32. Capacity divides 2^32 and
// used = tail - head never exceeds capacity <= 2^30, so the wrapped difference (tail - head) | 0
// is exact and position = counter & (capacity - 1) is the byte offset in the data region.
//
// A wide counter (statistics) takes WIDE_COUNTER_BYTES: lo, hi (value = hi * 2^32 + lo, both
// unsigned) and seq. Its single writer stores lo on every increment; only when lo wraps to 0 it
// bumps seq to odd, stores lo then hi, and bumps seq to even, so a reader that sees the same even
// seq before and after reading hi and lo has a consistent pair.
//
// Data region: frames, each starting at a multiple of FRAME_ALIGN_BYTES and never wrapping:
//   [length u32][sequence u32][payload: length bytes][zero to 7 bytes up to the next frame]
// sequence is the message number modulo 2^32 (the consumer checks it). A length equal to
// FRAME_PAD_MARKER means "the rest of the data region is padding; the next frame is at 0". All
// multi-byte values are in platform byte order (little-endian on every supported target).

/** Byte offsets of the header slots; the Rust mirror declares the same numbers. */
export const RingHeaderByteOffset = {
  magic: 0,
  layoutVersion: 4,
  capacityBytes: 8,
  dataOffsetBytes: 12,

  tail: 128,
  messagesWritten: 132,
  consumerWakeups: 144,
  producerWaits: 156,

  head: 256,
  messagesRead: 260,
  producerWakeups: 272,
  consumerWaits: 284,

  consumerWaiting: 384,
  producerWaiting: 388,
} as const;

export type RingHeaderSlotName = keyof typeof RingHeaderByteOffset;

/** Int32Array indices of the header slots (byte offset / 4). */
export const RingHeaderSlot: { readonly [K in RingHeaderSlotName]: number } = Object.freeze(
  Object.fromEntries(
    Object.entries(RingHeaderByteOffset).map(([name, offset]) => [name, offset / Int32Array.BYTES_PER_ELEMENT]),
  ) as { [K in RingHeaderSlotName]: number },
);

/** Slots that are wide counters (three consecutive Int32 slots: lo, hi, seq). */
export const RING_WIDE_COUNTERS = [
  'messagesWritten',
  'consumerWakeups',
  'producerWaits',
  'messagesRead',
  'producerWakeups',
  'consumerWaits',
] as const satisfies readonly RingHeaderSlotName[];

/** Byte offsets inside a wide counter. */
export const WideCounterByteOffset = { lo: 0, hi: 4, seq: 8 } as const;
export const WIDE_COUNTER_BYTES = 12;

export const RING_MAGIC = 0x534c5247; // "SLRG"
export const RING_LAYOUT_VERSION = 1;
export const RING_HEADER_LINE_BYTES = 128;
export const RING_HEADER_BYTES = 512;
export const RING_DATA_OFFSET_BYTES = RING_HEADER_BYTES;

export const RING_CAPACITY_BYTES_MIN = 64 * 1024;
/** Keeps used <= capacity < 2^31, which the wrapped-counter arithmetic above relies on. */
export const MAX_RING_CAPACITY_BYTES = 1024 * 1024 * 1024;

/** Values of consumerWaiting / producerWaiting. */
export const RingWaitFlag = { idle: 0, waiting: 1 } as const;

/** Byte offsets inside a frame header. */
export const FrameByteOffset = { length: 0, sequence: 4 } as const;
export const FRAME_HEADER_BYTES = 8;
export const FRAME_ALIGN_BYTES = 8;
/** Length value of a pad frame (0xFFFFFFFF; -1 when read through an Int32Array). */
export const FRAME_PAD_MARKER = 0xffffffff;

/** Bytes a frame carrying `payloadBytes` occupies: header plus payload, rounded up to 8. */
export function frameBytes(payloadBytes: number): number {
  return (FRAME_HEADER_BYTES + payloadBytes + FRAME_ALIGN_BYTES - 1) & -FRAME_ALIGN_BYTES;
}

/**
 * Largest payload that always fits: a frame of at most capacity / 2 bytes fits in an empty ring
 * at any head position (either before the end of the data region or, after padding, at 0).
 */
export function maxMessageBytesFor(capacityBytes: number): number {
  return capacityBytes / 2 - FRAME_HEADER_BYTES;
}
