// The descriptor budget's accounting as a property: whatever sequence of tries and releases,
// what is held never exceeds the limit minus the reserve, a refused try takes nothing, and
// releasing everything taken restores the whole capacity. The reserve grows by each shard's own
// segment reader when connections are placed on the shards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DescriptorBudget, SHARD_READER_FDS, reservedDescriptors, type DescriptorUse } from '../../../src/common/descriptor_budget.js';

const use = fc.constantFrom<DescriptorUse>('partitions', 'connections');

describe('DescriptorBudget', () => {
  it('never hands out more than limit minus reserve; refusals take nothing; releases restore', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.array(fc.tuple(fc.boolean(), use, fc.integer({ min: 1, max: 300 })), { maxLength: 100 }),
        (limit, reserved, ops) => {
          const budget = new DescriptorBudget(limit, reserved);
          const taken: Array<[DescriptorUse, number]> = [];
          for (const [take, u, n] of ops) {
            const before = budget.holding(u);
            if (take) {
              const ok = budget.tryAcquire(u, n);
              assert.equal(ok, before + n + budget.holding(u === 'partitions' ? 'connections' : 'partitions') <= Math.max(0, limit - reserved));
              assert.equal(budget.holding(u), ok ? before + n : before);
              if (ok) taken.push([u, n]);
            } else if (taken.length > 0) {
              const [tu, tn] = taken.pop()!;
              budget.release(tu, tn);
            }
            assert.ok(budget.used <= Math.max(0, limit - reserved));
            assert.ok(budget.free >= 0);
          }
          for (const [tu, tn] of taken) budget.release(tu, tn);
          assert.equal(budget.used, 0);
          assert.equal(budget.free, Math.max(0, limit - reserved));
        },
      ),
    );
  });

  it('forced acquisitions may exceed the capacity, and then every try is refused until releases', () => {
    const budget = new DescriptorBudget(100, 40);
    budget.acquire('partitions', 70);
    assert.equal(budget.free, -10);
    assert.equal(budget.tryAcquire('connections', 2), false);
    budget.release('partitions', 20);
    assert.equal(budget.tryAcquire('connections', 2), true);
    assert.throws(() => budget.release('connections', 3), /releasing 3 connections descriptors, 2 held/);
  });
});

describe('reservedDescriptors', () => {
  it('sets aside each shard\'s segment reader only when connections are placed on the shards', () => {
    for (const shards of [1, 3]) {
      const shape = { shards, sealedPerShard: 100, readerCache: 50, adminConnections: 10 };
      const placed = reservedDescriptors({ ...shape, placedConnections: true });
      assert.equal(placed - reservedDescriptors({ ...shape, placedConnections: false }), shards * SHARD_READER_FDS);
    }
  });
});
