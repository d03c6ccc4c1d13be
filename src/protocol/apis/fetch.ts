// Fetch (key 1) wire schema, v4-17. Main thread: requests are decoded here; responses are encoded
// here with each partition's records appended by reference (zero-copy to the socket).
// Version boundaries: v5 logStartOffset, v7 fetch sessions + forgotten topics, v9
// currentLeaderEpoch, v11 rackId + preferredReadReplica, v12 flexible + lastFetchedEpoch +
// tagged divergence/leader/snapshot hints, v13 topic ids replace names, v15 drops the top-level
// replicaId (tagged replicaState instead), v16 response nodeEndpoints, v17 replicaDirectoryId.

import { defineApi } from '../schema.js';
import type { Field, RecordsValue } from '../schema.js';
import { leaderIdAndEpochFields, nodeEndpointFields } from './leader_hints.js';
import type { LeaderIdAndEpoch, NodeEndpoint } from './leader_hints.js';

export interface FetchRequestReplicaState {
  replicaId: number;
  replicaEpoch: number;
}

export interface FetchRequestPartition {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: number;
  lastFetchedEpoch: number;
  logStartOffset: number;
  partitionMaxBytes: number;
  replicaDirectoryId: string;
}

export interface FetchRequestTopic {
  /** v4-12; '' from v13. */
  topic: string;
  /** v13+; all zeros before. */
  topicId: string;
  partitions: FetchRequestPartition[];
}

export interface FetchRequestForgottenTopic {
  topic: string;
  topicId: string;
  partitions: number[];
}

export interface FetchRequest {
  clusterId: string | null;
  /** v4-14; -1 (consumer) from v15, where replicaState carries it. */
  replicaId: number;
  replicaState: FetchRequestReplicaState;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  /** 0 read_uncommitted, 1 read_committed. */
  isolationLevel: number;
  sessionId: number;
  sessionEpoch: number;
  topics: FetchRequestTopic[];
  forgottenTopicsData: FetchRequestForgottenTopic[];
  rackId: string;
}

export interface FetchResponseEpochEndOffset {
  epoch: number;
  endOffset: number;
}

export interface FetchResponseSnapshotId {
  endOffset: number;
  epoch: number;
}

export interface FetchResponseAbortedTransaction {
  producerId: number;
  firstOffset: number;
}

export interface FetchResponsePartition {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** Tagged (v12+); sent only when not {-1, -1}. */
  divergingEpoch: FetchResponseEpochEndOffset;
  /** Tagged (v12+); sent only when not {-1, -1}. */
  currentLeader: LeaderIdAndEpoch;
  /** Tagged (v12+); sent only when not {-1, -1}. */
  snapshotId: FetchResponseSnapshotId;
  /** Null for read_uncommitted. */
  abortedTransactions: FetchResponseAbortedTransaction[] | null;
  preferredReadReplica: number;
  /** Encoded by reference from a buffer or chunks; decoded as a view (or null). */
  records: RecordsValue;
}

export interface FetchResponseTopic {
  topic: string;
  topicId: string;
  partitions: FetchResponsePartition[];
}

export interface FetchResponse {
  throttleTimeMs: number;
  errorCode: number;
  sessionId: number;
  responses: FetchResponseTopic[];
  /** Tagged (v16+); sent only when non-empty. */
  nodeEndpoints: NodeEndpoint[];
}

const replicaState: readonly Field[] = [
  { name: 'replicaId', type: 'int32', versions: '15+', default: -1 },
  { name: 'replicaEpoch', type: 'int64', versions: '15+', default: -1 },
];

const requestPartition: readonly Field[] = [
  { name: 'partition', type: 'int32', versions: '0+' },
  { name: 'currentLeaderEpoch', type: 'int32', versions: '9+', default: -1 },
  { name: 'fetchOffset', type: 'int64', versions: '0+' },
  { name: 'lastFetchedEpoch', type: 'int32', versions: '12+', default: -1 },
  { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1 },
  { name: 'partitionMaxBytes', type: 'int32', versions: '0+' },
  { name: 'replicaDirectoryId', type: 'uuid', versions: '17+', taggedVersions: '17+', tag: 0 },
];

const requestTopic: readonly Field[] = [
  { name: 'topic', type: 'string', versions: '0-12' },
  { name: 'topicId', type: 'uuid', versions: '13+' },
  { name: 'partitions', type: requestPartition, array: true, versions: '0+' },
];

const forgottenTopic: readonly Field[] = [
  { name: 'topic', type: 'string', versions: '7-12' },
  { name: 'topicId', type: 'uuid', versions: '13+' },
  { name: 'partitions', type: 'int32', array: true, versions: '7+' },
];

const epochEndOffset: readonly Field[] = [
  { name: 'epoch', type: 'int32', versions: '12+', default: -1 },
  { name: 'endOffset', type: 'int64', versions: '12+', default: -1 },
];

const snapshotId: readonly Field[] = [
  { name: 'endOffset', type: 'int64', versions: '0+', default: -1 },
  { name: 'epoch', type: 'int32', versions: '0+', default: -1 },
];

const abortedTransaction: readonly Field[] = [
  { name: 'producerId', type: 'int64', versions: '4+' },
  { name: 'firstOffset', type: 'int64', versions: '4+' },
];

const responsePartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'highWatermark', type: 'int64', versions: '0+' },
  { name: 'lastStableOffset', type: 'int64', versions: '4+', default: -1 },
  { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1 },
  { name: 'divergingEpoch', type: epochEndOffset, versions: '12+', taggedVersions: '12+', tag: 0 },
  { name: 'currentLeader', type: leaderIdAndEpochFields, versions: '12+', taggedVersions: '12+', tag: 1 },
  { name: 'snapshotId', type: snapshotId, versions: '12+', taggedVersions: '12+', tag: 2 },
  { name: 'abortedTransactions', type: abortedTransaction, array: true, versions: '4+', nullableVersions: '4+' },
  { name: 'preferredReadReplica', type: 'int32', versions: '11+', default: -1 },
  { name: 'records', type: 'records', versions: '0+', nullableVersions: '0+' },
];

const responseTopic: readonly Field[] = [
  { name: 'topic', type: 'string', versions: '0-12' },
  { name: 'topicId', type: 'uuid', versions: '13+' },
  { name: 'partitions', type: responsePartition, array: true, versions: '0+' },
];

export const FetchApi = defineApi<FetchRequest, FetchResponse>({
  apiKey: 1,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  flexibleVersions: '12+',
  request: [
    { name: 'clusterId', type: 'string', versions: '12+', nullableVersions: '12+', default: null, taggedVersions: '12+', tag: 0 },
    { name: 'replicaId', type: 'int32', versions: '0-14', default: -1 },
    { name: 'replicaState', type: replicaState, versions: '15+', taggedVersions: '15+', tag: 1 },
    { name: 'maxWaitMs', type: 'int32', versions: '0+' },
    { name: 'minBytes', type: 'int32', versions: '0+' },
    { name: 'maxBytes', type: 'int32', versions: '3+', default: 0x7fffffff },
    { name: 'isolationLevel', type: 'int8', versions: '4+', default: 0 },
    { name: 'sessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'sessionEpoch', type: 'int32', versions: '7+', default: -1 },
    { name: 'topics', type: requestTopic, array: true, versions: '0+' },
    { name: 'forgottenTopicsData', type: forgottenTopic, array: true, versions: '7+' },
    { name: 'rackId', type: 'string', versions: '11+', default: '' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '7+' },
    { name: 'sessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'responses', type: responseTopic, array: true, versions: '0+' },
    { name: 'nodeEndpoints', type: nodeEndpointFields, array: true, versions: '16+', taggedVersions: '16+', tag: 0 },
  ],
});
