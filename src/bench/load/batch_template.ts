// Load-generator record batches (bench driver, main thread): one v2 batch of `records` records
// of `valueBytes` each, built once and reused for every request (the broker assigns offsets, so
// identical batches are valid). Keys are null and there are no headers; values are 'x' bytes.
// Invariants: the CRC always covers bytes 21..end of the batch, also after `stampValues`, which
// writes a float64 (little-endian) at the start of every value, so values must be >= 8 bytes then.
import { varintSize, writeVarint } from '../../protocol/records.js';
import { BATCH_HEADER_BYTES, BatchField, LOG_OVERHEAD, crc32c, writeInt64 } from '../../protocol/record_batch.js';

export interface BatchTemplate {
  readonly batch: Buffer;
  readonly records: number;
  readonly valueBytes: number;
  /** Position of each record's value, from the start of the batch. */
  readonly valueAt: Int32Array;
}

/** Record body (after its length prefix): attributes, tsDelta 0, offsetDelta, null key, value, 0 headers. */
function recordBodySize(offsetDelta: number, valueBytes: number): number {
  return 1 + 1 + varintSize(offsetDelta) + 1 + varintSize(valueBytes) + valueBytes + 1;
}

/** Builds a batch of `records` records with base offset 0 and CreateTime `timestamp`. */
export function buildBatchTemplate(records: number, valueBytes: number, timestamp = Date.now()): BatchTemplate {
  if (!Number.isInteger(records) || records < 1) throw new RangeError(`records must be >= 1 (got ${records})`);
  if (!Number.isInteger(valueBytes) || valueBytes < 0) throw new RangeError(`valueBytes must be >= 0 (got ${valueBytes})`);
  let total = BATCH_HEADER_BYTES;
  for (let i = 0; i < records; i++) {
    const body = recordBodySize(i, valueBytes);
    total += varintSize(body) + body;
  }
  const batch = Buffer.alloc(total);
  const valueAt = new Int32Array(records);
  let pos = BATCH_HEADER_BYTES;
  for (let i = 0; i < records; i++) {
    pos = writeVarint(batch, pos, recordBodySize(i, valueBytes));
    batch[pos++] = 0; // attributes
    pos = writeVarint(batch, pos, 0); // timestamp delta
    pos = writeVarint(batch, pos, i); // offset delta
    pos = writeVarint(batch, pos, -1); // null key
    pos = writeVarint(batch, pos, valueBytes);
    valueAt[i] = pos;
    batch.fill(0x78, pos, pos + valueBytes);
    pos += valueBytes;
    pos = writeVarint(batch, pos, 0); // header count
  }
  writeHeader(batch, records, timestamp);
  return { batch, records, valueBytes, valueAt };
}

function writeHeader(batch: Buffer, records: number, timestamp: number): void {
  writeInt64(batch, BatchField.baseOffset, 0);
  batch.writeInt32BE(batch.length - LOG_OVERHEAD, BatchField.batchLength);
  batch.writeInt32BE(-1, BatchField.partitionLeaderEpoch);
  batch.writeInt8(2, BatchField.magic);
  batch.writeInt16BE(0, BatchField.attributes);
  batch.writeInt32BE(records - 1, BatchField.lastOffsetDelta);
  writeInt64(batch, BatchField.baseTimestamp, timestamp);
  writeInt64(batch, BatchField.maxTimestamp, timestamp);
  writeInt64(batch, BatchField.producerId, -1);
  batch.writeInt16BE(-1, BatchField.producerEpoch);
  batch.writeInt32BE(-1, BatchField.baseSequence);
  batch.writeInt32BE(records, BatchField.recordsCount);
  batch.writeUInt32BE(crc32c(batch.subarray(BatchField.attributes)), BatchField.crc);
}

/**
 * Writes `value` as a float64 at the start of every record's value of the copy of the template
 * that starts at `at` in `buf` (e.g. inside a request frame), then fixes that copy's CRC.
 */
export function stampValues(t: BatchTemplate, buf: Buffer, at: number, value: number): void {
  if (t.valueBytes < 8) throw new RangeError('stamping needs values of at least 8 bytes');
  const positions = t.valueAt;
  for (let i = 0; i < positions.length; i++) buf.writeDoubleLE(value, at + (positions[i] as number));
  const end = at + t.batch.length;
  buf.writeUInt32BE(crc32c(buf.subarray(at + BatchField.attributes, end)), at + BatchField.crc);
}
