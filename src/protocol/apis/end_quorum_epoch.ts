// EndQuorumEpoch (key 54) wire schema, v0-1, flexible from v1 (KIP-595, KIP-853): a resigning
// leader hands off, naming its preferred successors in order (v0: ids; v1: ids with directory ids)
// and, from v1, its endpoints. The response is shared with BeginQuorumEpoch (quorum_common.ts).

import { defineApi } from '../schema.js';
import {
  quorumEpochResponseFields, quorumListenerFields, type QuorumEpochResponse, type QuorumListener,
} from './quorum_common.js';

export interface EndQuorumEpochCandidate {
  candidateId: number;
  candidateDirectoryId: string;
}

export interface EndQuorumEpochRequestPartition {
  partitionIndex: number;
  leaderId: number;
  leaderEpoch: number;
  /** v0 only. */
  preferredSuccessors: number[];
  /** v1+. */
  preferredCandidates: EndQuorumEpochCandidate[];
}

export interface EndQuorumEpochRequestTopic {
  topicName: string;
  partitions: EndQuorumEpochRequestPartition[];
}

export interface EndQuorumEpochRequest {
  clusterId: string | null;
  topics: EndQuorumEpochRequestTopic[];
  /** v1+. */
  leaderEndpoints: QuorumListener[];
}

export type EndQuorumEpochResponse = QuorumEpochResponse;

export const EndQuorumEpochApi = defineApi<EndQuorumEpochRequest, EndQuorumEpochResponse>({
  apiKey: 54,
  name: 'EndQuorumEpoch',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '1+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    {
      name: 'topics', type: [
        { name: 'topicName', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partitionIndex', type: 'int32', versions: '0+' },
            { name: 'leaderId', type: 'int32', versions: '0+' },
            { name: 'leaderEpoch', type: 'int32', versions: '0+' },
            { name: 'preferredSuccessors', type: 'int32', array: true, versions: '0' },
            {
              name: 'preferredCandidates', type: [
                { name: 'candidateId', type: 'int32', versions: '1+' },
                { name: 'candidateDirectoryId', type: 'uuid', versions: '1+' },
              ], array: true, versions: '1+',
            },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'leaderEndpoints', type: quorumListenerFields, array: true, versions: '1+' },
  ],
  response: quorumEpochResponseFields,
});
