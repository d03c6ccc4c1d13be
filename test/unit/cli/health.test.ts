// Replication health in the CLI: the pure verdict (clusterHealth) and listings (affectedPartitions,
// partitionStatus, the text layouts) on hand-built and generated Metadata, and the verbs in-process
// against a fake broker whose Metadata a test changes: `cluster health` exit codes 0/3/1, JSON,
// --wait-healthy, `topic describe --under-replicated|--unavailable` and `cluster describe`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cliInProcess } from '../../helpers/cli_run.js';
import {
  HEALTH_LISTED_PARTITIONS, UNHEALTHY_EXIT_CODE, affectedPartitions, clusterHealth, healthText, partitionStatus,
} from '../../../src/cli/health.js';
import type { ClusterMetadata, PartitionInfo, TopicPartitions } from '../../../src/client/admin.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataResponsePartition } from '../../../src/protocol/apis/metadata.js';
import { FakeBroker, respond } from '../client/fake_broker.js';

function part(partition: number, leader: number, replicas: number[], isr: number[], live: readonly number[] = [1, 2, 3]): PartitionInfo {
  return {
    partition, leader, leaderEpoch: 0, replicas, isr, offlineReplicas: replicas.filter((r) => !live.includes(r)),
    underReplicated: isr.length < replicas.length, leaderless: leader < 0,
  };
}

function topic(name: string, partitionDetails: PartitionInfo[]): TopicPartitions {
  return {
    name, topicId: 'a'.repeat(32), internal: name.startsWith('__'), partitions: partitionDetails.length,
    replicationFactor: partitionDetails[0]?.replicas.length ?? 0,
    underReplicated: partitionDetails.filter((p) => p.underReplicated).length,
    leaderless: partitionDetails.filter((p) => p.leaderless).length,
    partitionDetails,
  };
}

function cluster(live: number[], topics: TopicPartitions[]): ClusterMetadata {
  return { clusterId: 'c1', controllerId: live[0] ?? -1, brokers: live.map((id) => ({ id, host: '127.0.0.1', port: 9000 + id, rack: null })), topics };
}

test('a cluster whose every ISR is full, every leader set and every replica live is healthy', () => {
  const h = clusterHealth(cluster([1, 2, 3], [
    topic('orders', [part(0, 1, [1, 2, 3], [1, 2, 3]), part(1, 2, [2, 3, 1], [3, 2, 1])]),
    topic('__consumer_offsets', [part(0, 3, [3, 1, 2], [3, 1, 2])]),
  ]));
  assert.deepEqual(h, {
    healthy: true, clusterId: 'c1', controllerId: 1, brokers: [1, 2, 3], offlineBrokers: [], partitions: 3,
    underReplicated: 0, leaderless: 0, offlineReplicas: 0, unhealthyPartitions: 0, affected: [],
  });
  assert.match(healthText(h), /^verdict\s+healthy$/m);
});

test('a fenced broker leaves its partitions under-replicated and its replicas offline; a sole ISR member gone leaves a partition leaderless', () => {
  const live = [1, 2];
  const h = clusterHealth(cluster(live, [
    topic('orders', [
      part(0, 1, [1, 2, 3], [1, 2], live),
      part(1, 2, [2, 3, 1], [2, 1], live),
      part(2, -1, [3], [3], live),
    ]),
    topic('quiet', [part(0, 1, [1, 2], [1, 2], live)]),
    // Internal topics count too.
    topic('__consumer_offsets', [part(0, 2, [2, 1, 3], [2, 1], live)]),
  ]));
  assert.equal(h.healthy, false);
  assert.deepEqual([h.partitions, h.underReplicated, h.leaderless, h.offlineReplicas, h.unhealthyPartitions], [5, 3, 1, 4, 4]);
  assert.deepEqual(h.offlineBrokers, [3]);
  assert.deepEqual(h.affected.map((p) => `${p.topic}-${p.partition}`), ['orders-0', 'orders-1', 'orders-2', '__consumer_offsets-0']);
  const text = healthText(h);
  assert.match(text, /^offline brokers\s+1 \[3\]$/m);
  assert.match(text, /^under-replicated\s+3$/m);
  assert.match(text, /^leaderless\s+1$/m);
  assert.match(text, /^verdict\s+unhealthy$/m);
  assert.match(text, /^orders\s+2\s+-1\s+0\s+\[3\]\s+\[3\]\s+\[3\]\s+leaderless$/m);
});

test('a replica on a broker that is not live makes the cluster unhealthy even while the ISR still names it', () => {
  const h = clusterHealth(cluster([1, 2], [topic('t', [part(0, 1, [1, 2, 3], [1, 2, 3], [1, 2])])]));
  assert.equal(h.healthy, false);
  assert.deepEqual([h.underReplicated, h.leaderless, h.offlineReplicas, h.offlineBrokers], [0, 0, 1, [3]]);
});

test('a report names at most HEALTH_LISTED_PARTITIONS partitions and says how many there are', () => {
  const n = HEALTH_LISTED_PARTITIONS + 5;
  const h = clusterHealth(cluster([1, 2], [topic('big', Array.from({ length: n }, (_, i) => part(i, 1, [1, 2], [1], [1, 2])))]));
  assert.equal(h.affected.length, HEALTH_LISTED_PARTITIONS);
  assert.equal(h.unhealthyPartitions, n);
  assert.match(healthText(h), new RegExp(`\\(first ${HEALTH_LISTED_PARTITIONS} of ${n} shown\\)`));
});

test('partitionStatus names every problem of a partition', () => {
  assert.equal(partitionStatus(part(0, 1, [1, 2], [1, 2])), 'ok');
  assert.equal(partitionStatus(part(0, 1, [1, 2], [1])), 'under-replicated');
  assert.equal(partitionStatus(part(0, -1, [1], [1])), 'leaderless');
  assert.equal(partitionStatus(part(0, -1, [1, 2], [1])), 'leaderless,under-replicated');
});

test('affectedPartitions keeps under-replicated, unavailable or both, in topic order', () => {
  const topics = [
    topic('a', [part(0, 1, [1, 2], [1]), part(1, -1, [2], [2]), part(2, 1, [1, 2], [1, 2])]),
    topic('b', [part(0, -1, [1, 2], [1])]),
  ];
  const names = (underReplicated: boolean, unavailable: boolean): string[] =>
    affectedPartitions(topics, { underReplicated, unavailable }).map((p) => `${p.topic}-${p.partition}`);
  assert.deepEqual(names(true, false), ['a-0', 'b-0']);
  assert.deepEqual(names(false, true), ['a-1', 'b-0']);
  assert.deepEqual(names(true, true), ['a-0', 'a-1', 'b-0']);
});

test('property: healthy exactly when no partition has a short ISR, no leader or a replica off the live brokers, with counts that match', () => {
  // Mostly sound partitions, so that a single kind of fault often decides the verdict alone.
  const partitionArb = fc.record({
    replicas: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
    isrCut: fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, { arbitrary: fc.nat({ max: 3 }), weight: 1 }),
    leaderless: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
  });
  const arb = fc.record({
    live: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 3, maxLength: 5 }),
    topics: fc.array(fc.array(partitionArb, { maxLength: 30 }), { maxLength: 3 }),
  });
  fc.assert(fc.property(arb, ({ live, topics }) => {
    const meta = cluster(live, topics.map((ps, ti) => topic(`t${ti}`, ps.map((p, i) => {
      const isr = p.replicas.slice(0, Math.max(1, p.replicas.length - p.isrCut));
      return part(i, p.leaderless ? -1 : isr[0]!, p.replicas, isr, live);
    }))));
    const h = clusterHealth(meta);
    const all = meta.topics.flatMap((t) => t.partitionDetails);
    const bad = all.filter((p) => p.isr.length < p.replicas.length || p.leader < 0 || p.replicas.some((r) => !live.includes(r)));
    assert.equal(h.healthy, bad.length === 0);
    assert.equal(h.partitions, all.length);
    assert.equal(h.unhealthyPartitions, bad.length);
    assert.equal(h.affected.length, Math.min(bad.length, HEALTH_LISTED_PARTITIONS));
    assert.equal(h.underReplicated, all.filter((p) => p.isr.length < p.replicas.length).length);
    assert.equal(h.leaderless, all.filter((p) => p.leader < 0).length);
    assert.equal(h.offlineReplicas, all.reduce((n, p) => n + p.replicas.filter((r) => !live.includes(r)).length, 0));
    assert.deepEqual(h.offlineBrokers, [...new Set(all.flatMap((p) => p.replicas).filter((r) => !live.includes(r)))].sort((a, b) => a - b));
  }), { numRuns: 300 });
});

// --- the verbs in-process against a fake broker ---

interface FakeState {
  live: number[];
  partitions: MetadataResponsePartition[];
  metadataRequests: number;
}

function wirePartition(partitionIndex: number, leaderId: number, replicaNodes: number[], isrNodes: number[], live: number[]): MetadataResponsePartition {
  return { errorCode: 0, partitionIndex, leaderId, leaderEpoch: 1, replicaNodes, isrNodes, offlineReplicas: replicaNodes.filter((r) => !live.includes(r)) };
}

async function fakeCluster(state: FakeState): Promise<FakeBroker> {
  return FakeBroker.start({
    // Metadata only: topic describe then reports its configs as not offered.
    advertise: new Map([[MetadataApi.key, [MetadataApi.minVersion, MetadataApi.maxVersion]]]),
    handlers: new Map([[MetadataApi.key, (h, r) => {
      const req = MetadataApi.decodeRequest(h.apiVersion, r);
      state.metadataRequests++;
      const names = req.topics === null ? ['orders'] : req.topics.map((t) => t.name ?? '');
      return respond(MetadataApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        brokers: state.live.map((id) => ({ nodeId: id, host: '127.0.0.1', port: 9000 + id, rack: id === 1 ? 'r1' : null })),
        clusterId: 'fake-cluster', controllerId: 2,
        topics: names.map((name) => name === 'orders'
          ? { errorCode: 0, name, topicId: 'b'.repeat(32), isInternal: false, partitions: state.partitions, topicAuthorizedOperations: -2147483648 }
          : { errorCode: 3, name, topicId: '0'.repeat(32), isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 }),
        clusterAuthorizedOperations: -2147483648,
      });
    }]]),
  });
}

const cli = cliInProcess;

const HEALTHY = (live: number[]): MetadataResponsePartition[] => [
  wirePartition(0, 1, [1, 2, 3], [1, 2, 3], live), wirePartition(1, 2, [2, 3, 1], [2, 3, 1], live),
];
const AFTER_LOSING_3 = (live: number[]): MetadataResponsePartition[] => [
  wirePartition(0, 1, [1, 2, 3], [1, 2], live), wirePartition(1, 2, [2, 3, 1], [2, 1], live), wirePartition(2, -1, [3], [3], live),
];

test('cluster health exits 0 while healthy and UNHEALTHY_EXIT_CODE with the affected partitions once a broker is gone', async () => {
  const state: FakeState = { live: [1, 2, 3], partitions: HEALTHY([1, 2, 3]), metadataRequests: 0 };
  const fake = await fakeCluster(state);
  const brokers = ['--brokers', `127.0.0.1:${fake.port}`];
  try {
    let r = await cli(['cluster', 'health', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^brokers up\s+3 \[1,2,3\]$/m);
    assert.match(r.out, /^controller\s+2$/m);
    assert.match(r.out, /^verdict\s+healthy$/m);

    state.live = [1, 2];
    state.partitions = AFTER_LOSING_3(state.live);
    r = await cli(['cluster', 'health', ...brokers]);
    assert.equal(r.code, UNHEALTHY_EXIT_CODE, r.out);
    assert.match(r.out, /^verdict\s+unhealthy$/m);
    assert.match(r.out, /^orders\s+0\s+1\s+1\s+\[1,2,3\]\s+\[1,2\]\s+\[3\]\s+under-replicated$/m);

    r = await cli(['cluster', 'health', ...brokers, '--format', 'json']);
    assert.equal(r.code, UNHEALTHY_EXIT_CODE);
    const json = JSON.parse(r.out) as { healthy: boolean; underReplicated: number; leaderless: number; offlineBrokers: number[]; brokers: number[] };
    assert.deepEqual([json.healthy, json.underReplicated, json.leaderless, json.offlineBrokers, json.brokers], [false, 2, 1, [3], [1, 2]]);

    // kafka-topics.sh --under-replicated-partitions / --unavailable-partitions.
    r = await cli(['topic', 'describe', '--under-replicated', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual((JSON.parse(r.out) as { topic: string; partition: number }[]).map((p) => `${p.topic}-${p.partition}`), ['orders-0', 'orders-1']);
    r = await cli(['topic', 'describe', 'orders', '--unavailable', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^TOPIC\s+PARTITION\s+LEADER/);
    assert.deepEqual(r.out.split('\n').slice(1).map((l) => l.split(/\s+/).slice(0, 2).join('-')), ['orders-2']);
    r = await cli(['topic', 'describe', 'nope', '--unavailable', ...brokers]);
    assert.equal(r.code, 1);
    assert.match(r.err, /UNKNOWN_TOPIC_OR_PARTITION/);

    r = await cli(['topic', 'list', ...brokers]);
    assert.match(r.out, /^NAME\s+PARTITIONS\s+REPLICAS\s+UNDER-REPLICATED\s+LEADERLESS\s+INTERNAL\norders\s+3\s+3\s+2\s+1\s+no$/);
    r = await cli(['topic', 'describe', 'orders', ...brokers]);
    assert.match(r.out, /^under-replicated\s+2 of 3$/m);
    assert.match(r.out, /^leaderless\s+1$/m);
    assert.match(r.out, /^2\s+-1\s+1\s+\[3\]\s+\[3\]\s+\[3\]\s+leaderless$/m);
    r = await cli(['topic', 'describe', 'orders', ...brokers, '--format', 'json']);
    const d = JSON.parse(r.out) as { underReplicated: number; leaderless: number; partitionDetails: { underReplicated: boolean; leaderless: boolean }[] };
    assert.deepEqual([d.underReplicated, d.leaderless], [2, 1]);
    assert.deepEqual(d.partitionDetails.map((p) => [p.underReplicated, p.leaderless]), [[true, false], [true, false], [false, true]]);
  } finally {
    await fake.stop();
  }
});

test('cluster health --wait-healthy polls until the cluster heals, or answers UNHEALTHY_EXIT_CODE at the deadline', async () => {
  const state: FakeState = { live: [1, 2], partitions: AFTER_LOSING_3([1, 2]), metadataRequests: 0 };
  const fake = await fakeCluster(state);
  const brokers = ['--brokers', `127.0.0.1:${fake.port}`];
  try {
    const started = Date.now();
    let r = await cli(['cluster', 'health', '--wait-healthy', '--timeout-ms', '600', ...brokers]);
    assert.equal(r.code, UNHEALTHY_EXIT_CODE);
    assert.ok(Date.now() - started >= 600, 'waited for the deadline');
    assert.ok(state.metadataRequests >= 2, `polled ${state.metadataRequests} times`);

    const heal = setTimeout(() => {
      state.live = [1, 2, 3];
      state.partitions = HEALTHY(state.live);
    }, 500);
    r = await cli(['cluster', 'health', '--wait-healthy', '--timeout-ms', '10000', ...brokers]);
    clearTimeout(heal);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^verdict\s+healthy$/m);
  } finally {
    await fake.stop();
  }
});

test('cluster health keeps exit code 1 when no broker answers, waiting or not', async () => {
  const fake = await fakeCluster({ live: [1], partitions: [], metadataRequests: 0 });
  const port = fake.port;
  await fake.stop();
  let r = await cli(['cluster', 'health', '--brokers', `127.0.0.1:${port}`]);
  assert.equal(r.code, 1);
  r = await cli(['cluster', 'health', '--wait-healthy', '--timeout-ms', '300', '--brokers', `127.0.0.1:${port}`]);
  assert.equal(r.code, 1);
  r = await cli(['cluster', 'health', 'extra']);
  assert.equal(r.code, 2);
});

test('cluster describe shows the cluster id, the controller and the live brokers', async () => {
  const fake = await fakeCluster({ live: [1, 2, 3], partitions: [], metadataRequests: 0 });
  const brokers = ['--brokers', `127.0.0.1:${fake.port}`];
  try {
    let r = await cli(['cluster', 'describe', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^cluster id\s+fake-cluster$/m);
    assert.match(r.out, /^controller\s+2$/m);
    assert.match(r.out, /^1\s+127\.0\.0\.1\s+9001\s+r1\s*$/m);
    assert.match(r.out, /^2\s+127\.0\.0\.1\s+9002\s+-\s+yes$/m);
    r = await cli(['cluster', 'describe', ...brokers, '--format', 'json']);
    assert.deepEqual(JSON.parse(r.out), {
      clusterId: 'fake-cluster', controllerId: 2,
      brokers: [1, 2, 3].map((id) => ({ id, host: '127.0.0.1', port: 9000 + id, rack: id === 1 ? 'r1' : null })),
    });
  } finally {
    await fake.stop();
  }
});
