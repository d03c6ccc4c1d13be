// ListOffsets (key 2) wire schema, v1-7: offset lookup by timestamp (-1 latest, -2 earliest,
// -3 max timestamp from v7). Runs on the main thread (request decode, response encode).
// v0 is not advertised, so its v0-only fields (MaxNumOffsets, OldStyleOffsets) are left out.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface ListOffsetsRequestPartition {
  partitionIndex: number;
  currentLeaderEpoch: number;
  timestamp: number;
}

export interface ListOffsetsRequestTopic {
  name: string;
  partitions: ListOffsetsRequestPartition[];
}

export interface ListOffsetsRequest {
  replicaId: number;
  isolationLevel: number;
  topics: ListOffsetsRequestTopic[];
}

export interface ListOffsetsResponsePartition {
  partitionIndex: number;
  errorCode: number;
  timestamp: number;
  offset: number;
  leaderEpoch: number;
}

export interface ListOffsetsResponseTopic {
  name: string;
  partitions: ListOffsetsResponsePartition[];
}

export interface ListOffsetsResponse {
  throttleTimeMs: number;
  topics: ListOffsetsResponseTopic[];
}

const requestPartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'currentLeaderEpoch', type: 'int32', versions: '4+', default: -1 },
  { name: 'timestamp', type: 'int64', versions: '0+' },
];

const responsePartition: readonly Field[] = [
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'timestamp', type: 'int64', versions: '1+', default: -1 },
  { name: 'offset', type: 'int64', versions: '1+', default: -1 },
  { name: 'leaderEpoch', type: 'int32', versions: '4+', default: -1 },
];

export const ListOffsetsApi = defineApi<ListOffsetsRequest, ListOffsetsResponse>({
  apiKey: 2,
  name: 'ListOffsets',
  minVersion: 1,
  maxVersion: 7,
  flexibleVersions: '6+',
  request: [
    { name: 'replicaId', type: 'int32', versions: '0+' },
    { name: 'isolationLevel', type: 'int8', versions: '2+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitions', type: requestPartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitions', type: responsePartition, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
