// DescribeQuorum (key 55) wire schema, v0-2, flexible in every version (KIP-595, KIP-836,
// KIP-853): the quorum's leader, high watermark, and each voter's and observer's progress. v1
// adds fetch and caught-up timestamps, v2 directory ids, error messages and node listeners.

import { defineApi, type Field } from '../schema.js';
import { quorumListenerFields, type QuorumListener } from './quorum_common.js';

export interface DescribeQuorumRequestTopic {
  topicName: string;
  partitions: { partitionIndex: number }[];
}

export interface DescribeQuorumRequest {
  topics: DescribeQuorumRequestTopic[];
}

export interface DescribeQuorumReplicaState {
  replicaId: number;
  /** v2+. */
  replicaDirectoryId: string;
  /** -1 when not known. */
  logEndOffset: number;
  /** v1+; the leader's wall clock at the replica's last fetch, -1 for the leader or unknown. */
  lastFetchTimestamp: number;
  /** v1+; the leader's append time of the offset the replica last fetched up to, -1 unknown. */
  lastCaughtUpTimestamp: number;
}

export interface DescribeQuorumResponsePartition {
  partitionIndex: number;
  errorCode: number;
  /** v2+. */
  errorMessage: string | null;
  leaderId: number;
  leaderEpoch: number;
  highWatermark: number;
  currentVoters: DescribeQuorumReplicaState[];
  observers: DescribeQuorumReplicaState[];
}

export interface DescribeQuorumResponseTopic {
  topicName: string;
  partitions: DescribeQuorumResponsePartition[];
}

export interface DescribeQuorumNode {
  nodeId: number;
  listeners: QuorumListener[];
}

export interface DescribeQuorumResponse {
  errorCode: number;
  /** v2+. */
  errorMessage: string | null;
  topics: DescribeQuorumResponseTopic[];
  /** v2+. */
  nodes: DescribeQuorumNode[];
}

const replicaState: readonly Field[] = [
  { name: 'replicaId', type: 'int32', versions: '0+' },
  { name: 'replicaDirectoryId', type: 'uuid', versions: '2+' },
  { name: 'logEndOffset', type: 'int64', versions: '0+' },
  { name: 'lastFetchTimestamp', type: 'int64', versions: '1+', default: -1 },
  { name: 'lastCaughtUpTimestamp', type: 'int64', versions: '1+', default: -1 },
];

export const DescribeQuorumApi = defineApi<DescribeQuorumRequest, DescribeQuorumResponse>({
  apiKey: 55,
  name: 'DescribeQuorum',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '0+',
  request: [
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0+' },
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
    { name: 'errorMessage', type: 'string', versions: '2+', nullableVersions: '2+', default: null },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'errorMessage', type: 'string', versions: '2+', nullableVersions: '2+', default: null },
            { name: 'leaderId', type: 'int32', versions: '0+' },
            { name: 'leaderEpoch', type: 'int32', versions: '0+' },
            { name: 'highWatermark', type: 'int64', versions: '0+' },
            { name: 'currentVoters', type: replicaState, array: true, versions: '0+' },
            { name: 'observers', type: replicaState, array: true, versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    {
      name: 'nodes', type: [
        { name: 'nodeId', type: 'int32', versions: '2+' },
        { name: 'listeners', type: quorumListenerFields, array: true, versions: '2+' },
      ], array: true, versions: '2+',
    },
  ],
});
