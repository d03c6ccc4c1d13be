// FramePool: a buffer is lent to one frame at a time whatever the order of takes and gives (a
// buffer given back twice, or never lent, changes nothing), idle bytes stay under the bound, and a
// frame given back serves the next one of its size class.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FramePool } from '../../../src/common/frame_pool.js';

const MIN = 1024;
const BOUND = 64 * 1024;

describe('FramePool', () => {
  it('never lends bytes a frame still holds, and keeps idle bytes under its bound (property)', () => {
    const op = fc.oneof(
      fc.record({ take: fc.integer({ min: 1, max: BOUND / 2 }) }), // past the quarter bound too
      fc.record({ give: fc.nat(), twice: fc.boolean() }),
      fc.record({ stranger: fc.integer({ min: 1, max: 4 * MIN }) }),
    );
    fc.assert(fc.property(fc.array(op, { minLength: 10, maxLength: 200 }), (ops) => {
      const pool = new FramePool(BOUND, MIN);
      const live: Array<{ buf: Buffer; stamp: number }> = [];
      let stamp = 0;
      for (const o of ops) {
        if ('take' in o) {
          const buf = pool.take(o.take);
          assert.equal(buf.length, o.take);
          for (const l of live) assert.notEqual(l.buf.buffer, buf.buffer, 'a lent buffer was lent again');
          buf.fill(++stamp & 0xff);
          live.push({ buf, stamp: stamp & 0xff });
        } else if ('give' in o) {
          if (live.length === 0) continue;
          const [gone] = live.splice(o.give % live.length, 1);
          pool.give(gone!.buf);
          if (o.twice) pool.give(gone!.buf);
        } else {
          pool.give(Buffer.alloc(o.stranger)); // never lent: ignored
        }
        for (const l of live) assert.ok(l.buf.every((x) => x === l.stamp), 'a lent frame was overwritten');
        assert.ok(pool.pooledBytes <= BOUND, `${pool.pooledBytes} idle bytes over the bound`);
      }
    }), { numRuns: 300 });
  });

  it('lends a given-back buffer to the next frame of its size class only', () => {
    const pool = new FramePool(BOUND, MIN);
    const a = pool.take(3000); // 4 KiB class
    pool.give(a);
    assert.equal(pool.pooledBytes, 4096);
    assert.notEqual(pool.take(5000).buffer, a.buffer, 'an 8 KiB-class frame took a 4 KiB buffer');
    const b = pool.take(4096);
    assert.equal(b.buffer, a.buffer);
    assert.equal(pool.pooledBytes, 0);
    const big = pool.take(BOUND / 2); // over a quarter of the bound: its own buffer, never pooled
    pool.give(big);
    assert.equal(pool.pooledBytes, 0);
  });
});
