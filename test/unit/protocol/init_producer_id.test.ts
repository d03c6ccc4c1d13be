// Golden wire bytes for InitProducerId (key 22): v0 (first), v2 (first flexible), v4 (max).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { InitProducerIdApi } from '../../../src/protocol/apis/init_producer_id.js';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../../src/protocol/apis/init_producer_id.js';

test('InitProducerId v0 request: idempotent producer (null transactional id)', () => {
  const req: InitProducerIdRequest = {
    transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1,
  };
  goldenRequest(InitProducerIdApi, 0, req, new Bytes().str(null).i32(60000).build());
});

test('InitProducerId v2 request: compact transactional id', () => {
  const req: InitProducerIdRequest = {
    transactionalId: 'tx-1', transactionTimeoutMs: 30000, producerId: -1, producerEpoch: -1,
  };
  goldenRequest(InitProducerIdApi, 2, req, new Bytes().cstr('tx-1').i32(30000).tags0().build());
});

test('InitProducerId v4 request: resume with current id and epoch', () => {
  const req: InitProducerIdRequest = {
    transactionalId: 'tx-1', transactionTimeoutMs: 30000, producerId: 4096, producerEpoch: 7,
  };
  const bytes = new Bytes().cstr('tx-1').i32(30000).i64(4096).i16(7).tags0().build();
  goldenRequest(InitProducerIdApi, 4, req, bytes);
});

test('InitProducerId v0 response', () => {
  const res: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 0, producerId: 1000, producerEpoch: 0 };
  goldenResponse(InitProducerIdApi, 0, res, new Bytes().i32(0).i16(0).i64(1000).i16(0).build());
});

test('InitProducerId v2 response: compact (tag buffer only)', () => {
  const res: InitProducerIdResponse = { throttleTimeMs: 5, errorCode: 0, producerId: 2 ** 40, producerEpoch: 3 };
  goldenResponse(InitProducerIdApi, 2, res, new Bytes().i32(5).i16(0).i64(2 ** 40).i16(3).tags0().build());
});

test('InitProducerId v4 response: producer fenced', () => {
  const res: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 90, producerId: -1, producerEpoch: -1 };
  goldenResponse(InitProducerIdApi, 4, res, new Bytes().i32(0).i16(90).i64(-1).i16(-1).tags0().build());
});
