// DescribeGroups (key 15) wire schema, v0-5 (flexible from v5; v1 throttle time, v3 authorized
// operations, v4 group instance ids). Kafka's v6 error message lies above our range. Classic
// groups only; KIP-848 groups are described by ConsumerGroupDescribe. Runs on the main thread.

import { defineApi } from '../schema.js';

export interface DescribeGroupsRequest {
  groups: string[];
  /** v3+. */
  includeAuthorizedOperations: boolean;
}

export interface DescribeGroupsResponseMember {
  memberId: string;
  /** v4+. */
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Only filled in while the group is Stable. */
  memberMetadata: Buffer;
  /** Only filled in while the group is Stable. */
  memberAssignment: Buffer;
}

export interface DescribeGroupsResponseGroup {
  errorCode: number;
  groupId: string;
  groupState: string;
  protocolType: string;
  /** The chosen protocol (assignor) name, or ''. */
  protocolData: string;
  members: DescribeGroupsResponseMember[];
  /** v3+; INT32_MIN = not requested. */
  authorizedOperations: number;
}

export interface DescribeGroupsResponse {
  /** v1+. */
  throttleTimeMs: number;
  groups: DescribeGroupsResponseGroup[];
}

export const DescribeGroupsApi = defineApi<DescribeGroupsRequest, DescribeGroupsResponse>({
  apiKey: 15,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 5,
  flexibleVersions: '5+',
  request: [
    { name: 'groups', type: 'string', array: true, versions: '0+' },
    { name: 'includeAuthorizedOperations', type: 'bool', versions: '3+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    {
      name: 'groups', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'groupId', type: 'string', versions: '0+' },
        { name: 'groupState', type: 'string', versions: '0+' },
        { name: 'protocolType', type: 'string', versions: '0+' },
        { name: 'protocolData', type: 'string', versions: '0+' },
        {
          name: 'members', type: [
            { name: 'memberId', type: 'string', versions: '0+' },
            { name: 'groupInstanceId', type: 'string', versions: '4+', nullableVersions: '4+', default: null },
            { name: 'clientId', type: 'string', versions: '0+' },
            { name: 'clientHost', type: 'string', versions: '0+' },
            { name: 'memberMetadata', type: 'bytes', versions: '0+' },
            { name: 'memberAssignment', type: 'bytes', versions: '0+' },
          ], array: true, versions: '0+',
        },
        { name: 'authorizedOperations', type: 'int32', versions: '3+', default: -2147483648 },
      ], array: true, versions: '0+',
    },
  ],
});
