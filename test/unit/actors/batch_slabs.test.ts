// Recycled batch memory: live batches never share bytes, whatever the order of takes and
// releases, each starts at its source's address modulo 8, and released slabs are reused (that is
// the point: no new memory per batch).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BatchSlabs, type BatchLease } from '../../../src/actors/batch_slabs.js';

const SLAB = 4096;

function overlaps(a: Buffer, b: Buffer): boolean {
  if (a.buffer !== b.buffer || a.length === 0 || b.length === 0) return false;
  return a.byteOffset < b.byteOffset + b.length && b.byteOffset < a.byteOffset + a.length;
}

describe('BatchSlabs', () => {
  it('never hands out bytes a live batch still holds (property)', () => {
    const op = fc.oneof(
      fc.record({ take: fc.integer({ min: 0, max: 1500 }), from: fc.nat(64) }), // up to and past a quarter slab
      fc.record({ release: fc.nat() }),
    );
    fc.assert(fc.property(fc.array(op, { minLength: 20, maxLength: 300, size: 'max' }), (ops) => {
      const slabs = new BatchSlabs(SLAB, 2);
      const live: Array<BatchLease & { stamp: number }> = [];
      let stamp = 0;
      for (const o of ops) {
        if ('take' in o) {
          const lease = slabs.take(o.take, o.from);
          assert.equal(lease.buf.length, o.take);
          // At the source's address modulo 8, so a copy out of a ring's shared memory runs a word at a time.
          if (lease.slab !== null) assert.equal((lease.buf.byteOffset - o.from) & 7, 0, 'a batch not co-aligned with its source');
          for (const l of live) assert.ok(!overlaps(l.buf, lease.buf), 'a live batch shares bytes with a new one');
          lease.buf.fill(++stamp & 0xff);
          live.push({ ...lease, stamp: stamp & 0xff });
        } else if (live.length > 0) {
          const [gone] = live.splice(o.release % live.length, 1);
          slabs.release(gone!.slab);
        }
        // Every live batch still holds what was written into it.
        for (const l of live) assert.ok(l.buf.every((x) => x === l.stamp), 'a live batch was overwritten');
        assert.ok(slabs.idleSlabs <= 2);
      }
    }), { numRuns: 300 });
  });

  it('reuses a slab once all its batches are released', () => {
    const slabs = new BatchSlabs(SLAB, 4);
    const first = Array.from({ length: 8 }, () => slabs.take(600)); // spans two slabs
    const firstSlab = first[0]!.buf.buffer;
    for (const l of first) slabs.release(l.slab);
    const again = Array.from({ length: 8 }, () => slabs.take(600));
    assert.ok(again.some((l) => l.buf.buffer === firstSlab), 'the released slab was not reused');
    const big = slabs.take(SLAB);
    assert.equal(big.slab, null);
  });
});
