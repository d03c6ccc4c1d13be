// Vote (key 52) wire schema, v0-2, flexible in every version (KIP-595). A candidate, or with
// PreVote (v2, KIP-996) a prospective candidate, asks each voter for its vote. v1 (KIP-853) adds
// the intended receiver (VoterId) and directory ids, and endpoints of the leaders a response
// names. Schema only; the mapping from the Raft core's messages is coordinator/raft/quorum_wire.ts.

import { defineApi } from '../schema.js';
import { quorumNodeEndpointFields, type QuorumNodeEndpoint } from './quorum_common.js';

export interface VoteRequestPartition {
  partitionIndex: number;
  /** v2 calls it ReplicaEpoch: the epoch the sender campaigns in. */
  candidateEpoch: number;
  candidateId: number;
  /** v1+. */
  candidateDirectoryId: string;
  /** v1+. */
  voterDirectoryId: string;
  lastOffsetEpoch: number;
  /** The sender's log end offset (exclusive). */
  lastOffset: number;
  /** v2+. */
  preVote: boolean;
}

export interface VoteRequestTopic {
  topicName: string;
  partitions: VoteRequestPartition[];
}

export interface VoteRequest {
  clusterId: string | null;
  /** v1+; -1 when not known. */
  voterId: number;
  topics: VoteRequestTopic[];
}

export interface VoteResponsePartition {
  partitionIndex: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
  voteGranted: boolean;
}

export interface VoteResponseTopic {
  topicName: string;
  partitions: VoteResponsePartition[];
}

export interface VoteResponse {
  errorCode: number;
  topics: VoteResponseTopic[];
  /** Tagged (v1+). */
  nodeEndpoints: QuorumNodeEndpoint[];
}

export const VoteApi = defineApi<VoteRequest, VoteResponse>({
  apiKey: 52,
  name: 'Vote',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '0+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'voterId', type: 'int32', versions: '1+', default: -1 },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'candidateEpoch', type: 'int32', versions: '0+' },
            { name: 'candidateId', type: 'int32', versions: '0+' },
            { name: 'candidateDirectoryId', type: 'uuid', versions: '1+' },
            { name: 'voterDirectoryId', type: 'uuid', versions: '1+' },
            { name: 'lastOffsetEpoch', type: 'int32', versions: '0+' },
            { name: 'lastOffset', type: 'int64', versions: '0+' },
            { name: 'preVote', type: 'bool', versions: '2+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
  response: [
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
            { name: 'voteGranted', type: 'bool', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'nodeEndpoints', type: quorumNodeEndpointFields, array: true, versions: '1+', taggedVersions: '1+', tag: 0 },
  ],
});
