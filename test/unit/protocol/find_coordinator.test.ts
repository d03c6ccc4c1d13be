// Golden wire bytes for FindCoordinator (key 10): v0 (librdkafka's feature probe), v3 (first
// flexible) and v4 (batched keys).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { FindCoordinatorApi } from '../../../src/protocol/apis/find_coordinator.js';
import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../../../src/protocol/apis/find_coordinator.js';

const single = (key: string, keyType = 0): FindCoordinatorRequest => ({ key, keyType, coordinatorKeys: [] });
const answer = (nodeId: number, host: string, port: number): FindCoordinatorResponse => ({
  throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId, host, port, coordinators: [],
});

test('FindCoordinator v0 request and response', () => {
  goldenRequest(FindCoordinatorApi, 0, single('grp'), new Bytes().str('grp').build());
  goldenResponse(FindCoordinatorApi, 0, answer(0, '127.0.0.1', 9092), new Bytes().i16(0).i32(0).str('127.0.0.1').i32(9092).build());
});

test('FindCoordinator v3 request and response are flexible', () => {
  goldenRequest(FindCoordinatorApi, 3, single('txn-1', 1), new Bytes().cstr('txn-1').i8(1).tags0().build());
  goldenResponse(
    FindCoordinatorApi, 3, answer(7, 'h', 1),
    new Bytes().i32(0).i16(0).cstr(null).i32(7).cstr('h').i32(1).tags0().build(),
  );
});

test('FindCoordinator v4 batches keys', () => {
  goldenRequest(FindCoordinatorApi, 4, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] }, new Bytes().i8(0).carr(2).cstr('a').cstr('b').tags0().build());
  const res: FindCoordinatorResponse = {
    throttleTimeMs: 5, errorCode: 0, errorMessage: null, nodeId: 0, host: '', port: 0,
    coordinators: [
      { key: 'a', nodeId: 1, host: 'h', port: 2, errorCode: 0, errorMessage: null },
      { key: '', nodeId: -1, host: '', port: -1, errorCode: 42, errorMessage: 'bad' },
    ],
  };
  goldenResponse(
    FindCoordinatorApi, 4, res,
    new Bytes().i32(5).carr(2)
      .cstr('a').i32(1).cstr('h').i32(2).i16(0).cstr(null).tags0()
      .cstr('').i32(-1).cstr('').i32(-1).i16(42).cstr('bad').tags0()
      .tags0().build(),
  );
});
