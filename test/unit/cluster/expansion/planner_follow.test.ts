// The planner's follow index: whatever the held lists (with entries no longer held, and
// duplicates), moved flags and leadership transfers, firstFollowed offers the same leaders with
// the same partitions in the same order, and stops at the same position, as walking the broker's
// held list circularly from the cursor, moved partitions first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FollowIndex, type FollowSource } from '../../../../src/cluster/expansion/planner_follow.js';
import { mulberry32 as random } from '../../../helpers/seeded_random.js';

interface Source extends FollowSource {
  readonly rep: Int32Array;
}

/** Partitions of 1..3 replicas over nb brokers; each held list has the partitions its broker holds, some it does not, some twice, shuffled. */
function source(nb: number, np: number, seed: number): Source {
  const rnd = random(seed);
  const offsets = new Int32Array(np + 1);
  const lists: number[][] = [];
  for (let p = 0; p < np; p++) {
    const rf = 1 + Math.floor(rnd() * Math.min(3, nb));
    const pool = Array.from({ length: nb }, (_, b) => b);
    const replicas: number[] = [];
    while (replicas.length < rf) replicas.push(pool.splice(Math.floor(rnd() * pool.length), 1)[0]!);
    lists.push(replicas);
    offsets[p + 1] = offsets[p]! + rf;
  }
  const rep = Int32Array.from(lists.flat());
  const held: number[][] = Array.from({ length: nb }, () => []);
  for (let p = 0; p < np; p++) {
    for (const b of lists[p]!) held[b]!.push(p);
    if (rnd() < 0.2) held[Math.floor(rnd() * nb)]!.push(p);
  }
  for (const list of held) list.sort(() => rnd() - 0.5);
  const moved = Uint8Array.from({ length: np }, () => (rnd() < 0.4 ? 1 : 0));
  return { offsets, rep, held, moved };
}

/** The walk the index replaces: every entry d holds and does not lead, moved ones first, circularly from start. */
function walk(s: Source, d: number, start: number, visit: (leader: number, p: number) => boolean): number {
  const list = s.held[d]!;
  for (const movedFlag of [1, 0]) {
    for (let k = 0; k < list.length; k++) {
      const i = (start + k) % list.length;
      const p = list[i]!;
      let slot = -1;
      for (let x = s.offsets[p]!; x < s.offsets[p + 1]!; x++) if (s.rep[x] === d) slot = x;
      if (s.moved[p] !== movedFlag || slot <= s.offsets[p]!) continue;
      if (visit(s.rep[s.offsets[p]!]!, p)) return i;
    }
  }
  return -1;
}

/** Makes `to` (holding p) p's leader, the others keeping their order behind it, as the planner does. */
function lead(s: Source, p: number, to: number): void {
  const first = s.offsets[p]!;
  let at = first;
  while (s.rep[at] !== to) at++;
  for (; at > first; at--) s.rep[at] = s.rep[at - 1]!;
  s.rep[first] = to;
}

describe('FollowIndex', () => {
  it('offers what a walk of the held list offers, in the same order, through any transfers', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 60 }), fc.integer(), (nb, np, seed) => {
      const s = source(nb, np, seed);
      const index = new FollowIndex(s);
      const rnd = random(seed ^ 0x5bd1e995);
      for (let step = 0; step < 40; step++) {
        const d = Math.floor(rnd() * nb);
        const start = s.held[d]!.length === 0 ? 0 : Math.floor(rnd() * s.held[d]!.length);
        // A visit that depends on the leader alone, stopping at one of a random set of leaders (or none).
        const stopAt = new Set(Array.from({ length: nb }, (_, b) => b).filter(() => rnd() < 0.3));
        const offered = (into: [number, number][]) => (leader: number, p: number): boolean => {
          // Later entries under a leader already offered in this pass decide the same: the walk's first one counts.
          if (!into.some(([l, q]) => l === leader && s.moved[q] === s.moved[p])) into.push([leader, p]);
          return stopAt.has(leader);
        };
        const byWalk: [number, number][] = [];
        const byIndex: [number, number][] = [];
        assert.equal(index.firstFollowed(d, start, offered(byIndex)), walk(s, d, start, offered(byWalk)));
        assert.deepEqual(byIndex, byWalk);
        const p = Math.floor(rnd() * np);
        const to = s.rep[s.offsets[p]! + Math.floor(rnd() * (s.offsets[p + 1]! - s.offsets[p]!))]!;
        index.transfer(p, to);
        lead(s, p, to);
      }
    }), { numRuns: 300 });
  });
});
