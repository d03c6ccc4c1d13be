// ListGroups (key 16) wire schema, v0-5 (flexible from v3; v1 throttle time, v4 states filter
// and group state, v5 types filter and group type, KIP-848). Runs on the main thread.

import { defineApi } from '../schema.js';

export interface ListGroupsRequest {
  /** v4+; empty = all states. */
  statesFilter: string[];
  /** v5+; 'classic' / 'consumer', empty = all types. */
  typesFilter: string[];
}

export interface ListGroupsResponseGroup {
  groupId: string;
  protocolType: string;
  /** v4+. */
  groupState: string;
  /** v5+. */
  groupType: string;
}

export interface ListGroupsResponse {
  /** v1+. */
  throttleTimeMs: number;
  errorCode: number;
  groups: ListGroupsResponseGroup[];
}

export const ListGroupsApi = defineApi<ListGroupsRequest, ListGroupsResponse>({
  apiKey: 16,
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 5,
  flexibleVersions: '3+',
  request: [
    { name: 'statesFilter', type: 'string', array: true, versions: '4+' },
    { name: 'typesFilter', type: 'string', array: true, versions: '5+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    {
      name: 'groups', type: [
        { name: 'groupId', type: 'string', versions: '0+' },
        { name: 'protocolType', type: 'string', versions: '0+' },
        { name: 'groupState', type: 'string', versions: '4+' },
        { name: 'groupType', type: 'string', versions: '5+' },
      ], array: true, versions: '0+',
    },
  ],
});
