// DeleteGroups (key 42) wire schema, v0-2 (flexible from v2; v1 only changes throttling
// behaviour). Runs on the main thread.

import { defineApi } from '../schema.js';

export interface DeleteGroupsRequest {
  /** Kafka's field name (sic). */
  groupsNames: string[];
}

export interface DeleteGroupsResponseResult {
  groupId: string;
  errorCode: number;
}

export interface DeleteGroupsResponse {
  throttleTimeMs: number;
  results: DeleteGroupsResponseResult[];
}

export const DeleteGroupsApi = defineApi<DeleteGroupsRequest, DeleteGroupsResponse>({
  apiKey: 42,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '2+',
  request: [
    { name: 'groupsNames', type: 'string', array: true, versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'results', type: [
        { name: 'groupId', type: 'string', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
