// Idempotent-producer state of one partition: per producer id, the epoch and the metadata of
// its last RETAINED_BATCHES batches, used to drop retried duplicates (answering with the original
// offsets) and to reject sequence gaps (kafka-protocol.md §9). Owned by the partition's log on
// its shard worker. Invariants: entries are kept in least-recently-written order (Map insertion
// order), so expiry and the size bound both evict from the front; an entry always holds >= 1
// batch; batches of one entry are in offset order.
import { ErrorCode } from '../protocol/errors.js';
import { crc32c, lastSequence, readInt64, writeInt64, type BatchHeader } from '../protocol/record_batch.js';

export const RETAINED_BATCHES = 5;
export const DEFAULT_MAX_PRODUCERS = 10_000;
const INT32_MAX = 0x7fffffff;

export type ProducerCheck =
  | { kind: 'append' }
  | { kind: 'duplicate'; baseOffset: number; lastOffset: number }
  | { kind: 'error'; code: ErrorCode };

const APPEND: ProducerCheck = { kind: 'append' };
const FENCED: ProducerCheck = { kind: 'error', code: ErrorCode.INVALID_PRODUCER_EPOCH };
const OUT_OF_ORDER: ProducerCheck = { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER };

/**
 * Batches are kept across an epoch bump (only same-epoch batches count for duplicates and
 * sequence continuity) so that rolling back an uncommitted bump restores the previous epoch.
 */
class ProducerEntry {
  lastUpdate = 0;
  count = 0;
  private head = 0;
  readonly epochs = new Int16Array(RETAINED_BATCHES);
  readonly firstSeqs = new Int32Array(RETAINED_BATCHES);
  readonly lastSeqs = new Int32Array(RETAINED_BATCHES);
  readonly firstOffsets = new Float64Array(RETAINED_BATCHES);
  readonly lastOffsets = new Float64Array(RETAINED_BATCHES);
  readonly timestamps = new Float64Array(RETAINED_BATCHES);

  /** Slot of the i-th batch, oldest first. */
  slot(i: number): number {
    return (this.head + i) % RETAINED_BATCHES;
  }

  newest(): number {
    return this.slot(this.count - 1);
  }

  get epoch(): number {
    return this.epochs[this.newest()]!;
  }

  push(epoch: number, firstSeq: number, lastSeq: number, firstOffset: number, lastOffset: number, timestamp: number): void {
    if (this.count === RETAINED_BATCHES) this.head = (this.head + 1) % RETAINED_BATCHES;
    else this.count++;
    const s = this.newest();
    this.epochs[s] = epoch;
    this.firstSeqs[s] = firstSeq;
    this.lastSeqs[s] = lastSeq;
    this.firstOffsets[s] = firstOffset;
    this.lastOffsets[s] = lastOffset;
    this.timestamps[s] = timestamp;
  }

  popNewest(): void {
    this.count--;
  }
}

export interface ProducerStateOptions {
  expirationMs: number;
  now: () => number;
  maxProducers?: number;
}

export class ProducerStateTable {
  private readonly entries = new Map<number, ProducerEntry>();
  private expirationMs: number;
  private readonly maxProducers: number;
  private readonly now: () => number;

  constructor(opts: ProducerStateOptions) {
    this.expirationMs = opts.expirationMs;
    this.maxProducers = opts.maxProducers ?? DEFAULT_MAX_PRODUCERS;
    this.now = opts.now;
  }

  get size(): number {
    return this.entries.size;
  }

  setExpiration(ms: number): void {
    this.expirationMs = ms;
  }

  /** Decides what to do with a batch; non-idempotent batches (producerId < 0) always append. */
  check(h: BatchHeader): ProducerCheck {
    if (h.producerId < 0) return APPEND;
    const e = this.entries.get(h.producerId);
    if (!e) return APPEND;
    if (this.now() - e.lastUpdate >= this.expirationMs) {
      this.entries.delete(h.producerId);
      return APPEND;
    }
    const known = e.epoch;
    if (h.producerEpoch < known) return FENCED;
    if (h.producerEpoch > known) return h.baseSequence === 0 ? APPEND : OUT_OF_ORDER;
    const lastSeq = lastSequence(h.baseSequence, h.lastOffsetDelta);
    for (let i = 0; i < e.count; i++) {
      const s = e.slot(i);
      if (e.epochs[s] === known && e.firstSeqs[s] === h.baseSequence && e.lastSeqs[s] === lastSeq) {
        return { kind: 'duplicate', baseOffset: e.firstOffsets[s]!, lastOffset: e.lastOffsets[s]! };
      }
    }
    const prev = e.lastSeqs[e.newest()]!;
    const inSequence = h.baseSequence === prev + 1 || (prev === INT32_MAX && h.baseSequence === 0);
    return inSequence ? APPEND : OUT_OF_ORDER;
  }

  /** Remembers an appended batch (call only after check() answered 'append'). */
  record(h: BatchHeader, baseOffset: number, lastOffset: number): void {
    if (h.producerId < 0) return;
    const now = this.now();
    let e = this.entries.get(h.producerId);
    if (e) this.entries.delete(h.producerId);
    else e = new ProducerEntry();
    e.push(h.producerEpoch, h.baseSequence, lastSequence(h.baseSequence, h.lastOffsetDelta), baseOffset, lastOffset, h.maxTimestamp);
    e.lastUpdate = now;
    this.entries.set(h.producerId, e);
    this.evict(now);
  }

  /** Drops producers idle for the expiration time, and the least recently written beyond the bound. */
  private evict(now: number): void {
    for (const [pid, e] of this.entries) {
      if (this.entries.size <= this.maxProducers && now - e.lastUpdate < this.expirationMs) break;
      this.entries.delete(pid);
    }
  }

  expire(): void {
    this.evict(this.now());
  }

  /** Forgets batches at or after `offset` (their append was rolled back or truncated away). */
  truncateFrom(offset: number): void {
    for (const [pid, e] of this.entries) {
      while (e.count > 0 && e.firstOffsets[e.newest()]! >= offset) e.popNewest();
      if (e.count === 0) this.entries.delete(pid);
    }
  }

  /** Forgets producers whose last batch lies below the log start (deleted by retention). */
  removeBefore(logStartOffset: number): void {
    for (const [pid, e] of this.entries) if (e.lastOffsets[e.newest()]! < logStartOffset) this.entries.delete(pid);
  }

  encode(): Buffer {
    let size = SNAPSHOT_HEADER + 4;
    for (const e of this.entries.values()) size += ENTRY_HEADER + e.count * BATCH_BYTES;
    const buf = Buffer.allocUnsafe(size);
    buf.writeUInt32BE(SNAPSHOT_MAGIC, 0);
    buf.writeUInt16BE(SNAPSHOT_VERSION, 4);
    buf.writeUInt32BE(this.entries.size, 6);
    let pos = SNAPSHOT_HEADER;
    for (const [pid, e] of this.entries) pos = encodeEntry(buf, pos, pid, e);
    buf.writeUInt32BE(crc32c(buf.subarray(0, pos)), pos);
    return buf;
  }

  /** Replaces the state with a snapshot; false (state left empty) when the snapshot is damaged. */
  load(buf: Buffer): boolean {
    this.entries.clear();
    if (buf.length < SNAPSHOT_HEADER + 4 || buf.readUInt32BE(0) !== SNAPSHOT_MAGIC || buf.readUInt16BE(4) !== SNAPSHOT_VERSION) return false;
    if (crc32c(buf.subarray(0, buf.length - 4)) !== buf.readUInt32BE(buf.length - 4)) return false;
    const count = buf.readUInt32BE(6);
    let pos = SNAPSHOT_HEADER;
    for (let i = 0; i < count; i++) {
      pos = this.decodeEntry(buf, pos, buf.length - 4);
      if (pos < 0) {
        this.entries.clear();
        return false;
      }
    }
    this.expire();
    return true;
  }

  private decodeEntry(buf: Buffer, pos: number, end: number): number {
    if (pos + ENTRY_HEADER > end) return -1;
    const pid = readInt64(buf, pos);
    const e = new ProducerEntry();
    e.lastUpdate = readInt64(buf, pos + 8);
    const n = buf.readUInt8(pos + 16);
    pos += ENTRY_HEADER;
    if (n === 0 || n > RETAINED_BATCHES || pos + n * BATCH_BYTES > end) return -1;
    for (let i = 0; i < n; i++, pos += BATCH_BYTES) {
      e.push(buf.readInt16BE(pos), buf.readInt32BE(pos + 2), buf.readInt32BE(pos + 6), readInt64(buf, pos + 10), readInt64(buf, pos + 18), readInt64(buf, pos + 26));
    }
    this.entries.set(pid, e);
    return pos;
  }
}

// Snapshot layout: magic u32, version u16, count u32, entries, CRC-32C u32 of all that precedes.
// Entry: producerId i64, lastUpdate i64, batch count u8, then per batch
// epoch i16, firstSeq i32, lastSeq i32, firstOffset i64, lastOffset i64, timestamp i64.
const SNAPSHOT_MAGIC = 0x53505354; // "SPST"
const SNAPSHOT_VERSION = 1;
const SNAPSHOT_HEADER = 10;
const ENTRY_HEADER = 17;
const BATCH_BYTES = 34;

function encodeEntry(buf: Buffer, pos: number, pid: number, e: ProducerEntry): number {
  writeInt64(buf, pos, pid);
  writeInt64(buf, pos + 8, e.lastUpdate);
  buf.writeUInt8(e.count, pos + 16);
  pos += ENTRY_HEADER;
  for (let i = 0; i < e.count; i++, pos += BATCH_BYTES) {
    const s = e.slot(i);
    buf.writeInt16BE(e.epochs[s]!, pos);
    buf.writeInt32BE(e.firstSeqs[s]!, pos + 2);
    buf.writeInt32BE(e.lastSeqs[s]!, pos + 6);
    writeInt64(buf, pos + 10, e.firstOffsets[s]!);
    writeInt64(buf, pos + 18, e.lastOffsets[s]!);
    writeInt64(buf, pos + 26, e.timestamps[s]!);
  }
  return pos;
}
