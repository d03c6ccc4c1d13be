// DescribeConfigs (key 32) wire schema, v0-4 (flexible from v4; v1 adds config sources and
// synonyms, v3 adds config types and documentation). Runs on the main thread.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface DescribeConfigsRequestResource {
  /** 2 = topic, 4 = broker, 8 = broker logger. */
  resourceType: number;
  resourceName: string;
  /** Null = every key. */
  configurationKeys: string[] | null;
}

export interface DescribeConfigsRequest {
  resources: DescribeConfigsRequestResource[];
  includeSynonyms: boolean;
  includeDocumentation: boolean;
}

export interface DescribeConfigsResponseSynonym {
  name: string;
  value: string | null;
  source: number;
}

export interface DescribeConfigsResponseConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  /** v0 only; later versions express it through configSource. */
  isDefault: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: DescribeConfigsResponseSynonym[];
  configType: number;
  documentation: string | null;
}

export interface DescribeConfigsResponseResult {
  errorCode: number;
  errorMessage: string | null;
  resourceType: number;
  resourceName: string;
  configs: DescribeConfigsResponseConfig[];
}

export interface DescribeConfigsResponse {
  throttleTimeMs: number;
  results: DescribeConfigsResponseResult[];
}

const responseConfig: readonly Field[] = [
  { name: 'name', type: 'string', versions: '0+' },
  { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'readOnly', type: 'bool', versions: '0+' },
  { name: 'isDefault', type: 'bool', versions: '0' },
  { name: 'configSource', type: 'int8', versions: '1+', default: -1 },
  { name: 'isSensitive', type: 'bool', versions: '0+' },
  {
    name: 'synonyms', type: [
      { name: 'name', type: 'string', versions: '1+' },
      { name: 'value', type: 'string', versions: '1+', nullableVersions: '0+' },
      { name: 'source', type: 'int8', versions: '1+' },
    ], array: true, versions: '1+',
  },
  { name: 'configType', type: 'int8', versions: '3+', default: 0 },
  { name: 'documentation', type: 'string', versions: '3+', nullableVersions: '0+' },
];

export const DescribeConfigsApi = defineApi<DescribeConfigsRequest, DescribeConfigsResponse>({
  apiKey: 32,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '4+',
  request: [
    {
      name: 'resources', type: [
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        { name: 'configurationKeys', type: 'string', array: true, versions: '0+', nullableVersions: '0+' },
      ], array: true, versions: '0+',
    },
    { name: 'includeSynonyms', type: 'bool', versions: '1+', default: false },
    { name: 'includeDocumentation', type: 'bool', versions: '3+', default: false },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'results', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        { name: 'configs', type: responseConfig, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
