// Structs shared by the KRaft quorum APIs (Vote, BeginQuorumEpoch, EndQuorumEpoch,
// DescribeQuorum, FetchSnapshot, AddRaftVoter): the node endpoints a response lists for the
// leaders it names (KIP-853; ports are uint16 here, unlike Fetch's int32), the listeners a voter
// announces, and the per-partition answer BeginQuorumEpoch and EndQuorumEpoch share.
// Schema data only (any thread). Inner versions are '0+': each use site gates the struct.

import type { Field } from '../schema.js';

/** The one topic of every quorum API (KRaft's metadata log). */
export const METADATA_TOPIC_NAME = '__cluster_metadata';
/** Uuid.METADATA_TOPIC_ID, the "one" UUID (most and least significant bits 0 and 1). */
export const METADATA_TOPIC_ID = '00000000000000000000000000000001';

export interface QuorumNodeEndpoint {
  nodeId: number;
  host: string;
  port: number;
}

export const quorumNodeEndpointFields: readonly Field[] = [
  { name: 'nodeId', type: 'int32', versions: '0+' },
  { name: 'host', type: 'string', versions: '0+' },
  { name: 'port', type: 'uint16', versions: '0+' },
];

export interface QuorumListener {
  name: string;
  host: string;
  port: number;
}

export const quorumListenerFields: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'host', type: 'string', versions: '0+' },
  { name: 'port', type: 'uint16', versions: '0+' },
];

/** A partition's answer to BeginQuorumEpoch or EndQuorumEpoch: the responder's view of the leader. */
export interface QuorumEpochResponsePartition {
  partitionIndex: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
}

export interface QuorumEpochResponseTopic {
  topicName: string;
  partitions: QuorumEpochResponsePartition[];
}

/** The response body of BeginQuorumEpoch and EndQuorumEpoch (same fields, same versions). */
export interface QuorumEpochResponse {
  errorCode: number;
  topics: QuorumEpochResponseTopic[];
  /** Tagged (v1+). */
  nodeEndpoints: QuorumNodeEndpoint[];
}

export const quorumEpochResponseFields: readonly Field[] = [
  { name: 'errorCode', type: 'int16', versions: '0+' },
  {
    name: 'topics', type: [
      { name: 'topicName', type: 'string', versions: '0+' },
      {
        name: 'partitions', type: [
          { name: 'partitionIndex', type: 'int32', versions: '0+' },
          { name: 'errorCode', type: 'int16', versions: '0+' },
          { name: 'leaderId', type: 'int32', versions: '0+' },
          { name: 'leaderEpoch', type: 'int32', versions: '0+' },
        ], array: true, versions: '0+',
      },
    ], array: true, versions: '0+',
  },
  { name: 'nodeEndpoints', type: quorumNodeEndpointFields, array: true, versions: '1+', taggedVersions: '1+', tag: 0 },
];

/** The response body of AddRaftVoter and RemoveRaftVoter. */
export interface RaftVoterChangeResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
}

export const raftVoterChangeResponseFields: readonly Field[] = [
  { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
];
