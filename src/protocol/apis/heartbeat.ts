// Heartbeat (key 12) wire schema, v0-4 (flexible from v4; v1 throttle time, v3 group instance
// id). The classic protocol's liveness ping; KIP-848 groups use ConsumerGroupHeartbeat instead.
// Runs on the main thread.

import { defineApi } from '../schema.js';

export interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  /** v3+. */
  groupInstanceId: string | null;
}

export interface HeartbeatResponse {
  /** v1+. */
  throttleTimeMs: number;
  errorCode: number;
}

export const HeartbeatApi = defineApi<HeartbeatRequest, HeartbeatResponse>({
  apiKey: 12,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '4+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
  ],
});
