// Golden wire bytes for the KRaft quorum APIs, built field by field from Kafka's JSON schemas
// (VoteRequest/Response v2, DescribeQuorumRequest/Response v2, BeginQuorumEpoch v0 before
// flexible versions, FetchSnapshot v1 with its tagged fields, BrokerHeartbeat v1), so a mistake
// made the same way in encoder and decoder still fails here. Round trips of every version of
// every registered API are in codec_properties.test.ts.

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';
import { VoteApi, type VoteRequest, type VoteResponse } from '../../../src/protocol/apis/vote.js';
import { DescribeQuorumApi, type DescribeQuorumRequest, type DescribeQuorumResponse } from '../../../src/protocol/apis/describe_quorum.js';
import { BeginQuorumEpochApi, type BeginQuorumEpochRequest } from '../../../src/protocol/apis/begin_quorum_epoch.js';
import { FetchSnapshotApi, type FetchSnapshotRequest, type FetchSnapshotResponse } from '../../../src/protocol/apis/fetch_snapshot.js';
import { BrokerHeartbeatApi, type BrokerHeartbeatRequest } from '../../../src/protocol/apis/broker_heartbeat.js';
import { METADATA_TOPIC_NAME } from '../../../src/protocol/apis/quorum_common.js';

const DIR_A = '0123456789abcdef0123456789abcdef';
const DIR_B = 'fedcba9876543210fedcba9876543210';

test('Vote v2 request: pre-vote flag after the last offset, directory ids from v1', () => {
  const req: VoteRequest = {
    clusterId: 'c1', voterId: 2,
    topics: [{
      topicName: METADATA_TOPIC_NAME,
      partitions: [{
        partitionIndex: 0, candidateEpoch: 5, candidateId: 1, candidateDirectoryId: DIR_A,
        voterDirectoryId: DIR_B, lastOffsetEpoch: 4, lastOffset: 100, preVote: true,
      }],
    }],
  };
  const bytes = new Bytes()
    .cstr('c1').i32(2)
    .carr(1).cstr('__cluster_metadata')
    .carr(1).i32(0).i32(5).i32(1).uuid(DIR_A).uuid(DIR_B).i32(4).i64(100).bool(true).tags0()
    .tags0()
    .tags0()
    .build();
  goldenRequest(VoteApi, 2, req, bytes);
});

test('Vote v2 response: grant, leader hint and the tagged node endpoints', () => {
  const res: VoteResponse = {
    errorCode: 0,
    topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0, errorCode: 0, leaderId: 3, leaderEpoch: 5, voteGranted: false }] }],
    nodeEndpoints: [{ nodeId: 3, host: 'h3', port: 9093 }],
  };
  const bytes = new Bytes()
    .i16(0)
    .carr(1).cstr('__cluster_metadata')
    .carr(1).i32(0).i16(0).i32(3).i32(5).bool(false).tags0()
    .tags0()
    .uvarint(1).tag(0, new Bytes().carr(1).i32(3).cstr('h3').u16(9093).tags0())
    .build();
  goldenResponse(VoteApi, 2, res, bytes);
});

test('DescribeQuorum v2 request', () => {
  const req: DescribeQuorumRequest = { topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] };
  const bytes = new Bytes().carr(1).cstr('__cluster_metadata').carr(1).i32(0).tags0().tags0().tags0().build();
  goldenRequest(DescribeQuorumApi, 2, req, bytes);
});

test('DescribeQuorum v2 response: replica states with directory ids and timestamps, node listeners', () => {
  const res: DescribeQuorumResponse = {
    errorCode: 0, errorMessage: null,
    topics: [{
      topicName: METADATA_TOPIC_NAME,
      partitions: [{
        partitionIndex: 0, errorCode: 0, errorMessage: null, leaderId: 1, leaderEpoch: 7, highWatermark: 42,
        currentVoters: [
          { replicaId: 1, replicaDirectoryId: DIR_A, logEndOffset: 50, lastFetchTimestamp: -1, lastCaughtUpTimestamp: 1000 },
          { replicaId: 2, replicaDirectoryId: ZERO_UUID, logEndOffset: 42, lastFetchTimestamp: 990, lastCaughtUpTimestamp: 980 },
        ],
        observers: [],
      }],
    }],
    nodes: [{ nodeId: 1, listeners: [{ name: 'CONTROLLER', host: 'localhost', port: 9093 }] }],
  };
  const bytes = new Bytes()
    .i16(0).cstr(null)
    .carr(1).cstr('__cluster_metadata')
    .carr(1).i32(0).i16(0).cstr(null).i32(1).i32(7).i64(42)
    .carr(2)
    .i32(1).uuid(DIR_A).i64(50).i64(-1).i64(1000).tags0()
    .i32(2).uuid(ZERO_UUID).i64(42).i64(990).i64(980).tags0()
    .carr(0)
    .tags0()
    .tags0()
    .carr(1).i32(1).carr(1).cstr('CONTROLLER').cstr('localhost').u16(9093).tags0().tags0()
    .tags0()
    .build();
  goldenResponse(DescribeQuorumApi, 2, res, bytes);
});

test('BeginQuorumEpoch v0 request: classic strings and arrays, no tag buffers', () => {
  const req: BeginQuorumEpochRequest = {
    clusterId: null, voterId: -1,
    topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0, voterDirectoryId: ZERO_UUID, leaderId: 2, leaderEpoch: 9 }] }],
    leaderEndpoints: [],
  };
  const bytes = new Bytes().str(null).arr(1).str('__cluster_metadata').arr(1).i32(0).i32(2).i32(9).build();
  goldenRequest(BeginQuorumEpochApi, 0, req, bytes);
});

test('FetchSnapshot v1: tagged cluster id, directory id, current leader and the Sluice voters extension', () => {
  const req: FetchSnapshotRequest = {
    clusterId: 'c1', replicaId: 2, maxBytes: 1024,
    topics: [{ name: METADATA_TOPIC_NAME, partitions: [{ partition: 0, currentLeaderEpoch: 3, snapshotId: { endOffset: 10, epoch: 2 }, position: 512, replicaDirectoryId: DIR_A }] }],
  };
  goldenRequest(FetchSnapshotApi, 1, req, new Bytes()
    .i32(2).i32(1024)
    .carr(1).cstr('__cluster_metadata')
    .carr(1).i32(0).i32(3).i64(10).i32(2).tags0().i64(512).uvarint(1).tag(0, new Bytes().uuid(DIR_A))
    .tags0()
    .uvarint(1).tag(0, new Bytes().cstr('c1'))
    .build());
  const res: FetchSnapshotResponse = {
    throttleTimeMs: 0, errorCode: 0,
    topics: [{
      name: METADATA_TOPIC_NAME,
      partitions: [{
        index: 0, errorCode: 0, snapshotId: { endOffset: 10, epoch: 2 }, currentLeader: { leaderId: 1, leaderEpoch: 3 },
        size: 700, position: 512, unalignedRecords: Buffer.from([1, 2, 3]), sluiceVotersRecord: Buffer.from([9, 8]),
      }],
    }],
    nodeEndpoints: [],
  };
  goldenResponse(FetchSnapshotApi, 1, res, new Bytes()
    .i32(0).i16(0)
    .carr(1).cstr('__cluster_metadata')
    .carr(1).i32(0).i16(0).i64(10).i32(2).tags0().i64(700).i64(512).cbytes(Buffer.from([1, 2, 3]))
    .uvarint(2).tag(0, new Bytes().i32(1).i32(3).tags0()).tag(1001, new Bytes().cbytes(Buffer.from([9, 8])))
    .tags0()
    .tags0()
    .build());
});

test('BrokerHeartbeat v1 request: offline log dirs as a tagged uuid array', () => {
  const req: BrokerHeartbeatRequest = {
    brokerId: 4, brokerEpoch: 77, currentMetadataOffset: 1234, wantFence: false, wantShutDown: true, offlineLogDirs: [DIR_B], sluiceWarm: false,
  };
  goldenRequest(BrokerHeartbeatApi, 1, req, new Bytes()
    .i32(4).i64(77).i64(1234).bool(false).bool(true)
    .uvarint(1).tag(0, new Bytes().carr(1).uuid(DIR_B))
    .build());
});
