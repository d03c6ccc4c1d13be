// ElectLeaders (key 43) wire schema, v0-2 (flexible from v2): an admin asks for a preferred
// (0) or unclean (1) leader election (v1+, KIP-460; v0 is always preferred) of the named
// partitions, or of every partition when the list is null. v1 adds a top-level error code.
// Main thread.

import { defineApi } from '../schema.js';

export interface ElectLeadersRequestTopic {
  topic: string;
  partitionId: number[];
}

export interface ElectLeadersRequest {
  /** v1+; 0 in v0 (preferred). */
  electionType: number;
  /** Null: every partition. */
  topicPartitions: ElectLeadersRequestTopic[] | null;
  timeoutMs: number;
}

export interface ElectLeadersPartitionResult {
  partitionId: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface ElectLeadersTopicResult {
  topic: string;
  partitionResult: ElectLeadersPartitionResult[];
}

export interface ElectLeadersResponse {
  throttleTimeMs: number;
  /** v1+. */
  errorCode: number;
  replicaElectionResults: ElectLeadersTopicResult[];
}

export const ElectLeadersApi = defineApi<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: 43,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '2+',
  request: [
    { name: 'electionType', type: 'int8', versions: '1+', default: 0 },
    {
      name: 'topicPartitions', type: [
        { name: 'topic', type: 'string', versions: '0+' },
        { name: 'partitionId', type: 'int32', array: true, versions: '0+' },
      ], array: true, versions: '0+', nullableVersions: '0+',
    },
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '1+' },
    {
      name: 'replicaElectionResults', type: [
        { name: 'topic', type: 'string', versions: '0+' },
        {
          name: 'partitionResult', type: [
            { name: 'partitionId', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
