// OffsetHistory: append rates and lag in seconds from sampled log ends. Examples for the rate, the
// at-least marking, the sampling interval, forgotten partitions and a log end that goes back;
// properties over random growth histories: zero when caught up, never less for an older offset,
// never more than the history reaches, within one sample interval of the true append time, and
// bounded samples and partitions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_TRACKED_PARTITIONS, MIN_SAMPLE_INTERVAL_MS, OffsetHistory } from '../../../src/metrics/offset_history.js';

const at = (end: number) => [{ topic: 't', partition: 0, logEndOffset: end }];
const near = (actual: number | undefined, expected: number) => assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${actual} != ${expected}`);

/** Per sample: ms since the previous one (at least the sampling interval) and records appended since. */
const growth = fc.array(fc.record({ dt: fc.integer({ min: MIN_SAMPLE_INTERVAL_MS, max: 60_000 }), appended: fc.integer({ min: 0, max: 1000 }) }), { minLength: 1, maxLength: 300 });

/** Samples `steps` into a history; records appended during a step are spread evenly over it. */
function replay(steps: { dt: number; appended: number }[], maxSamples = 16): { history: OffsetHistory; now: number; end: number; appendedAt: ((o: number) => [number, number]) & { boundaries: number[] } } {
  const history = new OffsetHistory(maxSamples);
  const spans: { from: number; to: number; startOffset: number; endOffset: number }[] = [];
  let now = 0;
  let end = 0;
  history.record(at(end), now);
  for (const { dt, appended } of steps) {
    spans.push({ from: now, to: now + dt, startOffset: end, endOffset: end + appended });
    now += dt;
    end += appended;
    history.record(at(end), now);
  }
  const find = (o: number): [number, number] => {
    const s = spans.find((x) => o >= x.startOffset && o < x.endOffset)!;
    return [s.from, s.to];
  };
  const boundaries = spans.filter((x) => x.endOffset > x.startOffset).flatMap((x) => [x.startOffset, x.endOffset - 1]);
  return { history, now, end, appendedAt: Object.assign(find, { boundaries }) };
}

const behind = (h: OffsetHistory, offset: number, now: number): number => h.lagSeconds('t', 0, offset, now)!.seconds;

describe('OffsetHistory', () => {
  it('rate over the window; lag in seconds interpolated between samples, at least the history\'s age before it', () => {
    const h = new OffsetHistory();
    h.record(at(50), 0);
    assert.equal(h.messagesPerSecond('t', 0, 0), null, 'no rate before a second of history');
    h.record(at(50), 1000);
    h.record(at(80), 2000);
    h.record(at(100), 4000);
    assert.equal(h.messagesPerSecond('t', 0, 4000), 50 / 4);
    // Offsets 50..79 were appended between 1 s (end still 50) and 2 s (end 80): 79 last, at 2 s.
    assert.deepEqual(h.lagSeconds('t', 0, 79, 4000), { seconds: 2, atLeast: false });
    near(h.lagSeconds('t', 0, 80, 5000)?.seconds, 5 - 2.1);
    assert.deepEqual(h.lagSeconds('t', 0, 100, 9000), { seconds: 0, atLeast: false });
    assert.deepEqual(h.lagSeconds('t', 0, 10, 4000), { seconds: 4, atLeast: true }, 'older than the history: a lower bound');
    assert.equal(h.lagSeconds('t', 1, 0, 4000), null);
  });

  it('samples closer than the interval are skipped; absent partitions are forgotten; a log end going back restarts', () => {
    const h = new OffsetHistory();
    assert.equal(h.record(at(5), 0), true);
    assert.equal(h.record(at(9), MIN_SAMPLE_INTERVAL_MS - 1), false);
    assert.deepEqual(h.lagSeconds('t', 0, 5, 500), { seconds: 0, atLeast: false });
    h.record(at(20), 2000);
    h.record(at(3), 3000);
    assert.equal(h.sampleCount('t', 0), 1);
    assert.deepEqual(h.lagSeconds('t', 0, 1, 5000), { seconds: 2, atLeast: true }, 'history starts over at the lower end');
    h.record([], 6000);
    assert.equal(h.trackedPartitions, 0);
    assert.equal(h.messagesPerSecond('t', 0, 6000), null);
  });

  it('tracks at most MAX_TRACKED_PARTITIONS partitions', () => {
    const h = new OffsetHistory();
    h.record(Array.from({ length: MAX_TRACKED_PARTITIONS + 5 }, (_, p) => ({ topic: 't', partition: p, logEndOffset: 1 })), 0);
    assert.equal(h.trackedPartitions, MAX_TRACKED_PARTITIONS);
    assert.equal(h.lagSeconds('t', MAX_TRACKED_PARTITIONS, 0, 0), null);
  });

  it('a plateau keeps its first and last sample only', () => {
    const h = new OffsetHistory(8);
    for (let t = 0; t <= 10_000; t += 1000) h.record(at(5), t);
    assert.equal(h.sampleCount('t', 0), 2);
    h.record(at(6), 11_000);
    // Offset 5 was appended after 10 s (last seen at 5) and by 11 s.
    assert.equal(behind(h, 5, 20_000), 9);
  });

  it('a committed offset at or past the log end is 0 s behind', () => {
    fc.assert(fc.property(growth, fc.nat(100), (steps, past) => {
      const { history, now, end } = replay(steps);
      assert.equal(behind(history, end + past, now), 0);
    }));
  });

  it('an older offset is never less behind, and nothing is further behind than the history reaches', () => {
    fc.assert(fc.property(growth, fc.nat(), fc.nat(), (steps, a, b) => {
      const { history, now, end } = replay(steps);
      fc.pre(end > 0);
      const [older, newer] = [a % end, b % end].sort((x, y) => x - y) as [number, number];
      assert.ok(behind(history, older, now) >= behind(history, newer, now));
      assert.ok(behind(history, older, now) <= now / 1000);
    }));
  });

  it('at full resolution the estimate falls within the sample interval the record was appended in, and is exact', () => {
    fc.assert(fc.property(growth, fc.nat(), (steps, pick) => {
      const { history, now, end, appendedAt } = replay(steps, 1024);
      fc.pre(end > 0);
      // A random offset, and the first and last of every interval (where an off-by-one shows).
      for (const offset of [pick % end, ...appendedAt.boundaries]) {
        const [from, to] = appendedAt(offset);
        const lag = history.lagSeconds('t', 0, offset, now)!;
        assert.equal(lag.atLeast, false, 'the history starts at offset 0');
        assert.ok(lag.seconds >= (now - to) / 1000 - 1e-9 && lag.seconds <= (now - from) / 1000 + 1e-9, `offset ${offset}: ${lag.seconds} not in [${(now - to) / 1000}, ${(now - from) / 1000}]`);
      }
    }));
  });

  it('keeps at most maxSamples samples however long it runs; the rate stays non-negative', () => {
    fc.assert(fc.property(growth, fc.integer({ min: 4, max: 32 }), (steps, max) => {
      const { history, now } = replay(steps, max);
      assert.ok(history.sampleCount('t', 0) <= max, `${history.sampleCount('t', 0)} > ${max}`);
      assert.ok((history.messagesPerSecond('t', 0, now) ?? 0) >= 0);
    }));
  });
});
