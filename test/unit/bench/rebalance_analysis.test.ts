// Tests of the rebalance bench's delivery analysis: owners per window, the settled rule, the
// per-partition gap and latency maxima (against a plain model), and the figures of a scripted
// rebalance where one partition keeps its owner with a known pause and one moves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DeliveryLog, NO_OWNER, SEVERAL_OWNERS, analyzeRebalance, gapAcross, isSettled, maxGaps, maxLatencies, ownersIn,
} from '../../../bench/load/rebalance_analysis.js';

interface Delivery {
  at: number;
  partition: number;
  member: number;
  stamp: number;
}

function logOf(ds: readonly Delivery[], capacity = ds.length + 1): DeliveryLog {
  const log = new DeliveryLog(capacity);
  for (const d of [...ds].sort((a, b) => a.at - b.at)) log.add(d.at, d.partition, d.member, d.stamp);
  return log;
}

/** Deliveries of partition p every `every` ms in [from, to) by `member`, each sent `latency` ms earlier. */
function steady(p: number, member: number, from: number, to: number, every = 10, latency = 2): Delivery[] {
  const out: Delivery[] = [];
  for (let t = from; t < to; t += every) out.push({ at: t, partition: p, member, stamp: t - latency });
  return out;
}

const deliveries = (partitions: number): fc.Arbitrary<Delivery[]> => fc.array(fc.record({
  at: fc.integer({ min: 0, max: 10_000 }), partition: fc.integer({ min: 0, max: partitions - 1 }),
  member: fc.integer({ min: 0, max: 3 }), stamp: fc.integer({ min: -1000, max: 10_000 }),
}), { maxLength: 200 });

test('the log keeps at most its capacity and counts what it dropped', () => {
  const log = new DeliveryLog(2);
  log.add(1, 0, 0, 0);
  log.add(2, 0, 0, 0);
  log.add(3, 0, 0, 0);
  assert.equal(log.length, 2);
  assert.equal(log.dropped, 1);
  assert.equal(log.firstAtOrAfter(2), 1);
  assert.equal(log.firstAtOrAfter(2.5), 2);
});

test('owners: the one member delivering a partition in the window, none, or several', () => {
  const log = logOf([
    { at: 5, partition: 0, member: 1, stamp: 0 }, // before the window
    { at: 10, partition: 0, member: 2, stamp: 0 },
    { at: 11, partition: 0, member: 2, stamp: 0 },
    { at: 12, partition: 1, member: 0, stamp: 0 },
    { at: 13, partition: 1, member: 3, stamp: 0 },
    { at: 20, partition: 2, member: 0, stamp: 0 }, // at the window's (exclusive) end
  ]);
  assert.deepEqual([...ownersIn(log, 3, 10, 20)], [2, SEVERAL_OWNERS, NO_OWNER]);
});

test('settled: single owners, exactly the expected members, counts within one of each other', () => {
  assert.equal(isSettled(Int32Array.from([0, 1, 2, 0, 1, 2]), 3), true);
  assert.equal(isSettled(Int32Array.from([0, 1, 2, 0, 1, 2, 0]), 3), true, '3, 2, 2');
  assert.equal(isSettled(Int32Array.from([0, 1, 2, 0, 1, 0]), 3), false, 'unbalanced: 3, 2, 1');
  assert.equal(isSettled(Int32Array.from([0, 1, 2, 0, 1, 2]), 4), false, 'a member owns nothing');
  assert.equal(isSettled(Int32Array.from([0, 1, NO_OWNER]), 2), false);
  assert.equal(isSettled(Int32Array.from([0, 1, SEVERAL_OWNERS]), 2), false);
});

/** Plain model of maxGaps: the gaps ending in [from, to], the first starting at the last delivery before from (or from), then to the end. */
function modelGap(ds: readonly Delivery[], p: number, from: number, to: number): number {
  const mine = ds.filter((d) => d.partition === p).map((d) => d.at).sort((a, b) => a - b);
  const before = mine.filter((t) => t < from);
  const points = [before.length > 0 ? (before[before.length - 1] as number) : from, ...mine.filter((t) => t >= from && t <= to), to];
  let gap = 0;
  for (let i = 1; i < points.length; i++) gap = Math.max(gap, (points[i] as number) - (points[i - 1] as number));
  return gap;
}

test('gaps match the plain model, including a gap that straddles the window start and a silent tail', () => {
  fc.assert(fc.property(deliveries(3), fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 5_000 }), (ds, from, len) => {
    const to = from + len;
    const gaps = maxGaps(logOf(ds), 3, from, to);
    for (let p = 0; p < 3; p++) assert.equal(gaps[p], modelGap(ds, p, from, to), `partition ${p}`);
  }), { numRuns: 300 });
});

test('the gap across a moment runs from the partition\'s last delivery at or before it to its first after it', () => {
  const log = logOf([
    { at: 10, partition: 0, member: 0, stamp: 0 }, { at: 15, partition: 1, member: 0, stamp: 0 },
    { at: 20, partition: 0, member: 0, stamp: 0 }, { at: 50, partition: 0, member: 1, stamp: 0 },
  ]);
  assert.equal(gapAcross(log, 0, 30), 30);
  assert.equal(gapAcross(log, 0, 20), 30, 'a delivery exactly at the moment is before it');
  assert.equal(gapAcross(log, 0, 5), NaN, 'nothing before');
  assert.equal(gapAcross(log, 1, 30), NaN, 'nothing after');
  fc.assert(fc.property(deliveries(2), fc.integer({ min: 0, max: 10_000 }), (ds, t) => {
    const mine = ds.filter((d) => d.partition === 0).map((d) => d.at);
    const before = mine.filter((x) => x <= t);
    const after = mine.filter((x) => x > t);
    const want = before.length === 0 || after.length === 0 ? NaN : Math.min(...after) - Math.max(...before);
    assert.equal(gapAcross(logOf(ds), 0, t), want);
  }), { numRuns: 200 });
});

test('latency maxima cover only deliveries inside the window', () => {
  fc.assert(fc.property(deliveries(2), fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 5_000 }), (ds, from, len) => {
    const lat = maxLatencies(logOf(ds), 2, from, from + len);
    for (let p = 0; p < 2; p++) {
      const want = ds.filter((d) => d.partition === p && d.at >= from && d.at <= from + len).reduce((m, d) => Math.max(m, d.at - d.stamp), 0);
      assert.equal(lat[p], want);
    }
  }), { numRuns: 200 });
});

test('a scripted rebalance: the kept partition\'s pause, the moved one\'s handover, untouched partitions', () => {
  const joinAt = 1000;
  const end = 3000;
  const ds = [
    // p0 kept by member 0, 200 ms without deliveries from 1500, delivered late after it.
    ...steady(0, 0, 0, 1500), ...steady(0, 0, 1700, end).map((d, i) => (i === 0 ? { ...d, stamp: d.at - 150 } : d)),
    // p1 moves from member 1 to the new member 2: last old delivery at 1290, first new one at 1800.
    ...steady(1, 1, 0, 1300), ...steady(1, 2, 1800, end),
    // p2 and p3 stay with member 1 and 0 without a pause.
    ...steady(2, 1, 0, end), ...steady(3, 0, 0, end),
  ];
  // Member 0's client changed its assignment at 1500; member 1's (p1's old owner, p2's owner) never did.
  const changedAt = Float64Array.from([1500, NaN, NaN]);
  const f = analyzeRebalance(logOf(ds), { partitions: 4, baselineFrom: 0, joinAt, settledFrom: 2000, end, changedAt });
  assert.equal(f.kept, 3);
  assert.equal(f.moved, 1);
  assert.equal(f.unclassified, 0);
  assert.equal(f.baselineGapMs, 10);
  assert.equal(f.keptGapMs, 210);
  assert.equal(f.keptPauseMs, 210, 'p0 across member 0\'s change; p3 only 10 there; p2\'s owner never changed');
  assert.equal(f.baselineLatencyMs, 2);
  assert.equal(f.keptLatencyMs, 150);
  assert.deepEqual(f.movedList, [{ partition: 1, from: 1, to: 2, firstAt: 1800, lastOldAt: 1290 }]);
  assert.equal(f.movedFirstMs, 800);
  assert.equal(f.movedFirstMedianMs, 800);
  assert.equal(f.movedGapMs, 510);
});

test('a partition without a single owner before or after is left unclassified', () => {
  const ds = [...steady(0, 0, 0, 3000), ...steady(1, 0, 0, 500), ...steady(1, 1, 500, 3000)];
  const f = analyzeRebalance(logOf(ds), { partitions: 2, baselineFrom: 0, joinAt: 1000, settledFrom: 2000, end: 3000, changedAt: new Float64Array(2).fill(NaN) });
  assert.equal(f.kept, 1);
  assert.equal(f.moved, 0);
  assert.equal(f.unclassified, 1);
  assert.ok(Number.isNaN(f.movedFirstMs), 'no moved partition, no handover figure');
  assert.ok(Number.isNaN(f.keptPauseMs), 'no owner changed its assignment');
});
