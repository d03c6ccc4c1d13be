// assignCooperative (the classic group leader's cooperative-sticky assignor): no partition given
// twice or to a non-subscriber; a partition whose owner is still a subscribed member is kept by
// it or left unassigned this round; rounds where members give up what they lost converge, and then
// (equal subscriptions) the assignment is complete and balanced within one partition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assignCooperative } from '../../../../src/client/consumer/cooperative_assignor.js';
import type { CooperativeMember } from '../../../../src/client/consumer/cooperative_assignor.js';
import type { TopicPartition } from '../../../../src/client/consumer/types.js';

const TOPICS = ['a', 'b', 'c'];
const key = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`;

const countsArb = fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 }))
  .map(([a, b, c]) => new Map([['a', a], ['b', b], ['c', c]]));

/** Members with arbitrary subscriptions and arbitrary (possibly conflicting, possibly bogus) claims. */
const groupArb = fc.record({
  counts: countsArb,
  members: fc.uniqueArray(fc.record({
    memberId: fc.string({ minLength: 1, maxLength: 4 }),
    topics: fc.subarray(TOPICS, { minLength: 1 }),
    owned: fc.array(fc.record({ topic: fc.constantFrom(...TOPICS), partition: fc.integer({ min: 0, max: 13 }) }), { maxLength: 12 }),
    generation: fc.integer({ min: -1, max: 3 }),
  }), { minLength: 1, maxLength: 6, selector: (m) => m.memberId }),
});

/** Who rightfully owns each partition: highest generation, then lowest member id. */
function rightfulOwners(members: readonly CooperativeMember[], counts: ReadonlyMap<string, number>): Map<string, CooperativeMember> {
  const owners = new Map<string, CooperativeMember>();
  for (const m of members) {
    for (const tp of m.owned) {
      if (tp.partition >= (counts.get(tp.topic) ?? 0)) continue;
      const prev = owners.get(key(tp));
      if (prev === undefined || m.generation > prev.generation || (m.generation === prev.generation && m.memberId < prev.memberId)) owners.set(key(tp), m);
    }
  }
  return owners;
}

function assertSafe(members: readonly CooperativeMember[], counts: ReadonlyMap<string, number>, result: Map<string, TopicPartition[]>): void {
  const given = new Map<string, string>();
  const owners = rightfulOwners(members, counts);
  for (const m of members) {
    const mine = result.get(m.memberId);
    assert.ok(mine !== undefined, `member ${m.memberId} has an entry`);
    for (const tp of mine) {
      assert.ok(m.topics.includes(tp.topic), `${key(tp)} given to ${m.memberId}, who does not subscribe to it`);
      assert.ok(tp.partition >= 0 && tp.partition < (counts.get(tp.topic) ?? 0), `${key(tp)} does not exist`);
      assert.equal(given.get(key(tp)), undefined, `${key(tp)} given twice`);
      given.set(key(tp), m.memberId);
      const owner = owners.get(key(tp));
      assert.ok(owner === undefined || owner.memberId === m.memberId, `${key(tp)} moved from ${owner?.memberId} to ${m.memberId} in one round`);
    }
  }
}

/** Each member now owns exactly what it was given (it revoked the rest); generation advances. */
function nextRound(members: readonly CooperativeMember[], result: Map<string, TopicPartition[]>, generation: number): CooperativeMember[] {
  return members.map((m) => ({ ...m, owned: result.get(m.memberId) ?? [], generation }));
}

describe('assignCooperative', () => {
  it('gives each partition at most once, only to subscribers, never straight from a current owner to another member', () => {
    fc.assert(fc.property(groupArb, ({ counts, members }) => {
      assertSafe(members, counts, assignCooperative(members, counts));
    }), { numRuns: 500 });
  });

  it('keeps a partition with its owner when the owner stays and nothing forces a move', () => {
    const counts = new Map([['a', 4]]);
    const members: CooperativeMember[] = [
      { memberId: 'm1', topics: ['a'], owned: [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 1 }], generation: 1 },
      { memberId: 'm2', topics: ['a'], owned: [{ topic: 'a', partition: 2 }, { topic: 'a', partition: 3 }], generation: 1 },
    ];
    const result = assignCooperative(members, counts);
    assert.deepEqual(result.get('m1')?.map(key), ['a-0', 'a-1']);
    assert.deepEqual(result.get('m2')?.map(key), ['a-2', 'a-3']);
  });

  it('a joining member gets moved partitions only in the follow-up round', () => {
    const counts = new Map([['a', 6]]);
    const all = [0, 1, 2, 3, 4, 5].map((partition) => ({ topic: 'a', partition }));
    const first = [
      { memberId: 'old', topics: ['a'], owned: all, generation: 1 },
      { memberId: 'new', topics: ['a'], owned: [], generation: -1 },
    ];
    const r1 = assignCooperative(first, counts);
    assert.equal(r1.get('new')?.length, 0, 'nothing moves in the first round');
    assert.equal(r1.get('old')?.length, 3, 'the old owner keeps its share and gives up the rest');
    const r2 = assignCooperative(nextRound(first, r1, 2), counts);
    assert.equal(r2.get('new')?.length, 3);
    assert.deepEqual(r2.get('old'), r1.get('old'));
  });

  it('converges within two rounds to a complete assignment balanced within one (equal subscriptions)', () => {
    fc.assert(fc.property(groupArb, fc.subarray(TOPICS, { minLength: 1 }), ({ counts, members }, topics) => {
      let current: CooperativeMember[] = members.map((m) => ({ ...m, topics }));
      let result = assignCooperative(current, counts);
      for (let round = 0; round < 2; round++) {
        assertSafe(current, counts, result);
        current = nextRound(current, result, round + 10);
        result = assignCooperative(current, counts);
      }
      assertSafe(current, counts, result);
      // No revocations pending: everyone was given exactly what it owns.
      for (const m of current) assert.deepEqual(result.get(m.memberId)?.map(key).sort(), m.owned.map(key).sort(), `${m.memberId} still changing`);
      const sizes = [...result.values()].map((ps) => ps.length);
      const total = topics.reduce((n, t) => n + (counts.get(t) ?? 0), 0);
      assert.equal(sizes.reduce((a, b) => a + b, 0), total, 'every subscribed partition is assigned');
      assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `unbalanced: ${sizes.join(',')}`);
    }), { numRuns: 300 });
  });
});
