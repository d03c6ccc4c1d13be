// Ring message codecs: every offset-lookup request and result, every produce header, and every
// fetch request and result, read back exactly as written, wherever in the ring's memory it was written;
// a fetch result cut to fit a ring (fitFetchResult) fits it and keeps a prefix of each partition's ranges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MsgType,
  OffsetLookupBy,
  fetchBytes,
  fetchResultBytes,
  fitFetchResult,
  listOffsetsBytes,
  listOffsetsResultBytes,
  produceMessageBytes,
  produceRecordsAt,
  readFetch,
  readFetchResult,
  readListOffsets,
  readListOffsetsResult,
  readProduce,
  writeFetch,
  writeFetchResult,
  writeListOffsets,
  writeListOffsetsResult,
  writeProduce,
} from '../../../src/actors/ring_messages.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const offset = fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER });
const timestamp = fc.oneof(fc.constantFrom(-1, -2, -3), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const at = fc.integer({ min: 0, max: 64 }).map((n) => n * 8);
const epoch = fc.integer({ min: -1, max: 0x7fffffff });

/** One partition of a FETCH_RESULT: up to `maxRanges` file ranges whose paths are `path` strings. */
function fetchPart(path: fc.Arbitrary<string>, maxRanges: number, diverging: fc.Arbitrary<{ epoch: number; endOffset: number } | null>) {
  return fc.record({
    slot: u32,
    errorCode: fc.integer({ min: -1, max: 120 }),
    highWatermark: offset,
    logStartOffset: offset,
    ranges: fc.array(fc.record({ path, position: fc.nat(), length: u32 }), { maxLength: maxRanges }),
    diverging,
  });
}

describe('ring messages', () => {
  it('LIST_OFFSETS round-trips', () => {
    const ask = fc.record({
      reqId: u32,
      by: fc.constantFrom(OffsetLookupBy.TIMESTAMP, OffsetLookupBy.EPOCH_END),
      partitions: fc.array(fc.record({ slot: u32, handle: u32, key: fc.oneof(timestamp, epoch) }), { maxLength: 40 }),
    });
    fc.assert(
      fc.property(ask, at, (a, pos) => {
        const b = Buffer.alloc(pos + listOffsetsBytes(a.partitions.length), 0xee);
        writeListOffsets(b, pos, a);
        assert.equal(b[pos], MsgType.LIST_OFFSETS);
        assert.deepEqual(readListOffsets(b, pos), structuredClone(a));
      }),
    );
  });

  it('LIST_OFFSETS_RESULT round-trips', () => {
    const part = fc.record({
      slot: u32,
      errorCode: fc.integer({ min: -1, max: 120 }),
      offset,
      timestamp: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      leaderEpoch: fc.integer({ min: -1, max: 0x7fffffff }),
    });
    fc.assert(
      fc.property(u32, fc.array(part, { maxLength: 40 }), at, (reqId, parts, pos) => {
        const b = Buffer.alloc(pos + listOffsetsResultBytes(parts.length), 0xee);
        writeListOffsetsResult(b, pos, reqId, parts);
        assert.equal(b[pos], MsgType.LIST_OFFSETS_RESULT);
        assert.deepEqual(readListOffsetsResult(b, pos), structuredClone({ reqId, parts }));
      }),
    );
  });

  it('PRODUCE header round-trips and the records follow it at their source\'s address modulo 8', () => {
    fc.assert(
      fc.property(fc.record({ reqId: u32, slot: u32, handle: u32, acks: fc.constantFrom(0, 1, -1), timeoutMs: fc.integer({ min: 0, max: 0x7fffffff }), leaderEpoch: fc.integer({ min: 0, max: 0x7fffffff }) }), fc.uint8Array({ maxLength: 64 }), at, fc.nat(15), (ask, records, pos, srcAt) => {
        const b = Buffer.alloc(pos + produceMessageBytes(records.length), 0xee);
        const src = Buffer.alloc(srcAt + records.length);
        src.set(records, srcAt);
        const used = writeProduce(b, pos, ask, src.subarray(srcAt));
        assert.ok(used <= produceMessageBytes(records.length), `${used} bytes used of the room reserved`);
        assert.deepEqual(readProduce(b, pos), structuredClone(ask));
        const from = produceRecordsAt(b, pos);
        assert.deepEqual(new Uint8Array(b.subarray(from, pos + used)), records);
        // Co-aligned: the copy into (and later out of) a ring's shared memory runs a word at a time.
        assert.equal((b.byteOffset + from - srcAt) & 7, 0);
      }),
    );
  });

  it('FETCH round-trips, last fetched epochs and a follower\'s replica fields included', () => {
    const ask = fc.record({
      reqId: u32,
      flags: fc.integer({ min: 0, max: 1 }),
      replicaId: fc.integer({ min: -1, max: 0x7fffffff }),
      replicaEpoch: offset,
      maxWaitMs: u32,
      minBytes: u32,
      maxBytes: u32,
      partitions: fc.array(fc.record({ slot: u32, handle: u32, fetchOffset: offset, partitionMaxBytes: u32, lastFetchedEpoch: epoch, currentLeaderEpoch: epoch, logStartOffset: offset }), { maxLength: 40 }),
    });
    fc.assert(
      fc.property(ask, at, (a, pos) => {
        const b = Buffer.alloc(pos + fetchBytes(a.partitions.length), 0xee);
        writeFetch(b, pos, a);
        assert.deepEqual(readFetch(b, pos), structuredClone(a));
      }),
    );
  });

  it('FETCH_RESULT round-trips, with or without a diverging epoch', () => {
    const part = fetchPart(fc.string({ maxLength: 30 }), 3, fc.option(fc.record({ epoch: fc.integer({ min: 0, max: 0x7fffffff }), endOffset: offset }), { nil: null }));
    fc.assert(
      fc.property(u32, fc.array(part, { maxLength: 20 }), at, fc.boolean(), (reqId, parts, pos, waited) => {
        const b = Buffer.alloc(pos + fetchResultBytes(parts), 0xee);
        writeFetchResult(b, pos, reqId, parts, waited);
        assert.deepEqual(readFetchResult(b, pos), structuredClone({ reqId, parts, waited }));
      }),
    );
  });

  it('a FETCH_RESULT cut by fitFetchResult fits its bound and keeps each partition whole but for a prefix of its ranges', () => {
    const part = fetchPart(fc.string({ minLength: 1, maxLength: 200 }), 40, fc.constant(null));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 30 }), fc.integer({ min: 2048, max: 64 << 10 }), (parts, maxBytes) => {
        const cut = fitFetchResult(parts, maxBytes);
        assert.ok(fetchResultBytes(cut) <= maxBytes, `${fetchResultBytes(cut)} bytes over a bound of ${maxBytes}`);
        assert.equal(cut.length, parts.length, 'every partition answers');
        cut.forEach((c, i) => {
          const p = parts[i]!;
          assert.deepEqual({ ...c, ranges: [] }, { ...p, ranges: [] }, 'the partition\'s own fields unchanged');
          assert.deepEqual(c.ranges, p.ranges.slice(0, c.ranges.length), 'a prefix of its ranges');
        });
        if (fetchResultBytes(parts) <= maxBytes) assert.deepEqual(cut, parts, 'what fits is not cut');
        const first = parts.findIndex((p) => p.ranges.length > 0);
        if (first >= 0) assert.ok(cut[first]!.ranges.length > 0, 'the first range is always kept');
      }),
    );
  });
});
