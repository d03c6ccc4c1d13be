// Record batch v2 helpers: header reads, CRC, in-place rewrites, produce validation in Kafka's order,
// and the record walk used for timestamp lookups.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  BATCH_HEADER_BYTES,
  batchCrcMatches,
  crc32c,
  lastSequence,
  readBatchHeader,
  setLogAppendTime,
  stampBatch,
  validateProducedBatch,
} from '../../../src/protocol/record_batch.js';
import { firstRecordAtOrAfter } from '../../../src/log/record_scan.js';
import { buildBatch, DEFAULT_TIMESTAMP, fixCrc, makeRecords, type TestRecord } from './batch_builder.js';

const MAX = 1 << 20;

function errorOf(buf: Buffer, max = MAX): number {
  const r = validateProducedBatch(buf, max);
  return r.ok ? ErrorCode.NONE : r.error;
}

describe('crc32c', () => {
  it('matches the Castagnoli check value', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(0)), 0);
  });
});

describe('readBatchHeader', () => {
  it('reads every field of a built batch', () => {
    const b = buildBatch({
      records: makeRecords(3, 10),
      baseOffset: 2 ** 40 + 7,
      producerId: 2 ** 45,
      producerEpoch: 3,
      baseSequence: 17,
      partitionLeaderEpoch: 9,
      baseTimestamp: DEFAULT_TIMESTAMP,
    });
    const h = readBatchHeader(b, 0);
    assert.equal(h.baseOffset, 2 ** 40 + 7);
    assert.equal(h.batchLength, b.length - 12);
    assert.equal(h.partitionLeaderEpoch, 9);
    assert.equal(h.magic, 2);
    assert.equal(h.attributes, 0);
    assert.equal(h.lastOffsetDelta, 2);
    assert.equal(h.baseTimestamp, DEFAULT_TIMESTAMP);
    assert.equal(h.maxTimestamp, DEFAULT_TIMESTAMP + 2);
    assert.equal(h.producerId, 2 ** 45);
    assert.equal(h.producerEpoch, 3);
    assert.equal(h.baseSequence, 17);
    assert.equal(h.recordsCount, 3);
    assert.equal(h.crc, b.readUInt32BE(17));
  });

  it('reads -1 int64 fields as -1', () => {
    const h = readBatchHeader(buildBatch({ records: makeRecords(1, 1), baseOffset: -1 }), 0);
    assert.equal(h.baseOffset, -1);
    assert.equal(h.producerId, -1);
    assert.equal(h.producerEpoch, -1);
    assert.equal(h.baseSequence, -1);
  });
});

describe('validateProducedBatch', () => {
  const good = (): Buffer => buildBatch({ records: makeRecords(5, 20) });

  it('accepts a well-formed batch and returns its header', () => {
    const r = validateProducedBatch(good(), MAX);
    assert.ok(r.ok);
    assert.equal(r.header.recordsCount, 5);
  });

  it('accepts a non-zero client baseOffset (rewritten on append)', () => {
    assert.equal(errorOf(buildBatch({ records: makeRecords(2, 5), baseOffset: 12345 })), ErrorCode.NONE);
  });

  it('accepts idempotent and transactional batches with a sequence', () => {
    const b = buildBatch({ records: makeRecords(2, 5), producerId: 1, producerEpoch: 0, baseSequence: 0, transactional: true });
    assert.equal(errorOf(b), ErrorCode.NONE);
  });

  it('INVALID_RECORD without exactly one v2 batch filling the buffer', () => {
    assert.equal(errorOf(Buffer.alloc(0)), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(Buffer.alloc(16)), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(fixCrc(buildBatch({ records: makeRecords(1, 5), magic: 1 }))), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(Buffer.concat([good(), good()])), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(good().subarray(0, 70)), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(Buffer.concat([good(), Buffer.alloc(3)])), ErrorCode.INVALID_RECORD);
  });

  it('MESSAGE_TOO_LARGE before checking the CRC', () => {
    const b = good();
    assert.equal(errorOf(b, b.length), ErrorCode.NONE);
    assert.equal(errorOf(b, b.length - 1), ErrorCode.MESSAGE_TOO_LARGE);
    b[b.length - 1]! ^= 0xff;
    assert.equal(errorOf(b, b.length - 1), ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('CORRUPT_MESSAGE for a short batch or a CRC mismatch', () => {
    const short = Buffer.alloc(40);
    short.writeInt32BE(28, 8);
    short.writeInt8(2, 16);
    assert.equal(errorOf(short), ErrorCode.CORRUPT_MESSAGE);
    const b = good();
    b[BATCH_HEADER_BYTES + 3]! ^= 0x01;
    assert.equal(errorOf(b), ErrorCode.CORRUPT_MESSAGE);
  });

  it('INVALID_RECORD when lastOffsetDelta and the record count disagree or the count is not positive', () => {
    assert.equal(errorOf(buildBatch({ records: makeRecords(3, 5), lastOffsetDelta: 1 })), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(buildBatch({ records: makeRecords(3, 5), recordsCount: 4 })), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(buildBatch({ records: [], lastOffsetDelta: -1, recordsCount: 0 })), ErrorCode.INVALID_RECORD);
  });

  it('INVALID_RECORD for a control batch, an unknown codec, or a producer id without sequence', () => {
    assert.equal(errorOf(buildBatch({ records: makeRecords(1, 5), control: true, transactional: true })), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(buildBatch({ records: makeRecords(1, 5), compression: 5 })), ErrorCode.INVALID_RECORD);
    assert.equal(errorOf(buildBatch({ records: makeRecords(1, 5), producerId: 7, producerEpoch: 0, baseSequence: -1 })), ErrorCode.INVALID_RECORD);
  });

  it('INVALID_TIMESTAMP when the client sets LogAppendTime', () => {
    assert.equal(errorOf(buildBatch({ records: makeRecords(1, 5), logAppendTime: true })), ErrorCode.INVALID_TIMESTAMP);
  });

  it('checks in Kafka order: structure, size, CRC, then batch fields', () => {
    // A control batch with a bad CRC is reported as corrupt, not as a control batch.
    const b = buildBatch({ records: makeRecords(1, 5), control: true });
    b[b.length - 1]! ^= 1;
    assert.equal(errorOf(b), ErrorCode.CORRUPT_MESSAGE);
  });

  it('property: flipping any byte is caught by the check that covers it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (n, at, mask) => {
        const b = buildBatch({ records: makeRecords(n, 7) });
        const i = at % b.length;
        b[i]! ^= mask;
        const code = errorOf(b);
        if (i < 8 || (i >= 12 && i < 16)) assert.equal(code, ErrorCode.NONE); // outside the CRC
        else if (i === 16) assert.equal(code, ErrorCode.INVALID_RECORD); // magic
        else if (i >= 17) assert.equal(code, ErrorCode.CORRUPT_MESSAGE);
        else assert.notEqual(code, ErrorCode.NONE); // batchLength
      }),
      { numRuns: 500 },
    );
  });

  it('property: any built batch validates and round-trips its header', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.option(fc.string()), value: fc.option(fc.uint8Array({ maxLength: 64 })), timestampDelta: fc.nat(100000) }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: -1, max: 2 ** 40 }),
        (recs, pid) => {
          const records: TestRecord[] = recs.map((r) => ({ key: r.key, value: r.value ? Buffer.from(r.value) : null, timestampDelta: r.timestampDelta }));
          const b = buildBatch({ records, producerId: pid, producerEpoch: pid < 0 ? -1 : 1, baseSequence: pid < 0 ? -1 : 5 });
          const r = validateProducedBatch(b, MAX);
          assert.ok(r.ok);
          assert.equal(r.header.producerId, pid);
          assert.equal(r.header.recordsCount, records.length);
          assert.equal(r.header.maxTimestamp, DEFAULT_TIMESTAMP + Math.max(...recs.map((x) => x.timestampDelta)));
        },
      ),
    );
  });
});

describe('in-place rewrites', () => {
  it('stampBatch sets offset and leader epoch without breaking the CRC', () => {
    const b = buildBatch({ records: makeRecords(4, 10) });
    stampBatch(b, 2 ** 33 + 5, 7);
    const h = readBatchHeader(b, 0);
    assert.equal(h.baseOffset, 2 ** 33 + 5);
    assert.equal(h.partitionLeaderEpoch, 7);
    assert.ok(batchCrcMatches(b, 0, b.length));
  });

  it('setLogAppendTime sets the attribute bit and maxTimestamp and recomputes the CRC', () => {
    const b = buildBatch({ records: makeRecords(4, 10), compression: 0 });
    setLogAppendTime(b, 1_800_000_000_123);
    const h = readBatchHeader(b, 0);
    assert.equal(h.attributes & 0x08, 0x08);
    assert.equal(h.maxTimestamp, 1_800_000_000_123);
    assert.ok(batchCrcMatches(b, 0, b.length));
  });
});

describe('lastSequence', () => {
  it('wraps from Int32.MAX to 0', () => {
    assert.equal(lastSequence(10, 4), 14);
    assert.equal(lastSequence(0x7fffffff, 0), 0x7fffffff);
    assert.equal(lastSequence(0x7fffffff, 1), 0);
    assert.equal(lastSequence(0x7ffffffe, 3), 1);
  });
});

describe('firstRecordAtOrAfter', () => {
  it('finds the first record at or after a timestamp (model check)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 30 }), fc.integer({ min: -5, max: 1100 }), (deltas, t) => {
        const b = buildBatch({ records: deltas.map((d, i) => ({ key: `k${i}`, value: 'v'.repeat(i), timestampDelta: d })) });
        const target = DEFAULT_TIMESTAMP + t;
        const i = deltas.findIndex((d) => DEFAULT_TIMESTAMP + d >= target);
        const got = firstRecordAtOrAfter(b, target);
        if (i < 0) assert.equal(got, null);
        else assert.deepEqual(got, { offsetDelta: i, timestamp: DEFAULT_TIMESTAMP + deltas[i]! });
      }),
    );
  });

  it('declines compressed and LogAppendTime batches and malformed records', () => {
    assert.equal(firstRecordAtOrAfter(buildBatch({ records: makeRecords(2, 3), compression: 1 }), 0), null);
    const lat = buildBatch({ records: makeRecords(2, 3) });
    setLogAppendTime(lat, DEFAULT_TIMESTAMP);
    assert.equal(firstRecordAtOrAfter(lat, 0), null);
    const cut = buildBatch({ records: makeRecords(3, 30) });
    assert.equal(firstRecordAtOrAfter(cut.subarray(0, 70), DEFAULT_TIMESTAMP + 2), null);
  });
});
