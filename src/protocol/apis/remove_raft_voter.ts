// RemoveRaftVoter (key 81) wire schema, v0, flexible (KIP-853): an administrator asks the
// quorum's leader to remove a voter (the leader resigns once it has removed itself).

import { defineApi } from '../schema.js';
import { raftVoterChangeResponseFields, type RaftVoterChangeResponse } from './quorum_common.js';

export interface RemoveRaftVoterRequest {
  clusterId: string | null;
  voterId: number;
  voterDirectoryId: string;
}

export type RemoveRaftVoterResponse = RaftVoterChangeResponse;

export const RemoveRaftVoterApi = defineApi<RemoveRaftVoterRequest, RemoveRaftVoterResponse>({
  apiKey: 81,
  name: 'RemoveRaftVoter',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'voterId', type: 'int32', versions: '0+' },
    { name: 'voterDirectoryId', type: 'uuid', versions: '0+' },
  ],
  response: raftVoterChangeResponseFields,
});
