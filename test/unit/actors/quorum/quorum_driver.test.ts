// Three (and four) metadata-quorum nodes in one process over loopback TCP with real storage: the
// driver elects a leader, commits what the active controller proposes on every node identically,
// survives the leader stopping or being cut off, restarts a node from its snapshot and log tail,
// answers DescribeQuorum over the Kafka protocol, and changes the voter set one node at a time.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { encodeSnapshot } from '../../../../src/cluster/metadata/snapshot.js';
import { AddRaftVoterApi } from '../../../../src/protocol/apis/add_raft_voter.js';
import { ApiVersionsApi } from '../../../../src/protocol/apis/api_versions.js';
import { BrokerRegistrationApi, type BrokerRegistrationResponse } from '../../../../src/protocol/apis/broker_registration.js';
import { DescribeQuorumApi } from '../../../../src/protocol/apis/describe_quorum.js';
import { METADATA_TOPIC_NAME } from '../../../../src/protocol/apis/quorum_common.js';
import { RemoveRaftVoterApi } from '../../../../src/protocol/apis/remove_raft_voter.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ZERO_UUID } from '../../../../src/protocol/schema.js';
import { CONTROLLER_APIS } from '../../../../src/net/controller_server.js';
import { call, CLUSTER_ID, QuorumFixture, sleep, waitFor, type FixtureNode } from './quorum_fixture.js';

let fixture: QuorumFixture | null = null;

afterEach(async () => {
  await fixture?.close();
  fixture = null;
});

async function cluster(voters: number[], nodes = voters, snapshotEveryEntries?: number): Promise<QuorumFixture> {
  fixture = await QuorumFixture.create({ voters, nodes, ...(snapshotEveryEntries !== undefined ? { snapshotEveryEntries } : {}) });
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
