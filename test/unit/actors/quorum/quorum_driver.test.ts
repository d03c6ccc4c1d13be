// Three (and four) metadata-quorum nodes in one process over loopback TCP with real storage: the
// driver elects a leader, commits what the active controller proposes on every node identically,
// survives the leader stopping or being cut off, restarts a node from its snapshot and log tail,
// answers DescribeQuorum over the Kafka protocol, and changes the voter set one node at a time.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { encodeSnapshot } from '../../../../src/cluster/metadata/snapshot.js';
import { AddRaftVoterApi } from '../../../../src/protocol/apis/add_raft_voter.js';
import { ApiVersionsApi } from '../../../../src/protocol/apis/api_versions.js';
import { AllocateProducerIdsApi } from '../../../../src/protocol/apis/allocate_producer_ids.js';
import { AlterPartitionApi } from '../../../../src/protocol/apis/alter_partition.js';
import { ElectLeadersApi } from '../../../../src/protocol/apis/elect_leaders.js';
import { BrokerHeartbeatApi } from '../../../../src/protocol/apis/broker_heartbeat.js';
import { BrokerRegistrationApi, type BrokerRegistrationResponse } from '../../../../src/protocol/apis/broker_registration.js';
import { CreatePartitionsApi } from '../../../../src/protocol/apis/create_partitions.js';
import { CreateTopicsApi } from '../../../../src/protocol/apis/create_topics.js';
import { DeleteTopicsApi } from '../../../../src/protocol/apis/delete_topics.js';
import { DescribeQuorumApi } from '../../../../src/protocol/apis/describe_quorum.js';
import { METADATA_TOPIC_NAME } from '../../../../src/protocol/apis/quorum_common.js';
import { RemoveRaftVoterApi } from '../../../../src/protocol/apis/remove_raft_voter.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ZERO_UUID } from '../../../../src/protocol/schema.js';
import { StorageError, type IoBackend } from '../../../../src/log/io_backend.js';
import { QuorumProposalError } from '../../../../src/actors/quorum/quorum_driver.js';
import { CONTROLLER_APIS } from '../../../../src/net/controller_server.js';
import { call, callHeld, CLUSTER_ID, QuorumFixture, sleep, waitFor, type FixtureNode } from './quorum_fixture.js';

let fixture: QuorumFixture | null = null;

afterEach(async () => {
  await fixture?.close();
  fixture = null;
});

async function cluster(voters: number[], nodes = voters, snapshotEveryEntries?: number, peers: 'nodes' | 'voters' = 'nodes'): Promise<QuorumFixture> {
  fixture = await QuorumFixture.create({ voters, nodes, peers, ...(snapshotEveryEntries !== undefined ? { snapshotEveryEntries } : {}) });
  for (const id of voters) await fixture.start(id);
  return fixture;
}

function register(port: number, brokerId: number): Promise<BrokerRegistrationResponse> {
  return call(port, BrokerRegistrationApi, 3, {
    brokerId,
    clusterId: CLUSTER_ID,
    incarnationId: brokerId.toString(16).padStart(32, 'a'),
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + brokerId, securityProtocol: 0 }],
    features: [],
    rack: null,
    isMigratingZkBroker: false,
    logDirs: [],
    previousBrokerEpoch: -1,
    sluiceAdminAddress: null,
  });
}

/** Registers `brokerId` through the current leader, retrying while leadership moves. */
async function registerThroughLeader(f: QuorumFixture, brokerId: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const leader = await f.waitForLeader();
    const res = await register(leader.port, brokerId);
    if (res.errorCode === 0) return res.brokerEpoch;
    assert.equal(res.errorCode, ErrorCode.NOT_CONTROLLER);
    await sleep(50);
  }
  throw new Error(`broker ${brokerId} never registered`);
}

/** Waits until every running node applied the same image with every one of `brokers` in it. */
async function convergence(f: QuorumFixture, brokers: number[]): Promise<void> {
  await waitFor('every node to apply the same image', () => {
    const images = [...f.running.values()].map((n) => n.quorum.image);
    if (!images.every((img) => brokers.every((b) => img.brokers.has(b)))) return undefined;
    const bytes = images.map((img) => Buffer.from(encodeSnapshot(img)).toString('hex'));
    return bytes.every((b) => b === bytes[0]) ? true : undefined;
  });
}

function followerOf(f: QuorumFixture, leader: FixtureNode): FixtureNode {
  return [...f.running.values()].find((n) => n.id !== leader.id)!;
}

describe('quorum driver: three nodes over loopback', { concurrency: false, timeout: 60_000 }, () => {
  it('elects one leader whose controller commits registrations that every node applies identically', async () => {
    const f = await cluster([1, 2, 3]);
    const leader = await f.waitForLeader();
    const epochs = [await registerThroughLeader(f, 101), await registerThroughLeader(f, 102)];
    assert.ok(epochs[1]! > epochs[0]!, 'broker epochs are the offsets of their registrations');
    await convergence(f, [101, 102]);
    for (const n of f.running.values()) {
      const s = n.quorum.driver.status();
      assert.equal(s.leaderId, leader.id);
      assert.ok(s.appliedOffset > epochs[1]!, `node ${n.id} applied past the second registration`);
    }
    const refused = await register(followerOf(f, leader).port, 103);
    assert.equal(refused.errorCode, ErrorCode.NOT_CONTROLLER, 'a follower is not the controller');
    assert.deepEqual(f.fatal, []);
  });

  it('elects a new leader that keeps committing when the leader stops', async () => {
    const f = await cluster([1, 2, 3]);
    const first = await f.waitForLeader();
    await registerThroughLeader(f, 101);
    await f.stop(first.id);
    const second = await f.waitForLeader();
    assert.notEqual(second.id, first.id);
    assert.ok(second.quorum.driver.status().epoch > 1);
    await registerThroughLeader(f, 102);
    await convergence(f, [101, 102]);
  });

  it('elects a new leader when the leader is cut off, and the old one catches up once reconnected', async () => {
    const f = await cluster([1, 2, 3]);
    const first = await f.waitForLeader();
    await registerThroughLeader(f, 101);
    first.cut = true;
    const second = await f.waitForLeader();
    assert.notEqual(second.id, first.id);
    await registerThroughLeader(f, 102);
    // Check-quorum: the isolated leader steps down rather than lead alone.
    await waitFor('the cut-off leader to resign', () => (first.quorum.driver.status().role === 'leader' ? undefined : true));
    assert.equal(first.quorum.isActiveController, false);
    first.cut = false;
    await convergence(f, [101, 102]);
    assert.equal(first.quorum.driver.status().leaderId, second.id);
  });

  it('restarts a node from its snapshot and log tail, and it catches up', async () => {
    const f = await cluster([1, 2, 3], [1, 2, 3], 3);
    const leader = await f.waitForLeader();
    const follower = followerOf(f, leader);
    for (let b = 101; b <= 105; b++) await registerThroughLeader(f, b);
    await convergence(f, [101, 102, 103, 104, 105]);
    await waitFor('the follower to snapshot', () => (follower.quorum.driver.status().logStartOffset > 0 ? true : undefined));
    await f.stop(follower.id);
    for (let b = 106; b <= 112; b++) await registerThroughLeader(f, b);
    const restarted = await f.start(follower.id);
    const s = restarted.quorum.driver.status();
    assert.ok(s.logStartOffset > 0, 'the restarted node begins at its own snapshot');
    assert.ok(restarted.quorum.image.brokers.has(101), 'the snapshot restored the image at start');
    await convergence(f, [101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112]);
  });
});

describe('controller listener', { concurrency: false, timeout: 60_000 }, () => {
  it('answers DescribeQuorum with the leader, its high watermark and every voter; a follower refuses', async () => {
    const f = await cluster([1, 2, 3]);
    const leader = await f.waitForLeader();
    await registerThroughLeader(f, 101);
    await convergence(f, [101]);
    const ask = { topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] };
    const res = await call(leader.port, DescribeQuorumApi, 2, ask);
    const p = res.topics[0]!.partitions[0]!;
    assert.equal(p.errorCode, 0);
    assert.equal(p.leaderId, leader.id);
    assert.equal(p.leaderEpoch, leader.quorum.driver.status().epoch);
    assert.equal(p.highWatermark, leader.quorum.driver.status().highWatermark);
    assert.deepEqual(p.currentVoters.map((v) => v.replicaId).sort(), [1, 2, 3]);
    for (const v of p.currentVoters) {
      assert.ok(v.logEndOffset > 0, `voter ${v.replicaId} reports its log end`);
      assert.ok(v.lastFetchTimestamp > Date.now() - 10_000, `voter ${v.replicaId} fetched recently`);
    }
    assert.deepEqual(p.observers, []);
    assert.deepEqual(res.nodes.map((n) => n.nodeId).sort(), [1, 2, 3]);
    const fromFollower = await call(followerOf(f, leader).port, DescribeQuorumApi, 2, ask);
    assert.equal(fromFollower.topics[0]!.partitions[0]!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(fromFollower.topics[0]!.partitions[0]!.leaderId, leader.id);
  });

  it('lists exactly the APIs it serves in ApiVersions', async () => {
    const f = await cluster([1]);
    const leader = await f.waitForLeader();
    const res = await call(leader.port, ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    assert.deepEqual(res.apiKeys.map((k) => k.apiKey), CONTROLLER_APIS.map((a) => a.key).sort((a, b) => a - b));
  });

  it('adds a caught-up observer as a fourth voter and removes it again', async () => {
    const f = await cluster([1, 2, 3], [1, 2, 3, 4]);
    await registerThroughLeader(f, 101);
    const observer = await f.start(4);
    await convergence(f, [101]);
    assert.equal(observer.quorum.driver.status().role, 'observer');
    const leader = await f.waitForLeader();
    const describe = async (): Promise<number[]> => {
      const res = await call(leader.port, DescribeQuorumApi, 2, { topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] });
      return res.topics[0]!.partitions[0]!.currentVoters.map((v) => v.replicaId).sort();
    };
    const add = { clusterId: CLUSTER_ID, timeoutMs: 5000, voterId: 4, voterDirectoryId: ZERO_UUID, listeners: [{ name: 'CONTROLLER', host: '127.0.0.1', port: observer.port }] };
    const added = await call(leader.port, AddRaftVoterApi, 0, add);
    assert.equal(added.errorCode, 0, added.errorMessage ?? '');
    assert.deepEqual(await describe(), [1, 2, 3, 4]);
    await waitFor('node 4 to vote', () => (observer.quorum.driver.status().role === 'follower' ? true : undefined));
    const again = await call(leader.port, AddRaftVoterApi, 0, add);
    assert.equal(again.errorCode, ErrorCode.DUPLICATE_VOTER);
    const removed = await call(leader.port, RemoveRaftVoterApi, 0, { clusterId: CLUSTER_ID, voterId: 4, voterDirectoryId: ZERO_UUID });
    assert.equal(removed.errorCode, 0, removed.errorMessage ?? '');
    assert.deepEqual(await describe(), [1, 2, 3]);
    const foreign = await call(leader.port, RemoveRaftVoterApi, 0, { clusterId: 'another-cluster', voterId: 3, voterDirectoryId: ZERO_UUID });
    assert.equal(foreign.errorCode, ErrorCode.INCONSISTENT_CLUSTER_ID);
  });
});

describe('quorum driver: a voter added from outside the configured set', { concurrency: false, timeout: 60_000 }, () => {
  it('records the new voter\'s listener in the voters entry, so every node dials it, restarts included', async () => {
    const f = await cluster([1, 2, 3], [1, 2, 3, 4], undefined, 'voters');
    await registerThroughLeader(f, 101);
    const joining = await f.start(4);
    await convergence(f, [101]);
    for (const id of [1, 2, 3]) assert.deepEqual(f.running.get(id)!.transport.peerIds.sort(), [1, 2, 3].filter((p) => p !== id), `node ${id} starts without node 4`);
    const leader = await f.waitForLeader();
    const listener = { name: 'CONTROLLER', host: '127.0.0.1', port: joining.port };
    const bad = await call(leader.port, AddRaftVoterApi, 0, { clusterId: CLUSTER_ID, timeoutMs: 5000, voterId: 4, voterDirectoryId: ZERO_UUID, listeners: [{ ...listener, port: 0 }] });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST, 'a listener nobody can dial is refused');
    const added = await call(leader.port, AddRaftVoterApi, 0, { clusterId: CLUSTER_ID, timeoutMs: 5000, voterId: 4, voterDirectoryId: ZERO_UUID, listeners: [listener] });
    assert.equal(added.errorCode, 0, added.errorMessage ?? '');
    await waitFor('every node to dial node 4', () => ([1, 2, 3].every((id) => f.running.get(id)!.transport.peerIds.includes(4)) ? true : undefined));
    await waitFor('node 4 to vote', () => (joining.quorum.driver.status().role === 'follower' ? true : undefined));
    // A restarted voter knows node 4 from its log, not from its configuration.
    const follower = [1, 2, 3].find((id) => id !== leader.id)!;
    await f.stop(follower);
    const restarted = await f.start(follower);
    assert.ok(restarted.transport.peerIds.includes(4), 'the restarted node dials node 4');
    // With the old leader gone, two of the three survivors' votes need node 4 reached over the learned link.
    await f.stop(leader.id);
    const next = await f.waitForLeader(15_000);
    assert.notEqual(next.id, leader.id);
    assert.deepEqual(next.quorum.driver.status().voters.slice().sort(), [1, 2, 3, 4]);
  });

  it('keeps the new voter\'s listener in snapshots: a node that installs one, or restarts from it, still dials the voter', async () => {
    const f = await cluster([1, 2, 3], [1, 2, 3, 4], 4, 'voters');
    await registerThroughLeader(f, 101);
    const leader = await f.waitForLeader();
    // The lagging node misses the voters entry and everything up to the leader's snapshot after it.
    const lagging = [1, 2, 3].find((id) => id !== leader.id)!;
    await f.stop(lagging);
    const joining = await f.start(4);
    await convergence(f, [101]);
    const listener = { name: 'CONTROLLER', host: '127.0.0.1', port: joining.port };
    const added = await call(leader.port, AddRaftVoterApi, 0, { clusterId: CLUSTER_ID, timeoutMs: 5000, voterId: 4, voterDirectoryId: ZERO_UUID, listeners: [listener] });
    assert.equal(added.errorCode, 0, added.errorMessage ?? '');
    const votersAt = leader.quorum.driver.status().logEndOffset;
    for (let broker = 102; broker < 110; broker++) await registerThroughLeader(f, broker);
    await waitFor('the leader to snapshot past the voters entry', () => (leader.quorum.driver.status().logStartOffset > votersAt ? true : undefined));
    const installed = await f.start(lagging);
    assert.deepEqual(installed.transport.peerIds.sort(), [1, 2, 3].filter((p) => p !== lagging), 'its configuration names no node 4');
    await waitFor('the lagging node to install the snapshot', () => (installed.quorum.driver.status().logStartOffset > votersAt ? true : undefined));
    assert.ok(installed.transport.peerIds.includes(4), 'the node that installed the snapshot dials node 4');
    assert.deepEqual(installed.quorum.driver.status().voters.slice().sort(), [1, 2, 3, 4]);
    await f.stop(lagging);
    const restarted = await f.start(lagging);
    assert.ok(restarted.quorum.driver.status().logStartOffset > votersAt, 'it restarts from the snapshot, not from the voters entry');
    assert.ok(restarted.transport.peerIds.includes(4), 'the node restarted from the snapshot dials node 4');
    assert.deepEqual(f.fatal, []);
  });
});

describe('controller RPCs on the controller listener', { concurrency: false, timeout: 60_000 }, () => {
  it('registers, unfences on a caught-up heartbeat, hands out producer-id blocks and changes topics once committed', async () => {
    const f = await cluster([1, 2, 3]);
    const brokerEpoch = await registerThroughLeader(f, 101);
    const leader = await f.waitForLeader();
    const beat = { brokerId: 101, brokerEpoch, currentMetadataOffset: brokerEpoch, wantFence: false, wantShutDown: false, offlineLogDirs: [], sluiceWarm: true };
    const hb = await callHeld(leader.port, BrokerHeartbeatApi, 1, beat);
    assert.deepEqual([hb.errorCode, hb.isCaughtUp, hb.isFenced], [0, true, false]);
    await waitFor('every node to see broker 101 unfenced', () => ([...f.running.values()].every((n) => n.quorum.image.brokers.get(101)?.fenced === false) ? true : undefined));
    const stale = await callHeld(leader.port, BrokerHeartbeatApi, 1, { ...beat, brokerEpoch: brokerEpoch + 1000 });
    assert.notEqual(stale.errorCode, 0, 'a heartbeat naming another broker epoch is refused');

    const ids = [0, 1].map(() => call(leader.port, AllocateProducerIdsApi, 0, { brokerId: 101, brokerEpoch }));
    const [a, b] = await Promise.all(ids);
    assert.equal(a!.errorCode, 0);
    assert.equal(b!.errorCode, 0);
    assert.equal(b!.producerIdStart, a!.producerIdStart + a!.producerIdLen, 'blocks do not overlap');

    const created = await call(leader.port, CreateTopicsApi, 7, {
      topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
    });
    assert.equal(created.topics[0]!.errorCode, 0, created.topics[0]!.errorMessage ?? '');
    assert.equal(created.topics[0]!.numPartitions, 2);
    await waitFor('every node to apply the topic', () => ([...f.running.values()].every((n) => n.quorum.image.topicsByName.has('orders')) ? true : undefined));
    const grown = await call(leader.port, CreatePartitionsApi, 3, { topics: [{ name: 'orders', count: 3, assignments: null }], timeoutMs: 5000, validateOnly: false });
    assert.equal(grown.results[0]!.errorCode, 0, grown.results[0]!.errorMessage ?? '');
    assert.equal(leader.quorum.image.topicsByName.get('orders')!.partitions, 3);
    const deleted = await call(leader.port, DeleteTopicsApi, 6, { topics: [{ name: 'orders', topicId: ZERO_UUID }, { name: null, topicId: '1'.repeat(32) }], topicNames: [], timeoutMs: 5000 });
    assert.deepEqual(deleted.responses.map((r) => r.errorCode), [0, ErrorCode.UNKNOWN_TOPIC_ID]);
    assert.equal(leader.quorum.image.topicsByName.has('orders'), false);

    const follower = followerOf(f, leader);
    const refused = await call(follower.port, CreateTopicsApi, 7, {
      topics: [{ name: 'other', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false,
    });
    assert.equal(refused.topics[0]!.errorCode, ErrorCode.NOT_CONTROLLER);
  });

  it('answers AlterPartition by topic name (v1) and id (v3) with the codes each version knows, and forwarded ElectLeaders', async () => {
    const f = await cluster([1]);
    const epochs = [await registerThroughLeader(f, 101), await registerThroughLeader(f, 102)];
    const leader = await f.waitForLeader();
    for (const [i, brokerEpoch] of epochs.entries()) {
      const hb = await callHeld(leader.port, BrokerHeartbeatApi, 1, { brokerId: 101 + i, brokerEpoch, currentMetadataOffset: brokerEpoch, wantFence: false, wantShutDown: false, offlineLogDirs: [], sluiceWarm: true });
      assert.equal(hb.isFenced, false);
    }
    const created = await call(leader.port, CreateTopicsApi, 7, {
      topics: [{ name: 'orders', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [101, 102] }], configs: [] }], timeoutMs: 5000, validateOnly: false,
    });
    assert.equal(created.topics[0]!.errorCode, 0, created.topics[0]!.errorMessage ?? '');
    const topicId = created.topics[0]!.topicId;
    // Broker 102 fences itself: it leaves the ISR, and only AlterPartition brings it back.
    await callHeld(leader.port, BrokerHeartbeatApi, 1, { brokerId: 102, brokerEpoch: epochs[1]!, currentMetadataOffset: epochs[1]!, wantFence: true, wantShutDown: false, offlineLogDirs: [], sluiceWarm: true });
    const p = leader.quorum.image.topicsById.get(topicId)!.table.state(0);
    assert.deepEqual([p.leader, p.isr], [101, [101]]);
    const part = { partitionIndex: 0, leaderEpoch: p.leaderEpoch, leaderRecoveryState: 0, partitionEpoch: p.partitionEpoch };
    const v1 = await call(leader.port, AlterPartitionApi, 1, {
      brokerId: 101, brokerEpoch: epochs[0]!, topics: [{ topicName: 'orders', topicId: ZERO_UUID, partitions: [{ ...part, newIsr: [101, 102], newIsrWithEpochs: [] }] }],
    });
    assert.deepEqual([v1.topics[0]!.topicName, v1.topics[0]!.partitions[0]!.errorCode], ['orders', ErrorCode.OPERATION_NOT_ATTEMPTED]);
    const v3 = (newIsrWithEpochs: { brokerId: number; brokerEpoch: number }[]) => call(leader.port, AlterPartitionApi, 3, {
      brokerId: 101, brokerEpoch: epochs[0]!, topics: [{ topicName: '', topicId, partitions: [{ ...part, newIsr: [], newIsrWithEpochs }] }],
    });
    const ineligible = await v3([{ brokerId: 101, brokerEpoch: epochs[0]! }, { brokerId: 102, brokerEpoch: epochs[1]! }]);
    assert.deepEqual([ineligible.topics[0]!.topicId, ineligible.topics[0]!.partitions[0]!.errorCode], [topicId, ErrorCode.INELIGIBLE_REPLICA]);
    await callHeld(leader.port, BrokerHeartbeatApi, 1, { brokerId: 102, brokerEpoch: epochs[1]!, currentMetadataOffset: epochs[1]!, wantFence: false, wantShutDown: false, offlineLogDirs: [], sluiceWarm: true });
    const grown = await v3([{ brokerId: 101, brokerEpoch: epochs[0]! }, { brokerId: 102, brokerEpoch: epochs[1]! }]);
    assert.deepEqual(grown.topics[0]!.partitions[0], { partitionIndex: 0, errorCode: 0, leaderId: 101, leaderEpoch: p.leaderEpoch, isr: [101, 102], leaderRecoveryState: 0, partitionEpoch: p.partitionEpoch + 1 });
    const stale = await call(leader.port, AlterPartitionApi, 3, { brokerId: 101, brokerEpoch: epochs[0]! + 1, topics: [] });
    assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);

    const elected = await call(leader.port, ElectLeadersApi, 2, { electionType: 0, topicPartitions: [{ topic: 'orders', partitionId: [0, 9] }], timeoutMs: 5000 });
    assert.deepEqual(elected.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((r) => r.errorCode)]), [['orders', [ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]]);
  });

  it('fails a pending reply with NOT_CONTROLLER when leadership is lost before it commits', async () => {
    const f = await cluster([1, 2, 3]);
    await registerThroughLeader(f, 101);
    const leader = await f.waitForLeader();
    leader.cut = true;
    const pending = leader.quorum.registerBroker({ brokerId: 102, incarnationId: 'b'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9999, securityProtocol: 0 }], rack: null });
    await assert.rejects(pending, (err: unknown) => err instanceof QuorumProposalError && err.code === ErrorCode.NOT_CONTROLLER);
    assert.equal(leader.quorum.image.brokers.has(102), false, 'the uncommitted registration is reverted');
  });
});

/** A write path whose fdatasyncs start failing once `failing` is set. */
class FailingIo implements IoBackend {
  readonly name = 'failing';
  readonly reportsWritten: boolean;
  failing = false;
  constructor(private readonly inner: IoBackend) {
    this.reportsWritten = inner.reportsWritten;
  }
  commit(...args: Parameters<IoBackend['commit']>): Promise<void> {
    return this.failing ? Promise.reject(new StorageError('injected fdatasync failure', 'EIO')) : this.inner.commit(...args);
  }
  startWriteback(ranges: Parameters<IoBackend['startWriteback']>[0]): void {
    this.inner.startWriteback(ranges);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe('quorum driver on a failing disk', { concurrency: false, timeout: 60_000 }, () => {
  it('stops the node and reports the failure instead of going on', async () => {
    const { NodeIoBackend } = await import('../../../../src/log/io_backend.js');
    const io = new FailingIo(new NodeIoBackend());
    fixture = await QuorumFixture.create({ voters: [1], nodes: [1], io: () => io });
    const node = await fixture.start(1);
    const f = fixture;
    await registerThroughLeader(f, 101);
    io.failing = true;
    await assert.rejects(node.quorum.registerBroker({ brokerId: 102, incarnationId: 'c'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9999, securityProtocol: 0 }], rack: null }), QuorumProposalError);
    await waitFor('the fatal report', () => (f.fatal.length > 0 ? true : undefined));
    assert.ok(f.fatal[0] instanceof StorageError);
    await assert.rejects(node.quorum.driver.propose(new Uint8Array(1)), QuorumProposalError);
  });
});
