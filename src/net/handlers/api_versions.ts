// ApiVersions: advertises exactly the APIs and version ranges a listener fully serves (the client
// listener's or the controller listener's list). A request above our max is answered (by the
// connection layer) with a v0-shaped error body.
import { handler, type Wire } from '../handler.js';
import { ApiVersionsApi, type ApiVersionsResponse } from '../../protocol/apis/api_versions.js';
import { advertisedApis } from '../../protocol/apis/index.js';
import type { AnyApi } from '../../protocol/schema.js';

type ApiKeyRange = ApiVersionsResponse['apiKeys'][number];

/** The ranges ApiVersions lists for a listener serving exactly `apis`. */
export function apiKeysOf(apis: readonly AnyApi[]): ApiKeyRange[] {
  return apis.map((a) => ({ apiKey: a.key, minVersion: a.minVersion, maxVersion: a.maxVersion })).sort((x, y) => x.apiKey - y.apiKey);
}

/** The client listener's list. */
export const BROKER_API_KEYS = apiKeysOf(advertisedApis);

export interface ApiVersionsDeps {
  /** What this listener serves (BROKER_API_KEYS, or the controller listener's own list). */
  readonly apiKeys: readonly ApiKeyRange[];
}

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
  handle: (_ctx, _req, deps: ApiVersionsDeps): Wire<ApiVersionsResponse> => ({ errorCode: 0, apiKeys: [...deps.apiKeys], throttleTimeMs: 0 }),
});
