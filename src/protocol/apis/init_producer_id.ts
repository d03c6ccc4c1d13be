// InitProducerId (key 22) wire schema, v0-4 (flexible from v2; v3 lets a producer present its
// current id/epoch to resume after an epoch error). v0 must stay advertised: librdkafka 2.0.2
// enables idempotence only if the range overlaps v0.
// Runs on the main thread (request decode, response encode).

import { defineApi } from '../schema.js';

export interface InitProducerIdRequest {
  /** Null for plain idempotence. */
  transactionalId: string | null;
  transactionTimeoutMs: number;
  producerId: number;
  producerEpoch: number;
}

export interface InitProducerIdResponse {
  throttleTimeMs: number;
  errorCode: number;
  producerId: number;
  producerEpoch: number;
}

export const InitProducerIdApi = defineApi<InitProducerIdRequest, InitProducerIdResponse>({
  apiKey: 22,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '2+',
  request: [
    { name: 'transactionalId', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'transactionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '3+', default: -1 },
    { name: 'producerEpoch', type: 'int16', versions: '3+', default: -1 },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '0+', default: -1 },
    { name: 'producerEpoch', type: 'int16', versions: '0+' },
  ],
});
