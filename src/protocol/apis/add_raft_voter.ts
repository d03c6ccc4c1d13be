// AddRaftVoter (key 80) wire schema, v0, flexible (KIP-853): an administrator asks the quorum's
// leader to add a caught-up observer as a voter. v1 (AckWhenCommitted) is not served yet.

import { defineApi } from '../schema.js';
import {
  quorumListenerFields, raftVoterChangeResponseFields, type QuorumListener, type RaftVoterChangeResponse,
} from './quorum_common.js';

export interface AddRaftVoterRequest {
  clusterId: string | null;
  timeoutMs: number;
  voterId: number;
  voterDirectoryId: string;
  listeners: QuorumListener[];
}

export type AddRaftVoterResponse = RaftVoterChangeResponse;

export const AddRaftVoterApi = defineApi<AddRaftVoterRequest, AddRaftVoterResponse>({
  apiKey: 80,
  name: 'AddRaftVoter',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
    { name: 'voterId', type: 'int32', versions: '0+' },
    { name: 'voterDirectoryId', type: 'uuid', versions: '0+' },
    { name: 'listeners', type: quorumListenerFields, array: true, versions: '0+' },
  ],
  response: raftVoterChangeResponseFields,
});
