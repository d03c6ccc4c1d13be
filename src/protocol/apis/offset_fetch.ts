// OffsetFetch (key 9) wire schema, v0-9 (flexible from v6). Main thread. v0 and v1 are the same
// on the wire (v0 once meant offsets kept in ZooKeeper; both read the same store here). Version boundaries: v2
// null topics (= all of the group's offsets) and a top-level error code, v3 throttle time, v5
// committed leader epoch, v7 requireStable, v8 batches groups (KIP-709: the single-group fields
// become groups[]), v9 (KIP-848) member id and epoch per group.
// The topic and partition structs are shared by the single-group (v1-7) and batched (v8+)
// shapes: they are identical on the wire, only the enclosing field's versions differ.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface OffsetFetchRequestTopic {
  name: string;
  partitionIndexes: number[];
}

export interface OffsetFetchRequestGroup {
  groupId: string;
  /** v9+. */
  memberId: string | null;
  /** v9+; -1 when not using the KIP-848 protocol. */
  memberEpoch: number;
  /** null = every partition the group has an offset for. */
  topics: OffsetFetchRequestTopic[] | null;
}

export interface OffsetFetchRequest {
  /** v0-7. */
  groupId: string;
  /** v0-7; nullable from v2. */
  topics: OffsetFetchRequestTopic[] | null;
  /** v8+. */
  groups: OffsetFetchRequestGroup[];
  /** v7+. */
  requireStable: boolean;
}

export interface OffsetFetchResponsePartition {
  partitionIndex: number;
  /** -1 when the group has no offset for the partition. */
  committedOffset: number;
  /** v5+. */
  committedLeaderEpoch: number;
  metadata: string | null;
  errorCode: number;
}

export interface OffsetFetchResponseTopic {
  name: string;
  partitions: OffsetFetchResponsePartition[];
}

export interface OffsetFetchResponseGroup {
  groupId: string;
  topics: OffsetFetchResponseTopic[];
  errorCode: number;
}

export interface OffsetFetchResponse {
  /** v3+. */
  throttleTimeMs: number;
  /** v0-7. */
  topics: OffsetFetchResponseTopic[];
  /** v2-7. */
  errorCode: number;
  /** v8+. */
  groups: OffsetFetchResponseGroup[];
}

const requestTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'partitionIndexes', type: 'int32', array: true, versions: '0+' },
];

const responsePartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'committedOffset', type: 'int64', versions: '0+' },
  { name: 'committedLeaderEpoch', type: 'int32', versions: '5+', default: -1 },
  { name: 'metadata', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
];

const responseTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'partitions', type: responsePartition, array: true, versions: '0+' },
];

export const OffsetFetchApi = defineApi<OffsetFetchRequest, OffsetFetchResponse>({
  apiKey: 9,
  name: 'OffsetFetch',
  minVersion: 0,
  maxVersion: 9,
  flexibleVersions: '6+',
  request: [
    { name: 'groupId', type: 'string', versions: '0-7' },
    { name: 'topics', type: requestTopic, array: true, versions: '0-7', nullableVersions: '2-7' },
    {
      name: 'groups', type: [
        { name: 'groupId', type: 'string', versions: '8+' },
        { name: 'memberId', type: 'string', versions: '9+', nullableVersions: '9+', default: null },
        { name: 'memberEpoch', type: 'int32', versions: '9+', default: -1 },
        { name: 'topics', type: requestTopic, array: true, versions: '8+', nullableVersions: '8+' },
      ], array: true, versions: '8+',
    },
    { name: 'requireStable', type: 'bool', versions: '7+', default: false },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    { name: 'topics', type: responseTopic, array: true, versions: '0-7' },
    { name: 'errorCode', type: 'int16', versions: '2-7', default: 0 },
    {
      name: 'groups', type: [
        { name: 'groupId', type: 'string', versions: '8+' },
        { name: 'topics', type: responseTopic, array: true, versions: '8+' },
        { name: 'errorCode', type: 'int16', versions: '8+', default: 0 },
      ], array: true, versions: '8+',
    },
  ],
});
