// Fetch, ListOffsets and OffsetForLeaderEpoch with plain-object dependencies: only the partition's
// leader (as the cluster view has it) serves them; the client's current leader epoch is checked
// against the view's (older: FENCED_LEADER_EPOCH, newer: UNKNOWN_LEADER_EPOCH); Fetch and
// OffsetForLeaderEpoch refuse a replica id that is not a follower of the partition; Fetch hints the
// leader to clients of other brokers and passes a diverging epoch on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchAnswer, FetchItem } from '../../../../src/actors/partition_router.js';
import type { FetchPartitionResult } from '../../../../src/actors/ring_messages.js';
import type { ClusterView } from '../../../../src/cluster/cluster_view.js';
import { fetchHandler, type FetchDeps } from '../../../../src/net/handlers/fetch.js';
import { listOffsetsHandler, type ListOffsetsDeps } from '../../../../src/net/handlers/list_offsets.js';
import { offsetForLeaderEpochHandler, type OffsetForLeaderEpochDeps } from '../../../../src/net/handlers/offset_for_leader_epoch.js';
import type { FetchRequest } from '../../../../src/protocol/apis/fetch.js';
import type { ListOffsetsRequest } from '../../../../src/protocol/apis/list_offsets.js';
import type { OffsetForLeaderEpochRequest } from '../../../../src/protocol/apis/offset_for_leader_epoch.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { clusterView, endpoint } from '../../../helpers/cluster_fixture.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

/** Topic t: partition 0 led here (epoch 4, replicas [1, 3]), partition 1 led by broker 2 (epoch 9). */
const cluster: ClusterView = clusterView({
  localId: 1, brokers: [endpoint(1), endpoint(2), endpoint(3)],
  topics: [{ name: 't', partitions: 2, replicas: [1, 3], leaderEpoch: 4, byPartition: { 1: { leader: 2, leaderEpoch: 9 } } }],
});

function fetchDeps(routed: FetchItem[], diverging: FetchPartitionResult['diverging'] = null): FetchDeps {
  return {
    cluster,
    partitions: { handleOf: (_t, p) => (p === 0 ? 11 : -1) },
    router: {
      fetch: (items: readonly FetchItem[]): Promise<FetchAnswer> => {
        routed.push(...items);
        const parts: FetchPartitionResult[] = items.map((_, slot) => ({ slot, errorCode: 0, highWatermark: 5, logStartOffset: 0, ranges: [], diverging }));
        return Promise.resolve({ parts, waited: false });
      },
    },
    segments: { readRanges: () => Promise.resolve([]), fileRanges: () => Promise.resolve([]) },
    metrics: { addBytesOut: () => {}, addReplicaBytesServed: () => {}, recordFetchServe: () => {} },
    limits: { fetchMaxBytes: 55 << 20, messageMaxBytes: 1 << 20 },
    leaderThrottle: { applies: () => false, exceeded: () => false, record: () => {} },
  };
}

function fetchRequest(partition: number, currentLeaderEpoch = -1, replicaId = -1): FetchRequest {
  return {
    clusterId: null, replicaId, replicaState: { replicaId: -1, replicaEpoch: -1 }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0,
    sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [], rackId: '',
    topics: [{ topic: 't', topicId: cluster.topic('t')!.id, partitions: [{ partition, currentLeaderEpoch, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20, replicaDirectoryId: '0'.repeat(32) }] }],
  };
}

async function fetchOne(req: FetchRequest, version = 12): Promise<{ code: number | undefined; routed: number; leader: unknown; endpoints: unknown }> {
  const routed: FetchItem[] = [];
  const res = answered(await fetchHandler.handle(requestContext(1, version), req, fetchDeps(routed)));
  const p = res.responses?.[0]?.partitions?.[0];
  return { code: p?.errorCode, routed: routed.length, leader: p?.currentLeader, endpoints: res.nodeEndpoints };
}

describe('Fetch', () => {
  it('reports a parked fetch\'s wait, up to max_wait, as parked (the slow-request log leaves it out); an unparked one reports nothing', async () => {
    const parkedFor = async (waited: boolean, answerAfterMs: number, maxWaitMs: number): Promise<number[]> => {
      const reports: number[] = [];
      const base = fetchDeps([]);
      const deps: FetchDeps = { ...base, router: { fetch: async (...args: Parameters<FetchDeps['router']['fetch']>) => {
        await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
        return { ...(await base.router.fetch(...args)), waited };
      } } };
      const req = { ...fetchRequest(0), maxWaitMs };
      answered(await fetchHandler.handle({ ...requestContext(1, 12), parked: (ms) => reports.push(ms) }, req, deps));
      return reports;
    };
    const long = await parkedFor(true, 30, 500);
    assert.equal(long.length, 1);
    assert.ok(long[0]! >= 25 && long[0]! < 500, String(long[0]));
    assert.deepEqual(await parkedFor(true, 60, 20), [20], 'a shard slower than max_wait: the excess is serving time');
    assert.deepEqual(await parkedFor(false, 10, 500), []);
  });

  it('passes the last fetched epoch to the partition and answers its diverging epoch (v12+)', async () => {
    const routed: FetchItem[] = [];
    const req = fetchRequest(0);
    req.topics[0]!.partitions[0]!.lastFetchedEpoch = 3;
    const res = answered(await fetchHandler.handle(requestContext(1, 12), req, fetchDeps(routed, { epoch: 2, endOffset: 17 })));
    assert.deepEqual(routed.map((it) => it.lastFetchedEpoch), [3]);
    const p = res.responses?.[0]?.partitions?.[0];
    assert.deepEqual([p?.errorCode, p?.divergingEpoch], [ErrorCode.NONE, { epoch: 2, endOffset: 17 }]);
    const agreeing = answered(await fetchHandler.handle(requestContext(1, 12), req, fetchDeps([]))).responses?.[0]?.partitions?.[0];
    assert.equal(agreeing?.divergingEpoch, undefined, 'no diverging epoch is sent when histories agree');
  });

  it('serves the leader its partition when the epoch matches or is not given', async () => {
    assert.deepEqual([(await fetchOne(fetchRequest(0))).code, (await fetchOne(fetchRequest(0))).routed], [ErrorCode.NONE, 1]);
    assert.equal((await fetchOne(fetchRequest(0, 4))).code, ErrorCode.NONE);
  });

  it('fences an older current leader epoch and calls a newer one unknown, without reading', async () => {
    const older = await fetchOne(fetchRequest(0, 3));
    assert.deepEqual([older.code, older.routed], [ErrorCode.FENCED_LEADER_EPOCH, 0]);
    const newer = await fetchOne(fetchRequest(0, 5));
    assert.deepEqual([newer.code, newer.routed], [ErrorCode.UNKNOWN_LEADER_EPOCH, 0]);
  });

  it("refuses another broker's partition with NOT_LEADER_OR_FOLLOWER, the leader hint and (v16+) its endpoint", async () => {
    const r = await fetchOne(fetchRequest(1), 16);
    assert.equal(r.code, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.deepEqual(r.leader, { leaderId: 2, leaderEpoch: 9 });
    assert.deepEqual(r.endpoints, [{ nodeId: 2, host: 'broker-2.test', port: 9002, rack: null }]);
    assert.equal(r.routed, 0);
  });

  it('refuses a replica id that is not a follower of the partition, and serves one that is', async () => {
    assert.equal((await fetchOne(fetchRequest(0, -1, 2))).code, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'broker 2 holds no replica');
    assert.equal((await fetchOne(fetchRequest(0, -1, 1))).code, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'the leader does not follow itself');
    assert.equal((await fetchOne(fetchRequest(0, -1, 3))).code, ErrorCode.NONE);
    const v15 = { ...fetchRequest(0), replicaId: -1, replicaState: { replicaId: 2, replicaEpoch: 1 } };
    assert.equal((await fetchOne(v15, 15)).code, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'v15+ names the replica in replicaState');
  });
});

function listOffsetsRequest(partitionIndex: number, currentLeaderEpoch = -1): ListOffsetsRequest {
  return { replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex, currentLeaderEpoch, timestamp: -1 }] }] };
}

describe('ListOffsets', () => {
  const asked: number[] = [];
  const deps: ListOffsetsDeps = {
    cluster,
    partitions: { handleOf: (_t, p) => (p === 0 ? 11 : -1) },
    offsets: {
      listOffsets: (items) => {
        asked.push(...items.map((it) => it.handle));
        return Promise.resolve(items.map(() => ({ errorCode: 0, offset: 42, timestamp: -1, leaderEpoch: 0 })));
      },
    },
  };
  const one = async (req: ListOffsetsRequest) => answered(await listOffsetsHandler.handle(requestContext(2, 7), req, deps)).topics?.[0]?.partitions?.[0];

  it("answers the leader's offsets with the view's leader epoch", async () => {
    const p = await one(listOffsetsRequest(0));
    assert.deepEqual([p?.errorCode, p?.offset, p?.leaderEpoch], [ErrorCode.NONE, 42, 4]);
    assert.deepEqual(asked, [11]);
  });

  it('checks the current leader epoch and refuses partitions another broker leads', async () => {
    assert.equal((await one(listOffsetsRequest(0, 2)))?.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await one(listOffsetsRequest(0, 6)))?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await one(listOffsetsRequest(1)))?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await one(listOffsetsRequest(2)))?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

function epochRequest(partition: number, leaderEpoch: number, currentLeaderEpoch = -1, replicaId = -1): OffsetForLeaderEpochRequest {
  return { replicaId, topics: [{ topic: 't', partitions: [{ partition, currentLeaderEpoch, leaderEpoch }] }] };
}

describe('OffsetForLeaderEpoch', () => {
  const asked: Array<[number, number]> = [];
  const deps: OffsetForLeaderEpochDeps = {
    cluster,
    partitions: { handleOf: (_t, p) => (p === 0 ? 11 : -1) },
    offsets: {
      epochEndOffsets: (items) => {
        asked.push(...items.map((it): [number, number] => [it.handle, it.leaderEpoch]));
        // The log knows epochs 1 (from 0) and 4 (from 30), and ends at 42.
        return Promise.resolve(items.map((it) => it.leaderEpoch >= 4
          ? { errorCode: 0, offset: it.leaderEpoch === 4 ? 42 : -1, timestamp: -1, leaderEpoch: it.leaderEpoch === 4 ? 4 : -1 }
          : { errorCode: 0, offset: 30, timestamp: -1, leaderEpoch: 1 }));
      },
    },
  };
  const one = async (req: OffsetForLeaderEpochRequest, version = 4) =>
    answered(await offsetForLeaderEpochHandler.handle(requestContext(23, version), req, deps)).topics?.[0]?.partitions?.[0];

  it("answers the largest known epoch <= the asked one and where it ends in the leader's log", async () => {
    asked.length = 0;
    assert.deepEqual(await one(epochRequest(0, 4, 4)), { errorCode: 0, partition: 0, leaderEpoch: 4, endOffset: 42 });
    assert.deepEqual(await one(epochRequest(0, 3)), { errorCode: 0, partition: 0, leaderEpoch: 1, endOffset: 30 });
    assert.deepEqual(await one(epochRequest(0, 6)), { errorCode: 0, partition: 0, leaderEpoch: -1, endOffset: -1 });
    assert.deepEqual(asked, [[11, 4], [11, 3], [11, 6]]);
  });

  it('checks the current leader epoch and refuses partitions it does not lead or know, without asking the log', async () => {
    asked.length = 0;
    assert.deepEqual(await one(epochRequest(0, 4, 3)), { errorCode: ErrorCode.FENCED_LEADER_EPOCH, partition: 0, leaderEpoch: -1, endOffset: -1 });
    assert.equal((await one(epochRequest(0, 4, 5)))?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await one(epochRequest(1, 9)))?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'broker 2 leads partition 1');
    assert.equal((await one(epochRequest(2, 0)))?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(asked, []);
  });

  it('serves consumers, tools and followers of the partition, and refuses a replica id that is none', async () => {
    assert.equal((await one(epochRequest(0, 4, -1, -1)))?.errorCode, ErrorCode.NONE, 'a consumer');
    assert.equal((await one(epochRequest(0, 4, -1, -2)))?.errorCode, ErrorCode.NONE, 'a debugging client');
    assert.equal((await one(epochRequest(0, 4, -1, 3)))?.errorCode, ErrorCode.NONE, 'broker 3 follows partition 0');
    assert.equal((await one(epochRequest(0, 4, -1, 2)))?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'broker 2 holds no replica');
    assert.equal((await one(epochRequest(0, 4, -1, 2), 2))?.errorCode, ErrorCode.NONE, 'v2 carries no replica id');
  });
});
