// Walks the records of one uncompressed v2 batch to find record-level timestamps, for
// ListOffsets answers that name the exact record (as Kafka does) instead of its batch.
// Pure; runs on shard workers. Records come from clients and passed only the batch CRC, so every
// read is bounds-checked and a malformed record ends the walk with "not found".
import { BATCH_HEADER_BYTES, BatchAttr, BatchField, readInt64 } from '../protocol/record_batch.js';

export interface RecordTimestamp {
  offsetDelta: number;
  timestamp: number;
}

// Decoder state lives in module scope: one worker thread runs one walk at a time.
let cursor = 0;
let failed = false;

/** Zig-zag varint (up to 10 bytes) at `cursor`; sets `failed` when malformed or out of bounds. */
function readVarlong(buf: Buffer, end: number): number {
  let raw = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (cursor >= end) break;
    const b = buf[cursor++]!;
    raw += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
    scale *= 128;
  }
  failed = true;
  return 0;
}

/**
 * First record of the batch whose timestamp is >= target, or null when the batch is compressed,
 * uses LogAppendTime (all records share maxTimestamp), or has no such well-formed record.
 */
export function firstRecordAtOrAfter(batch: Buffer, target: number): RecordTimestamp | null {
  const attributes = batch.readInt16BE(BatchField.attributes);
  if ((attributes & (BatchAttr.compressionMask | BatchAttr.logAppendTime)) !== 0) return null;
  const baseTimestamp = readInt64(batch, BatchField.baseTimestamp);
  const count = batch.readInt32BE(BatchField.recordsCount);
  const end = batch.length;
  cursor = BATCH_HEADER_BYTES;
  failed = false;
  for (let i = 0; i < count; i++) {
    const length = readVarlong(batch, end);
    const next = cursor + length;
    cursor += 1; // record attributes, unused
    const timestamp = baseTimestamp + readVarlong(batch, end);
    const offsetDelta = readVarlong(batch, end);
    if (failed || length < 0 || next > end || cursor > next) return null;
    if (timestamp >= target) return { offsetDelta, timestamp };
    cursor = next;
  }
  return null;
}
