// ListPartitionReassignments (key 46) wire schema, v0 (flexible): the ongoing reassignments
// (KIP-455) of the named partitions, or of every partition when the topic list is null, each with
// its replica list and the replicas being added and removed. Main thread.

import { defineApi } from '../schema.js';

export interface ListPartitionReassignmentsTopic {
  name: string;
  partitionIndexes: number[];
}

export interface ListPartitionReassignmentsRequest {
  timeoutMs: number;
  /** Null: every partition. */
  topics: ListPartitionReassignmentsTopic[] | null;
}

export interface OngoingPartitionReassignment {
  partitionIndex: number;
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface OngoingTopicReassignment {
  name: string;
  partitions: OngoingPartitionReassignment[];
}

export interface ListPartitionReassignmentsResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  topics: OngoingTopicReassignment[];
}

export const ListPartitionReassignmentsApi = defineApi<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse>({
  apiKey: 46,
  name: 'ListPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'partitionIndexes', type: 'int32', array: true, versions: '0+' },
      ], array: true, versions: '0+', nullableVersions: '0+', default: null,
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'replicas', type: 'int32', array: true, versions: '0+' },
            { name: 'addingReplicas', type: 'int32', array: true, versions: '0+' },
            { name: 'removingReplicas', type: 'int32', array: true, versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
