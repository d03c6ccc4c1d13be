// Client record batch codec: encode/decode round trips (property), Fetch-shaped input
// (concatenated, stamped, truncated tail), CRC and codec errors, the gzip output bound, and
// cross-checks against kafkajs's own batch encoder and decoder.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import {
  CompressionCodec,
  RecordBatchError,
  RecordBatchErrorKind,
  decodeRecordBatches,
  decodeRecords,
  encodeRecordBatch,
} from '../../../src/protocol/records.js';
import type { ConsumedRecord, ProducerRecord } from '../../../src/protocol/records.js';
import { BatchField, crc32c, writeInt64 } from '../../../src/protocol/record_batch.js';
import { buildBatch, fixCrc } from '../log/batch_builder.js';

const bytesArb = fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: null });
const recordArb: fc.Arbitrary<ProducerRecord> = fc.record({
  key: bytesArb,
  value: bytesArb,
  headers: fc.array(fc.record({ key: fc.string({ unit: 'grapheme', maxLength: 20 }), value: bytesArb }), { maxLength: 4 }),
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
});
const codecArb = fc.constantFrom(CompressionCodec.none, CompressionCodec.gzip);

function assertSameRecords(got: readonly ConsumedRecord[], sent: readonly ProducerRecord[], firstOffset: number): void {
  assert.equal(got.length, sent.length);
  got.forEach((r, i) => {
    const s = sent[i] as ProducerRecord;
    assert.equal(r.offset, firstOffset + i);
    assert.equal(r.timestamp, s.timestamp);
    assert.deepEqual(r.key, s.key);
    assert.deepEqual(r.value, s.value);
    assert.deepEqual(r.headers, (s.headers ?? []).map((h) => ({ key: h.key, value: h.value })));
  });
}

/** As the broker does on append: base offset and leader epoch sit outside the CRC. */
function stamp(batch: Buffer, baseOffset: number): Buffer {
  const copy = Buffer.from(batch);
  writeInt64(copy, BatchField.baseOffset, baseOffset);
  copy.writeInt32BE(7, BatchField.partitionLeaderEpoch);
  return copy;
}

function simple(n: number, from = 0): ProducerRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [{ key: 'h', value: Buffer.from([i]) }], timestamp: 1_700_000_000_000 + i,
  }));
}

function isBatchError(kind: RecordBatchErrorKind): (err: unknown) => boolean {
  return (err) => err instanceof RecordBatchError && err.kind === kind;
}

describe('encodeRecordBatch / decodeRecordBatches', () => {
  it('round-trips arbitrary records, producer fields and codecs', () => {
    fc.assert(fc.property(
      fc.array(recordArb, { minLength: 1, maxLength: 30 }), codecArb,
      fc.record({ producerId: fc.integer({ min: -1, max: 2 ** 40 }), producerEpoch: fc.integer({ min: -1, max: 32767 }), baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }) }),
      fc.integer({ min: 0, max: 2 ** 50 }),
      (records, compression, producer, baseOffset) => {
        const batch = stamp(encodeRecordBatch(records, { compression, ...producer }), baseOffset);
        const [decoded, ...rest] = decodeRecordBatches(batch);
        assert.equal(rest.length, 0);
        assert.ok(decoded !== undefined);
        assert.equal(decoded.baseOffset, baseOffset);
        assert.equal(decoded.lastOffset, baseOffset + records.length - 1);
        assert.equal(decoded.compression, compression);
        assert.equal(decoded.partitionLeaderEpoch, 7);
        assert.equal(decoded.producerId, producer.producerId);
        assert.equal(decoded.producerEpoch, producer.producerEpoch);
        assert.equal(decoded.baseSequence, producer.baseSequence);
        assert.equal(decoded.maxTimestamp, Math.max(...records.map((r) => r.timestamp)));
        assertSameRecords(decoded.records, records, baseOffset);
      },
    ), { numRuns: 300 });
  });

  it('decodes concatenated batches and ignores a truncated trailing batch', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 6 }), codecArb, fc.nat(), (counts, compression, cutSeed) => {
      const parts: Buffer[] = [];
      const sent: ProducerRecord[] = [];
      for (const n of counts) {
        const records = simple(n, sent.length);
        parts.push(stamp(encodeRecordBatch(records, { compression }), 100 + sent.length));
        sent.push(...records);
      }
      const whole = Buffer.concat(parts);
      assertSameRecords(decodeRecords(whole), sent, 100);
      const last = parts[parts.length - 1] as Buffer;
      const cut = whole.length - 1 - (cutSeed % last.length);
      const lastCount = counts[counts.length - 1] as number;
      assertSameRecords(decodeRecords(whole.subarray(0, cut)), sent.slice(0, sent.length - lastCount), 100);
    }));
  });

  it('encodes byte for byte what the independent test batch builder builds', () => {
    fc.assert(fc.property(fc.array(recordArb, { minLength: 1, maxLength: 10 }), fc.integer({ min: -1, max: 2 ** 40 }), (records, producerId) => {
      const base = (records[0] as ProducerRecord).timestamp;
      const expected = buildBatch({
        records: records.map((r) => ({ key: r.key, value: r.value, headers: (r.headers ?? []).map((h) => ({ key: h.key, value: h.value })), timestampDelta: r.timestamp - base })),
        baseTimestamp: base,
        producerId,
      });
      assert.deepEqual(encodeRecordBatch(records, { producerId }), expected);
    }));
  });

  it('decodeRecords skips control batches', () => {
    const control = buildBatch({ records: [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }], control: true, transactional: true, baseOffset: 3, producerId: 9, producerEpoch: 0, baseSequence: -1 });
    const data = stamp(encodeRecordBatch(simple(3)), 0);
    const after = stamp(encodeRecordBatch(simple(1, 3)), 4);
    const all = Buffer.concat([data, control, after]);
    assert.deepEqual(decodeRecordBatches(all).map((b) => b.control), [false, true, false]);
    assert.deepEqual(decodeRecords(all).map((r) => r.offset), [0, 1, 2, 4]);
  });

  it('decodeRecords skips records below the fetch offset inside a batch', () => {
    const batch = stamp(encodeRecordBatch(simple(5)), 10);
    assert.deepEqual(decodeRecords(batch, 12).map((r) => r.offset), [12, 13, 14]);
  });

  it('writes the header fields Kafka expects from a producer', () => {
    const batch = encodeRecordBatch(simple(3), { transactional: true, producerId: 5, producerEpoch: 1, baseSequence: 9 });
    assert.equal(batch.readInt32BE(BatchField.batchLength), batch.length - 12);
    assert.equal(batch.readInt8(BatchField.magic), 2);
    assert.equal(batch.readInt16BE(BatchField.attributes), 0x10);
    assert.equal(batch.readInt32BE(BatchField.lastOffsetDelta), 2);
    assert.equal(batch.readInt32BE(BatchField.recordsCount), 3);
    assert.equal(batch.readUInt32BE(BatchField.crc), crc32c(batch.subarray(21)));
    assert.equal(decodeRecordBatches(batch)[0]?.transactional, true);
  });

  it('uses maxTimestamp for every record of a LogAppendTime batch', () => {
    const batch = encodeRecordBatch(simple(3));
    batch.writeInt16BE(0x08, BatchField.attributes);
    writeInt64(batch, BatchField.maxTimestamp, 42);
    fixCrc(batch);
    assert.deepEqual(decodeRecords(batch).map((r) => r.timestamp), [42, 42, 42]);
  });

  it('rejects empty batches and codecs it cannot write', () => {
    assert.throws(() => encodeRecordBatch([]), RangeError);
    assert.throws(() => encodeRecordBatch(simple(1), { compression: CompressionCodec.zstd }), isBatchError(RecordBatchErrorKind.unsupportedCompression));
  });
});

describe('decode errors', () => {
  it('any flipped bit in the CRC-covered range is a crc error', () => {
    const batch = encodeRecordBatch(simple(4), { compression: CompressionCodec.gzip });
    fc.assert(fc.property(fc.integer({ min: BatchField.crc, max: batch.length - 1 }), fc.integer({ min: 0, max: 7 }), (at, bit) => {
      const bad = Buffer.from(batch);
      bad[at] = (bad[at] as number) ^ (1 << bit);
      assert.throws(() => decodeRecordBatches(bad), isBatchError(RecordBatchErrorKind.crc));
    }));
  });

  it('names snappy, lz4 and zstd batches as unsupported compression', () => {
    for (const codec of [CompressionCodec.snappy, CompressionCodec.lz4, CompressionCodec.zstd]) {
      const batch = encodeRecordBatch(simple(2));
      batch.writeInt16BE(codec, BatchField.attributes);
      fixCrc(batch);
      assert.throws(() => decodeRecordBatches(batch), (err: unknown) =>
        isBatchError(RecordBatchErrorKind.unsupportedCompression)(err) && /snappy|lz4|zstd/.test((err as Error).message));
    }
  });

  it('bounds gzip output', () => {
    const big = [{ key: null, value: Buffer.alloc(1 << 20), timestamp: 1 }];
    const batch = encodeRecordBatch(big, { compression: CompressionCodec.gzip });
    assert.ok(batch.length < 10_000);
    assert.throws(() => decodeRecordBatches(batch, { maxUncompressedBytes: 1 << 16 }), isBatchError(RecordBatchErrorKind.malformed));
    assert.equal(decodeRecords(batch)[0]?.value?.length, 1 << 20);
  });

  it('record counts that disagree with the bytes are malformed, not crashes', () => {
    fc.assert(fc.property(fc.integer({ min: -5, max: 1_000_000 }).filter((n) => n !== 3), (count) => {
      const batch = encodeRecordBatch(simple(3));
      batch.writeInt32BE(count, BatchField.recordsCount);
      fixCrc(batch);
      assert.throws(() => decodeRecordBatches(batch), isBatchError(RecordBatchErrorKind.malformed));
    }));
  });

  it('a length below the header size and a magic other than 2 are malformed', () => {
    const tiny = Buffer.alloc(20);
    tiny.writeInt32BE(8, BatchField.batchLength);
    assert.throws(() => decodeRecordBatches(tiny), isBatchError(RecordBatchErrorKind.malformed));
    const batch = encodeRecordBatch(simple(1));
    batch.writeInt8(1, BatchField.magic);
    assert.throws(() => decodeRecordBatches(batch), isBatchError(RecordBatchErrorKind.malformed));
  });
});

// kafkajs is CommonJS without typings for its internals; these shapes are what it exports.
interface KjsEncoder { buffer: Buffer }
type KjsRecord = (r: { offsetDelta: number; timestampDelta: number; key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer> }) => KjsEncoder;
type KjsBatch = (b: Record<string, unknown>) => Promise<KjsEncoder>;
interface KjsDecodedRecord { offset: string; timestamp: string; key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer> }
type KjsBatchDecoder = (d: unknown) => Promise<{ records: KjsDecodedRecord[] }>;

const require = createRequire(import.meta.url);
const kjsRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as KjsRecord;
const kjsBatch = (require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: KjsBatch }).RecordBatch;
const kjsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as KjsBatchDecoder;
const KjsDecoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => unknown;

describe('interop with kafkajs 2.2.4 batches', () => {
  for (const compression of [CompressionCodec.none, CompressionCodec.gzip]) {
    it(`decodes a batch kafkajs encoded (codec ${compression})`, async () => {
      const base = 1_700_000_000_000;
      const records = Array.from({ length: 20 }, (_, i) => kjsRecord({
        offsetDelta: i, timestampDelta: i * 3, key: i % 4 === 0 ? null : Buffer.from(`key-${i}`), value: Buffer.from(`value-${i}`.repeat(i)),
        headers: { trace: Buffer.from(`t${i}`), 'ünï': Buffer.from([i, 0, 255]) },
      }));
      const encoded = await kjsBatch({ compression, firstTimestamp: base, maxTimestamp: base + 57, lastOffsetDelta: 19, records });
      const batch = stamp(encoded.buffer, 1000);
      const [decoded] = decodeRecordBatches(batch);
      assert.ok(decoded !== undefined);
      assert.equal(decoded.compression, compression);
      decoded.records.forEach((r, i) => {
        assert.equal(r.offset, 1000 + i);
        assert.equal(r.timestamp, base + i * 3);
        assert.deepEqual(r.key, i % 4 === 0 ? null : Buffer.from(`key-${i}`));
        assert.deepEqual(r.value, Buffer.from(`value-${i}`.repeat(i)));
        assert.deepEqual(r.headers, [{ key: 'trace', value: Buffer.from(`t${i}`) }, { key: 'ünï', value: Buffer.from([i, 0, 255]) }]);
      });
      assert.equal(decoded.records.length, 20);
    });

    it(`kafkajs decodes a batch we encoded (codec ${compression})`, async () => {
      const sent = simple(12);
      const batch = stamp(encodeRecordBatch(sent, { compression }), 50);
      const { records } = await kjsBatchDecoder(new KjsDecoder(batch));
      assert.equal(records.length, 12);
      records.forEach((r, i) => {
        const s = sent[i] as ProducerRecord;
        assert.equal(r.offset, String(50 + i));
        assert.equal(r.timestamp, String(s.timestamp));
        assert.deepEqual(r.key, s.key);
        assert.deepEqual(r.value, s.value);
        assert.deepEqual(r.headers, { h: Buffer.from([i]) });
      });
    });
  }
});
