// OffsetForLeaderEpoch (key 23) wire schema, v2-4 (flexible from v4): for each partition, where a
// leader epoch ends in the leader's log. Followers use it to find where to truncate (KIP-101/279),
// consumers to detect truncation after a leader change (KIP-320). v2 added the fencing
// currentLeaderEpoch, v3 the replicaId (-1 a consumer, -2 "debug", >= 0 a follower); v0-1, without
// fencing, are gone from Kafka 4.0 and not served. Runs on the main thread (decode, encode).

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface OffsetForLeaderEpochRequestPartition {
  partition: number;
  /** The leader epoch the client knows, for fencing; -1 when it does not say. */
  currentLeaderEpoch: number;
  /** The epoch whose end offset is asked. */
  leaderEpoch: number;
}

export interface OffsetForLeaderEpochRequestTopic {
  topic: string;
  partitions: OffsetForLeaderEpochRequestPartition[];
}

export interface OffsetForLeaderEpochRequest {
  /** v3+: -1 a consumer, -2 (the default) a debugging client, >= 0 a follower's broker id. */
  replicaId: number;
  topics: OffsetForLeaderEpochRequestTopic[];
}

export interface OffsetForLeaderEpochResponsePartition {
  errorCode: number;
  partition: number;
  /** The largest epoch <= the asked one that the leader's log knows; -1 when none. */
  leaderEpoch: number;
  /** Where that epoch ends in the leader's log; -1 when unknown. */
  endOffset: number;
}

export interface OffsetForLeaderEpochResponseTopic {
  topic: string;
  partitions: OffsetForLeaderEpochResponsePartition[];
}

export interface OffsetForLeaderEpochResponse {
  throttleTimeMs: number;
  topics: OffsetForLeaderEpochResponseTopic[];
}

const requestPartition: readonly Field[] = [
  { name: 'partition', type: 'int32', versions: '0+' },
  { name: 'currentLeaderEpoch', type: 'int32', versions: '2+', default: -1 },
  { name: 'leaderEpoch', type: 'int32', versions: '0+' },
];

const responsePartition: readonly Field[] = [
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'partition', type: 'int32', versions: '0+' },
  { name: 'leaderEpoch', type: 'int32', versions: '1+', default: -1 },
  { name: 'endOffset', type: 'int64', versions: '0+' },
];

export const OffsetForLeaderEpochApi = defineApi<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>({
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  minVersion: 2,
  maxVersion: 4,
  flexibleVersions: '4+',
  request: [
    { name: 'replicaId', type: 'int32', versions: '3+', default: -2 },
    {
      name: 'topics', type: [
        { name: 'topic', type: 'string', versions: '0+' },
        { name: 'partitions', type: requestPartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    {
      name: 'topics', type: [
        { name: 'topic', type: 'string', versions: '0+' },
        { name: 'partitions', type: responsePartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
