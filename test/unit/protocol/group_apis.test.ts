// Golden wire bytes for the classic group membership APIs: JoinGroup (key 11) v0, v5, v6 (first
// flexible), v9; SyncGroup (14) v0, v5; Heartbeat (12) v0, v4; LeaveGroup (13) v0, v3, v5.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { ProtocolError, Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { JoinGroupApi } from '../../../src/protocol/apis/join_group.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../../../src/protocol/apis/join_group.js';
import { SyncGroupApi } from '../../../src/protocol/apis/sync_group.js';
import type { SyncGroupRequest, SyncGroupResponse } from '../../../src/protocol/apis/sync_group.js';
import { HeartbeatApi } from '../../../src/protocol/apis/heartbeat.js';
import { LeaveGroupApi } from '../../../src/protocol/apis/leave_group.js';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../../src/protocol/apis/leave_group.js';

/** A v0 consumer subscription to topic "t" with empty user data (opaque to these APIs). */
const meta = Buffer.from('00000000000100017400000000', 'hex');
const meta2 = Buffer.from('0001', 'hex');

test('JoinGroup v0 request: no rebalance timeout, decoded as -1', () => {
  const req: JoinGroupRequest = {
    groupId: 'g', sessionTimeoutMs: 30000, rebalanceTimeoutMs: -1, memberId: '', groupInstanceId: null,
    protocolType: 'consumer', protocols: [{ name: 'range', metadata: meta }], reason: null,
  };
  const bytes = new Bytes()
    .str('g').i32(30000).str('').str('consumer')
    .arr(1).str('range').bytes(meta)
    .build();
  goldenRequest(JoinGroupApi, 0, req, bytes);
});

test('JoinGroup v0 response: leader sees the members', () => {
  const res: JoinGroupResponse = {
    throttleTimeMs: 0, errorCode: 0, generationId: 1, protocolType: null, protocolName: 'range',
    leader: 'm1', skipAssignment: false, memberId: 'm1',
    members: [{ memberId: 'm1', groupInstanceId: null, metadata: meta }],
  };
  const bytes = new Bytes()
    .i16(0).i32(1).str('range').str('m1').str('m1')
    .arr(1).str('m1').bytes(meta)
    .build();
  goldenResponse(JoinGroupApi, 0, res, bytes);
});

test('JoinGroup v5 request: rebalance timeout and group instance id', () => {
  const req: JoinGroupRequest = {
    groupId: 'grp', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 60000, memberId: 'm-1',
    groupInstanceId: 'inst-1', protocolType: 'consumer',
    protocols: [{ name: 'cooperative-sticky', metadata: meta }, { name: 'range', metadata: meta2 }],
    reason: null,
  };
  const bytes = new Bytes()
    .str('grp').i32(10000).i32(60000).str('m-1').str('inst-1').str('consumer')
    .arr(2).str('cooperative-sticky').bytes(meta).str('range').bytes(meta2)
    .build();
  goldenRequest(JoinGroupApi, 5, req, bytes);
});

test('JoinGroup v5 response: throttle time, members with and without instance id', () => {
  const res: JoinGroupResponse = {
    throttleTimeMs: 3, errorCode: 0, generationId: 7, protocolType: null, protocolName: 'range',
    leader: 'a', skipAssignment: false, memberId: 'a',
    members: [
      { memberId: 'a', groupInstanceId: 'i-a', metadata: meta },
      { memberId: 'b', groupInstanceId: null, metadata: Buffer.alloc(0) },
    ],
  };
  const bytes = new Bytes()
    .i32(3).i16(0).i32(7).str('range').str('a').str('a')
    .arr(2)
    .str('a').str('i-a').bytes(meta)
    .str('b').str(null).bytes(Buffer.alloc(0))
    .build();
  goldenResponse(JoinGroupApi, 5, res, bytes);
});

test('JoinGroup v6 request and response are flexible', () => {
  const req: JoinGroupRequest = {
    groupId: 'g', sessionTimeoutMs: 45000, rebalanceTimeoutMs: 300000, memberId: '', groupInstanceId: null,
    protocolType: 'consumer', protocols: [{ name: 'range', metadata: meta }], reason: null,
  };
  goldenRequest(JoinGroupApi, 6, req, new Bytes()
    .cstr('g').i32(45000).i32(300000).cstr('').cstr(null).cstr('consumer')
    .carr(1).cstr('range').cbytes(meta).tags0()
    .tags0().build());
  // MEMBER_ID_REQUIRED (79): the new id rides in memberId; no generation yet.
  const res: JoinGroupResponse = {
    throttleTimeMs: 0, errorCode: 79, generationId: -1, protocolType: null, protocolName: '',
    leader: '', skipAssignment: false, memberId: 'rdkafka-1b2c', members: [],
  };
  goldenResponse(JoinGroupApi, 6, res, new Bytes()
    .i32(0).i16(79).i32(-1).cstr('').cstr('').cstr('rdkafka-1b2c').carr(0)
    .tags0().build());
});

test('JoinGroup v6 cannot carry a null protocol name (nullable from v7 only)', () => {
  const res: JoinGroupResponse = {
    throttleTimeMs: 0, errorCode: 0, generationId: 1, protocolType: null, protocolName: null,
    leader: '', skipAssignment: false, memberId: 'm', members: [],
  };
  assert.throws(() => JoinGroupApi.encodeResponse(6, res, new Writer()), TypeError);
  const nullName = new Bytes().i32(0).i16(0).i32(1).cstr(null).cstr('').cstr('m').carr(0).tags0().build();
  assert.throws(() => JoinGroupApi.decodeResponse(6, new Reader(nullName)), ProtocolError);
  // v7 accepts it.
  const v7 = new Bytes().i32(0).i16(0).i32(1).cstr(null).cstr(null).cstr('').cstr('m').carr(0).tags0().build();
  goldenResponse(JoinGroupApi, 7, res, v7);
});

test('JoinGroup v9 request: reason', () => {
  const req: JoinGroupRequest = {
    groupId: 'g', sessionTimeoutMs: 45000, rebalanceTimeoutMs: 300000, memberId: 'm', groupInstanceId: 'static-1',
    protocolType: 'consumer', protocols: [{ name: 'range', metadata: meta2 }], reason: 'rebalance needed',
  };
  goldenRequest(JoinGroupApi, 9, req, new Bytes()
    .cstr('g').i32(45000).i32(300000).cstr('m').cstr('static-1').cstr('consumer')
    .carr(1).cstr('range').cbytes(meta2).tags0()
    .cstr('rebalance needed')
    .tags0().build());
});

test('JoinGroup v9 response: protocol type, skipAssignment', () => {
  const res: JoinGroupResponse = {
    throttleTimeMs: 0, errorCode: 0, generationId: 4, protocolType: 'consumer', protocolName: 'range',
    leader: 'm', skipAssignment: true, memberId: 'm',
    members: [{ memberId: 'm', groupInstanceId: 'static-1', metadata: meta2 }],
  };
  goldenResponse(JoinGroupApi, 9, res, new Bytes()
    .i32(0).i16(0).i32(4).cstr('consumer').cstr('range').cstr('m').bool(true).cstr('m')
    .carr(1).cstr('m').cstr('static-1').cbytes(meta2).tags0()
    .tags0().build());
});

test('SyncGroup v0 request and response', () => {
  const req: SyncGroupRequest = {
    groupId: 'g', generationId: 3, memberId: 'leader', groupInstanceId: null, protocolType: null, protocolName: null,
    assignments: [{ memberId: 'leader', assignment: meta }, { memberId: 'f', assignment: Buffer.alloc(0) }],
  };
  goldenRequest(SyncGroupApi, 0, req, new Bytes()
    .str('g').i32(3).str('leader')
    .arr(2).str('leader').bytes(meta).str('f').bytes(Buffer.alloc(0))
    .build());
  const res: SyncGroupResponse = { throttleTimeMs: 0, errorCode: 0, protocolType: null, protocolName: null, assignment: meta };
  goldenResponse(SyncGroupApi, 0, res, new Bytes().i16(0).bytes(meta).build());
});

test('SyncGroup v5 request and response: protocol type and name', () => {
  const req: SyncGroupRequest = {
    groupId: 'g', generationId: 3, memberId: 'f', groupInstanceId: 'inst', protocolType: 'consumer',
    protocolName: 'range', assignments: [],
  };
  goldenRequest(SyncGroupApi, 5, req, new Bytes()
    .cstr('g').i32(3).cstr('f').cstr('inst').cstr('consumer').cstr('range').carr(0)
    .tags0().build());
  const leader: SyncGroupRequest = { ...req, memberId: 'l', groupInstanceId: null, assignments: [{ memberId: 'f', assignment: meta2 }] };
  goldenRequest(SyncGroupApi, 5, leader, new Bytes()
    .cstr('g').i32(3).cstr('l').cstr(null).cstr('consumer').cstr('range')
    .carr(1).cstr('f').cbytes(meta2).tags0()
    .tags0().build());
  const res: SyncGroupResponse = { throttleTimeMs: 1, errorCode: 27, protocolType: 'consumer', protocolName: null, assignment: Buffer.alloc(0) };
  goldenResponse(SyncGroupApi, 5, res, new Bytes()
    .i32(1).i16(27).cstr('consumer').cstr(null).cbytes(Buffer.alloc(0))
    .tags0().build());
});

test('Heartbeat v0 and v4', () => {
  goldenRequest(HeartbeatApi, 0, { groupId: 'g', generationId: 2, memberId: 'm', groupInstanceId: null },
    new Bytes().str('g').i32(2).str('m').build());
  goldenResponse(HeartbeatApi, 0, { throttleTimeMs: 0, errorCode: 27 }, new Bytes().i16(27).build());
  goldenRequest(HeartbeatApi, 4, { groupId: 'g', generationId: 2, memberId: 'm', groupInstanceId: 'i' },
    new Bytes().cstr('g').i32(2).cstr('m').cstr('i').tags0().build());
  goldenResponse(HeartbeatApi, 4, { throttleTimeMs: 5, errorCode: 0 }, new Bytes().i32(5).i16(0).tags0().build());
});

test('LeaveGroup v0: a single member id', () => {
  const req: LeaveGroupRequest = { groupId: 'g', memberId: 'm', members: [] };
  goldenRequest(LeaveGroupApi, 0, req, new Bytes().str('g').str('m').build());
  const res: LeaveGroupResponse = { throttleTimeMs: 0, errorCode: 25, members: [] };
  goldenResponse(LeaveGroupApi, 0, res, new Bytes().i16(25).build());
});

test('LeaveGroup v3: batched members with per-member errors', () => {
  const req: LeaveGroupRequest = {
    groupId: 'g', memberId: '',
    members: [{ memberId: 'm1', groupInstanceId: null, reason: null }, { memberId: '', groupInstanceId: 'i2', reason: null }],
  };
  goldenRequest(LeaveGroupApi, 3, req, new Bytes()
    .str('g').arr(2).str('m1').str(null).str('').str('i2')
    .build());
  const res: LeaveGroupResponse = {
    throttleTimeMs: 0, errorCode: 0,
    members: [{ memberId: 'm1', groupInstanceId: null, errorCode: 0 }, { memberId: '', groupInstanceId: 'i2', errorCode: 25 }],
  };
  goldenResponse(LeaveGroupApi, 3, res, new Bytes()
    .i32(0).i16(0).arr(2).str('m1').str(null).i16(0).str('').str('i2').i16(25)
    .build());
});

test('LeaveGroup v5: flexible, with a reason per member', () => {
  const req: LeaveGroupRequest = {
    groupId: 'g', memberId: '', members: [{ memberId: 'm1', groupInstanceId: null, reason: 'the consumer is being closed' }],
  };
  goldenRequest(LeaveGroupApi, 5, req, new Bytes()
    .cstr('g').carr(1).cstr('m1').cstr(null).cstr('the consumer is being closed').tags0()
    .tags0().build());
  const res: LeaveGroupResponse = { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm1', groupInstanceId: null, errorCode: 0 }] };
  goldenResponse(LeaveGroupApi, 5, res, new Bytes()
    .i32(0).i16(0).carr(1).cstr('m1').cstr(null).i16(0).tags0()
    .tags0().build());
});
