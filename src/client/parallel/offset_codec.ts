// Commit-metadata codec for the parallel consumer: which offsets above the committed watermark
// are already complete, so a restarted consumer skips work that was done but not contiguous.
// Runs on the consumer's thread; pure functions (no I/O).
//
// Format. The metadata string is "sl:" + base64url (no padding) of this payload:
//   u8      format: 1 = run lengths, 2 = bitmap
//   varint  base: the committed offset the payload is relative to (unsigned LEB128)
//   format 1: varint n (even, ≥ 2), then n varint run lengths (each ≥ 1), alternating
//             incomplete, complete, …, complete, covering offsets base .. base+Σ-1
//   format 2: varint span (≥ 2), then ⌈span/8⌉ bytes; bit i (LSB first) set = offset base+i is
//             complete; bit 0 is clear (the base is the lowest incomplete offset), bit span-1
//             is set, padding bits are clear
//   u32 BE  CRC-32C of every byte before it
// Offsets at or past the covered span are incomplete. An empty string (Kafka's default) means
// nothing above the watermark is complete. The encoder writes whichever format is shorter, so a
// span's encoding never exceeds the bitmap's size, which depends only on base and span: the
// window rule (window.ts) builds on that bound. The text is ASCII, so Kafka's
// offset.metadata.max.bytes (4096 by default, compared against the string's length) applies to
// exactly `encodedLength` characters.
// Invariants: decode never throws; it accepts only canonical payloads (exact base64url, valid
// CRC, the base it is told to expect, no trailing bytes) and returns null for anything else, so
// a foreign or corrupt string means "skip nothing", never a wrong skip. Decoding work is bounded
// by the input's length.

import { crc32c } from '../../protocol/record_batch.js';

const PREFIX = 'sl:';
const FORMAT_RUNS = 1;
const FORMAT_BITMAP = 2;
const CRC_BYTES = 4;
/** Bound on metadata we try to decode; Kafka's default limit is 4096. */
const MAX_DECODE_CHARS = 1 << 20;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Complete offsets above a committed watermark, as decoded from commit metadata. */
export class CompletedOffsets {
  /** First offset past the covered span; offsets ≥ end are incomplete. */
  readonly end: number;
  /** Offsets marked complete. */
  readonly count: number;
  private readonly starts: number[];
  private cursor = 0;

  /** `runs` alternate incomplete, complete, … starting at `base` (see the file header). */
  constructor(
    readonly base: number,
    readonly runs: readonly number[],
  ) {
    this.starts = new Array<number>(runs.length);
    let at = base;
    let complete = 0;
    for (let i = 0; i < runs.length; i++) {
      this.starts[i] = at;
      at += runs[i] as number;
      if (i % 2 === 1) complete += runs[i] as number;
    }
    this.end = at;
    this.count = complete;
  }

  /** Whether `offset` was complete. O(1) for ascending queries (fetch order), O(log runs) otherwise. */
  has(offset: number): boolean {
    if (offset < this.base || offset >= this.end) return false;
    let run = this.cursor;
    if ((this.starts[run] as number) > offset) return this.search(offset);
    // Fetch order moves forward a run or two at a time; a longer jump searches instead.
    for (let steps = 0; run + 1 < this.starts.length && (this.starts[run + 1] as number) <= offset; steps++) {
      if (steps === 4) return this.search(offset);
      run++;
    }
    this.cursor = run;
    return run % 2 === 1;
  }

  /** The lowest offset ≥ `offset` not marked complete. */
  nextIncomplete(offset: number): number {
    if (!this.has(offset)) return offset;
    return (this.starts[this.cursor] as number) + (this.runs[this.cursor] as number);
  }

  private search(offset: number): boolean {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if ((this.starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    this.cursor = low;
    return low % 2 === 1;
  }
}

export function varintLength(value: number): number {
  let length = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

function base64urlLength(bytes: number): number {
  return Math.floor(bytes / 3) * 4 + [0, 2, 3][bytes % 3]!;
}

/** Characters of the bitmap encoding of `span` offsets above `base`: the worst case for that span. */
export function bitmapEncodedLength(base: number, span: number): number {
  return encodedLengthOfPayload(1 + varintLength(base) + varintLength(span) + Math.ceil(span / 8) + CRC_BYTES);
}

/** Characters of an encoding whose payload is `payloadBytes` long. */
export function encodedLengthOfPayload(payloadBytes: number): number {
  return PREFIX.length + base64urlLength(payloadBytes);
}

/** Payload bytes of the run-length encoding of `runs` above `base`. */
export function runsPayloadLength(base: number, runs: readonly number[]): number {
  let length = 1 + varintLength(base) + varintLength(runs.length) + CRC_BYTES;
  for (let i = 0; i < runs.length; i++) length += varintLength(runs[i] as number);
  return length;
}

/**
 * Encodes `runs` (alternating incomplete, complete, … complete; see WatermarkTracker's
 * completionRuns) above `base`. Returns null when the shortest encoding is longer than
 * `budgetChars`; '' when nothing is complete.
 */
export function encodeOffsetMetadata(base: number, runs: readonly number[], budgetChars: number): string | null {
  if (!Number.isSafeInteger(base) || base < 0) throw new RangeError(`bad base offset ${base}`);
  if (runs.length % 2 !== 0) throw new RangeError('runs must end with a complete run');
  if (runs.length === 0) return '';
  let span = 0;
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i] as number;
    if (!Number.isSafeInteger(run) || run < 1) throw new RangeError(`bad run length ${run}`);
    span += run;
  }
  if (!Number.isSafeInteger(base + span)) throw new RangeError('runs pass the largest offset');
  const runsBytes = runsPayloadLength(base, runs);
  const bitmapBytes = 1 + varintLength(base) + varintLength(span) + Math.ceil(span / 8) + CRC_BYTES;
  const useRuns = runsBytes <= bitmapBytes;
  if (encodedLengthOfPayload(useRuns ? runsBytes : bitmapBytes) > budgetChars) return null;
  const payload = Buffer.alloc(useRuns ? runsBytes : bitmapBytes);
  payload[0] = useRuns ? FORMAT_RUNS : FORMAT_BITMAP;
  let at = writeVarint(payload, 1, base);
  if (useRuns) {
    at = writeVarint(payload, at, runs.length);
    for (let i = 0; i < runs.length; i++) at = writeVarint(payload, at, runs[i] as number);
  } else {
    at = writeVarint(payload, at, span);
    at = writeBitmap(payload, at, runs);
  }
  payload.writeUInt32BE(crc32c(payload.subarray(0, at)), at);
  return PREFIX + payload.toString('base64url');
}

function writeVarint(buf: Buffer, at: number, value: number): number {
  while (value >= 128) {
    buf[at++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  buf[at++] = value;
  return at;
}

function writeBitmap(buf: Buffer, at: number, runs: readonly number[]): number {
  let bit = 0;
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i] as number;
    if (i % 2 === 1) for (let b = bit; b < bit + run; b++) buf[at + (b >>> 3)]! |= 1 << (b & 7);
    bit += run;
  }
  return at + Math.ceil(bit / 8);
}

/**
 * Decodes commit metadata written by encodeOffsetMetadata for a commit at `committedOffset`.
 * '' or null: nothing complete. Anything foreign, corrupt or written for another offset: null.
 */
export function decodeOffsetMetadata(metadata: string | null, committedOffset: number): CompletedOffsets | null {
  if (metadata === null || metadata === '') return new CompletedOffsets(committedOffset, []);
  if (metadata.length > MAX_DECODE_CHARS || !metadata.startsWith(PREFIX)) return null;
  const text = metadata.slice(PREFIX.length);
  if (!BASE64URL.test(text)) return null;
  const payload = Buffer.from(text, 'base64url');
  if (payload.toString('base64url') !== text || payload.length < 2 + 1 + CRC_BYTES) return null;
  const bodyEnd = payload.length - CRC_BYTES;
  if (crc32c(payload.subarray(0, bodyEnd)) !== payload.readUInt32BE(bodyEnd)) return null;
  const reader = new VarintReader(payload, 1, bodyEnd);
  const base = reader.next();
  if (base !== committedOffset) return null;
  const runs = payload[0] === FORMAT_RUNS ? readRuns(reader) : payload[0] === FORMAT_BITMAP ? readBitmap(reader) : null;
  if (runs === null || reader.at !== bodyEnd) return null;
  let end = base;
  for (const run of runs) end += run;
  return Number.isSafeInteger(end) ? new CompletedOffsets(base, runs) : null;
}

/** Reads unsigned LEB128 varints; a malformed one (truncated, > 2^53) reads as -1. */
class VarintReader {
  constructor(
    private readonly buf: Buffer,
    public at: number,
    private readonly end: number,
  ) {}

  next(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8 && this.at < this.end; i++) {
      const byte = this.buf[this.at++] as number;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return Number.isSafeInteger(value) && (byte !== 0 || i === 0) ? value : -1;
      scale *= 128;
    }
    return -1;
  }

  remaining(): number {
    return this.end - this.at;
  }

  take(length: number): Buffer {
    this.at += length;
    return this.buf.subarray(this.at - length, this.at);
  }
}

function readRuns(reader: VarintReader): number[] | null {
  const count = reader.next();
  // Each run takes at least one byte, which bounds the allocation by the input.
  if (count < 2 || count % 2 !== 0 || count > reader.remaining()) return null;
  const runs = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const run = reader.next();
    if (run < 1) return null;
    runs[i] = run;
  }
  return runs;
}

function readBitmap(reader: VarintReader): number[] | null {
  const span = reader.next();
  if (span < 2 || Math.ceil(span / 8) !== reader.remaining()) return null;
  const bits = reader.take(Math.ceil(span / 8));
  const bit = (i: number): number => ((bits[i >>> 3] as number) >>> (i & 7)) & 1;
  if (bit(0) !== 0 || bit(span - 1) !== 1) return null;
  for (let i = span; i < bits.length * 8; i++) if (bit(i) !== 0) return null;
  const runs: number[] = [];
  let runStart = 0;
  for (let i = 1; i < span; i++) {
    if (bit(i) === bit(i - 1)) continue;
    runs.push(i - runStart);
    runStart = i;
  }
  runs.push(span - runStart);
  return runs;
}
