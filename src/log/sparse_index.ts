// In-memory sparse index of one segment, persisted as Kafka-style fixed-size big-endian entries.
// Two formats share the structure: the offset index (relative offset u32 -> file position u32)
// and the time index (max timestamp so far i64 -> relative offset u32). Owned by its segment on
// the shard worker. Invariant: both columns are strictly increasing, so lookups by either column
// are binary searches and truncation by either column cuts a suffix.
import { readInt64, writeInt64 } from '../protocol/record_batch.js';

export interface IndexFormat {
  readonly entryBytes: number;
  readonly suffix: string;
  readonly wideKey: boolean; // key column is an i64 (timestamps) rather than a u32
}

export const OFFSET_INDEX: IndexFormat = { entryBytes: 8, suffix: '.index', wideKey: false };
export const TIME_INDEX: IndexFormat = { entryBytes: 12, suffix: '.timeindex', wideKey: true };

export const KEY = 0;
export const VALUE = 1;
export type IndexColumn = typeof KEY | typeof VALUE;

const INITIAL_CAPACITY = 16;

/**
 * Entries are kept as the file holds them (big-endian, fixed size) in one growing buffer, so
 * persisting a segment's index at its roll is one copy: encoding ~77k entries one by one took
 * 6.7 ms of the shard's loop at each 1 GiB roll under load (cold code, once per roll), a stall every
 * produce behind it waited out. Reads are a few big-endian loads per binary-search step.
 */
export class SparseIndex {
  private bytes: Buffer;
  private n = 0;
  private readonly width: number;
  private readonly valueAt: number; // the value column's byte offset within an entry

  constructor(readonly format: IndexFormat) {
    this.width = format.entryBytes;
    this.valueAt = format.wideKey ? 8 : 4;
    this.bytes = Buffer.alloc(INITIAL_CAPACITY * this.width);
  }

  get count(): number {
    return this.n;
  }

  key(i: number): number {
    const pos = i * this.width;
    return this.format.wideKey ? readInt64(this.bytes, pos) : this.bytes.readUInt32BE(pos);
  }

  value(i: number): number {
    return this.bytes.readUInt32BE(i * this.width + this.valueAt);
  }

  lastKey(): number {
    return this.n > 0 ? this.key(this.n - 1) : -1;
  }

  lastValue(): number {
    return this.n > 0 ? this.value(this.n - 1) : -1;
  }

  append(key: number, value: number): void {
    const pos = this.n * this.width;
    if (pos === this.bytes.length) this.grow();
    if (this.format.wideKey) writeInt64(this.bytes, pos, key);
    else this.bytes.writeUInt32BE(key, pos);
    this.bytes.writeUInt32BE(value, pos + this.valueAt);
    this.n++;
  }

  private grow(): void {
    const bytes = Buffer.alloc(this.bytes.length * 2);
    this.bytes.copy(bytes);
    this.bytes = bytes;
  }

  /** Index of the last entry (among the first `limit`) whose column value is <= x, or -1. */
  floor(column: IndexColumn, x: number, limit = this.n): number {
    let lo = 0;
    let hi = limit - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((column === KEY ? this.key(mid) : this.value(mid)) <= x) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops every entry whose column value is >= x. */
  truncateFrom(column: IndexColumn, x: number): void {
    this.n = this.floor(column, x - 1) + 1;
  }

  clear(): void {
    this.n = 0;
  }

  /** The persisted form: a copy, so later appends never touch bytes a write still holds. */
  encode(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.n * this.width));
  }

  /** Parses a persisted index; null unless it is whole entries with both columns strictly increasing. */
  static decode(format: IndexFormat, buf: Buffer): SparseIndex | null {
    const w = format.entryBytes;
    if (buf.length % w !== 0) return null;
    const index = new SparseIndex(format);
    for (let pos = 0; pos < buf.length; pos += w) {
      const key = format.wideKey ? readInt64(buf, pos) : buf.readUInt32BE(pos);
      const value = buf.readUInt32BE(pos + (format.wideKey ? 8 : 4));
      if (index.n > 0 && (key <= index.lastKey() || value <= index.lastValue())) return null;
      index.append(key, value);
    }
    return index;
  }
}
