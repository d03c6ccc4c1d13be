// SpscRing: a bounded single-producer/single-consumer byte ring in one SharedArrayBuffer; the data
// path between the network thread and each shard worker (one ring per direction). Layout, frame
// format and counter arithmetic are defined in ring_layout.ts.
// Threads: exactly one thread calls the producer methods and exactly one (another) the consumer
// methods; each constructs its own SpscRing over the same SharedArrayBuffer, with its end of the
// ring's doorbell (ring_doorbell.ts). stats() from either.
// Invariants: 0 <= tail - head <= capacity; frames never wrap; bytes in [head, tail) are only
// written by the producer before the tail store that publishes them, and only read by the
// consumer before the head store that frees them. Reserve/publish/peek/release allocate nothing.
//
// Memory ordering: frame headers and payloads are plain writes followed by Atomics.store(tail);
// the consumer reads them only after an Atomics.load(tail) that saw that store, which makes them
// visible (JS atomics are sequentially consistent). Symmetrically for head and freed space.
//
// Sleeping without lost wake-ups (consumer shown; the producer waiting for space is the mirror
// image with head, producerWaiting and release()):
//   consumer (waitForData)                 producer (publish)
//   1. store consumerWaiting = 1           a. store tail = t'
//   2. t = load tail; if t != head: done   b. if load consumerWaiting == 1 and
//   3. wait for the doorbell's data ring      compareExchange(consumerWaiting, 1 -> 0) == 1:
//   4. on wake: store consumerWaiting = 0        ring the doorbell (data)
// In the single total order of these atomics, either (b) precedes (1), so (a) precedes (2) and
// the consumer sees the data and does not sleep, or (1) precedes (b), so the producer sees the
// flag (or an earlier publish already claimed it and rings). A ring cannot slip in between (2) and
// (3): both run in one task, and a port message is delivered in a later one, to the waiter (3)
// registered. The compareExchange lets exactly one publish per arming pay for a ring; a busy
// consumer (flag 0) costs the producer one load per publish and no ring. A late ring can end a
// later sleep early, so callers always re-check with peek() / reserve().
// Nothing blocks (no Atomics.wait), so both sides may be the main thread. A pending wait does not
// keep Node's event loop alive (the ports are unref'd); the thread needs another handle.
import {
  FRAME_HEADER_BYTES,
  FRAME_PAD_MARKER,
  FrameByteOffset,
  MAX_RING_CAPACITY_BYTES,
  RING_CAPACITY_BYTES_MIN,
  RING_DATA_OFFSET_BYTES,
  RING_HEADER_BYTES,
  RING_LAYOUT_VERSION,
  RING_MAGIC,
  RingHeaderSlot,
  RingWaitFlag,
  WideCounterByteOffset,
  frameBytes,
  maxMessageBytesFor,
} from './ring_layout.js';
import { RingSignal, type RingDoorbell } from './ring_doorbell.js';

const MAGIC = RingHeaderSlot.magic;
const LAYOUT_VERSION = RingHeaderSlot.layoutVersion;
const CAPACITY = RingHeaderSlot.capacityBytes;
const DATA_OFFSET = RingHeaderSlot.dataOffsetBytes;
const TAIL = RingHeaderSlot.tail;
const HEAD = RingHeaderSlot.head;
const MESSAGES_WRITTEN = RingHeaderSlot.messagesWritten;
const MESSAGES_READ = RingHeaderSlot.messagesRead;
const CONSUMER_WAKEUPS = RingHeaderSlot.consumerWakeups;
const PRODUCER_WAKEUPS = RingHeaderSlot.producerWakeups;
const CONSUMER_WAITS = RingHeaderSlot.consumerWaits;
const PRODUCER_WAITS = RingHeaderSlot.producerWaits;
const CONSUMER_WAITING = RingHeaderSlot.consumerWaiting;
const PRODUCER_WAITING = RingHeaderSlot.producerWaiting;

const COUNTER_LO = WideCounterByteOffset.lo >> 2;
const COUNTER_HI = WideCounterByteOffset.hi >> 2;
const COUNTER_SEQ = WideCounterByteOffset.seq >> 2;
const TWO_POW_32 = 2 ** 32;
/** A wide-counter writer is mid-update for four stores; retries beyond this mean it died there. */
const MAX_COUNTER_READ_ATTEMPTS = 1024;

const FRAME_LENGTH = FrameByteOffset.length >> 2;
const FRAME_SEQUENCE = FrameByteOffset.sequence >> 2;
const PAD_MARKER_INT32 = FRAME_PAD_MARKER | 0;

const RESOLVED: Promise<void> = Promise.resolve();

export interface RingStats {
  capacity: number;
  /** Bytes between head and tail, framing and padding included. */
  usedBytes: number;
  messagesWritten: number;
  messagesRead: number;
  /** Doorbell rings publish() sent to a sleeping consumer. */
  consumerWakeups: number;
  /** Doorbell rings release() sent to a sleeping producer. */
  producerWakeups: number;
  /** Times the consumer armed its waiting flag in waitForData(); consumerWakeups <= this. */
  consumerWaits: number;
  /** Times the producer armed its waiting flag in waitForSpace(); producerWakeups <= this. */
  producerWaits: number;
}

export class SpscRing {
  /** Allocates header + data in one SharedArrayBuffer, header initialised, ring empty. */
  static allocate(capacityBytes: number): SharedArrayBuffer {
    checkCapacity(capacityBytes);
    const sab = new SharedArrayBuffer(RING_DATA_OFFSET_BYTES + capacityBytes);
    const header = new Int32Array(sab, 0, RING_HEADER_BYTES >> 2);
    header[MAGIC] = RING_MAGIC;
    header[LAYOUT_VERSION] = RING_LAYOUT_VERSION;
    header[CAPACITY] = capacityBytes;
    header[DATA_OFFSET] = RING_DATA_OFFSET_BYTES;
    return sab;
  }

  readonly capacity: number;
  /** View over the data region; reserve() and peek() return offsets into it. */
  readonly bytes: Buffer;
  /** Largest payload reserve() accepts; it always fits once the ring drains. */
  readonly maxMessageBytes: number;

  private readonly header: Int32Array;
  /** The data region as Int32, for frame headers (frames start at multiples of 8). */
  private readonly frames: Int32Array;
  private readonly mask: number;
  private readonly dataSleeper: Sleeper;
  private readonly spaceSleeper: Sleeper;

  // Producer state. headSeen: head as last loaded; it only lags, so it underestimates free space.
  private tail: number;
  private headSeen: number;
  private messagesWritten: number;
  private consumerWakeups: number;
  private reservedStart = -1;
  private reservedLength = -1;
  private reservedPadBytes = 0;

  // Consumer state. tailSeen: tail as last loaded; it only lags, so it underestimates data.
  private head: number;
  private tailSeen: number;
  private messagesRead: number;
  private producerWakeups: number;
  private peekedOffset = -1;
  private peekedAdvance = 0;
  private peekedLength = 0;

  constructor(sab: SharedArrayBuffer, private readonly doorbell: RingDoorbell) {
    const header = new Int32Array(sab, 0, RING_HEADER_BYTES >> 2);
    const capacity = header[CAPACITY]!;
    if (header[MAGIC] !== RING_MAGIC || header[LAYOUT_VERSION] !== RING_LAYOUT_VERSION) {
      throw new TypeError('SpscRing: buffer was not made by SpscRing.allocate() of this layout version');
    }
    checkCapacity(capacity);
    if (sab.byteLength !== RING_DATA_OFFSET_BYTES + capacity) {
      throw new RangeError(`SpscRing: buffer is ${sab.byteLength} bytes, header says ${capacity} + header`);
    }
    this.header = header;
    this.capacity = capacity;
    this.mask = capacity - 1;
    this.maxMessageBytes = maxMessageBytesFor(capacity);
    this.bytes = Buffer.from(sab, RING_DATA_OFFSET_BYTES, capacity);
    this.frames = new Int32Array(sab, RING_DATA_OFFSET_BYTES, capacity >> 2);
    this.tail = Atomics.load(header, TAIL);
    this.headSeen = Atomics.load(header, HEAD);
    this.head = this.headSeen;
    this.tailSeen = this.tail;
    this.messagesWritten = loadWideCounter(header, MESSAGES_WRITTEN);
    this.messagesRead = loadWideCounter(header, MESSAGES_READ);
    this.consumerWakeups = loadWideCounter(header, CONSUMER_WAKEUPS);
    this.producerWakeups = loadWideCounter(header, PRODUCER_WAKEUPS);
    this.dataSleeper = new Sleeper(header, doorbell, RingSignal.data, CONSUMER_WAITING, TAIL, CONSUMER_WAITS);
    this.spaceSleeper = new Sleeper(header, doorbell, RingSignal.space, PRODUCER_WAITING, HEAD, PRODUCER_WAITS);
  }

  // ---- producer side ----

  /**
   * Reserves `length` contiguous payload bytes and returns their offset in `bytes` (a multiple of
   * 8), or -1 if the ring lacks room now. Nothing is visible to the consumer until publish().
   * Throws RangeError if length is not an integer in [0, maxMessageBytes], Error if a previous
   * reservation is neither published nor cancelled.
   */
  reserve(length: number): number {
    if (!(length >= 0 && length <= this.maxMessageBytes && Math.floor(length) === length)) {
      throw new RangeError(`SpscRing.reserve: length ${length} outside [0, ${this.maxMessageBytes}]`);
    }
    if (this.reservedLength >= 0) throw new Error('SpscRing.reserve: previous reservation not published');
    const recordBytes = frameBytes(length);
    const position = this.tail & this.mask;
    const tailRoomBytes = this.capacity - position;
    const padBytes = tailRoomBytes >= recordBytes ? 0 : tailRoomBytes;
    const neededBytes = padBytes + recordBytes;
    if (this.capacity - ((this.tail - this.headSeen) | 0) < neededBytes) {
      this.headSeen = Atomics.load(this.header, HEAD);
      if (this.capacity - ((this.tail - this.headSeen) | 0) < neededBytes) return -1;
    }
    // The pad frame lies beyond tail, so the consumer cannot see it before publish().
    if (padBytes !== 0) this.frames[position >> 2] = PAD_MARKER_INT32;
    const start = padBytes === 0 ? position : 0;
    this.reservedStart = start;
    this.reservedLength = length;
    this.reservedPadBytes = padBytes;
    return start + FRAME_HEADER_BYTES;
  }

  /**
   * Makes the reserved message visible, optionally shortened to `length` <= the reserved length
   * (for writers that reserve an upper bound). Rings the consumer's doorbell only if it armed its flag.
   */
  publish(length: number = this.reservedLength): void {
    const reserved = this.reservedLength;
    if (reserved < 0) throw new Error('SpscRing.publish: nothing reserved');
    if (!(length >= 0 && length <= reserved && Math.floor(length) === length)) {
      throw new RangeError(`SpscRing.publish: length ${length} outside [0, ${reserved}]`);
    }
    const index = this.reservedStart >> 2;
    this.frames[index + FRAME_LENGTH] = length;
    this.frames[index + FRAME_SEQUENCE] = this.messagesWritten | 0;
    this.reservedLength = -1;
    this.tail = (this.tail + this.reservedPadBytes + frameBytes(length)) | 0;
    // Counted before the tail store so stats() never shows messagesRead > messagesWritten.
    this.messagesWritten += 1;
    storeWideCounter(this.header, MESSAGES_WRITTEN, this.messagesWritten);
    Atomics.store(this.header, TAIL, this.tail);
    if (claimSleeper(this.header, CONSUMER_WAITING)) {
      // Counted before the ring so the woken consumer's stats() already include it.
      this.consumerWakeups += 1;
      storeWideCounter(this.header, CONSUMER_WAKEUPS, this.consumerWakeups);
      this.doorbell.ring(RingSignal.data);
    }
  }

  /** Drops an unpublished reservation (e.g. its writer failed); no-op if there is none. */
  cancel(): void {
    this.reservedLength = -1;
  }

  /**
   * Resolves once the consumer has released anything since the producer last loaded head, i.e.
   * since the reserve() that returned -1 (immediately if it already has). Then retry reserve():
   * one release may not free enough. With `timeoutMs` it also resolves after that long.
   */
  waitForSpace(timeoutMs = Infinity): Promise<void> {
    if (Atomics.load(this.header, HEAD) !== this.headSeen) return RESOLVED;
    return this.spaceSleeper.sleep(this.headSeen, timeoutMs);
  }

  // ---- consumer side ----

  /**
   * Offset in `bytes` of the oldest unreleased message's payload (a multiple of 8), or -1 if the
   * ring is empty; its length is then `lastLength`. Repeated calls return the same message until
   * release(). Throws Error if the frame is corrupt (wrong sequence or length), which means a
   * second producer or a writer outside its reservation.
   */
  peek(): number {
    if (this.peekedAdvance !== 0) return this.peekedOffset;
    const head = this.head;
    if (head === this.tailSeen) {
      this.tailSeen = Atomics.load(this.header, TAIL);
      if (head === this.tailSeen) return -1;
    }
    let position = head & this.mask;
    let padBytes = 0;
    if (this.frames[position >> 2] === PAD_MARKER_INT32) {
      padBytes = this.capacity - position;
      position = 0;
    }
    const index = position >> 2;
    const length = this.frames[index + FRAME_LENGTH]!;
    const advance = padBytes + frameBytes(length);
    if (
      this.frames[index + FRAME_SEQUENCE] !== (this.messagesRead | 0) ||
      !(length >= 0 && length <= this.maxMessageBytes && advance <= ((this.tailSeen - head) | 0))
    ) {
      throw new Error(`SpscRing.peek: corrupt frame at ${position} (message ${this.messagesRead})`);
    }
    this.peekedOffset = position + FRAME_HEADER_BYTES;
    this.peekedAdvance = advance;
    this.peekedLength = length;
    return this.peekedOffset;
  }

  /** Payload length of the message returned by the last successful peek(). */
  get lastLength(): number {
    return this.peekedLength;
  }

  /** Frees the message returned by the last peek(); notifies the producer only if it is waiting. */
  release(): void {
    const advance = this.peekedAdvance;
    if (advance === 0) throw new Error('SpscRing.release: nothing peeked');
    this.peekedAdvance = 0;
    this.head = (this.head + advance) | 0;
    this.messagesRead += 1;
    storeWideCounter(this.header, MESSAGES_READ, this.messagesRead);
    Atomics.store(this.header, HEAD, this.head);
    if (claimSleeper(this.header, PRODUCER_WAITING)) {
      this.producerWakeups += 1;
      storeWideCounter(this.header, PRODUCER_WAKEUPS, this.producerWakeups);
      this.doorbell.ring(RingSignal.space);
    }
  }

  /**
   * Resolves when a message is available (immediately if one is). With `timeoutMs` it also
   * resolves after that long, so callers always re-check with peek().
   */
  waitForData(timeoutMs = Infinity): Promise<void> {
    if (this.peekedAdvance !== 0) return RESOLVED;
    const tail = Atomics.load(this.header, TAIL);
    if (tail !== this.head) {
      this.tailSeen = tail;
      return RESOLVED;
    }
    return this.dataSleeper.sleep(tail, timeoutMs);
  }

  // ---- either side ----

  /** Closes this end's doorbell; a wait pending on it never resolves. The shared memory is untouched. */
  close(): void {
    this.doorbell.close();
  }

  stats(): RingStats {
    const header = this.header;
    // messagesRead before messagesWritten and head before tail: each value read second can only
    // have grown, so messagesRead <= messagesWritten and usedBytes >= 0 in every snapshot.
    const messagesRead = loadWideCounter(header, MESSAGES_READ);
    const messagesWritten = loadWideCounter(header, MESSAGES_WRITTEN);
    const head = Atomics.load(header, HEAD);
    const tail = Atomics.load(header, TAIL);
    return {
      capacity: this.capacity,
      // Can exceed capacity only if the producer refilled between the two loads.
      usedBytes: Math.min((tail - head) | 0, this.capacity),
      messagesWritten,
      messagesRead,
      consumerWakeups: loadWideCounter(header, CONSUMER_WAKEUPS),
      producerWakeups: loadWideCounter(header, PRODUCER_WAKEUPS),
      consumerWaits: loadWideCounter(header, CONSUMER_WAITS),
      producerWaits: loadWideCounter(header, PRODUCER_WAITS),
    };
  }
}

/**
 * One side's "announce, re-check, sleep" step (steps 1-4 in the file comment). Holds at most one
 * pending doorbell wait: a second call while asleep returns the same promise, so one ring suffices.
 */
class Sleeper {
  private pending: Promise<void> | null = null;
  private waits: number;

  constructor(
    private readonly header: Int32Array,
    private readonly doorbell: RingDoorbell,
    private readonly signal: RingSignal,
    private readonly flagSlot: number,
    private readonly watchedSlot: number,
    private readonly waitsSlot: number,
  ) {
    this.waits = loadWideCounter(header, waitsSlot);
  }

  /** Sleeps until the watched slot differs from `expected` (or timeoutMs passes). */
  sleep(expected: number, timeoutMs: number): Promise<void> {
    if (this.pending !== null) return this.pending;
    const header = this.header;
    this.waits += 1;
    storeWideCounter(header, this.waitsSlot, this.waits);
    Atomics.store(header, this.flagSlot, RingWaitFlag.waiting);
    if (Atomics.load(header, this.watchedSlot) !== expected) {
      Atomics.store(header, this.flagSlot, RingWaitFlag.idle);
      return RESOLVED;
    }
    this.pending = this.doorbell.wait(this.signal, timeoutMs).then(this.onWake);
    return this.pending;
  }

  // The ringer already cleared the flag; a timeout (or a late ring) leaves it for us to clear.
  private readonly onWake = (): void => {
    this.pending = null;
    Atomics.store(this.header, this.flagSlot, RingWaitFlag.idle);
  };
}

/**
 * Notifier side of the protocol (step b): true if the other side had armed its flag, which this
 * call disarms, so exactly one notifier per arming goes on to ring. The plain load first keeps
 * the common case (nobody asleep) to one read of a line that is rarely written.
 */
function claimSleeper(header: Int32Array, flagSlot: number): boolean {
  return (
    Atomics.load(header, flagSlot) !== RingWaitFlag.idle &&
    Atomics.compareExchange(header, flagSlot, RingWaitFlag.waiting, RingWaitFlag.idle) === RingWaitFlag.waiting
  );
}

/** Single-writer store of a counter that only ever grows by one (see ring_layout.ts). */
function storeWideCounter(header: Int32Array, slot: number, value: number): void {
  const lo = value | 0;
  if (lo !== 0) {
    Atomics.store(header, slot + COUNTER_LO, lo);
    return;
  }
  Atomics.add(header, slot + COUNTER_SEQ, 1);
  Atomics.store(header, slot + COUNTER_LO, 0);
  Atomics.store(header, slot + COUNTER_HI, value / TWO_POW_32);
  Atomics.add(header, slot + COUNTER_SEQ, 1);
}

function loadWideCounter(header: Int32Array, slot: number): number {
  let value = 0;
  for (let attempt = 0; attempt < MAX_COUNTER_READ_ATTEMPTS; attempt++) {
    const seq = Atomics.load(header, slot + COUNTER_SEQ);
    value = (Atomics.load(header, slot + COUNTER_HI) >>> 0) * TWO_POW_32 + (Atomics.load(header, slot + COUNTER_LO) >>> 0);
    if ((seq & 1) === 0 && Atomics.load(header, slot + COUNTER_SEQ) === seq) return value;
  }
  return value; // statistics only: a writer that died mid-wrap leaves a value at most 2^32 off
}

function checkCapacity(capacityBytes: number): void {
  const powerOfTwo = Number.isInteger(capacityBytes) && (capacityBytes & (capacityBytes - 1)) === 0;
  if (!powerOfTwo || capacityBytes < RING_CAPACITY_BYTES_MIN || capacityBytes > MAX_RING_CAPACITY_BYTES) {
    throw new RangeError(
      `SpscRing: capacity ${capacityBytes} must be a power of two in [${RING_CAPACITY_BYTES_MIN}, ${MAX_RING_CAPACITY_BYTES}]`,
    );
  }
}
