// Golden wire bytes for the group offset APIs: OffsetCommit (key 8) v0, v1 (commit timestamp),
// v2, v7, v8 (first flexible); OffsetFetch (9) v0, v1, v6 (first flexible), v8 (batched groups),
// v9 (member epoch); OffsetDelete (47) v0.

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { OffsetCommitApi } from '../../../src/protocol/apis/offset_commit.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../../src/protocol/apis/offset_fetch.js';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../../../src/protocol/apis/offset_fetch.js';
import { OffsetDeleteApi } from '../../../src/protocol/apis/offset_delete.js';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../../src/protocol/apis/offset_delete.js';

const commitResponse: OffsetCommitResponse = {
  throttleTimeMs: 0,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 22 }] }],
};

test('OffsetCommit v0: group and offsets only; v1: generation, member and a commit timestamp per partition', () => {
  const v0: OffsetCommitRequest = {
    groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: 'md' }] }],
  };
  goldenRequest(OffsetCommitApi, 0, v0, new Bytes()
    .str('g').arr(1).str('t').arr(1).i32(0).i64(42).str('md')
    .build());
  const v1: OffsetCommitRequest = {
    ...v0, generationIdOrMemberEpoch: 5, memberId: 'm',
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: -1, commitTimestamp: 1_700_000_000_000, committedMetadata: null }] }],
  };
  goldenRequest(OffsetCommitApi, 1, v1, new Bytes()
    .str('g').i32(5).str('m').arr(1).str('t').arr(1).i32(0).i64(42).i64(1_700_000_000_000).str(null)
    .build());
  for (const version of [0, 1]) {
    goldenResponse(OffsetCommitApi, version, commitResponse, new Bytes()
      .arr(1).str('t').arr(2).i32(0).i16(0).i32(1).i16(22)
      .build());
  }
});

test('OffsetCommit v2: retention time, no leader epoch', () => {
  const req: OffsetCommitRequest = {
    groupId: 'g', generationIdOrMemberEpoch: 5, memberId: 'm', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 't', partitions: [
      { partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: '' },
      { partitionIndex: 1, committedOffset: 2 ** 40, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null },
    ] }],
  };
  goldenRequest(OffsetCommitApi, 2, req, new Bytes()
    .str('g').i32(5).str('m').i64(-1)
    .arr(1).str('t').arr(2)
    .i32(0).i64(42).str('')
    .i32(1).i64(2 ** 40).str(null)
    .build());
  goldenResponse(OffsetCommitApi, 2, commitResponse, new Bytes()
    .arr(1).str('t').arr(2).i32(0).i16(0).i32(1).i16(22)
    .build());
});

test('OffsetCommit v7: leader epoch and group instance id, no retention', () => {
  const req: OffsetCommitRequest = {
    groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: 'inst', retentionTimeMs: -1,
    topics: [{ name: 't', partitions: [{ partitionIndex: 3, committedOffset: 100, committedLeaderEpoch: 2, commitTimestamp: -1, committedMetadata: 'md' }] }],
  };
  goldenRequest(OffsetCommitApi, 7, req, new Bytes()
    .str('g').i32(-1).str('').str('inst')
    .arr(1).str('t').arr(1).i32(3).i64(100).i32(2).str('md')
    .build());
  goldenResponse(OffsetCommitApi, 7, { ...commitResponse, throttleTimeMs: 9 }, new Bytes()
    .i32(9).arr(1).str('t').arr(2).i32(0).i16(0).i32(1).i16(22)
    .build());
});

test('OffsetCommit v8 request and response are flexible', () => {
  const req: OffsetCommitRequest = {
    groupId: 'g', generationIdOrMemberEpoch: 1, memberId: 'm', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 7, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
  };
  goldenRequest(OffsetCommitApi, 8, req, new Bytes()
    .cstr('g').i32(1).cstr('m').cstr(null)
    .carr(1).cstr('t').carr(1).i32(0).i64(7).i32(-1).cstr(null).tags0().tags0()
    .tags0().build());
  goldenResponse(OffsetCommitApi, 8, commitResponse, new Bytes()
    .i32(0).carr(1).cstr('t').carr(2).i32(0).i16(0).tags0().i32(1).i16(22).tags0().tags0()
    .tags0().build());
});

test('OffsetFetch v0 and v1: one group, explicit topics', () => {
  const req: OffsetFetchRequest = {
    groupId: 'g', topics: [{ name: 't', partitionIndexes: [0, 1] }], groups: [], requireStable: false,
  };
  for (const version of [0, 1]) {
    goldenRequest(OffsetFetchApi, version, req, new Bytes()
      .str('g').arr(1).str('t').arr(2).i32(0).i32(1)
      .build());
  }
  const res: OffsetFetchResponse = {
    throttleTimeMs: 0, errorCode: 0, groups: [],
    topics: [{ name: 't', partitions: [
      { partitionIndex: 0, committedOffset: 10, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
      { partitionIndex: 1, committedOffset: -1, committedLeaderEpoch: -1, metadata: null, errorCode: 0 },
    ] }],
  };
  for (const version of [0, 1]) {
    goldenResponse(OffsetFetchApi, version, res, new Bytes()
      .arr(1).str('t').arr(2)
      .i32(0).i64(10).str('').i16(0)
      .i32(1).i64(-1).str(null).i16(0)
      .build());
  }
});

test('OffsetFetch v6: flexible, null topics = all of the group', () => {
  const req: OffsetFetchRequest = { groupId: 'g', topics: null, groups: [], requireStable: false };
  goldenRequest(OffsetFetchApi, 6, req, new Bytes().cstr('g').carr(null).tags0().build());
  const res: OffsetFetchResponse = {
    throttleTimeMs: 0, errorCode: 0, groups: [],
    topics: [{ name: 't', partitions: [{ partitionIndex: 2, committedOffset: 5, committedLeaderEpoch: 4, metadata: 'x', errorCode: 0 }] }],
  };
  goldenResponse(OffsetFetchApi, 6, res, new Bytes()
    .i32(0)
    .carr(1).cstr('t').carr(1).i32(2).i64(5).i32(4).cstr('x').i16(0).tags0().tags0()
    .i16(0)
    .tags0().build());
});

test('OffsetFetch v8: batched groups', () => {
  const req: OffsetFetchRequest = {
    groupId: '', topics: null, requireStable: true,
    groups: [
      { groupId: 'a', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [0] }] },
      { groupId: 'b', memberId: null, memberEpoch: -1, topics: null },
    ],
  };
  goldenRequest(OffsetFetchApi, 8, req, new Bytes()
    .carr(2)
    .cstr('a').carr(1).cstr('t').carr(1).i32(0).tags0().tags0()
    .cstr('b').carr(null).tags0()
    .bool(true)
    .tags0().build());
  const res: OffsetFetchResponse = {
    throttleTimeMs: 0, topics: [], errorCode: 0,
    groups: [
      { groupId: 'a', errorCode: 0, topics: [{ name: 't', partitions: [
        { partitionIndex: 0, committedOffset: 3, committedLeaderEpoch: -1, metadata: null, errorCode: 0 },
      ] }] },
      { groupId: 'b', errorCode: 69, topics: [] },
    ],
  };
  goldenResponse(OffsetFetchApi, 8, res, new Bytes()
    .i32(0)
    .carr(2)
    .cstr('a').carr(1).cstr('t').carr(1).i32(0).i64(3).i32(-1).cstr(null).i16(0).tags0().tags0().i16(0).tags0()
    .cstr('b').carr(0).i16(69).tags0()
    .tags0().build());
});

test('OffsetFetch v9 request: member id and epoch per group', () => {
  const req: OffsetFetchRequest = {
    groupId: '', topics: null, requireStable: false,
    groups: [{ groupId: 'a', memberId: 'm', memberEpoch: 12, topics: null }],
  };
  goldenRequest(OffsetFetchApi, 9, req, new Bytes()
    .carr(1).cstr('a').cstr('m').i32(12).carr(null).tags0()
    .bool(false)
    .tags0().build());
});

test('OffsetDelete v0 request and response', () => {
  const req: OffsetDeleteRequest = {
    groupId: 'g', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }, { partitionIndex: 2 }] }],
  };
  goldenRequest(OffsetDeleteApi, 0, req, new Bytes()
    .str('g').arr(1).str('t').arr(2).i32(0).i32(2)
    .build());
  const res: OffsetDeleteResponse = {
    errorCode: 0, throttleTimeMs: 0,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 2, errorCode: 86 }] }],
  };
  goldenResponse(OffsetDeleteApi, 0, res, new Bytes()
    .i16(0).i32(0).arr(1).str('t').arr(2).i32(0).i16(0).i32(2).i16(86)
    .build());
});
