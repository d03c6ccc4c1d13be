// FindCoordinator (key 10) wire schema, v0-4 (flexible from v3; v1 adds the key type, throttle
// time and error message; v4 batches keys into coordinatorKeys/coordinators, KIP-699).
// librdkafka 2.0.2 also uses the presence of v0 in ApiVersions to enable groups and LZ4.
// Runs on the main thread.

import { defineApi } from '../schema.js';

export interface FindCoordinatorRequest {
  /** v0-3. */
  key: string;
  /** 0 group, 1 transaction. */
  keyType: number;
  /** v4+. */
  coordinatorKeys: string[];
}

export interface FindCoordinatorResponseCoordinator {
  key: string;
  nodeId: number;
  host: string;
  port: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface FindCoordinatorResponse {
  throttleTimeMs: number;
  /** v0-3: the single key's answer. */
  errorCode: number;
  errorMessage: string | null;
  nodeId: number;
  host: string;
  port: number;
  /** v4+. */
  coordinators: FindCoordinatorResponseCoordinator[];
}

export const FindCoordinatorApi = defineApi<FindCoordinatorRequest, FindCoordinatorResponse>({
  apiKey: 10,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '3+',
  request: [
    { name: 'key', type: 'string', versions: '0-3' },
    { name: 'keyType', type: 'int8', versions: '1+', default: 0 },
    { name: 'coordinatorKeys', type: 'string', array: true, versions: '4+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0-3' },
    { name: 'errorMessage', type: 'string', versions: '1-3', nullableVersions: '1-3', default: null },
    { name: 'nodeId', type: 'int32', versions: '0-3' },
    { name: 'host', type: 'string', versions: '0-3' },
    { name: 'port', type: 'int32', versions: '0-3' },
    {
      name: 'coordinators', type: [
        { name: 'key', type: 'string', versions: '4+' },
        { name: 'nodeId', type: 'int32', versions: '4+' },
        { name: 'host', type: 'string', versions: '4+' },
        { name: 'port', type: 'int32', versions: '4+' },
        { name: 'errorCode', type: 'int16', versions: '4+' },
        { name: 'errorMessage', type: 'string', versions: '4+', nullableVersions: '4+', default: null },
      ], array: true, versions: '4+',
    },
  ],
});
