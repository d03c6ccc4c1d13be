// KIP-848 server-side assignors ('uniform', 'range'): every subscribed partition goes to exactly one
// subscribed member, balance, determinism, Kafka's range layout, and stickiness (a join moves about
// P/(C+1) partitions, a leave only the leaver's, an unchanged group nothing).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Assignor, AssignorMember, GroupAssignment } from '../../../src/assignors/assignor.js';
import { RangeAssignor } from '../../../src/assignors/range.js';
import { UniformAssignor } from '../../../src/assignors/uniform.js';
import type { TopicIndex, TopicInfo } from '../../../src/assignors/assignor.js';

const uniform = new UniformAssignor();
const range = new RangeAssignor();
const NONE: ReadonlyMap<string, readonly number[]> = new Map();

function topicId(t: number): string {
  return (t + 1).toString(16).padStart(32, '0');
}

function topicIndex(partitions: readonly number[]): TopicIndex {
  const infos: TopicInfo[] = partitions.map((n, t) => ({ name: `topic-${t}`, id: topicId(t), partitions: n }));
  return { byName: new Map(infos.map((i) => [i.name, i])), byId: new Map(infos.map((i) => [i.id, i])) };
}

function member(id: string, topics: ReadonlySet<string>, owned: ReadonlyMap<string, readonly number[]> = NONE): AssignorMember {
  return { memberId: id, rackId: null, subscribedTopicIds: topics, owned };
}

function countOf(assignment: ReadonlyMap<string, readonly number[]> | undefined): number {
  let n = 0;
  for (const list of assignment?.values() ?? []) n += list.length;
  return n;
}

/** partition key → member; fails on a partition given twice. */
function owners(result: GroupAssignment): Map<string, string> {
  const out = new Map<string, string>();
  for (const [memberId, topics] of result) {
    for (const [topic, parts] of topics) {
      for (const p of parts) {
        const key = `${topic}:${p}`;
        assert.equal(out.has(key), false, `${key} assigned twice`);
        out.set(key, memberId);
      }
    }
  }
  return out;
}

function moved(before: GroupAssignment, after: GroupAssignment): number {
  const was = owners(before);
  let n = 0;
  for (const [key, memberId] of owners(after)) if (was.get(key) !== memberId) n++;
  return n;
}

function withOwned(members: readonly AssignorMember[], result: GroupAssignment): AssignorMember[] {
  return members.map((m) => ({ ...m, owned: result.get(m.memberId) ?? NONE }));
}

function checkValid(members: readonly AssignorMember[], topics: TopicIndex, result: GroupAssignment): void {
  assert.deepEqual(new Set(result.keys()), new Set(members.map((m) => m.memberId)));
  const byId = new Map(members.map((m) => [m.memberId, m]));
  const taken = owners(result);
  for (const [key, memberId] of taken) {
    const [topic, p] = key.split(':');
    assert.ok(byId.get(memberId)!.subscribedTopicIds.has(topic!), `${memberId} got ${key} without subscribing`);
    assert.ok(Number(p) < topics.byId.get(topic!)!.partitions);
  }
  for (const info of topics.byId.values()) {
    if (!members.some((m) => m.subscribedTopicIds.has(info.id))) continue;
    for (let p = 0; p < info.partitions; p++) assert.ok(taken.has(`${info.id}:${p}`), `${info.id}:${p} unassigned`);
  }
}

/** Random topics, members subscribing to random subsets (or all), owning random (even bogus) partitions. */
const scenario = fc.record({
  partitions: fc.array(fc.integer({ min: 0, max: 24 }), { minLength: 1, maxLength: 5 }),
  memberCount: fc.integer({ min: 1, max: 10 }),
  homogeneous: fc.boolean(),
  seed: fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
}).map(({ partitions, memberCount, homogeneous, seed }) => {
  const topics = topicIndex(partitions);
  let i = 0;
  const next = (n: number): number => (seed[i++ % seed.length]! + i) % n;
  const all = new Set(partitions.map((_, t) => topicId(t)));
  const members = Array.from({ length: memberCount }, (_, m) => {
    const subscribed = homogeneous ? all : new Set(partitions.map((_, t) => topicId(t)).filter(() => next(3) > 0));
    const owned = new Map<string, number[]>();
    for (let k = next(4); k > 0; k--) {
      const t = next(partitions.length + 1);
      owned.set(t < partitions.length ? topicId(t) : 'f'.repeat(32), [next(30), next(30)]);
    }
    return member(`m${(m * 7919) % 1000}`, subscribed, owned);
  });
  return { topics, members };
});

function loads(result: GroupAssignment): Map<string, number> {
  return new Map([...result].map(([id, a]) => [id, countOf(a)]));
}

for (const assignor of [uniform, range] as Assignor[]) {
  describe(`${assignor.name} assignor`, () => {
    it('gives every subscribed partition to exactly one subscribed member', () => {
      fc.assert(fc.property(scenario, ({ topics, members }) => {
        checkValid(members, topics, assignor.assign(members, topics));
      }), { numRuns: 300 });
    });

    it('is deterministic, whatever the order of the members', () => {
      fc.assert(fc.property(scenario, ({ topics, members }) => {
        const a = assignor.assign(members, topics);
        const b = assignor.assign([...members].reverse(), topics);
        assert.deepEqual(owners(b), owners(a));
      }), { numRuns: 200 });
    });

    it('changes nothing for a group that already holds its assignment, and reuses its maps', () => {
      fc.assert(fc.property(scenario, ({ topics, members }) => {
        const first = assignor.assign(members, topics);
        const again = withOwned(members, first);
        const second = assignor.assign(again, topics);
        assert.equal(moved(first, second), 0);
        for (const m of again) assert.equal(second.get(m.memberId), m.owned);
      }), { numRuns: 200 });
    });
  });
}

describe('uniform assignor', () => {
  it('balances homogeneous members to within one partition', () => {
    fc.assert(fc.property(scenario, ({ topics, members }) => {
      const all = members[0]!.subscribedTopicIds;
      const same = members.map((m) => ({ ...m, subscribedTopicIds: all }));
      const counts = [...loads(uniform.assign(same, topics)).values()];
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${counts}`);
    }), { numRuns: 300 });
  });

  it('balances heterogeneous members: no partition could go to a subscriber with two fewer', () => {
    fc.assert(fc.property(scenario, ({ topics, members }) => {
      const result = uniform.assign(members, topics);
      const load = loads(result);
      for (const [holder, assignment] of result) {
        for (const topic of assignment.keys()) {
          for (const m of members) {
            if (m.subscribedTopicIds.has(topic)) assert.ok(load.get(m.memberId)! >= load.get(holder)! - 1, `${m.memberId} vs ${holder}`);
          }
        }
      }
    }), { numRuns: 300 });
  });

  it('moves at most ⌈P/(C+1)⌉ partitions when one member joins a balanced homogeneous group', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 12 }), (parts, count) => {
      const topics = topicIndex(parts);
      const all = new Set(topics.byId.keys());
      const members = Array.from({ length: count }, (_, i) => member(`m${i}`, all));
      const before = uniform.assign(members, topics);
      const after = uniform.assign([...withOwned(members, before), member('joiner', all)], topics);
      const total = parts.reduce((a, b) => a + b, 0);
      assert.ok(moved(before, after) <= Math.ceil(total / (count + 1)), `moved ${moved(before, after)} of ${total}`);
      assert.equal(countOf(after.get('joiner')), moved(before, after));
    }), { numRuns: 300 });
  });

  it('moves only the leaver\'s partitions when one member leaves', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 2, max: 12 }), fc.nat(), (parts, count, pick) => {
      const topics = topicIndex(parts);
      const all = new Set(topics.byId.keys());
      const members = withOwned(Array.from({ length: count }, (_, i) => member(`m${i}`, all)), new Map());
      const before = uniform.assign(members, topics);
      const leaver = members[pick % count]!.memberId;
      const after = uniform.assign(withOwned(members, before).filter((m) => m.memberId !== leaver), topics);
      assert.equal(moved(before, after), countOf(before.get(leaver)));
    }), { numRuns: 300 });
  });

  it('assigns a fresh homogeneous group in contiguous runs, extras to the first members', () => {
    const topics = topicIndex([5, 5]);
    const all = new Set(topics.byId.keys());
    const result = uniform.assign(['c', 'a', 'b'].map((id) => member(id, all)), topics);
    assert.deepEqual(result.get('a'), new Map([[topicId(0), [0, 1, 2, 3]]]));
    assert.deepEqual(result.get('b'), new Map([[topicId(0), [4]], [topicId(1), [0, 1]]]));
    assert.deepEqual(result.get('c'), new Map([[topicId(1), [2, 3, 4]]]));
  });
});

describe('range assignor', () => {
  it('gives a fresh group Kafka\'s ranges: sorted members, contiguous, the first n mod k get one more', () => {
    fc.assert(fc.property(scenario, ({ topics, members }) => {
      const fresh = members.map((m) => ({ ...m, owned: NONE }));
      const result = range.assign(fresh, topics);
      for (const info of topics.byId.values()) {
        const subscribers = fresh.filter((m) => m.subscribedTopicIds.has(info.id)).map((m) => m.memberId).sort();
        const k = subscribers.length;
        let next = 0;
        subscribers.forEach((id, i) => {
          const size = Math.floor(info.partitions / k) + (i < info.partitions % k ? 1 : 0);
          const expected = Array.from({ length: size }, (_, j) => next + j);
          next += size;
          assert.deepEqual(result.get(id)!.get(info.id) ?? [], expected);
        });
      }
    }), { numRuns: 300 });
  });

  it('keeps each topic balanced within one partition and moves about n/k of it when a member joins', () => {
    fc.assert(fc.property(scenario, ({ topics, members }) => {
      const before = range.assign(members, topics);
      const joiner = member('zz-joiner', members[0]!.subscribedTopicIds);
      const after = range.assign([...withOwned(members, before), joiner], topics);
      for (const info of topics.byId.values()) {
        const counts = [...members, joiner].filter((m) => m.subscribedTopicIds.has(info.id)).map((m) => after.get(m.memberId)!.get(info.id)?.length ?? 0);
        if (counts.length === 0) continue;
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1);
        const only = (a: GroupAssignment): GroupAssignment => new Map([...a].map(([id, t]) => [id, new Map([...t].filter(([topic]) => topic === info.id))]));
        if (members.some((m) => m.subscribedTopicIds.has(info.id))) {
          assert.ok(moved(only(before), only(after)) <= Math.ceil(info.partitions / counts.length) + 1);
        }
      }
    }), { numRuns: 200 });
  });
});
