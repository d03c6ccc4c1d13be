// AlterPartitionReassignments (key 45) wire schema, v0 (flexible): an admin gives per partition
// the target replicas, or null to cancel the partition's ongoing reassignment (KIP-455); the
// answer carries a top-level error and one per partition. Main thread.

import { defineApi } from '../schema.js';

export interface ReassignablePartition {
  partitionIndex: number;
  /** Null: cancel. */
  replicas: number[] | null;
}

export interface ReassignableTopic {
  name: string;
  partitions: ReassignablePartition[];
}

export interface AlterPartitionReassignmentsRequest {
  timeoutMs: number;
  topics: ReassignableTopic[];
}

export interface ReassignablePartitionResponse {
  partitionIndex: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface ReassignableTopicResponse {
  name: string;
  partitions: ReassignablePartitionResponse[];
}

export interface AlterPartitionReassignmentsResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  responses: ReassignableTopicResponse[];
}

export const AlterPartitionReassignmentsApi = defineApi<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse>({
  apiKey: 45,
  name: 'AlterPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'replicas', type: 'int32', array: true, versions: '0+', nullableVersions: '0+', default: null },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
    {
      name: 'responses', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
