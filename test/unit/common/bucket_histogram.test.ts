// BucketHistogram: each observation lands in the first bucket whose bound is at least it, the
// counts add up to the count, and take() hands over the interval's figures and starts from zero.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BucketHistogram, DISK_FLUSH_BOUNDS } from '../../../src/common/bucket_histogram.js';

/** Durations around and between the bounds, the bounds themselves and past the last one. */
const seconds = fc.oneof(
  fc.double({ min: 0, max: 10, noNaN: true }),
  fc.constantFrom(...DISK_FLUSH_BOUNDS),
  fc.double({ min: 0, max: 0.002, noNaN: true }),
);

test('every observation lands in the first bucket whose bound is at least it; take() resets', () => {
  fc.assert(fc.property(fc.array(seconds, { maxLength: 200 }), fc.array(seconds, { maxLength: 20 }), (first, second) => {
    const h = new BucketHistogram(DISK_FLUSH_BOUNDS);
    for (const s of first) h.observe(s);
    const taken = h.take();
    const expected = new Array<number>(DISK_FLUSH_BOUNDS.length + 1).fill(0);
    for (const s of first) {
      const i = DISK_FLUSH_BOUNDS.findIndex((bound) => s <= bound);
      expected[i === -1 ? DISK_FLUSH_BOUNDS.length : i]++;
    }
    assert.deepEqual(taken.counts, expected);
    assert.equal(taken.count, first.length);
    assert.equal(taken.counts.reduce((a, b) => a + b, 0), taken.count);
    assert.ok(Math.abs(taken.sum - first.reduce((a, b) => a + b, 0)) < 1e-9);

    for (const s of second) h.observe(s);
    const next = h.take();
    assert.equal(next.count, second.length, 'the second take() sees only what came after the first');
    assert.equal(next.counts.reduce((a, b) => a + b, 0), second.length);
    assert.deepEqual(h.take(), { counts: expected.map(() => 0), sum: 0, count: 0 });
  }));
});
