// Golden wire bytes for CreatePartitions (key 37): v0 (first), v2 (first flexible), v3 (max).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { CreatePartitionsApi } from '../../../src/protocol/apis/create_partitions.js';
import type {
  CreatePartitionsRequest, CreatePartitionsResponse,
} from '../../../src/protocol/apis/create_partitions.js';

test('CreatePartitions v0 request: explicit assignments and a null one', () => {
  const req: CreatePartitionsRequest = {
    topics: [
      { name: 'orders', count: 4, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [2, 3] }] },
      { name: 'b', count: 2, assignments: null },
    ],
    timeoutMs: 10000,
    validateOnly: false,
  };
  const bytes = new Bytes()
    .arr(2)
    .str('orders').i32(4).arr(2).arr(2).i32(1).i32(2).arr(2).i32(2).i32(3)
    .str('b').i32(2).arr(null)
    .i32(10000).bool(false)
    .build();
  goldenRequest(CreatePartitionsApi, 0, req, bytes);
});

test('CreatePartitions v2 request: compact with struct tag buffers', () => {
  const req: CreatePartitionsRequest = {
    topics: [{ name: 'orders', count: 3, assignments: [{ brokerIds: [0] }] }],
    timeoutMs: 30000,
    validateOnly: true,
  };
  const bytes = new Bytes()
    .carr(1)
    .cstr('orders').i32(3).carr(1).carr(1).i32(0).tags0().tags0()
    .i32(30000).bool(true)
    .tags0()
    .build();
  goldenRequest(CreatePartitionsApi, 2, req, bytes);
});

test('CreatePartitions v3 request: null assignments', () => {
  const req: CreatePartitionsRequest = {
    topics: [{ name: 't', count: 8, assignments: null }],
    timeoutMs: 5000,
    validateOnly: false,
  };
  const bytes = new Bytes()
    .carr(1).cstr('t').i32(8).carr(null).tags0()
    .i32(5000).bool(false)
    .tags0()
    .build();
  goldenRequest(CreatePartitionsApi, 3, req, bytes);
});

test('CreatePartitions v0 response', () => {
  const res: CreatePartitionsResponse = {
    throttleTimeMs: 0,
    results: [
      { name: 'orders', errorCode: 0, errorMessage: null },
      { name: 'b', errorCode: 37, errorMessage: 'Topic currently has 4 partitions, which is higher than the requested 2.' },
    ],
  };
  const bytes = new Bytes()
    .i32(0)
    .arr(2)
    .str('orders').i16(0).str(null)
    .str('b').i16(37).str('Topic currently has 4 partitions, which is higher than the requested 2.')
    .build();
  goldenResponse(CreatePartitionsApi, 0, res, bytes);
});

test('CreatePartitions v2 response: compact', () => {
  const res: CreatePartitionsResponse = {
    throttleTimeMs: 3,
    results: [{ name: 'orders', errorCode: 0, errorMessage: null }],
  };
  const bytes = new Bytes().i32(3).carr(1).cstr('orders').i16(0).cstr(null).tags0().tags0().build();
  goldenResponse(CreatePartitionsApi, 2, res, bytes);
});

test('CreatePartitions v3 response: throttling quota error', () => {
  const res: CreatePartitionsResponse = {
    throttleTimeMs: 250,
    results: [{ name: 't', errorCode: 89, errorMessage: 'throttled' }],
  };
  const bytes = new Bytes().i32(250).carr(1).cstr('t').i16(89).cstr('throttled').tags0().tags0().build();
  goldenResponse(CreatePartitionsApi, 3, res, bytes);
});
