// OffsetTimeline: lag in seconds from log end offsets seen at scrapes. Properties over random
// growth histories: zero when caught up, never more than the timeline's span, never less for an
// older offset, within one sample interval of the true append time, bounded memory; a lower end
// (truncated or recreated log) starts afresh.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OffsetTimeline } from '../../../src/metrics/offset_timeline.js';

/** Per scrape: ms since the previous one and records appended since. */
const history = fc.array(fc.record({ dt: fc.integer({ min: 1, max: 60_000 }), appended: fc.integer({ min: 0, max: 1000 }) }), { minLength: 1, maxLength: 300 });

/** Scrapes `steps` into a timeline; records appended during a step are spread evenly over it. */
function replay(steps: { dt: number; appended: number }[], maxSamples = 16): { timeline: OffsetTimeline; now: number; end: number; appendedAt: ((o: number) => [number, number]) & { boundaries: number[] } } {
  const timeline = new OffsetTimeline(maxSamples);
  const spans: { from: number; to: number; startOffset: number; endOffset: number }[] = [];
  let now = 0;
  let end = 0;
  timeline.record(now, end);
  for (const { dt, appended } of steps) {
    spans.push({ from: now, to: now + dt, startOffset: end, endOffset: end + appended });
    now += dt;
    end += appended;
    timeline.record(now, end);
  }
  const find = (o: number): [number, number] => {
    const s = spans.find((x) => o >= x.startOffset && o < x.endOffset)!;
    return [s.from, s.to];
  };
  const boundaries = spans.filter((x) => x.endOffset > x.startOffset).flatMap((x) => [x.startOffset, x.endOffset - 1]);
  const appendedAt = Object.assign(find, { boundaries });
  return { timeline, now, end, appendedAt };
}

describe('OffsetTimeline', () => {
  it('a committed offset at or past the log end is 0 s behind', () => {
    fc.assert(fc.property(history, fc.nat(100), (steps, past) => {
      const { timeline, now, end } = replay(steps);
      assert.equal(timeline.secondsBehind(end + past, now), 0);
    }));
  });

  it('an older offset is never less behind, and nothing is further behind than the timeline reaches', () => {
    fc.assert(fc.property(history, fc.nat(), fc.nat(), (steps, a, b) => {
      const { timeline, now, end } = replay(steps);
      fc.pre(end > 0);
      const [older, newer] = [a % end, b % end].sort((x, y) => x - y) as [number, number];
      assert.ok(timeline.secondsBehind(older, now) >= timeline.secondsBehind(newer, now));
      assert.ok(timeline.secondsBehind(older, now) <= now / 1000);
    }));
  });

  it('at full resolution the estimate falls within the scrape interval the record was appended in', () => {
    fc.assert(fc.property(history, fc.nat(), (steps, pick) => {
      const { timeline, now, end, appendedAt } = replay(steps, 1024);
      fc.pre(end > 0);
      // A random offset, and the first and last of every scrape interval (where an off-by-one shows).
      const offsets = [pick % end, ...appendedAt.boundaries];
      for (const offset of offsets) {
        const [from, to] = appendedAt(offset);
        const behind = timeline.secondsBehind(offset, now);
        assert.ok(behind >= (now - to) / 1000 - 1e-9 && behind <= (now - from) / 1000 + 1e-9, `offset ${offset}: ${behind} not in [${(now - to) / 1000}, ${(now - from) / 1000}]`);
      }
    }));
  });

  it('keeps at most maxSamples samples however long it runs', () => {
    fc.assert(fc.property(history, fc.integer({ min: 4, max: 32 }), (steps, max) => {
      const { timeline } = replay(steps, max);
      assert.ok(timeline.size <= max, `${timeline.size} > ${max}`);
    }));
  });

  it('a plateau keeps its first and last sample only', () => {
    const timeline = new OffsetTimeline(8);
    for (let t = 0; t <= 10_000; t += 1000) timeline.record(t, 5);
    assert.equal(timeline.size, 2);
    timeline.record(11_000, 6);
    // Offset 5 was appended after 10 s (last seen at 5) and by 11 s.
    assert.equal(timeline.secondsBehind(5, 20_000), 9);
  });

  it('a log end that goes back starts the timeline afresh', () => {
    const timeline = new OffsetTimeline(8);
    timeline.record(0, 100);
    timeline.record(1000, 200);
    timeline.record(2000, 10);
    assert.equal(timeline.size, 1);
    assert.equal(timeline.secondsBehind(5, 5000), 3, 'appended before the only sample: its age, a lower bound');
  });
});
