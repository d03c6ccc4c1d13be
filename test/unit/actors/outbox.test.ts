// A shard's Outbox over a ring smaller than a fetch answer's file ranges (a mesh ring under many
// shards, shard_mesh.ts): the answer is written cut to the ring's message bound, each partition
// keeping a prefix of its ranges, instead of failing the write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Outbox } from '../../../src/actors/outbox.js';
import { RingDoorbell } from '../../../src/actors/ring_doorbell.js';
import { SpscRing } from '../../../src/actors/ring_buffer.js';
import { MsgType, fetchResultBytes, readFetchResult, type FetchPartitionResult } from '../../../src/actors/ring_messages.js';

const RING_BYTES = 64 << 10;
const RANGES_PER_PARTITION = 200;

function partition(slot: number): FetchPartitionResult {
  const ranges = Array.from({ length: RANGES_PER_PARTITION }, (_, i) => ({ path: `/data/t-${slot}/${String(i).padStart(20, '0')}.log`.padEnd(100, 'x'), position: i * 512, length: 512 }));
  return { slot, errorCode: 0, highWatermark: 1000, logStartOffset: 0, ranges, diverging: null };
}

describe('Outbox', () => {
  it('writes a fetch answer larger than its ring can carry cut to the ring\'s bound', () => {
    const ring = new SpscRing(SpscRing.allocate(RING_BYTES), RingDoorbell.loopback());
    const parts = [partition(0), partition(1)];
    assert.ok(fetchResultBytes(parts) > ring.maxMessageBytes, 'the whole answer would not fit');
    new Outbox(ring).send({ kind: 'fetch', reqId: 7, parts, waited: false });

    const at = ring.peek();
    assert.ok(at >= 0, 'written at once');
    assert.equal(ring.bytes[at], MsgType.FETCH_RESULT);
    const read = readFetchResult(ring.bytes, at);
    assert.equal(read.reqId, 7);
    assert.deepEqual(read.parts[0]!.ranges, parts[0]!.ranges, 'the first partition fits whole');
    const kept = read.parts[1]!.ranges.length;
    assert.ok(kept > 0 && kept < RANGES_PER_PARTITION, `the second keeps part of its ranges (${kept})`);
    assert.deepEqual(read.parts[1]!.ranges, parts[1]!.ranges.slice(0, kept), 'a prefix, in order');
    assert.equal(read.parts[1]!.highWatermark, 1000);
  });
});
