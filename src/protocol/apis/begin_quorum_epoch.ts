// BeginQuorumEpoch (key 53) wire schema, v0-1, flexible from v1 (KIP-595, KIP-853): a new leader
// announces its epoch to each voter. v1 adds the intended receiver (VoterId, VoterDirectoryId) and
// the leader's endpoints. The response is shared with EndQuorumEpoch (quorum_common.ts).

import { defineApi } from '../schema.js';
import {
  quorumEpochResponseFields, quorumListenerFields, type QuorumEpochResponse, type QuorumListener,
} from './quorum_common.js';

export interface BeginQuorumEpochRequestPartition {
  partitionIndex: number;
  /** v1+. */
  voterDirectoryId: string;
  leaderId: number;
  leaderEpoch: number;
}

export interface BeginQuorumEpochRequestTopic {
  topicName: string;
  partitions: BeginQuorumEpochRequestPartition[];
}

export interface BeginQuorumEpochRequest {
  clusterId: string | null;
  /** v1+; -1 when not known. */
  voterId: number;
  topics: BeginQuorumEpochRequestTopic[];
  /** v1+. */
  leaderEndpoints: QuorumListener[];
}

export type BeginQuorumEpochResponse = QuorumEpochResponse;

export const BeginQuorumEpochApi = defineApi<BeginQuorumEpochRequest, BeginQuorumEpochResponse>({
  apiKey: 53,
  name: 'BeginQuorumEpoch',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '1+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'voterId', type: 'int32', versions: '1+', default: -1 },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'voterDirectoryId', type: 'uuid', versions: '1+' },
            { name: 'leaderId', type: 'int32', versions: '0+' },
            { name: 'leaderEpoch', type: 'int32', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'leaderEndpoints', type: quorumListenerFields, array: true, versions: '1+' },
  ],
  response: quorumEpochResponseFields,
});
