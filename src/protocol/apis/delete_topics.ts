// DeleteTopics (key 20) wire schema, v0-6 (flexible from v4). v0-5 name topics in a plain
// string array; v6 replaces it with structs carrying a nullable name or a topic id.
// Runs on the main thread (request decode, response encode).

import { defineApi } from '../schema.js';

export interface DeleteTopicsRequestTopic {
  name: string | null;
  /** All zeros when the topic is named instead. */
  topicId: string;
}

export interface DeleteTopicsRequest {
  /** v6+. */
  topics: DeleteTopicsRequestTopic[];
  /** v0-5. */
  topicNames: string[];
  timeoutMs: number;
}

export interface DeleteTopicsResponseTopic {
  name: string | null;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface DeleteTopicsResponse {
  throttleTimeMs: number;
  responses: DeleteTopicsResponseTopic[];
}

export const DeleteTopicsApi = defineApi<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: 20,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  flexibleVersions: '4+',
  request: [
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '6+', nullableVersions: '6+', default: null },
        { name: 'topicId', type: 'uuid', versions: '6+' },
      ], array: true, versions: '6+',
    },
    { name: 'topicNames', type: 'string', array: true, versions: '0-5' },
    { name: 'timeoutMs', type: 'int32', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    {
      name: 'responses', type: [
        { name: 'name', type: 'string', versions: '0+', nullableVersions: '6+' },
        { name: 'topicId', type: 'uuid', versions: '6+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
      ], array: true, versions: '0+',
    },
  ],
});
