// UnregisterBroker (key 64) wire schema, v0, flexible (KIP-500's decommissioning step): an admin
// asks the active controller to forget a broker's registration, once nothing is placed on it.

import { defineApi } from '../schema.js';

export interface UnregisterBrokerRequest {
  brokerId: number;
}

export interface UnregisterBrokerResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
}

export const UnregisterBrokerApi = defineApi<UnregisterBrokerRequest, UnregisterBrokerResponse>({
  apiKey: 64,
  name: 'UnregisterBroker',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'brokerId', type: 'int32', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
  ],
});
