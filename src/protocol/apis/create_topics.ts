// CreateTopics (key 19) wire schema, v0-7 (flexible from v5; v5+ responses echo the created
// topic's partitions, replication factor and configs; v7 adds the topic id).
// Runs on the main thread (request decode, response encode).

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface CreateTopicsRequestAssignment {
  partitionIndex: number;
  brokerIds: number[];
}

export interface CreateTopicsRequestConfig {
  name: string;
  value: string | null;
}

export interface CreateTopicsRequestTopic {
  name: string;
  /** -1 = broker default (v4+) or manual assignment. */
  numPartitions: number;
  /** -1 = broker default (v4+) or manual assignment. */
  replicationFactor: number;
  assignments: CreateTopicsRequestAssignment[];
  configs: CreateTopicsRequestConfig[];
}

export interface CreateTopicsRequest {
  topics: CreateTopicsRequestTopic[];
  timeoutMs: number;
  validateOnly: boolean;
}

export interface CreateTopicsResponseConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  isSensitive: boolean;
}

export interface CreateTopicsResponseTopic {
  name: string;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
  /** Tagged (tag 0, v5+): set when configs could not be returned. */
  topicConfigErrorCode: number;
  numPartitions: number;
  replicationFactor: number;
  configs: CreateTopicsResponseConfig[] | null;
}

export interface CreateTopicsResponse {
  throttleTimeMs: number;
  topics: CreateTopicsResponseTopic[];
}

const requestTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'numPartitions', type: 'int32', versions: '0+' },
  { name: 'replicationFactor', type: 'int16', versions: '0+' },
  {
    name: 'assignments', type: [
      { name: 'partitionIndex', type: 'int32', versions: '0+' },
      { name: 'brokerIds', type: 'int32', array: true, versions: '0+' },
    ], array: true, versions: '0+',
  },
  {
    name: 'configs', type: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
    ], array: true, versions: '0+',
  },
];

const responseConfig: readonly Field[] = [
  { name: 'name', type: 'string', versions: '5+' },
  { name: 'value', type: 'string', versions: '5+', nullableVersions: '5+' },
  { name: 'readOnly', type: 'bool', versions: '5+' },
  { name: 'configSource', type: 'int8', versions: '5+', default: -1 },
  { name: 'isSensitive', type: 'bool', versions: '5+' },
];

const responseTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'topicId', type: 'uuid', versions: '7+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'errorMessage', type: 'string', versions: '1+', nullableVersions: '0+' },
  { name: 'topicConfigErrorCode', type: 'int16', versions: '5+', taggedVersions: '5+', tag: 0 },
  { name: 'numPartitions', type: 'int32', versions: '5+', default: -1 },
  { name: 'replicationFactor', type: 'int16', versions: '5+', default: -1 },
  { name: 'configs', type: responseConfig, array: true, versions: '5+', nullableVersions: '5+' },
];

export const CreateTopicsApi = defineApi<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: 19,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  flexibleVersions: '5+',
  request: [
    { name: 'topics', type: requestTopic, array: true, versions: '0+' },
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
    { name: 'validateOnly', type: 'bool', versions: '1+', default: false },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    { name: 'topics', type: responseTopic, array: true, versions: '0+' },
  ],
});
