// ApiVersions: advertises exactly the APIs and version ranges this broker fully serves. A
// request above our max is answered (by the connection layer) with a v0-shaped error body.
import { handler, type Wire } from '../handler.js';
import { ApiVersionsApi, type ApiVersionsResponse } from '../../protocol/apis/api_versions.js';
import { advertisedApis } from '../../protocol/apis/index.js';

const apiKeys = advertisedApis
  .map((a) => ({ apiKey: a.key, minVersion: a.minVersion, maxVersion: a.maxVersion }))
  .sort((x, y) => x.apiKey - y.apiKey);

/** The answer to ApiVersions above our max: Kafka lists only its own ApiVersions range. */
export function unsupportedApiVersionsResponse(): Wire<ApiVersionsResponse> {
  return {
    errorCode: 35,
    apiKeys: [{ apiKey: ApiVersionsApi.key, minVersion: ApiVersionsApi.minVersion, maxVersion: ApiVersionsApi.maxVersion }],
    throttleTimeMs: 0,
  };
}

export const apiVersionsHandler = handler({
  api: ApiVersionsApi,
  handle: (): Wire<ApiVersionsResponse> => ({ errorCode: 0, apiKeys, throttleTimeMs: 0 }),
});
