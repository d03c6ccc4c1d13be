// Client-side record batch v2 (magic 2) codec: encodes records into one batch for a Produce
// request and decodes the concatenated batches a Fetch returns into records with absolute
// offsets. Runs on whichever thread owns the client (pure functions over Buffers).
// Invariants: encoding writes exactly one batch whose CRC-32C covers bytes 21..end; decoding
// verifies every whole batch's CRC before reading it, ignores a truncated trailing batch (Kafka
// may cut the last one short), and never allocates more than the input's size, except gzip
// output, which is capped by `maxUncompressedBytes`. Header layout constants come from the log's
// batch module so the two sides cannot drift apart.

import { gunzipSync, gzipSync } from 'node:zlib';
import {
  BATCH_HEADER_BYTES,
  BatchAttr,
  BatchField,
  LOG_OVERHEAD,
  crc32c,
  readInt64,
  writeInt64,
} from './record_batch.js';
import { ProtocolError, Reader } from './reader.js';

export const CompressionCodec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CompressionCodec = (typeof CompressionCodec)[keyof typeof CompressionCodec];

const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

export interface ProducerRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: readonly RecordHeader[];
  /** CreateTime in ms since the epoch. */
  readonly timestamp: number;
}

export interface EncodeBatchOptions {
  /** none (default) or gzip; the others need codecs this client does not carry. */
  readonly compression?: CompressionCodec;
  /** -1 (default) = not idempotent. */
  readonly producerId?: number;
  readonly producerEpoch?: number;
  readonly baseSequence?: number;
  readonly transactional?: boolean;
  /** A control batch (transaction markers, KRaft's leader-change and voters records). */
  readonly control?: boolean;
}

export interface ConsumedRecord {
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: RecordHeader[];
}

export interface DecodedBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly partitionLeaderEpoch: number;
  readonly compression: CompressionCodec;
  readonly logAppendTime: boolean;
  readonly transactional: boolean;
  readonly control: boolean;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly baseTimestamp: number;
  readonly maxTimestamp: number;
  readonly records: ConsumedRecord[];
}

export interface DecodeBatchOptions {
  /** Bound on one batch's decompressed records; default 64 MiB. */
  readonly maxUncompressedBytes?: number;
}

export const RecordBatchErrorKind = {
  crc: 'crc',
  unsupportedCompression: 'unsupported-compression',
  malformed: 'malformed',
} as const;
export type RecordBatchErrorKind = (typeof RecordBatchErrorKind)[keyof typeof RecordBatchErrorKind];

/** A batch that cannot be decoded (or records that cannot be encoded as asked). */
export class RecordBatchError extends Error {
  readonly kind: RecordBatchErrorKind;
  /** The batch's base offset, or -1 when not known. */
  readonly baseOffset: number;
  constructor(kind: RecordBatchErrorKind, message: string, baseOffset = -1) {
    super(message);
    this.name = 'RecordBatchError';
    this.kind = kind;
    this.baseOffset = baseOffset;
  }
}

const DEFAULT_MAX_UNCOMPRESSED = 64 * 1024 * 1024;

// ---- encoding ---------------------------------------------------------------------------------

function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

function uvarintSize(u: number): number {
  let n = 1;
  while (u >= 0x80) {
    u = Math.floor(u / 0x80);
    n++;
  }
  return n;
}

function writeUvarint(buf: Buffer, pos: number, u: number): number {
  while (u >= 0x80) {
    buf[pos++] = (u % 0x80) | 0x80;
    u = Math.floor(u / 0x80);
  }
  buf[pos++] = u;
  return pos;
}

/** Bytes of the zig-zag varint that record fields use for `v`. */
export function varintSize(v: number): number {
  return uvarintSize(zigzag(v));
}

/** Writes `v` as a record-field zig-zag varint at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, v: number): number {
  return writeUvarint(buf, pos, zigzag(v));
}

function nullableSize(b: Buffer | null): number {
  return b === null ? 1 : varintSize(b.length) + b.length;
}

function writeNullable(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeUvarint(buf, pos, 1);
  pos = writeVarint(buf, pos, b.length);
  return pos + b.copy(buf, pos);
}

/** Size of a record after its length prefix. */
function recordBodySize(r: ProducerRecord, offsetDelta: number, timestampDelta: number): number {
  const headers = r.headers ?? [];
  let size = 1 + varintSize(timestampDelta) + varintSize(offsetDelta)
    + nullableSize(r.key) + nullableSize(r.value) + varintSize(headers.length);
  for (const h of headers) {
    const keyBytes = Buffer.byteLength(h.key, 'utf8');
    size += varintSize(keyBytes) + keyBytes + nullableSize(h.value);
  }
  return size;
}

function writeRecord(buf: Buffer, pos: number, r: ProducerRecord, bodySize: number, offsetDelta: number, timestampDelta: number): number {
  const headers = r.headers ?? [];
  pos = writeVarint(buf, pos, bodySize);
  buf[pos++] = 0;
  pos = writeVarint(buf, pos, timestampDelta);
  pos = writeVarint(buf, pos, offsetDelta);
  pos = writeNullable(buf, pos, r.key);
  pos = writeNullable(buf, pos, r.value);
  pos = writeVarint(buf, pos, headers.length);
  for (const h of headers) {
    const keyBytes = Buffer.byteLength(h.key, 'utf8');
    pos = writeVarint(buf, pos, keyBytes);
    pos += buf.write(h.key, pos, keyBytes, 'utf8');
    pos = writeNullable(buf, pos, h.value);
  }
  return pos;
}

/** The uncompressed records section (no count prefix: that lives in the header). */
function encodeRecords(records: readonly ProducerRecord[], baseTimestamp: number): Buffer {
  const sizes = new Array<number>(records.length);
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const body = recordBodySize(records[i] as ProducerRecord, i, (records[i] as ProducerRecord).timestamp - baseTimestamp);
    sizes[i] = body;
    total += varintSize(body) + body;
  }
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as ProducerRecord;
    pos = writeRecord(buf, pos, r, sizes[i] as number, i, r.timestamp - baseTimestamp);
  }
  return buf;
}

/** Encodes records as one v2 batch with base offset 0, ready for a Produce request. */
export function encodeRecordBatch(records: readonly ProducerRecord[], options: EncodeBatchOptions = {}): Buffer {
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const codec = options.compression ?? CompressionCodec.none;
  if (codec !== CompressionCodec.none && codec !== CompressionCodec.gzip) {
    throw new RecordBatchError(RecordBatchErrorKind.unsupportedCompression, `cannot compress with ${CODEC_NAMES[codec]}`);
  }
  const baseTimestamp = (records[0] as ProducerRecord).timestamp;
  let maxTimestamp = baseTimestamp;
  for (const r of records) if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
  const plain = encodeRecords(records, baseTimestamp);
  const body = codec === CompressionCodec.gzip ? gzipSync(plain) : plain;

  const batch = Buffer.allocUnsafe(BATCH_HEADER_BYTES + body.length);
  writeInt64(batch, BatchField.baseOffset, 0);
  batch.writeInt32BE(batch.length - LOG_OVERHEAD, BatchField.batchLength);
  batch.writeInt32BE(-1, BatchField.partitionLeaderEpoch);
  batch.writeInt8(2, BatchField.magic);
  const attributes = codec
    | (options.transactional === true ? BatchAttr.transactional : 0)
    | (options.control === true ? BatchAttr.control : 0);
  batch.writeInt16BE(attributes, BatchField.attributes);
  batch.writeInt32BE(records.length - 1, BatchField.lastOffsetDelta);
  writeInt64(batch, BatchField.baseTimestamp, baseTimestamp);
  writeInt64(batch, BatchField.maxTimestamp, maxTimestamp);
  writeInt64(batch, BatchField.producerId, options.producerId ?? -1);
  batch.writeInt16BE(options.producerEpoch ?? -1, BatchField.producerEpoch);
  batch.writeInt32BE(options.baseSequence ?? -1, BatchField.baseSequence);
  batch.writeInt32BE(records.length, BatchField.recordsCount);
  body.copy(batch, BATCH_HEADER_BYTES);
  batch.writeUInt32BE(crc32c(batch.subarray(BatchField.attributes)), BatchField.crc);
  return batch;
}

// ---- decoding ---------------------------------------------------------------------------------

/**
 * Decodes every whole batch in `data` (the records of one partition of a Fetch response).
 * A trailing partial batch is ignored. Throws RecordBatchError on a CRC mismatch, a codec other
 * than none/gzip, a magic other than 2, or records that do not fit their batch.
 */
export function decodeRecordBatches(data: Buffer, options: DecodeBatchOptions = {}): DecodedBatch[] {
  const maxUncompressed = options.maxUncompressedBytes ?? DEFAULT_MAX_UNCOMPRESSED;
  const batches: DecodedBatch[] = [];
  let pos = 0;
  while (data.length - pos >= LOG_OVERHEAD) {
    const baseOffset = readInt64(data, pos);
    const size = data.readInt32BE(pos + BatchField.batchLength) + LOG_OVERHEAD;
    if (size < BATCH_HEADER_BYTES) {
      throw new RecordBatchError(RecordBatchErrorKind.malformed, `batch of ${size} bytes is shorter than its header`, baseOffset);
    }
    if (data.length - pos < size) break;
    batches.push(decodeBatch(data.subarray(pos, pos + size), maxUncompressed));
    pos += size;
  }
  return batches;
}

/** All records of `data` at or above `fromOffset` (a Fetch may start inside a batch). */
export function decodeRecords(data: Buffer, fromOffset = 0, options: DecodeBatchOptions = {}): ConsumedRecord[] {
  const out: ConsumedRecord[] = [];
  for (const batch of decodeRecordBatches(data, options)) {
    if (batch.control) continue;
    for (const r of batch.records) if (r.offset >= fromOffset) out.push(r);
  }
  return out;
}

function decodeBatch(batch: Buffer, maxUncompressed: number): DecodedBatch {
  const baseOffset = readInt64(batch, BatchField.baseOffset);
  const magic = batch.readInt8(BatchField.magic);
  if (magic !== 2) throw new RecordBatchError(RecordBatchErrorKind.malformed, `record batch magic ${magic} is not 2`, baseOffset);
  const crc = batch.readUInt32BE(BatchField.crc);
  if (crc32c(batch.subarray(BatchField.attributes)) !== crc) {
    throw new RecordBatchError(RecordBatchErrorKind.crc, `record batch at offset ${baseOffset} fails its CRC-32C`, baseOffset);
  }
  const attributes = batch.readInt16BE(BatchField.attributes);
  const codec = (attributes & BatchAttr.compressionMask) as CompressionCodec;
  const logAppendTime = (attributes & BatchAttr.logAppendTime) !== 0;
  const baseTimestamp = readInt64(batch, BatchField.baseTimestamp);
  const maxTimestamp = readInt64(batch, BatchField.maxTimestamp);
  const count = batch.readInt32BE(BatchField.recordsCount);
  const body = uncompress(codec, batch.subarray(BATCH_HEADER_BYTES), maxUncompressed, baseOffset);
  const records = readRecords(body, count, baseOffset, logAppendTime ? maxTimestamp : null, baseTimestamp);
  return {
    baseOffset,
    lastOffset: baseOffset + batch.readInt32BE(BatchField.lastOffsetDelta),
    partitionLeaderEpoch: batch.readInt32BE(BatchField.partitionLeaderEpoch),
    compression: codec,
    logAppendTime,
    transactional: (attributes & BatchAttr.transactional) !== 0,
    control: (attributes & BatchAttr.control) !== 0,
    producerId: readInt64(batch, BatchField.producerId),
    producerEpoch: batch.readInt16BE(BatchField.producerEpoch),
    baseSequence: batch.readInt32BE(BatchField.baseSequence),
    baseTimestamp,
    maxTimestamp,
    records,
  };
}

function uncompress(codec: number, body: Buffer, maxUncompressed: number, baseOffset: number): Buffer {
  if (codec === CompressionCodec.none) return body;
  if (codec !== CompressionCodec.gzip) {
    const name = CODEC_NAMES[codec as CompressionCodec] ?? `codec ${codec}`;
    throw new RecordBatchError(RecordBatchErrorKind.unsupportedCompression, `batch at offset ${baseOffset} uses ${name}, which this client cannot decompress`, baseOffset);
  }
  try {
    return gunzipSync(body, { maxOutputLength: maxUncompressed });
  } catch (err) {
    throw new RecordBatchError(RecordBatchErrorKind.malformed, `batch at offset ${baseOffset}: gzip data unreadable (${(err as Error).message})`, baseOffset);
  }
}

/** A non-null `appendTime` replaces every record's timestamp (LogAppendTime batches). */
function readRecords(body: Buffer, count: number, baseOffset: number, appendTime: number | null, baseTimestamp: number): ConsumedRecord[] {
  const r = new Reader(body);
  const records: ConsumedRecord[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const length = r.varint();
      if (length < 0 || length > r.remaining()) throw new ProtocolError(`record length ${length}`);
      const end = r.offset + length;
      const rec = readRecord(new Reader(body, r.offset, end), baseOffset, appendTime, baseTimestamp);
      r.offset = end;
      records.push(rec);
    }
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    throw new RecordBatchError(RecordBatchErrorKind.malformed, `batch at offset ${baseOffset}: ${err.reason}`, baseOffset);
  }
  if (r.remaining() !== 0) {
    throw new RecordBatchError(RecordBatchErrorKind.malformed, `batch at offset ${baseOffset}: ${r.remaining()} bytes after its ${count} records`, baseOffset);
  }
  return records;
}

function readRecord(r: Reader, baseOffset: number, appendTime: number | null, baseTimestamp: number): ConsumedRecord {
  r.int8();
  const timestampDelta = r.varlong();
  const offsetDelta = r.varint();
  const key = readNullable(r);
  const value = readNullable(r);
  const headerCount = r.varint();
  if (headerCount < 0) throw new ProtocolError(`header count ${headerCount}`);
  const headers: RecordHeader[] = [];
  for (let i = 0; i < headerCount; i++) {
    const keyLength = r.varint();
    if (keyLength < 0 || keyLength > r.remaining()) throw new ProtocolError(`header key length ${keyLength}`);
    const headerKey = r.buf.toString('utf8', r.offset, r.offset + keyLength);
    r.skip(keyLength);
    headers.push({ key: headerKey, value: readNullable(r) });
  }
  if (r.remaining() !== 0) throw new ProtocolError(`${r.remaining()} bytes after a record's headers`);
  return {
    offset: baseOffset + offsetDelta,
    timestamp: appendTime ?? baseTimestamp + timestampDelta,
    key,
    value,
    headers,
  };
}

function readNullable(r: Reader): Buffer | null {
  const length = r.varint();
  if (length < 0) return null;
  if (length > r.remaining()) throw new ProtocolError(`length ${length} beyond the record`);
  const out = r.buf.subarray(r.offset, r.offset + length);
  r.skip(length);
  return out;
}
