// Produce (key 0) wire schema, v0-11. Main thread (decode; the records field stays a view of the
// request frame until the partition actor takes it). v0-2 are declared because we advertise
// Produce from v0 for librdkafka's feature checks; the broker rejects their magic-0/1 payloads.
// v3 adds transactionalId, v8 per-record errors, v9 is the first flexible version, v10 adds
// the KIP-951 leader hints (tagged); v11 only adds an error code.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';
import { leaderIdAndEpochFields, nodeEndpointFields } from './leader_hints.js';
import type { LeaderIdAndEpoch, NodeEndpoint } from './leader_hints.js';

export interface ProduceRequestPartition {
  index: number;
  /** A view of the request frame (no copy), or null. */
  records: Buffer | null;
}

export interface ProduceRequestTopic {
  name: string;
  partitionData: ProduceRequestPartition[];
}

export interface ProduceRequest {
  transactionalId: string | null;
  /** 0, 1 or -1 (all in-sync replicas). */
  acks: number;
  timeoutMs: number;
  topicData: ProduceRequestTopic[];
}

export interface ProduceResponseRecordError {
  batchIndex: number;
  batchIndexErrorMessage: string | null;
}

export interface ProduceResponsePartition {
  index: number;
  errorCode: number;
  baseOffset: number;
  /** -1 for CreateTime topics. */
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: ProduceResponseRecordError[];
  errorMessage: string | null;
  /** Tagged (v10+); sent only when not {-1, -1}. */
  currentLeader: LeaderIdAndEpoch;
}

export interface ProduceResponseTopic {
  name: string;
  partitionResponses: ProduceResponsePartition[];
}

export interface ProduceResponse {
  responses: ProduceResponseTopic[];
  throttleTimeMs: number;
  /** Tagged (v10+); sent only when non-empty. */
  nodeEndpoints: NodeEndpoint[];
}

const requestPartition: readonly Field[] = [
  { name: 'index', type: 'int32', versions: '0+' },
  { name: 'records', type: 'records', versions: '0+', nullableVersions: '0+' },
];

const requestTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'partitionData', type: requestPartition, array: true, versions: '0+' },
];

const recordError: readonly Field[] = [
  { name: 'batchIndex', type: 'int32', versions: '8+' },
  { name: 'batchIndexErrorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
];

const responsePartition: readonly Field[] = [
  { name: 'index', type: 'int32', versions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'baseOffset', type: 'int64', versions: '0+' },
  { name: 'logAppendTimeMs', type: 'int64', versions: '2+', default: -1 },
  { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1 },
  { name: 'recordErrors', type: recordError, array: true, versions: '8+' },
  { name: 'errorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
  { name: 'currentLeader', type: leaderIdAndEpochFields, versions: '10+', taggedVersions: '10+', tag: 0 },
];

const responseTopic: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'partitionResponses', type: responsePartition, array: true, versions: '0+' },
];

export const ProduceApi = defineApi<ProduceRequest, ProduceResponse>({
  apiKey: 0,
  name: 'Produce',
  minVersion: 0,
  maxVersion: 11,
  flexibleVersions: '9+',
  request: [
    { name: 'transactionalId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'acks', type: 'int16', versions: '0+' },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
    { name: 'topicData', type: requestTopic, array: true, versions: '0+' },
  ],
  response: [
    { name: 'responses', type: responseTopic, array: true, versions: '0+' },
    { name: 'throttleTimeMs', type: 'int32', versions: '1+', default: 0 },
    { name: 'nodeEndpoints', type: nodeEndpointFields, array: true, versions: '10+', taggedVersions: '10+', tag: 0 },
  ],
});
