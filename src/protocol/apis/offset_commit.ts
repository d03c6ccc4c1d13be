// OffsetCommit (key 8) wire schema, v0-9 (flexible from v8). Main thread. Version boundaries:
// v1 adds the generation and member id, and (v1 only) a per-partition commit timestamp; v2-4
// carry retentionTimeMs (-1 = broker default; v5 drops it), v3 throttle time, v6 committed
// leader epoch, v7 group instance id, v9 (KIP-848) puts the member epoch in the generation field.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface OffsetCommitRequestPartition {
  partitionIndex: number;
  committedOffset: number;
  /** v6+; -1 when unknown. */
  committedLeaderEpoch: number;
  /** v1 only: when the commit happened by the client's clock; -1 = when the broker receives it. */
  commitTimestamp: number;
  committedMetadata: string | null;
}

export interface OffsetCommitRequestTopic {
  name: string;
  partitions: OffsetCommitRequestPartition[];
}

export interface OffsetCommitRequest {
  groupId: string;
  /** Classic: generation id (-1 with memberId '' = commit from outside any generation). v9 KIP-848: member epoch. */
  generationIdOrMemberEpoch: number;
  memberId: string;
  /** v7+. */
  groupInstanceId: string | null;
  /** v2-4; -1 = broker default. */
  retentionTimeMs: number;
  topics: OffsetCommitRequestTopic[];
}

export interface OffsetCommitResponsePartition {
  partitionIndex: number;
  errorCode: number;
}

export interface OffsetCommitResponseTopic {
  name: string;
  partitions: OffsetCommitResponsePartition[];
}

export interface OffsetCommitResponse {
  /** v3+. */
  throttleTimeMs: number;
  topics: OffsetCommitResponseTopic[];
}

const requestPartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'committedOffset', type: 'int64', versions: '0+' },
  { name: 'committedLeaderEpoch', type: 'int32', versions: '6+', default: -1 },
  { name: 'commitTimestamp', type: 'int64', versions: '1', default: -1 },
  { name: 'committedMetadata', type: 'string', versions: '0+', nullableVersions: '0+' },
];

const responsePartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
];

export const OffsetCommitApi = defineApi<OffsetCommitRequest, OffsetCommitResponse>({
  apiKey: 8,
  name: 'OffsetCommit',
  minVersion: 0,
  maxVersion: 9,
  flexibleVersions: '8+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationIdOrMemberEpoch', type: 'int32', versions: '1+', default: -1 },
    { name: 'memberId', type: 'string', versions: '1+' },
    { name: 'groupInstanceId', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'retentionTimeMs', type: 'int64', versions: '2-4', default: -1 },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitions', type: requestPartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitions', type: responsePartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
