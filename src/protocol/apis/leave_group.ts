// LeaveGroup (key 13) wire schema, v0-5 (flexible from v4). Main thread. v0-2 name one member by
// memberId; v3+ batch members (by member id and/or group instance id) with per-member errors
// in the response (KIP-345); v5 adds each member's leave reason (KIP-800).

import { defineApi } from '../schema.js';

export interface LeaveGroupRequestMember {
  memberId: string;
  groupInstanceId: string | null;
  /** v5+. */
  reason: string | null;
}

export interface LeaveGroupRequest {
  groupId: string;
  /** v0-2 only. */
  memberId: string;
  /** v3+. */
  members: LeaveGroupRequestMember[];
}

export interface LeaveGroupResponseMember {
  memberId: string;
  groupInstanceId: string | null;
  errorCode: number;
}

export interface LeaveGroupResponse {
  /** v1+. */
  throttleTimeMs: number;
  errorCode: number;
  /** v3+. */
  members: LeaveGroupResponseMember[];
}

export const LeaveGroupApi = defineApi<LeaveGroupRequest, LeaveGroupResponse>({
  apiKey: 13,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleVersions: '4+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0-2' },
    {
      name: 'members', type: [
        { name: 'memberId', type: 'string', versions: '3+' },
        { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
        { name: 'reason', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
      ], array: true, versions: '3+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    {
      name: 'members', type: [
        { name: 'memberId', type: 'string', versions: '3+' },
        { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+' },
        { name: 'errorCode', type: 'int16', versions: '3+' },
      ], array: true, versions: '3+',
    },
  ],
});
