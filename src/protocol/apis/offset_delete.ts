// OffsetDelete (key 47) wire schema, v0 only (never flexible). Deletes a group's committed
// offsets for partitions no member subscribes to (KIP-496). Runs on the main thread.
// Note the response order: error code before throttle time, unlike most APIs.

import { defineApi } from '../schema.js';

export interface OffsetDeleteRequestPartition {
  partitionIndex: number;
}

export interface OffsetDeleteRequestTopic {
  name: string;
  partitions: OffsetDeleteRequestPartition[];
}

export interface OffsetDeleteRequest {
  groupId: string;
  topics: OffsetDeleteRequestTopic[];
}

export interface OffsetDeleteResponsePartition {
  partitionIndex: number;
  errorCode: number;
}

export interface OffsetDeleteResponseTopic {
  name: string;
  partitions: OffsetDeleteResponsePartition[];
}

export interface OffsetDeleteResponse {
  errorCode: number;
  throttleTimeMs: number;
  topics: OffsetDeleteResponseTopic[];
}

export const OffsetDeleteApi = defineApi<OffsetDeleteRequest, OffsetDeleteResponse>({
  apiKey: 47,
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: 'none',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
