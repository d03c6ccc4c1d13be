// AlterConfigs (key 33, v0-2, flexible from v2) and IncrementalAlterConfigs (key 44, v0-1,
// flexible from v1) wire schemas. AlterConfigs replaces a resource's dynamic configs with the
// listed set; IncrementalAlterConfigs applies one operation per key (SET 0, DELETE 1, and for
// list configs APPEND 2, SUBTRACT 3). Both answer one error per resource. Main thread.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

/** IncrementalAlterConfigs' per-key operations (Kafka's AlterConfigOp.OpType ids). */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export interface AlterConfigsRequestConfig {
  name: string;
  value: string | null;
}

export interface AlterConfigsRequestResource {
  /** 2 = topic, 4 = broker. */
  resourceType: number;
  resourceName: string;
  configs: AlterConfigsRequestConfig[];
}

export interface AlterConfigsRequest {
  resources: AlterConfigsRequestResource[];
  validateOnly: boolean;
}

export interface IncrementalAlterConfigsRequestConfig {
  name: string;
  configOperation: number;
  value: string | null;
}

export interface IncrementalAlterConfigsRequestResource {
  resourceType: number;
  resourceName: string;
  configs: IncrementalAlterConfigsRequestConfig[];
}

export interface IncrementalAlterConfigsRequest {
  resources: IncrementalAlterConfigsRequestResource[];
  validateOnly: boolean;
}

export interface AlterConfigsResourceResponse {
  errorCode: number;
  errorMessage: string | null;
  resourceType: number;
  resourceName: string;
}

export interface AlterConfigsResponse {
  throttleTimeMs: number;
  responses: AlterConfigsResourceResponse[];
}

export interface IncrementalAlterConfigsResponse {
  throttleTimeMs: number;
  responses: AlterConfigsResourceResponse[];
}

const resourceResponse: readonly Field[] = [
  { name: 'errorCode', type: 'int16', versions: '0+' },
  { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'resourceType', type: 'int8', versions: '0+' },
  { name: 'resourceName', type: 'string', versions: '0+' },
];

export const AlterConfigsApi = defineApi<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: 33,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '2+',
  request: [
    {
      name: 'resources', type: [
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        {
          name: 'configs', type: [
            { name: 'name', type: 'string', versions: '0+' },
            { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'responses', type: resourceResponse, array: true, versions: '0+' },
  ],
});

export const IncrementalAlterConfigsApi = defineApi<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '1+',
  request: [
    {
      name: 'resources', type: [
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        {
          name: 'configs', type: [
            { name: 'name', type: 'string', versions: '0+' },
            { name: 'configOperation', type: 'int8', versions: '0+' },
            { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'responses', type: resourceResponse, array: true, versions: '0+' },
  ],
});
