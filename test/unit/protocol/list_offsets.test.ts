// Golden wire bytes for ListOffsets (key 2): v1 (first), v6 (first flexible), v7 (max).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { ListOffsetsApi } from '../../../src/protocol/apis/list_offsets.js';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../../src/protocol/apis/list_offsets.js';

test('ListOffsets v1 request: no isolation level, no leader epoch', () => {
  const req: ListOffsetsRequest = {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: 'orders', partitions: [
      { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2 },
      { partitionIndex: 3, currentLeaderEpoch: -1, timestamp: 1700000000000 },
    ] }],
  };
  const bytes = new Bytes()
    .i32(-1)
    .arr(1).str('orders')
    .arr(2)
    .i32(0).i64(-2)
    .i32(3).i64(1700000000000)
    .build();
  goldenRequest(ListOffsetsApi, 1, req, bytes);
});

test('ListOffsets v6 request: compact, leader epoch, tag buffers', () => {
  const req: ListOffsetsRequest = {
    replicaId: -1,
    isolationLevel: 1,
    topics: [{ name: 't', partitions: [{ partitionIndex: 2, currentLeaderEpoch: 5, timestamp: -1 }] }],
  };
  const bytes = new Bytes()
    .i32(-1).i8(1)
    .carr(1).cstr('t')
    .carr(1).i32(2).i32(5).i64(-1).tags0()
    .tags0()
    .tags0()
    .build();
  goldenRequest(ListOffsetsApi, 6, req, bytes);
});

test('ListOffsets v7 request: max-timestamp lookup, two topics', () => {
  const req: ListOffsetsRequest = {
    replicaId: -1,
    isolationLevel: 0,
    topics: [
      { name: 'a', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -3 }] },
      { name: 'bb', partitions: [] },
    ],
  };
  const bytes = new Bytes()
    .i32(-1).i8(0)
    .carr(2)
    .cstr('a').carr(1).i32(0).i32(-1).i64(-3).tags0().tags0()
    .cstr('bb').carr(0).tags0()
    .tags0()
    .build();
  goldenRequest(ListOffsetsApi, 7, req, bytes);
});

test('ListOffsets v1 response: no throttle time, no leader epoch', () => {
  const res: ListOffsetsResponse = {
    throttleTimeMs: 0,
    topics: [{ name: 'orders', partitions: [
      { partitionIndex: 0, errorCode: 0, timestamp: -1, offset: 42, leaderEpoch: -1 },
      { partitionIndex: 1, errorCode: 3, timestamp: -1, offset: -1, leaderEpoch: -1 },
    ] }],
  };
  const bytes = new Bytes()
    .arr(1).str('orders')
    .arr(2)
    .i32(0).i16(0).i64(-1).i64(42)
    .i32(1).i16(3).i64(-1).i64(-1)
    .build();
  goldenResponse(ListOffsetsApi, 1, res, bytes);
});

test('ListOffsets v6 response: compact with leader epoch', () => {
  const res: ListOffsetsResponse = {
    throttleTimeMs: 7,
    topics: [{ name: 't', partitions: [
      { partitionIndex: 2, errorCode: 0, timestamp: 1700000000123, offset: 9007199254740991, leaderEpoch: 4 },
    ] }],
  };
  const bytes = new Bytes()
    .i32(7)
    .carr(1).cstr('t')
    .carr(1).i32(2).i16(0).i64(1700000000123).i64(9007199254740991).i32(4).tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(ListOffsetsApi, 6, res, bytes);
});

test('ListOffsets v7 response', () => {
  const res: ListOffsetsResponse = {
    throttleTimeMs: 0,
    topics: [{ name: 'a', partitions: [
      { partitionIndex: 0, errorCode: 0, timestamp: 1700000000999, offset: 17, leaderEpoch: 0 },
    ] }],
  };
  const bytes = new Bytes()
    .i32(0)
    .carr(1).cstr('a')
    .carr(1).i32(0).i16(0).i64(1700000000999).i64(17).i32(0).tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(ListOffsetsApi, 7, res, bytes);
});
