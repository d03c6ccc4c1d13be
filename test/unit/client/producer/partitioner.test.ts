// DefaultPartitioner: keyed records hash like murmur2 regardless of availability; keyless
// records stick to one partition per topic until its batch is done, then move to a different
// one, preferring partitions with a leader; the sticky map stays bounded.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DefaultPartitioner } from '../../../../src/client/producer/partitioner.js';
import { partitionForKey } from '../../../../src/client/producer/murmur2.js';

/** A deterministic random source cycling through `values`. */
function cycle(values: readonly number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] as number;
}

describe('DefaultPartitioner', () => {
  it('routes keyed records by murmur2 over all partitions, ignoring availability', () => {
    const p = new DefaultPartitioner();
    fc.assert(fc.property(fc.uint8Array({ maxLength: 32 }), fc.integer({ min: 1, max: 64 }), (bytes, count) => {
      const key = Buffer.from(bytes);
      assert.equal(p.partition('t', key, count, [0]), partitionForKey(key, count));
    }));
  });

  it('sticks keyless records to one partition until its batch is done', () => {
    const p = new DefaultPartitioner({ random: cycle([0.5, 0.1, 0.9]) });
    const first = p.partition('t', null, 10);
    assert.equal(first, 5);
    for (let i = 0; i < 50; i++) assert.equal(p.partition('t', null, 10), first);
    p.onBatchDone('t', 3, 10); // not the sticky partition: no move
    assert.equal(p.partition('t', null, 10), first);
    p.onBatchDone('t', first, 10);
    const second = p.partition('t', null, 10);
    assert.equal(second, 1);
    assert.notEqual(second, first);
  });

  it('never moves to the same partition when another exists', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 0.9999999, noNaN: true }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 2, max: 8 }), (rands, count) => {
      const p = new DefaultPartitioner({ random: cycle(rands) });
      let current = p.partition('t', null, count);
      for (let i = 0; i < 20; i++) {
        p.onBatchDone('t', current, count);
        const next = p.partition('t', null, count);
        assert.notEqual(next, current);
        assert.ok(next >= 0 && next < count);
        current = next;
      }
    }));
  });

  it('picks only among available partitions and leaves one that lost its leader', () => {
    const p = new DefaultPartitioner({ random: cycle([0, 0.99]) });
    assert.equal(p.partition('t', null, 10, [4, 7]), 4);
    assert.equal(p.partition('t', null, 10, [4, 7]), 4);
    assert.equal(p.partition('t', null, 10, [2, 7]), 7);
  });

  it('keeps topics independent and forgets the oldest past maxTopics', () => {
    const p = new DefaultPartitioner({ random: cycle([0.0, 0.5, 0.99, 0.3]), maxTopics: 2 });
    assert.equal(p.partition('a', null, 4), 0);
    assert.equal(p.partition('b', null, 4), 2);
    assert.equal(p.partition('c', null, 4), 3); // evicts 'a'
    assert.equal(p.partition('b', null, 4), 2);
    assert.equal(p.partition('a', null, 4), 1); // forgotten, so picked afresh; evicts 'b'
    assert.equal(p.partition('c', null, 4), 3);
  });
});
