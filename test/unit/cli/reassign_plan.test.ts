// What `sluice reassign plan` reads off the cluster and `apply` checks before running: the
// planner's input (internal topics left out by default, byte rates from two size samples, fenced
// brokers refused unless removed), the stale-plan check, and the stored plan's parse.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerStanding, ClusterMetadata, TopicPartitions } from '../../../src/client/admin.js';
import { UsageError } from '../../../src/cli/args.js';
import { DEFAULT_BATCH_OPTIONS, defaultTopics, makePlan, withDrainedTopics, parseStoredPlan, planInputOf, staleParts } from '../../../src/cli/reassign_plan.js';

function topic(name: string, internal: boolean, replicas: number[][]): TopicPartitions {
  return {
    name, topicId: '0'.repeat(32), internal, partitions: replicas.length, replicationFactor: replicas[0]?.length ?? 0, underReplicated: 0, leaderless: 0,
    partitionDetails: replicas.map((r, partition) => ({ partition, leader: r[0]!, leaderEpoch: 0, replicas: r, isr: r, offlineReplicas: [], underReplicated: false, leaderless: false })),
  };
}

const meta: ClusterMetadata = {
  clusterId: 'c', controllerId: 1, brokers: [],
  topics: [topic('__consumer_offsets', true, [[1, 2]]), topic('__sluice_reassignment', false, [[2, 3]]), topic('orders', false, [[1, 2], [2, 3], [3, 1], [1, 2]])],
};
const standing = (id: number, state: BrokerStanding['state'] = 'running'): BrokerStanding => ({ id, host: '127.0.0.1', port: 9000 + id, rack: null, state, adminAddress: null });
const brokers = [standing(1), standing(2), standing(3), standing(4, 'warming')];

describe('reassign plan', () => {
  it('covers every topic but internal ones by default, and a drain every topic on the removed brokers', () => {
    assert.deepEqual(defaultTopics(meta), ['orders']);
    assert.deepEqual(withDrainedTopics(meta, ['orders'], [3]).sort(), ['__sluice_reassignment', 'orders']);
    assert.deepEqual(withDrainedTopics(meta, [], [1]).sort(), ['__consumer_offsets', 'orders']);
  });

  it('takes sizes from the later sample and byte rates from the growth between the two (none when retention shrank the log)', () => {
    const first = new Map([['orders:0', 1000], ['orders:1', 5000], ['orders:2', 0]]);
    const later = new Map([['orders:0', 3000], ['orders:1', 4000], ['orders:2', 0]]);
    const input = planInputOf(meta, brokers, ['orders'], [], first, later, 2000);
    const byPartition = new Map(input.partitions.map((p) => [p.partition, p]));
    assert.deepEqual([byPartition.get(0)!.sizeBytes, byPartition.get(0)!.bytesInPerSec], [3000, 1000]);
    assert.deepEqual([byPartition.get(1)!.sizeBytes, byPartition.get(1)!.bytesInPerSec], [4000, 0]);
    assert.deepEqual([byPartition.get(3)!.sizeBytes, byPartition.get(3)!.bytesInPerSec], [0, 0], 'a partition no broker reported');
    assert.deepEqual(input.brokers.map((b) => b.id), [1, 2, 3, 4], 'a warming broker takes replicas');
  });

  it('refuses fenced brokers unless they are being removed, and unknown topics or brokers', () => {
    const fenced = [standing(1), standing(2), standing(3, 'fenced')];
    assert.throws(() => planInputOf(meta, fenced, ['orders'], [], new Map(), null, 0), (e: unknown) => e instanceof UsageError && /broker 3 fenced/.test(e.message));
    assert.equal(planInputOf(meta, fenced, ['orders'], [3], new Map(), null, 0).removing[0], 3);
    assert.throws(() => planInputOf(meta, brokers, ['nope'], [], new Map(), null, 0), /no topic nope/);
    assert.throws(() => planInputOf(meta, brokers, ['orders'], [9], new Map(), null, 0), /no such broker/);
  });

  it('plans the joined broker in, and a plan goes stale once any of its partitions changed', () => {
    const plan = makePlan(planInputOf(meta, brokers, ['orders'], [], new Map(), null, 0), ['orders'], DEFAULT_BATCH_OPTIONS, 0);
    assert.equal(plan.report.replicaMoves, plan.report.lowerBound);
    assert.ok(plan.moves.some((m) => m.to.includes(4)));
    assert.deepEqual(staleParts(plan, meta), []);
    const moved = plan.moves[0]!;
    const changed: ClusterMetadata = {
      ...meta,
      topics: meta.topics.map((t) => (t.name !== moved.topic ? t : { ...t, partitionDetails: t.partitionDetails.map((p) => (p.partition === moved.partition ? { ...p, replicas: [...p.replicas].reverse() } : p)) })),
    };
    assert.deepEqual(staleParts(plan, changed), [`${moved.topic}:${moved.partition}`]);
  });

  it('reads back what it stored, and refuses what is not a plan', () => {
    const plan = makePlan(planInputOf(meta, brokers, ['orders'], [], new Map(), null, 0), ['orders'], DEFAULT_BATCH_OPTIONS, 0);
    assert.deepEqual(parseStoredPlan(JSON.stringify(plan), 'f'), plan);
    assert.throws(() => parseStoredPlan('{"version":2}', 'f'), /not a sluice reassignment plan/);
    assert.throws(() => parseStoredPlan('nope', 'f'), /not JSON/);
  });
});
