// Test-only builder of record batches v2 (magic 2), written from the Kafka spec without sharing
// code with src/log, so tests of the log check it against an independent encoding. Also used by
// the lead's and the e2e tests. Deliberately plain: one Buffer per field, concatenated.
import { crc32c } from '@node-rs/crc32';

export interface TestHeader {
  key: string;
  value: Buffer | string | null;
}

export interface TestRecord {
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: TestHeader[];
  /** Added to the batch's baseTimestamp; default 0. */
  timestampDelta?: number;
}

export interface BatchOptions {
  records: TestRecord[];
  baseOffset?: number;
  /** Default 1_700_000_000_000. */
  baseTimestamp?: number;
  /** Default baseTimestamp + the largest timestampDelta. */
  maxTimestamp?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  /** Codec bits 0-2 only; pass `payload` for bytes that really are compressed. */
  compression?: number;
  transactional?: boolean;
  control?: boolean;
  logAppendTime?: boolean;
  partitionLeaderEpoch?: number;
  magic?: number;
  /** Replaces the encoded records (e.g. a compressed block). */
  payload?: Buffer;
  /** Overrides for building invalid batches. */
  lastOffsetDelta?: number;
  recordsCount?: number;
}

export const DEFAULT_TIMESTAMP = 1_700_000_000_000;

function bytesOf(v: Buffer | string): Buffer {
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

/** Zig-zag varint (Kafka's varint / varlong). */
export function varint(value: number): Buffer {
  let n = value >= 0 ? BigInt(value) * 2n : BigInt(-value) * 2n - 1n;
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return Buffer.from(out);
}

function nullableBytes(v: Buffer | string | null | undefined): Buffer {
  if (v === null || v === undefined) return varint(-1);
  const b = bytesOf(v);
  return Buffer.concat([varint(b.length), b]);
}

export function encodeRecord(r: TestRecord, offsetDelta: number): Buffer {
  const headers = r.headers ?? [];
  const body = Buffer.concat([
    Buffer.from([0]), // attributes
    varint(r.timestampDelta ?? 0),
    varint(offsetDelta),
    nullableBytes(r.key),
    nullableBytes(r.value),
    varint(headers.length),
    ...headers.flatMap((h) => [nullableBytes(h.key), nullableBytes(h.value)]),
  ]);
  return Buffer.concat([varint(body.length), body]);
}

function i64(v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(v));
  return b;
}

function int(size: 1 | 2 | 4, v: number, unsigned = false): Buffer {
  const b = Buffer.alloc(size);
  if (size === 1) b.writeInt8(v);
  else if (size === 2) b.writeInt16BE(v);
  else if (unsigned) b.writeUInt32BE(v);
  else b.writeInt32BE(v);
  return b;
}

export function buildBatch(o: BatchOptions): Buffer {
  const baseTimestamp = o.baseTimestamp ?? DEFAULT_TIMESTAMP;
  const maxDelta = Math.max(0, ...o.records.map((r) => r.timestampDelta ?? 0));
  const attributes =
    (o.compression ?? 0) | (o.logAppendTime ? 0x08 : 0) | (o.transactional ? 0x10 : 0) | (o.control ? 0x20 : 0);
  const payload = o.payload ?? Buffer.concat(o.records.map((r, i) => encodeRecord(r, i)));
  const afterCrc = Buffer.concat([
    int(2, attributes),
    int(4, o.lastOffsetDelta ?? o.records.length - 1),
    i64(baseTimestamp),
    i64(o.maxTimestamp ?? baseTimestamp + maxDelta),
    i64(o.producerId ?? -1),
    int(2, o.producerEpoch ?? -1),
    int(4, o.baseSequence ?? -1),
    int(4, o.recordsCount ?? o.records.length),
    payload,
  ]);
  const batchLength = 4 + 1 + 4 + afterCrc.length; // partitionLeaderEpoch, magic, crc, rest
  return Buffer.concat([
    i64(o.baseOffset ?? 0),
    int(4, batchLength),
    int(4, o.partitionLeaderEpoch ?? -1),
    int(1, o.magic ?? 2),
    int(4, crc32c(afterCrc) >>> 0, true),
    afterCrc,
  ]);
}

/** `n` records whose values are `valueBytes` long (key `k<i>`), timestamps one ms apart. */
export function makeRecords(n: number, valueBytes: number, fill = 0x61): TestRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `k${i}`,
    value: Buffer.alloc(valueBytes, fill),
    timestampDelta: i,
  }));
}

/** Recomputes the CRC after a test edited bytes inside the CRC range. */
export function fixCrc(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(21)) >>> 0, 17);
  return batch;
}
