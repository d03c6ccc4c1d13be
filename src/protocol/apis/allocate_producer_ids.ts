// AllocateProducerIds (key 67) wire schema, v0, flexible (KIP-730): a broker asks the active
// controller for a block of producer ids, which the controller records so ids survive failover.

import { defineApi } from '../schema.js';

export interface AllocateProducerIdsRequest {
  brokerId: number;
  brokerEpoch: number;
}

export interface AllocateProducerIdsResponse {
  throttleTimeMs: number;
  errorCode: number;
  /** First id of the block, inclusive. */
  producerIdStart: number;
  producerIdLen: number;
}

export const AllocateProducerIdsApi = defineApi<AllocateProducerIdsRequest, AllocateProducerIdsResponse>({
  apiKey: 67,
  name: 'AllocateProducerIds',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'brokerId', type: 'int32', versions: '0+' },
    { name: 'brokerEpoch', type: 'int64', versions: '0+', default: -1 },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'producerIdStart', type: 'int64', versions: '0+' },
    { name: 'producerIdLen', type: 'int32', versions: '0+' },
  ],
});
