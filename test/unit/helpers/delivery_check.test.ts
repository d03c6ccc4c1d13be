// The lost/duplicated/reordered checker of the process-level fault tests: exact counts for
// injected faults, and the reorder count against a brute-force longest increasing subsequence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkDelivery, describeDelivery, longestIncreasing } from '../../helpers/delivery_check.js';
import type { AckedMessage, ReadMessage } from '../../helpers/delivery_check.js';

/** Indices 0..n-1 round-robin over `partitions`, read back in order: a clean run. */
function cleanRun(n: number, partitions: number): { acked: AckedMessage[]; read: ReadMessage[] } {
  const acked = Array.from({ length: n }, (_, i) => ({ partition: i % partitions, index: i }));
  const read: ReadMessage[] = [];
  for (let p = 0; p < partitions; p++) {
    acked.filter((a) => a.partition === p).forEach((a, offset) => read.push({ partition: p, offset, index: a.index }));
  }
  return { acked, read };
}

function lisBrute(values: readonly number[]): number {
  const best: number[] = [];
  values.forEach((v, i) => {
    best[i] = 1;
    for (let j = 0; j < i; j++) if ((values[j] as number) < v) best[i] = Math.max(best[i] as number, (best[j] as number) + 1);
  });
  return best.reduce((a, b) => Math.max(a, b), 0);
}

test('a clean run reports nothing wrong', () => {
  const { acked, read } = cleanRun(100, 4);
  const r = checkDelivery(acked, read);
  assert.deepEqual(r, { acked: 100, read: 100, lost: [], duplicated: 0, reordered: 0, misplaced: 0, unacked: 0, foreign: 0 });
  assert.equal(describeDelivery(r), 'acked=100 read=100 lost=0 duplicated=0 reordered=0 misplaced=0 unacked=0 foreign=0');
});

test('each injected fault is counted once, in its own column', () => {
  const { acked, read } = cleanRun(40, 2);
  const faulty = read.filter((m) => m.index !== 6 && m.index !== 9); // lose two
  faulty.push({ ...faulty[3]!, offset: 99 }); // duplicate one
  const p0 = faulty.filter((m) => m.partition === 0);
  [p0[4], p0[5]] = [p0[5]!, p0[4]!]; // swap two neighbours of partition 0
  const rest = faulty.filter((m) => m.partition !== 0);
  const extra: ReadMessage[] = [
    { partition: 1, offset: 100, index: 1000 }, // landed without an ack
    { partition: 1, offset: 101, index: -1 }, // not from this run
  ];
  const moved = { partition: 1, offset: 102, index: 2 }; // acked on 0, read on 1 (its first read)
  const r = checkDelivery(acked, [...p0.filter((m) => m.index !== 2), ...rest, ...extra, moved]);
  assert.deepEqual(r.lost, [6, 9]);
  assert.equal(r.duplicated, 1);
  assert.equal(r.reordered, 2, 'the swapped pair, and the moved message read late on partition 1');
  assert.equal(r.misplaced, 1);
  assert.equal(r.unacked, 1);
  assert.equal(r.foreign, 1);
});

test('property: the reorder count is the first reads minus their longest increasing run', () => {
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { maxLength: 60 }), (order) => {
    assert.equal(longestIncreasing(order), lisBrute(order));
    const acked = order.map((index) => ({ partition: 0, index }));
    const read = order.map((index, offset) => ({ partition: 0, offset, index }));
    const r = checkDelivery(acked, read);
    assert.equal(r.reordered, order.length - lisBrute(order));
    assert.equal(r.lost.length + r.duplicated + r.misplaced, 0);
  }));
});

test('property: dropping k acknowledged and repeating d reads gives exactly k lost and d duplicated', () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 8 }), fc.array(fc.nat(), { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 10 }),
    (n, partitions, drops, dups) => {
      const { acked, read } = cleanRun(n, partitions);
      const dropped = new Set(drops.map((d) => d % n));
      const kept = read.filter((m) => !dropped.has(m.index));
      const repeated = dups.flatMap((d) => (kept.length === 0 ? [] : [kept[d % kept.length]!]));
      const r = checkDelivery(acked, [...kept, ...repeated]);
      assert.equal(r.lost.length, dropped.size);
      assert.equal(r.duplicated, repeated.length);
      assert.equal(r.reordered, 0, 'duplicates are not first reads, so they never count as reordered');
    },
  ));
});
