// Metadata (key 3) wire schema, v0-12. Main thread. v0: an empty topic list means all topics;
// v1+: null means all, empty means none. v4 adds allowAutoTopicCreation, v9 is the first
// flexible version, v10 adds topic ids, v12 lets a request name topics by id (name null).

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface MetadataRequestTopic {
  /** All zeros = not given. */
  topicId: string;
  /** Null only from v10, when the topic is named by id. */
  name: string | null;
}

export interface MetadataRequest {
  /** Null (v1+) = every topic. */
  topics: MetadataRequestTopic[] | null;
  allowAutoTopicCreation: boolean;
  includeClusterAuthorizedOperations: boolean;
  includeTopicAuthorizedOperations: boolean;
}

export interface MetadataResponseBroker {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface MetadataResponsePartition {
  errorCode: number;
  partitionIndex: number;
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
  offlineReplicas: number[];
}

export interface MetadataResponseTopic {
  errorCode: number;
  /** Null only (v12+) for an unknown topic that was asked for by id. */
  name: string | null;
  topicId: string;
  isInternal: boolean;
  partitions: MetadataResponsePartition[];
  topicAuthorizedOperations: number;
}

export interface MetadataResponse {
  throttleTimeMs: number;
  brokers: MetadataResponseBroker[];
  clusterId: string | null;
  controllerId: number;
  topics: MetadataResponseTopic[];
  clusterAuthorizedOperations: number;
}

/** Kafka's "authorized operations not requested" bitfield. */
const OPS_UNKNOWN = -2147483648;

const requestTopic: readonly Field[] = [
  { name: 'topicId', type: 'uuid', versions: '10+' },
  { name: 'name', type: 'string', versions: '0+', nullableVersions: '10+' },
];

const broker: readonly Field[] = [
  { name: 'nodeId', type: 'int32', versions: '0+' },
  { name: 'host', type: 'string', versions: '0+' },
  { name: 'port', type: 'int32', versions: '0+' },
  { name: 'rack', type: 'string', versions: '1+', nullableVersions: '1+', default: null },
];

const partition: readonly Field[] = [
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'partitionIndex', type: 'int32', versions: '0+' },
  { name: 'leaderId', type: 'int32', versions: '0+' },
  { name: 'leaderEpoch', type: 'int32', versions: '7+', default: -1 },
  { name: 'replicaNodes', type: 'int32', array: true, versions: '0+' },
  { name: 'isrNodes', type: 'int32', array: true, versions: '0+' },
  { name: 'offlineReplicas', type: 'int32', array: true, versions: '5+' },
];

const topic: readonly Field[] = [
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'name', type: 'string', versions: '0+', nullableVersions: '12+' },
  { name: 'topicId', type: 'uuid', versions: '10+' },
  { name: 'isInternal', type: 'bool', versions: '1+', default: false },
  { name: 'partitions', type: partition, array: true, versions: '0+' },
  { name: 'topicAuthorizedOperations', type: 'int32', versions: '8+', default: OPS_UNKNOWN },
];

export const MetadataApi = defineApi<MetadataRequest, MetadataResponse>({
  apiKey: 3,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 12,
  flexibleVersions: '9+',
  request: [
    { name: 'topics', type: requestTopic, array: true, versions: '0+', nullableVersions: '1+' },
    { name: 'allowAutoTopicCreation', type: 'bool', versions: '4+', default: true },
    { name: 'includeClusterAuthorizedOperations', type: 'bool', versions: '8-10' },
    { name: 'includeTopicAuthorizedOperations', type: 'bool', versions: '8+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    { name: 'brokers', type: broker, array: true, versions: '0+' },
    { name: 'clusterId', type: 'string', versions: '2+', nullableVersions: '2+', default: null },
    { name: 'controllerId', type: 'int32', versions: '1+', default: -1 },
    { name: 'topics', type: topic, array: true, versions: '0+' },
    { name: 'clusterAuthorizedOperations', type: 'int32', versions: '8-10', default: OPS_UNKNOWN },
  ],
});
