// KIP-848 server-side assignors at design-point size (DESIGN §11: 10k members × 500k partitions
// in ≤ 50 ms): uniform with homogeneous subscriptions from scratch (1k × 100k, 10k × 500k), one
// member joining a balanced 10k × 500k group (time and partitions moved vs the ⌊P/(C+1)⌋ lower
// bound) or leaving, a heterogeneous group fresh and with a join, and range (1k members × 100k:
// range gives every member a slice of every topic, so its result alone is members × topics
// entries). Prints the median and best of RUNS timed runs after one warm-up.
// Run: node <outDir>/bench/micro/assignor.js   (bounded: ~15 s in all)
import { performance } from 'node:perf_hooks';
import type { Assignor, AssignorMember, GroupAssignment } from '../../src/assignors/assignor.js';
import { RangeAssignor } from '../../src/assignors/range.js';
import { UniformAssignor } from '../../src/assignors/uniform.js';
import type { TopicIndex, TopicInfo } from '../../src/assignors/assignor.js';

const RUNS = 9;
const NO_OWNED: ReadonlyMap<string, readonly number[]> = new Map();

function topicIndex(topicCount: number, partitionsPerTopic: number): TopicIndex {
  const byName = new Map<string, TopicInfo>();
  const byId = new Map<string, TopicInfo>();
  for (let t = 0; t < topicCount; t++) {
    const info = { name: `topic-${t}`, id: (t + 1).toString(16).padStart(32, '0'), partitions: partitionsPerTopic };
    byName.set(info.name, info);
    byId.set(info.id, info);
  }
  return { byName, byId };
}

function homogeneous(memberCount: number, topics: TopicIndex): AssignorMember[] {
  const subscription = new Set(topics.byId.keys());
  return Array.from({ length: memberCount }, (_, i) => ({
    memberId: `member-${String(i).padStart(6, '0')}`, rackId: null, subscribedTopicIds: subscription, owned: NO_OWNED,
  }));
}

/** Deterministic pseudo-random subscriptions: each member picks `perMember` topics out of all. */
function heterogeneous(memberCount: number, topics: TopicIndex, perMember: number): AssignorMember[] {
  const ids = [...topics.byId.keys()];
  let seed = 12345;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % ids.length;
  return Array.from({ length: memberCount }, (_, i) => {
    const set = new Set<string>();
    while (set.size < perMember) set.add(ids[next()]!);
    return { memberId: `member-${String(i).padStart(6, '0')}`, rackId: null, subscribedTopicIds: set, owned: NO_OWNED };
  });
}

function withOwned(members: readonly AssignorMember[], assignment: GroupAssignment): AssignorMember[] {
  return members.map((m) => ({ ...m, owned: assignment.get(m.memberId) ?? NO_OWNED }));
}

function moved(before: GroupAssignment, after: GroupAssignment): number {
  const owner = new Map<string, string>();
  for (const [member, topics] of before) for (const [topic, parts] of topics) for (const p of parts) owner.set(`${topic}:${p}`, member);
  let count = 0;
  for (const [member, topics] of after) for (const [topic, parts] of topics) for (const p of parts) if (owner.get(`${topic}:${p}`) !== member) count++;
  return count;
}

interface Timing { median: number; best: number }

function timed(assignor: Assignor, members: readonly AssignorMember[], topics: TopicIndex): { ms: Timing; result: GroupAssignment } {
  let result = assignor.assign(members, topics);
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    result = assignor.assign(members, topics);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: { median: times[Math.floor(RUNS / 2)]!, best: times[0]! }, result };
}

function report(label: string, ms: Timing, extra = ''): void {
  console.log(`${label.padEnd(58)} ${ms.median.toFixed(1).padStart(6)} ms (best ${ms.best.toFixed(1).padStart(5)})${extra}`);
}

function main(): void {
  console.log(`KIP-848 assignors (node ${process.version}, median and best of ${RUNS} runs after a warm-up)`);
  const uniform = new UniformAssignor();
  const range = new RangeAssignor();

  const small = topicIndex(100, 1000);
  report('uniform, homogeneous, 1k members × 100k partitions', timed(uniform, homogeneous(1000, small), small).ms);

  const big = topicIndex(500, 1000);
  const members = homogeneous(10_000, big);
  const fresh = timed(uniform, members, big);
  report('uniform, homogeneous, 10k members × 500k partitions', fresh.ms);

  const stable = withOwned(members, fresh.result);
  report('uniform, homogeneous, 10k × 500k, sticky, nothing changes', timed(uniform, stable, big).ms);

  const joiner: AssignorMember = { memberId: 'member-joining', rackId: null, subscribedTopicIds: members[0]!.subscribedTopicIds, owned: NO_OWNED };
  const joined = timed(uniform, [...stable, joiner], big);
  report('uniform, homogeneous, 10k × 500k, one member joins', joined.ms,
    `   moved ${moved(fresh.result, joined.result)} (lower bound ⌊P/(C+1)⌋ = ${Math.floor(500_000 / 10_001)})`);

  const left = timed(uniform, stable.slice(1), big);
  report('uniform, homogeneous, 10k × 500k, one member leaves', left.ms,
    `   moved ${moved(fresh.result, left.result)} (the leaver held ${[...fresh.result.get(members[0]!.memberId)!.values()].reduce((n, p) => n + p.length, 0)})`);

  const mixed = topicIndex(200, 500);
  const hetero = heterogeneous(2000, mixed, 20);
  const heteroFresh = timed(uniform, hetero, mixed);
  report('uniform, heterogeneous (20 of 200 topics), 2k × 100k', heteroFresh.ms);
  const heteroJoiner: AssignorMember = { ...heterogeneous(2001, mixed, 20)[2000]!, memberId: 'member-joining' };
  const heteroJoined = timed(uniform, [...withOwned(hetero, heteroFresh.result), heteroJoiner], mixed);
  report('uniform, heterogeneous, 2k × 100k, one member joins', heteroJoined.ms,
    `   moved ${moved(heteroFresh.result, heteroJoined.result)}`);

  const copartitioned = topicIndex(50, 2_000);
  report('range, homogeneous, 1k members × 50 topics × 2k partitions', timed(range, homogeneous(1000, copartitioned), copartitioned).ms);
}

main();
