// Ring message codecs: every ListOffsets request and result, and every produce header, read back
// exactly as written, wherever in the ring's memory it was written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MsgType,
  PRODUCE_HEADER_BYTES,
  listOffsetsBytes,
  listOffsetsResultBytes,
  readListOffsets,
  readListOffsetsResult,
  readProduce,
  writeListOffsets,
  writeListOffsetsResult,
  writeProduce,
} from '../../../src/actors/ring_messages.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const offset = fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER });
const timestamp = fc.oneof(fc.constantFrom(-1, -2, -3), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const at = fc.integer({ min: 0, max: 64 }).map((n) => n * 8);

describe('ring messages', () => {
  it('LIST_OFFSETS round-trips', () => {
    const ask = fc.record({
      reqId: u32,
      partitions: fc.array(fc.record({ slot: u32, handle: u32, timestamp }), { maxLength: 40 }),
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

  it('PRODUCE header round-trips and the records follow it', () => {
    fc.assert(
      fc.property(fc.record({ reqId: u32, slot: u32, handle: u32, timeoutMs: fc.integer({ min: 0, max: 0x7fffffff }) }), fc.uint8Array({ maxLength: 64 }), at, (ask, records, pos) => {
        const b = Buffer.alloc(pos + PRODUCE_HEADER_BYTES + records.length, 0xee);
        writeProduce(b, pos, ask, Buffer.from(records));
        assert.deepEqual(readProduce(b, pos), structuredClone(ask));
        assert.deepEqual(new Uint8Array(b.subarray(pos + PRODUCE_HEADER_BYTES)), records);
      }),
    );
  });
});
