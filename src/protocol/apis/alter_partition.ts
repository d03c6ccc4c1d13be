// AlterPartition (key 56) wire schema, v0-3, flexible in every version: a partition leader asks
// the controller to change its ISR, quoting the leader and partition epochs it last saw. v1 adds
// LeaderRecoveryState (KIP-704), v2 names topics by id instead of name (KIP-841), v3 sends the
// ISR with each member's broker epoch (KIP-903). Main thread (controller listener).

import { defineApi } from '../schema.js';

export interface AlterPartitionIsrMember {
  brokerId: number;
  brokerEpoch: number;
}

export interface AlterPartitionRequestPartition {
  partitionIndex: number;
  leaderEpoch: number;
  /** v0-2. */
  newIsr: number[];
  /** v3+. */
  newIsrWithEpochs: AlterPartitionIsrMember[];
  /** v1+. */
  leaderRecoveryState: number;
  partitionEpoch: number;
}

export interface AlterPartitionRequestTopic {
  /** v0-1. */
  topicName: string;
  /** v2+. */
  topicId: string;
  partitions: AlterPartitionRequestPartition[];
}

export interface AlterPartitionRequest {
  brokerId: number;
  brokerEpoch: number;
  topics: AlterPartitionRequestTopic[];
}

export interface AlterPartitionResponsePartition {
  partitionIndex: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
  isr: number[];
  /** v1+. */
  leaderRecoveryState: number;
  partitionEpoch: number;
}

export interface AlterPartitionResponseTopic {
  /** v0-1. */
  topicName: string;
  /** v2+. */
  topicId: string;
  partitions: AlterPartitionResponsePartition[];
}

export interface AlterPartitionResponse {
  throttleTimeMs: number;
  errorCode: number;
  topics: AlterPartitionResponseTopic[];
}

export const AlterPartitionApi = defineApi<AlterPartitionRequest, AlterPartitionResponse>({
  apiKey: 56,
  name: 'AlterPartition',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '0+',
  request: [
    { name: 'brokerId', type: 'int32', versions: '0+' },
    { name: 'brokerEpoch', type: 'int64', versions: '0+', default: -1 },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0-1' },
        { name: 'topicId', type: 'uuid', versions: '2+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'leaderEpoch', type: 'int32', versions: '0+' },
            { name: 'newIsr', type: 'int32', array: true, versions: '0-2' },
            {
              name: 'newIsrWithEpochs', type: [
                { name: 'brokerId', type: 'int32', versions: '3+' },
                { name: 'brokerEpoch', type: 'int64', versions: '3+', default: -1 },
              ], array: true, versions: '3+',
            },
            { name: 'leaderRecoveryState', type: 'int8', versions: '1+', default: 0 },
            { name: 'partitionEpoch', type: 'int32', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0-1' },
        { name: 'topicId', type: 'uuid', versions: '2+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'leaderId', type: 'int32', versions: '0+' },
            { name: 'leaderEpoch', type: 'int32', versions: '0+' },
            { name: 'isr', type: 'int32', array: true, versions: '0+' },
            { name: 'leaderRecoveryState', type: 'int8', versions: '1+', default: 0 },
            { name: 'partitionEpoch', type: 'int32', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
