// The stall and latency measures of the online-expansion test on synthetic deliveries: the largest
// gap counts only the chosen partitions and the window (its edges included, so a partition silent
// for the whole window waits all of it), whatever order deliveries are listed in; latencies take
// the records created inside the window; and a property: the largest gap is never below the
// window divided by the deliveries plus one, nor above the window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { largestGap, latencies, partitionKey } from '../../helpers/delivery_gaps.js';
import type { Delivery } from '../../helpers/delivery_gaps.js';

const at = (topic: string, partition: number, seen: number, createdAt = -1): Delivery => ({ topic, partition, offset: 0, value: 'p0-0', at: seen, createdAt });

test('the largest gap is per chosen partition, inside the window, edges included', () => {
  const ds = [at('t', 0, 100), at('t', 0, 400), at('t', 0, 500), at('t', 1, 50), at('t', 1, 950), at('u', 0, 2_000)];
  // t/1 waits from 50 to 950 but that partition is not chosen; t/0 waits 500 -> 1000 at the end.
  assert.deepEqual(largestGap(ds, new Set([partitionKey('t', 0)]), 0, 1_000), { partition: 't/0', gapMs: 500 });
  assert.deepEqual(largestGap(ds, new Set([partitionKey('t', 0), partitionKey('t', 1)]), 0, 1_000), { partition: 't/1', gapMs: 900 });
  // u/0 delivers only after the window: silent for all of it.
  assert.deepEqual(largestGap(ds, new Set([partitionKey('u', 0)]), 0, 1_000), { partition: 'u/0', gapMs: 1_000 });
  // Listing order does not matter.
  assert.deepEqual(largestGap([...ds].reverse(), new Set([partitionKey('t', 0)]), 0, 1_000), { partition: 't/0', gapMs: 500 });
});

test('latencies are of records created inside the window', () => {
  const ds = [at('t', 0, 1_100, 1_000), at('t', 0, 1_300, 1_250), at('t', 0, 5_000, 900), at('t', 0, 2_500, 2_000)];
  assert.deepEqual(latencies(ds, 1_000, 2_000), [100, 50]);
});

test('property: the largest gap lies between window / (deliveries + 1) and the window', () => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 50 }), (times) => {
    const gap = largestGap(times.map((t) => at('t', 0, t)), new Set(['t/0']), 0, 10_000).gapMs;
    return gap <= 10_000 && gap >= 10_000 / (times.length + 1);
  }));
});
