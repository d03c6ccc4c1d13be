// JoinGroup (key 11) wire schema, v0-9 (flexible from v6). Main thread: the classic group
// handler decodes requests and encodes responses here. Version boundaries: v1 rebalance
// timeout (v0 requests decode it as -1; the handler substitutes the session timeout), v2
// throttle time, v4 MEMBER_ID_REQUIRED round trip (no wire change), v5 static membership
// (group instance ids), v7 protocol type in the response and a nullable protocol name, v8 join
// reason, v9 skipAssignment. librdkafka 2.0.2 needs v0 advertised for SASL/GSSAPI.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface JoinGroupRequestProtocol {
  name: string;
  /** The embedded protocol's metadata (for "consumer": see consumer_protocol.ts). */
  metadata: Buffer;
}

export interface JoinGroupRequest {
  groupId: string;
  sessionTimeoutMs: number;
  /** v1+; -1 when absent (v0). */
  rebalanceTimeoutMs: number;
  /** '' for a member joining for the first time. */
  memberId: string;
  /** v5+. */
  groupInstanceId: string | null;
  protocolType: string;
  protocols: JoinGroupRequestProtocol[];
  /** v8+. */
  reason: string | null;
}

export interface JoinGroupResponseMember {
  memberId: string;
  /** v5+. */
  groupInstanceId: string | null;
  metadata: Buffer;
}

export interface JoinGroupResponse {
  /** v2+. */
  throttleTimeMs: number;
  errorCode: number;
  generationId: number;
  /** v7+. */
  protocolType: string | null;
  /** Nullable from v7. */
  protocolName: string | null;
  leader: string;
  /** v9+. */
  skipAssignment: boolean;
  memberId: string;
  /** Only the leader's answer lists the members. */
  members: JoinGroupResponseMember[];
}

const requestProtocol: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'metadata', type: 'bytes', versions: '0+' },
];

const responseMember: readonly Field[] = [
  { name: 'memberId', type: 'string', versions: '0+' },
  { name: 'groupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
  { name: 'metadata', type: 'bytes', versions: '0+' },
];

export const JoinGroupApi = defineApi<JoinGroupRequest, JoinGroupResponse>({
  apiKey: 11,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 9,
  flexibleVersions: '6+',
  request: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'sessionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'rebalanceTimeoutMs', type: 'int32', versions: '1+', default: -1 },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolType', type: 'string', versions: '0+' },
    { name: 'protocols', type: requestProtocol, array: true, versions: '0+' },
    { name: 'reason', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+', default: -1 },
    { name: 'protocolType', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'protocolName', type: 'string', versions: '0+', nullableVersions: '7+' },
    { name: 'leader', type: 'string', versions: '0+' },
    { name: 'skipAssignment', type: 'bool', versions: '9+', default: false },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'members', type: responseMember, array: true, versions: '0+' },
  ],
});
