// SyncGroup (key 14) wire schema, v0-5 (flexible from v4). Main thread. Version boundaries: v1
// throttle time, v3 group instance id, v5 protocol type and name in both directions (the
// coordinator checks them against the group's when not null).

import { defineApi } from '../schema.js';

export interface SyncGroupRequestAssignment {
  memberId: string;
  /** The embedded protocol's assignment (for "consumer": see consumer_protocol.ts). */
  assignment: Buffer;
}

export interface SyncGroupRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  /** v3+. */
  groupInstanceId: string | null;
  /** v5+. */
  protocolType: string | null;
  /** v5+. */
  protocolName: string | null;
  /** Only the leader sends assignments; followers send none. */
  assignments: SyncGroupRequestAssignment[];
}

export interface SyncGroupResponse {
  /** v1+. */
  throttleTimeMs: number;
  errorCode: number;
  /** v5+. */
  protocolType: string | null;
  /** v5+. */
  protocolName: string | null;
  assignment: Buffer;
}

export const SyncGroupApi = defineApi<SyncGroupRequest, SyncGroupResponse>({
  apiKey: 14,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleVersions: '4+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'protocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    {
      name: 'assignments', type: [
        { name: 'memberId', type: 'string', versions: '0+' },
        { name: 'assignment', type: 'bytes', versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'protocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'assignment', type: 'bytes', versions: '0+' },
  ],
});
