// Three `sluice start` processes on loopback forming one cluster through the metadata quorum:
// every broker lists all three with their racks, a topic created through a broker that is not
// the controller (forwarded over the controller listener) has leaders
// on all three and every broker describes it identically, a non-leader refuses Produce naming the
// leader (KIP-951), FindCoordinator follows the leader of the group's __consumer_offsets
// partition, and kcat and kafka-python produce through one bootstrap broker and consume through another. The
// quorum's operator surface: /v1/quorum on the leader lists the three voters with their lag,
// /v1/health names the leader, /metrics has the raft series, DescribeQuorum is answered on the
// client listener; and with two of three nodes killed the survivor's health reports the quorum lost.
import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { kcat } from '../helpers/kcat.js';
import { assertModernApiVersion, assertPythonRecord, kafkaPython, parsePythonLine, writePythonInput } from '../helpers/kafka_python.js';
import { testMessage } from '../helpers/messages.js';
import { RawConn, requestFrame } from '../helpers/raw_socket.js';
import { offsetsPartitionFor } from '../../src/coordinator/groups/group_api.js';
import { CreateTopicsApi, type CreateTopicsResponse } from '../../src/protocol/apis/create_topics.js';
import { FindCoordinatorApi, type FindCoordinatorResponse } from '../../src/protocol/apis/find_coordinator.js';
import { MetadataApi, type MetadataResponse } from '../../src/protocol/apis/metadata.js';
import { ProduceApi, type ProduceResponse } from '../../src/protocol/apis/produce.js';
import { ApiVersionsApi, type ApiVersionsResponse } from '../../src/protocol/apis/api_versions.js';
import { DescribeQuorumApi, type DescribeQuorumResponse } from '../../src/protocol/apis/describe_quorum.js';
import { METADATA_TOPIC_NAME } from '../../src/protocol/apis/quorum_common.js';
import type { QuorumHealthReport, QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { readResponseHeader } from '../../src/protocol/header.js';
import { Reader } from '../../src/protocol/reader.js';
import type { AnyApi } from '../../src/protocol/schema.js';

const TOPIC = 'spread';
let brokers: BrokerProcess[] = [];

before(async () => {
  const controllerPorts = [await freePort(), await freePort(), await freePort()];
  const voters = controllerPorts.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',');
  // Each waits for a quorum, so they start together.
  brokers = await Promise.all([1, 2, 3].map((id) =>
    BrokerProcess.start({ shards: 1, args: ['--node-id', String(id), '--controller-voters', voters, '--rack', `rack-${id}`], startTimeoutMs: 60_000 })));
});

afterEach((t) => {
  for (const b of brokers) b.noteResult(t);
});

after(async () => {
  await Promise.all(brokers.map((b) => b.dispose()));
});

let correlation = 0;

async function call<Res>(broker: BrokerProcess, api: AnyApi, version: number, req: unknown): Promise<Res> {
  const conn = await RawConn.open(broker.kafkaPort);
  try {
    const id = ++correlation;
    conn.write(requestFrame(api, version, id, req));
    const out = await conn.wait({ frames: 1, timeoutMs: 30_000 });
    const frame = out.frames[0];
    assert.ok(frame !== undefined, `an answer to ${api.name}`);
    const r = new Reader(frame);
    assert.equal(readResponseHeader(r, api.key, api.isFlexible(version)), id);
    return api.decodeResponse(version, r) as Res;
  } finally {
    conn.destroy();
  }
}

const metadata = (b: BrokerProcess, topics: string[] | null): Promise<MetadataResponse> =>
  call(b, MetadataApi, 12, { topics: topics?.map((name) => ({ name, topicId: '0'.repeat(32) })) ?? null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });

it('every broker lists the three brokers with their racks and names one controller', async () => {
  const answers = await Promise.all(brokers.map((b) => metadata(b, [])));
  for (const m of answers) {
    assert.deepEqual(
      m.brokers.map((b) => [b.nodeId, b.port, b.rack]).sort((x, y) => Number(x[0]) - Number(y[0])),
      brokers.map((b, i) => [i + 1, b.kafkaPort, `rack-${i + 1}`]),
    );
    assert.ok([1, 2, 3].includes(m.controllerId));
    assert.equal(m.clusterId, answers[0]!.clusterId);
  }
});

it('a 12-partition topic created through a broker that is not the controller has leaders on all three, described identically everywhere', async () => {
  // Broker 2, unless it leads the quorum: the change must travel to the controller over its listener.
  const controller = (await metadata(brokers[1]!, [])).controllerId;
  const via = brokers[controller === 2 ? 0 : 1]!;
  const created = await call<CreateTopicsResponse>(via, CreateTopicsApi, 7, {
    topics: [{ name: TOPIC, numPartitions: 12, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false,
  });
  assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
  const answers = await Promise.all(brokers.map((b) => metadata(b, [TOPIC])));
  const topic = answers[0]!.topics[0]!;
  assert.equal(topic.errorCode, ErrorCode.NONE);
  assert.equal(topic.partitions.length, 12);
  assert.deepEqual(new Set(topic.partitions.map((p) => p.leaderId)), new Set([1, 2, 3]));
  for (const m of answers) assert.deepEqual(m.topics, answers[0]!.topics);
});

it('Produce to a broker that does not lead the partition names the leader and its endpoint', async () => {
  const m = await metadata(brokers[0]!, [TOPIC]);
  const p = m.topics[0]!.partitions.find((x) => x.leaderId !== 1)!;
  const records = encodeRecordBatch([{ key: null, value: Buffer.from('x'), timestamp: Date.now() }]);
  const res = await call<ProduceResponse>(brokers[0]!, ProduceApi, 10, {
    transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: p.partitionIndex, records }] }],
  });
  const part = res.responses[0]!.partitionResponses[0]!;
  assert.equal(part.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.deepEqual(part.currentLeader, { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch });
  const leader = brokers[p.leaderId - 1]!;
  assert.deepEqual(res.nodeEndpoints, [{ nodeId: p.leaderId, host: '127.0.0.1', port: leader.kafkaPort, rack: `rack-${p.leaderId}` }]);
});

it('FindCoordinator on any broker answers the leader of the group\'s __consumer_offsets partition', async () => {
  const groups = ['g-one', 'g-two', 'g-three', 'g-four'];
  const offsets = (await metadata(brokers[2]!, ['__consumer_offsets'])).topics[0]!;
  for (const b of brokers) {
    const res = await call<FindCoordinatorResponse>(b, FindCoordinatorApi, 4, { key: '', keyType: 0, coordinatorKeys: groups });
    for (const c of res.coordinators) {
      const leader = offsets.partitions.find((p) => p.partitionIndex === offsetsPartitionFor(c.key, offsets.partitions.length))!.leaderId;
      assert.equal(c.errorCode, ErrorCode.NONE);
      assert.equal(c.nodeId, leader);
      assert.equal(c.port, brokers[leader - 1]!.kafkaPort);
    }
  }
});

it('kcat produces through one bootstrap broker and consumes everything through another', async () => {
  const lines = Array.from({ length: 60 }, (_, i) => `m-${i}`);
  await kcat(['-b', brokers[2]!.bootstrap, '-P', '-t', TOPIC, '-X', 'topic.partitioner=murmur2_random'], { input: Buffer.from(lines.join('\n') + '\n') });
  const out = await kcat(['-b', brokers[0]!.bootstrap, '-C', '-t', TOPIC, '-o', 'beginning', '-e', '-q']);
  assert.deepEqual(out.stdout.toString().trim().split('\n').sort(), [...lines].sort());
});

it('kafka-python produces through one bootstrap broker to partitions led by all three and consumes everything through another', async () => {
  const topic = 'python-spread';
  const created = await call<CreateTopicsResponse>(brokers[0]!, CreateTopicsApi, 7, {
    topics: [{ name: topic, numPartitions: 6, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false,
  });
  assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(new Set((await metadata(brokers[2]!, [topic])).topics[0]!.partitions.map((p) => p.leaderId)), new Set([1, 2, 3]));
  const work = mkdtempSync(join(tmpdir(), 'sluice-cluster-py-'));
  try {
    const count = 120;
    const input = join(work, 'in');
    await writePythonInput(input, count, (i) => ({ partition: i % 6, message: testMessage(topic, i) }));
    const produced = await kafkaPython(['produce', brokers[2]!.bootstrap, topic, '1', input], 60_000);
    assert.deepEqual([produced.sent, produced.errors], [count, 0]);
    assertModernApiVersion(produced.api_version);
    const output = join(work, 'out');
    const consumed = await kafkaPython(['consume', brokers[0]!.bootstrap, topic, '6', String(count), output, '40'], 60_000);
    assert.equal(consumed.received, count);
    const lines = readFileSync(output, 'utf8').split('\n').filter((l) => l !== '');
    for (const r of lines.map(parsePythonLine)) assertPythonRecord(r, testMessage(topic, r.offset * 6 + r.partition), topic);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

async function admin<T>(b: BrokerProcess, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://127.0.0.1:${b.adminPort}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as T };
}

/** The quorum leader's index in `brokers`, as every node's /v1/quorum agrees on it. */
async function quorumLeader(): Promise<number> {
  const reports = await Promise.all(brokers.map((b) => admin<QuorumReport>(b, '/v1/quorum')));
  const leaders = new Set(reports.map((r) => r.body.leaderId));
  assert.equal(leaders.size, 1, `one leader known everywhere: ${JSON.stringify(reports.map((r) => r.body))}`);
  const id = [...leaders][0]!;
  assert.ok([1, 2, 3].includes(id));
  return id - 1;
}

it('/v1/quorum on the leader lists the three voters with their lag; /v1/health names the leader', async () => {
  const leader = await quorumLeader();
  const { status, body } = await admin<QuorumReport>(brokers[leader]!, '/v1/quorum');
  assert.equal(status, 200);
  assert.equal(body.role, 'leader');
  assert.equal(body.nodeId, leader + 1);
  assert.deepEqual([...body.voters].sort(), [1, 2, 3]);
  const voters = (body.replicas ?? []).filter((r) => r.voter);
  assert.deepEqual(voters.map((r) => r.id).sort(), [1, 2, 3]);
  for (const r of voters) {
    assert.equal(r.lagOffsets, body.logEndOffset - r.logEndOffset);
    assert.ok(r.lagOffsets >= 0 && r.lastFetchMsAgo >= 0 && r.lastFetchMsAgo < 5000, JSON.stringify(r));
  }
  const follower = await admin<QuorumReport>(brokers[(leader + 1) % 3]!, '/v1/quorum');
  assert.equal(follower.body.role, 'follower');
  assert.equal(follower.body.replicas, undefined);
  for (const b of brokers) {
    const health = await admin<{ status: string; quorum: QuorumHealthReport }>(b, '/v1/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.quorum.state, 'ok');
    assert.equal(health.body.quorum.leaderId, leader + 1);
    assert.equal(health.body.quorum.epoch, body.epoch);
  }
});

it('/metrics on the leader has the raft epoch, leader changes, commit latency and each voter\'s lag', async () => {
  const leader = brokers[await quorumLeader()]!;
  const { epoch } = (await admin<QuorumReport>(leader, '/v1/quorum')).body;
  assert.equal(await leader.metric('sluice_raft_epoch'), epoch);
  assert.ok(await leader.metric('sluice_raft_leader_changes_total') >= 1);
  // Broker registrations and the topic above were proposed and committed on this leader.
  assert.ok(await leader.metric('sluice_raft_commit_latency_seconds_count') > 0);
  const text = await (await fetch(`http://127.0.0.1:${leader.adminPort}/metrics`)).text();
  for (const voter of [1, 2, 3]) {
    assert.match(text, new RegExp(`^sluice_raft_append_lag_offsets\\{voter="${voter}"\\} \\d+$`, 'm'));
  }
});

it('DescribeQuorum on the client listener: the leader describes the voters, a follower names the leader; ApiVersions lists it', async () => {
  const leader = await quorumLeader();
  const ask = { topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] };
  const res = await call<DescribeQuorumResponse>(brokers[leader]!, DescribeQuorumApi, 2, ask);
  const p = res.topics[0]!.partitions[0]!;
  assert.equal(p.errorCode, ErrorCode.NONE);
  assert.equal(p.leaderId, leader + 1);
  assert.deepEqual(p.currentVoters.map((v) => v.replicaId).sort(), [1, 2, 3]);
  assert.deepEqual(res.nodes.map((n) => n.nodeId).sort(), [1, 2, 3]);
  const other = await call<DescribeQuorumResponse>(brokers[(leader + 1) % 3]!, DescribeQuorumApi, 2, ask);
  assert.equal(other.topics[0]!.partitions[0]!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(other.topics[0]!.partitions[0]!.leaderId, leader + 1);
  const versions = await call<ApiVersionsResponse>(brokers[0]!, ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
  assert.deepEqual(versions.apiKeys.find((k) => k.apiKey === DescribeQuorumApi.key), { apiKey: 55, minVersion: 0, maxVersion: 2 });
});

it('with two of the three nodes killed, the survivor reports the quorum lost (HTTP 503)', async () => {
  // Runs last: the cluster does not come back.
  const survivor = brokers[(await quorumLeader() + 1) % 3]!;
  await Promise.all(brokers.filter((b) => b !== survivor).map((b) => b.kill9()));
  const deadline = Date.now() + 30_000;
  let last: { status: number; body: { status: string; failing?: string[]; quorum: QuorumHealthReport } } | null = null;
  while (Date.now() < deadline) {
    last = await admin(survivor, '/v1/health');
    if (last.body.quorum.state === 'lost') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.ok(last !== null);
  assert.equal(last.status, 503, JSON.stringify(last.body));
  assert.equal(last.body.status, 'ready');
  assert.deepEqual(last.body.failing, ['quorum']);
  assert.ok(!['leader', 'follower'].includes(last.body.quorum.role), last.body.quorum.role);
  assert.ok(last.body.quorum.leaderlessMs > 2000);
});
