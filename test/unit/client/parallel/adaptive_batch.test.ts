// AdaptiveFetchSizer: answers stay within bounds for any completion history, track a steady
// rate to about one target buffer of work, and subtract what is already buffered.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AdaptiveFetchSizer } from '../../../../src/client/parallel/adaptive_batch.js';

const options = { minBytes: 1024, maxBytes: 1 << 20, minRecords: 10, maxRecords: 5000, targetBufferMs: 1000 };

describe('AdaptiveFetchSizer', () => {
  it('stays within its bounds', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: 10_000 }), fc.nat({ max: 100_000 }), fc.nat({ max: 500 }), fc.nat({ max: 20_000 }))), (steps) => {
        const sizer = new AdaptiveFetchSizer(options);
        let now = 0;
        for (const [records, bytesPer, dt, buffered] of steps) {
          now += dt;
          sizer.completed(records, records * bytesPer, now);
          const size = sizer.next(buffered, now);
          assert.ok(size.maxRecords >= options.minRecords && size.maxRecords <= options.maxRecords);
          assert.ok(size.maxBytes >= options.minBytes && size.maxBytes <= options.maxBytes);
          assert.ok(Number.isInteger(size.maxRecords) && Number.isInteger(size.maxBytes));
        }
      }),
    );
  });

  it('converges on one target buffer of work at a steady rate', () => {
    const sizer = new AdaptiveFetchSizer(options);
    assert.deepEqual(sizer.next(0, 0), { maxRecords: 10, maxBytes: 1024 }); // cold start: the floor
    // 2000 records/s of 200 bytes, reported every 10 ms for 20 s.
    for (let now = 10; now <= 20_000; now += 10) sizer.completed(20, 4000, now);
    assert.ok(Math.abs(sizer.rate - 2000) < 20, `rate ${sizer.rate}`);
    const size = sizer.next(0, 20_000);
    assert.ok(Math.abs(size.maxRecords - 2000) < 20);
    assert.ok(Math.abs(size.maxBytes - 400_000) < 5000);
    assert.ok(sizer.next(1500, 20_000).maxRecords < 520); // most of the target is already buffered
    assert.equal(sizer.next(10_000, 20_000).maxRecords, 10);
  });

  it('follows a slowdown within a few half-lives', () => {
    const sizer = new AdaptiveFetchSizer({ ...options, halfLifeMs: 1000 });
    let now = 0;
    for (; now < 10_000; now += 100) sizer.completed(300, 0, now);
    const fast = sizer.rate;
    for (const end = now + 5000; now < end; now += 100) sizer.completed(30, 0, now);
    assert.ok(sizer.rate < fast / 5, `rate ${sizer.rate} after slowdown from ${fast}`);
  });

  it('rejects nonsense options', () => {
    assert.throws(() => new AdaptiveFetchSizer({ ...options, minBytes: 0 }), RangeError);
    assert.throws(() => new AdaptiveFetchSizer({ ...options, maxRecords: 1 }), RangeError);
  });
});
