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

export class SparseIndex {
  private keys: Float64Array | Uint32Array;
  private values: Uint32Array;
  private n = 0;

  constructor(readonly format: IndexFormat) {
    this.keys = format.wideKey ? new Float64Array(INITIAL_CAPACITY) : new Uint32Array(INITIAL_CAPACITY);
    this.values = new Uint32Array(INITIAL_CAPACITY);
  }

  get count(): number {
    return this.n;
  }

  key(i: number): number {
    return this.keys[i]!;
  }

  value(i: number): number {
    return this.values[i]!;
  }

  lastKey(): number {
    return this.n > 0 ? this.keys[this.n - 1]! : -1;
  }

  lastValue(): number {
    return this.n > 0 ? this.values[this.n - 1]! : -1;
  }

  append(key: number, value: number): void {
    if (this.n === this.values.length) this.grow();
    this.keys[this.n] = key;
    this.values[this.n] = value;
    this.n++;
  }

  private grow(): void {
    const cap = this.values.length * 2;
    const keys = this.format.wideKey ? new Float64Array(cap) : new Uint32Array(cap);
    keys.set(this.keys);
    const values = new Uint32Array(cap);
    values.set(this.values);
    this.keys = keys;
    this.values = values;
  }

  /** Index of the last entry (among the first `limit`) whose column value is <= x, or -1. */
  floor(column: IndexColumn, x: number, limit = this.n): number {
    const col = column === KEY ? this.keys : this.values;
    let lo = 0;
    let hi = limit - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (col[mid]! <= x) {
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

  encode(): Buffer {
    const w = this.format.entryBytes;
    const buf = Buffer.allocUnsafe(this.n * w);
    for (let i = 0, pos = 0; i < this.n; i++, pos += w) {
      if (this.format.wideKey) {
        writeInt64(buf, pos, this.keys[i]!);
        buf.writeUInt32BE(this.values[i]!, pos + 8);
      } else {
        buf.writeUInt32BE(this.keys[i]!, pos);
        buf.writeUInt32BE(this.values[i]!, pos + 4);
      }
    }
    return buf;
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
