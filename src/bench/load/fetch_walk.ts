// Allocation-free walk over the record batches of one fetched partition (bench driver, main
// thread): counts whole batches and records at or above the fetch offset, advances the next
// offset, and optionally visits each record's value in place (the e2e bench reads the send time
// stamped there). A trailing partial batch is skipped, as Kafka may cut the last one short.
// Only uncompressed magic-2 batches are walked record by record; others are counted by header.
import { BATCH_HEADER_BYTES, BatchAttr, BatchField, LOG_OVERHEAD, readInt64 } from '../../protocol/record_batch.js';

export interface WalkTotals {
  batches: number;
  records: number;
  /** Record-batch bytes received (whole batches). */
  bytes: number;
  /** The offset to fetch next (last offset seen + 1). */
  nextOffset: number;
}

/** Called with the buffer, the value's position and length. */
export type ValueVisitor = (buf: Buffer, at: number, length: number) => void;

let cursor = 0;

/** Zig-zag varint at `cursor`; advances it. Values here are small (lengths, deltas). */
function varint(buf: Buffer): number {
  let u = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    const b = buf[cursor++];
    if (b === undefined) throw new RangeError('varint runs past the batch');
    u += (b & 0x7f) * mul;
    if (b < 0x80) return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    mul *= 0x80;
  }
  throw new RangeError('varint longer than 10 bytes');
}

/** Visits the values of records with offsetDelta >= firstDelta in one uncompressed batch. */
function visitValues(batch: Buffer, count: number, firstDelta: number, visit: ValueVisitor): void {
  cursor = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const length = varint(batch);
    const end = cursor + length;
    cursor++; // attributes
    varint(batch); // timestamp delta
    const offsetDelta = varint(batch);
    const keyLength = varint(batch);
    if (keyLength > 0) cursor += keyLength;
    const valueLength = varint(batch);
    if (offsetDelta >= firstDelta && valueLength >= 0) visit(batch, cursor, valueLength);
    cursor = end;
  }
}

/** Adds the whole batches of `data` at or above `fromOffset` to `totals`. */
export function walkBatches(data: Buffer, fromOffset: number, totals: WalkTotals, visit: ValueVisitor | null): void {
  let pos = 0;
  while (data.length - pos >= LOG_OVERHEAD) {
    const size = data.readInt32BE(pos + BatchField.batchLength) + LOG_OVERHEAD;
    if (size < BATCH_HEADER_BYTES) throw new RangeError(`batch of ${size} bytes`);
    if (data.length - pos < size) break;
    const baseOffset = readInt64(data, pos);
    const lastOffset = baseOffset + data.readInt32BE(pos + BatchField.lastOffsetDelta);
    if (lastOffset >= fromOffset) {
      const first = Math.max(baseOffset, fromOffset);
      totals.batches++;
      totals.bytes += size;
      totals.records += lastOffset + 1 - first;
      const attributes = data.readInt16BE(pos + BatchField.attributes);
      const plain = (attributes & (BatchAttr.compressionMask | BatchAttr.control)) === 0;
      if (visit !== null && plain && data[pos + BatchField.magic] === 2) {
        visitValues(data.subarray(pos, pos + size), data.readInt32BE(pos + BatchField.recordsCount), first - baseOffset, visit);
      }
      if (lastOffset + 1 > totals.nextOffset) totals.nextOffset = lastOffset + 1;
    }
    pos += size;
  }
}
