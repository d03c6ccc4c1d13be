// ConsumerGroupHeartbeat (key 68) wire schema, v0-1 (flexible in every version). The KIP-848
// consumer protocol: one request both joins, heartbeats, reconciles and leaves. Most request
// fields are "null / -1 = unchanged since the last heartbeat". v1 adds the subscribed topic
// regex and has clients generate their own member id (KIP-1082; no wire change for that).
// Runs on the main thread.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface ConsumerGroupHeartbeatTopicPartitions {
  /** 32 lowercase hex chars. */
  topicId: string;
  partitions: number[];
}

export interface ConsumerGroupHeartbeatRequest {
  groupId: string;
  memberId: string;
  /** 0 = join, -1 = leave, -2 = static member leaving temporarily. */
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  /** -1 = unchanged. */
  rebalanceTimeoutMs: number;
  /** null = unchanged. */
  subscribedTopicNames: string[] | null;
  /** v1+; null = unchanged. */
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  /** The partitions the member owns; null = unchanged. */
  topicPartitions: ConsumerGroupHeartbeatTopicPartitions[] | null;
}

export interface ConsumerGroupHeartbeatAssignment {
  topicPartitions: ConsumerGroupHeartbeatTopicPartitions[];
}

export interface ConsumerGroupHeartbeatResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  /** Kafka only promises it on the answer to a join (memberEpoch 0). */
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** null = not provided (unchanged). */
  assignment: ConsumerGroupHeartbeatAssignment | null;
}

const topicPartitions: readonly Field[] = [
  { name: 'topicId', type: 'uuid', versions: '0+' },
  { name: 'partitions', type: 'int32', array: true, versions: '0+' },
];

export const ConsumerGroupHeartbeatApi = defineApi<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse>({
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '0+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'memberEpoch', type: 'int32', versions: '0+' },
    { name: 'instanceId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'rackId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'rebalanceTimeoutMs', type: 'int32', versions: '0+', default: -1 },
    { name: 'subscribedTopicNames', type: 'string', array: true, versions: '0+', nullableVersions: '0+', default: null },
    { name: 'subscribedTopicRegex', type: 'string', versions: '1+', nullableVersions: '1+', default: null },
    { name: 'serverAssignor', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'topicPartitions', type: topicPartitions, array: true, versions: '0+', nullableVersions: '0+', default: null },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'memberId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'memberEpoch', type: 'int32', versions: '0+' },
    { name: 'heartbeatIntervalMs', type: 'int32', versions: '0+' },
    {
      name: 'assignment', type: [
        { name: 'topicPartitions', type: topicPartitions, array: true, versions: '0+' },
      ], versions: '0+', nullableVersions: '0+', default: null,
    },
  ],
});
