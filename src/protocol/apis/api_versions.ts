// ApiVersions (key 18) wire schema, v0-3. Main thread. Request v0-2 has no body; v3 is the first
// flexible version and names the client software. The response body of v3 is flexible but its
// header stays v0 (header.ts handles that by api key). Feature fields are tagged and omitted
// unless set.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface ApiVersionsRequest {
  clientSoftwareName: string;
  clientSoftwareVersion: string;
}

export interface ApiVersionsResponseKey {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export interface ApiVersionsResponseSupportedFeature {
  name: string;
  minVersion: number;
  maxVersion: number;
}

export interface ApiVersionsResponseFinalizedFeature {
  name: string;
  maxVersionLevel: number;
  minVersionLevel: number;
}

export interface ApiVersionsResponse {
  errorCode: number;
  apiKeys: ApiVersionsResponseKey[];
  throttleTimeMs: number;
  supportedFeatures: ApiVersionsResponseSupportedFeature[];
  /** -1 = unknown. */
  finalizedFeaturesEpoch: number;
  finalizedFeatures: ApiVersionsResponseFinalizedFeature[];
  zkMigrationReady: boolean;
}

const apiKeyFields: readonly Field[] = [
  { name: 'apiKey', type: 'int16', versions: '0+' },
  { name: 'minVersion', type: 'int16', versions: '0+' },
  { name: 'maxVersion', type: 'int16', versions: '0+' },
];

const supportedFeatureFields: readonly Field[] = [
  { name: 'name', type: 'string', versions: '3+' },
  { name: 'minVersion', type: 'int16', versions: '3+' },
  { name: 'maxVersion', type: 'int16', versions: '3+' },
];

const finalizedFeatureFields: readonly Field[] = [
  { name: 'name', type: 'string', versions: '3+' },
  { name: 'maxVersionLevel', type: 'int16', versions: '3+' },
  { name: 'minVersionLevel', type: 'int16', versions: '3+' },
];

export const ApiVersionsApi = defineApi<ApiVersionsRequest, ApiVersionsResponse>({
  apiKey: 18,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '3+',
  request: [
    { name: 'clientSoftwareName', type: 'string', versions: '3+' },
    { name: 'clientSoftwareVersion', type: 'string', versions: '3+' },
  ],
  response: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'apiKeys', type: apiKeyFields, array: true, versions: '0+' },
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'supportedFeatures', type: supportedFeatureFields, array: true, versions: '3+', taggedVersions: '3+', tag: 0 },
    { name: 'finalizedFeaturesEpoch', type: 'int64', versions: '3+', taggedVersions: '3+', tag: 1, default: -1 },
    { name: 'finalizedFeatures', type: finalizedFeatureFields, array: true, versions: '3+', taggedVersions: '3+', tag: 2 },
    { name: 'zkMigrationReady', type: 'bool', versions: '3+', taggedVersions: '3+', tag: 3, default: false },
  ],
});
