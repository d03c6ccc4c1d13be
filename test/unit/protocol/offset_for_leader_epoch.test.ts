// Golden wire bytes for OffsetForLeaderEpoch (key 23): v2 (first served: current leader epoch, no
// replica id), v3 (replica id) and v4 (flexible). Every version also round-trips in codec_properties.

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { OffsetForLeaderEpochApi } from '../../../src/protocol/apis/offset_for_leader_epoch.js';
import type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from '../../../src/protocol/apis/offset_for_leader_epoch.js';

test('OffsetForLeaderEpoch v2 request: no replica id, current leader epoch per partition', () => {
  const req: OffsetForLeaderEpochRequest = {
    replicaId: -2,
    topics: [{ topic: 'orders', partitions: [
      { partition: 0, currentLeaderEpoch: 7, leaderEpoch: 5 },
      { partition: 4, currentLeaderEpoch: -1, leaderEpoch: 0 },
    ] }],
  };
  const bytes = new Bytes()
    .arr(1).str('orders')
    .arr(2)
    .i32(0).i32(7).i32(5)
    .i32(4).i32(-1).i32(0)
    .build();
  goldenRequest(OffsetForLeaderEpochApi, 2, req, bytes);
});

test('OffsetForLeaderEpoch v3 request: the consumer replica id leads', () => {
  const req: OffsetForLeaderEpochRequest = {
    replicaId: -1,
    topics: [{ topic: 't', partitions: [{ partition: 1, currentLeaderEpoch: 2, leaderEpoch: 2 }] }],
  };
  const bytes = new Bytes().i32(-1).arr(1).str('t').arr(1).i32(1).i32(2).i32(2).build();
  goldenRequest(OffsetForLeaderEpochApi, 3, req, bytes);
});

test('OffsetForLeaderEpoch v4 request: compact, tag buffers', () => {
  const req: OffsetForLeaderEpochRequest = {
    replicaId: 3,
    topics: [
      { topic: 'a', partitions: [{ partition: 0, currentLeaderEpoch: 9, leaderEpoch: 8 }] },
      { topic: 'bb', partitions: [] },
    ],
  };
  const bytes = new Bytes()
    .i32(3)
    .carr(2)
    .cstr('a').carr(1).i32(0).i32(9).i32(8).tags0().tags0()
    .cstr('bb').carr(0).tags0()
    .tags0()
    .build();
  goldenRequest(OffsetForLeaderEpochApi, 4, req, bytes);
});

test('OffsetForLeaderEpoch v2 response: throttle time, error before partition, epoch and end offset', () => {
  const res: OffsetForLeaderEpochResponse = {
    throttleTimeMs: 0,
    topics: [{ topic: 'orders', partitions: [
      { errorCode: 0, partition: 0, leaderEpoch: 5, endOffset: 1234 },
      { errorCode: 74, partition: 4, leaderEpoch: -1, endOffset: -1 },
    ] }],
  };
  const bytes = new Bytes()
    .i32(0)
    .arr(1).str('orders')
    .arr(2)
    .i16(0).i32(0).i32(5).i64(1234)
    .i16(74).i32(4).i32(-1).i64(-1)
    .build();
  goldenResponse(OffsetForLeaderEpochApi, 2, res, bytes);
});

test('OffsetForLeaderEpoch v4 response: compact', () => {
  const res: OffsetForLeaderEpochResponse = {
    throttleTimeMs: 3,
    topics: [{ topic: 't', partitions: [{ errorCode: 0, partition: 2, leaderEpoch: 0, endOffset: 9007199254740991 }] }],
  };
  const bytes = new Bytes()
    .i32(3)
    .carr(1).cstr('t')
    .carr(1).i16(0).i32(2).i32(0).i64(9007199254740991).tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(OffsetForLeaderEpochApi, 4, res, bytes);
});
