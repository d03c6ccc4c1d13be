// CreatePartitions (key 37) wire schema, v0-3 (flexible from v2): grow a topic's partition
// count, optionally with explicit replica assignments for the new partitions.
// Runs on the main thread (request decode, response encode).

import { defineApi } from '../schema.js';

export interface CreatePartitionsRequestAssignment {
  brokerIds: number[];
}

export interface CreatePartitionsRequestTopic {
  name: string;
  /** The new total partition count. */
  count: number;
  /** Null = let the broker place the new partitions. */
  assignments: CreatePartitionsRequestAssignment[] | null;
}

export interface CreatePartitionsRequest {
  topics: CreatePartitionsRequestTopic[];
  timeoutMs: number;
  validateOnly: boolean;
}

export interface CreatePartitionsResponseResult {
  name: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface CreatePartitionsResponse {
  throttleTimeMs: number;
  results: CreatePartitionsResponseResult[];
}

export const CreatePartitionsApi = defineApi<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: 37,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '2+',
  request: [
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'count', type: 'int32', versions: '0+' },
        {
          name: 'assignments', type: [
            { name: 'brokerIds', type: 'int32', array: true, versions: '0+' },
          ], array: true, versions: '0+', nullableVersions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'results', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
      ], array: true, versions: '0+',
    },
  ],
});
