// OffsetHistory: append rates and lag in seconds from sampled log ends, against a model that
// knows when every offset was appended; its bounds (samples per partition, sampling interval,
// forgotten partitions) and a log end that goes back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_SAMPLES, MIN_SAMPLE_INTERVAL_MS, OffsetHistory } from '../../../src/metrics/offset_history.js';

const at = (end: number) => [{ topic: 't', partition: 0, logEndOffset: end }];

test('rate over the window and lag in seconds between passing the committed offset and the newest append', () => {
  const h = new OffsetHistory();
  h.record(at(50), 0);
  assert.equal(h.messagesPerSecond('t', 0, 0), null, 'no rate before a second of history');
  h.record(at(50), 1000);
  h.record(at(80), 2000);
  h.record(at(100), 4000);
  assert.equal(h.messagesPerSecond('t', 0, 4000), 50 / 4);
  assert.deepEqual(h.lagSeconds('t', 0, 50), { seconds: 2, atLeast: false });
  assert.deepEqual(h.lagSeconds('t', 0, 79), { seconds: 2, atLeast: false });
  assert.deepEqual(h.lagSeconds('t', 0, 80), { seconds: 0, atLeast: false });
  assert.deepEqual(h.lagSeconds('t', 0, 100), { seconds: 0, atLeast: false });
  assert.deepEqual(h.lagSeconds('t', 0, 10), { seconds: 4, atLeast: true }, 'older than the history: a lower bound');
  assert.equal(h.lagSeconds('t', 1, 0), null);
});

test('samples closer than the interval are skipped; absent partitions are forgotten; a log end going back restarts', () => {
  const h = new OffsetHistory();
  assert.equal(h.record(at(5), 0), true);
  assert.equal(h.record(at(9), MIN_SAMPLE_INTERVAL_MS - 1), false);
  assert.deepEqual(h.lagSeconds('t', 0, 5), { seconds: 0, atLeast: false });
  h.record(at(20), 2000);
  h.record(at(3), 3000);
  assert.deepEqual(h.lagSeconds('t', 0, 1), { seconds: 0, atLeast: true }, 'history starts over at the lower end');
  h.record([], 4000);
  assert.equal(h.trackedPartitions, 0);
  assert.equal(h.messagesPerSecond('t', 0, 4000), null);
});

test('property: lag in seconds brackets the true append-time distance; the history stays bounded', () => {
  fc.assert(fc.property(
    // Per sampling step: ms since the previous sample (>= interval) and records appended just before it.
    fc.array(fc.record({ gapMs: fc.integer({ min: MIN_SAMPLE_INTERVAL_MS, max: 5000 }), appended: fc.nat(20) }), { minLength: 1, maxLength: 150 }),
    fc.nat(1000),
    (steps, committedSeed) => {
      const h = new OffsetHistory();
      // appendTime[o]: the sample time at which offset o was first visible (its append lies in the gap before).
      const appendTime: number[] = [];
      let now = 0;
      let end = 0;
      for (const s of steps) {
        now += s.gapMs;
        for (let i = 0; i < s.appended; i++) appendTime.push(now);
        end += s.appended;
        h.record(at(end), now);
      }
      assert.ok(h.trackedPartitions <= 1);
      const committed = end === 0 ? 0 : committedSeed % (end + 1);
      const lag = h.lagSeconds('t', 0, committed);
      assert.ok(lag !== null);
      if (committed >= end) return assert.deepEqual(lag, { seconds: 0, atLeast: false });
      const truth = (appendTime[end - 1]! - appendTime[committed]!) / 1000;
      if (lag.atLeast) assert.ok(lag.seconds <= truth + 1e-9, `${lag.seconds} is no lower bound of ${truth}`);
      else assert.ok(Math.abs(lag.seconds - truth) < 1e-9, `${lag.seconds} != ${truth}`);
      // Within MAX_SAMPLES changes the answer is exact.
      const changes = steps.filter((s) => s.appended > 0).length + (steps[0]!.appended === 0 ? 1 : 0);
      if (changes <= MAX_SAMPLES && steps[0]!.appended === 0) assert.equal(lag.atLeast, false);
      const rate = h.messagesPerSecond('t', 0, now);
      if (rate !== null) assert.ok(rate >= 0);
    },
  ), { numRuns: 300 });
});
