// Fetch and ListOffsets with plain-object dependencies: only the partition's leader (as the
// cluster view has it) serves them; the client's current leader epoch is checked against the
// view's (older: FENCED_LEADER_EPOCH, newer: UNKNOWN_LEADER_EPOCH); Fetch refuses a replica id
// that is not a follower of the partition and hints the leader to clients of other brokers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchItem } from '../../../../src/actors/partition_router.js';
import type { FetchPartitionResult } from '../../../../src/actors/ring_messages.js';
import type { ClusterView } from '../../../../src/cluster/cluster_view.js';
import { fetchHandler, type FetchDeps } from '../../../../src/net/handlers/fetch.js';
import { listOffsetsHandler, type ListOffsetsDeps } from '../../../../src/net/handlers/list_offsets.js';
import type { FetchRequest } from '../../../../src/protocol/apis/fetch.js';
import type { ListOffsetsRequest } from '../../../../src/protocol/apis/list_offsets.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { clusterView, endpoint } from '../../../helpers/cluster_fixture.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

/** Topic t: partition 0 led here (epoch 4, replicas [1, 3]), partition 1 led by broker 2 (epoch 9). */
const cluster: ClusterView = clusterView({
  localId: 1, brokers: [endpoint(1), endpoint(2), endpoint(3)],
  topics: [{ name: 't', partitions: 2, replicas: [1, 3], leaderEpoch: 4, byPartition: { 1: { leader: 2, leaderEpoch: 9 } } }],
});

function fetchDeps(routed: FetchItem[]): FetchDeps {
  return {
    cluster,
    partitions: { handleOf: (_t, p) => (p === 0 ? 11 : -1) },
    router: {
      fetch: (items: readonly FetchItem[]): Promise<FetchPartitionResult[]> => {
        routed.push(...items);
        return Promise.resolve(items.map((_, slot) => ({ slot, errorCode: 0, highWatermark: 5, logStartOffset: 0, ranges: [], diverging: null })));
      },
    },
    segments: { readRanges: () => Promise.resolve([]), fileRanges: () => Promise.resolve([]) },
    metrics: { addBytesOut: () => {} },
    limits: { fetchMaxBytes: 55 << 20, messageMaxBytes: 1 << 20 },
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
