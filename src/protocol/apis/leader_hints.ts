// KIP-951 leader hints shared by Produce (v10+) and Fetch (v12+/v16+) responses: the struct
// carrying a partition's current leader and the node endpoints list that resolves leader ids.
// Schema data only (main thread). Inner versions are '0+' because each use site gates the whole
// struct by its own versions.

import type { Field } from '../schema.js';

export interface LeaderIdAndEpoch {
  /** -1 when unknown. */
  leaderId: number;
  leaderEpoch: number;
}

export interface NodeEndpoint {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export const leaderIdAndEpochFields: readonly Field[] = [
  { name: 'leaderId', type: 'int32', versions: '0+', default: -1 },
  { name: 'leaderEpoch', type: 'int32', versions: '0+', default: -1 },
];

export const nodeEndpointFields: readonly Field[] = [
  { name: 'nodeId', type: 'int32', versions: '0+' },
  { name: 'host', type: 'string', versions: '0+' },
  { name: 'port', type: 'int32', versions: '0+' },
  { name: 'rack', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
];
