// Golden wire bytes for the KIP-848 APIs: ConsumerGroupHeartbeat (key 68) v0 and v1 (subscribed
// topic regex), ConsumerGroupDescribe (69) v0. Both are flexible in every version.

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { ConsumerGroupHeartbeatApi } from '../../../src/protocol/apis/consumer_group_heartbeat.js';
import type {
  ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
} from '../../../src/protocol/apis/consumer_group_heartbeat.js';
import { ConsumerGroupDescribeApi } from '../../../src/protocol/apis/consumer_group_describe.js';
import type { ConsumerGroupDescribeResponse } from '../../../src/protocol/apis/consumer_group_describe.js';

const T1 = '0123456789abcdef0123456789abcdef';
const T2 = 'fedcba9876543210fedcba9876543210';

test('ConsumerGroupHeartbeat v0 request: a full join', () => {
  const req: ConsumerGroupHeartbeatRequest = {
    groupId: 'g', memberId: '', memberEpoch: 0, instanceId: null, rackId: 'r1', rebalanceTimeoutMs: 300000,
    subscribedTopicNames: ['t1', 't2'], subscribedTopicRegex: null, serverAssignor: 'uniform', topicPartitions: [],
  };
  goldenRequest(ConsumerGroupHeartbeatApi, 0, req, new Bytes()
    .cstr('g').cstr('').i32(0).cstr(null).cstr('r1').i32(300000)
    .carr(2).cstr('t1').cstr('t2')
    .cstr('uniform')
    .carr(0)
    .tags0().build());
});

test('ConsumerGroupHeartbeat v0 request: a plain heartbeat leaves everything null / -1', () => {
  const req: ConsumerGroupHeartbeatRequest = {
    groupId: 'g', memberId: 'm', memberEpoch: 5, instanceId: null, rackId: null, rebalanceTimeoutMs: -1,
    subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null,
    topicPartitions: [{ topicId: T1, partitions: [0, 2] }],
  };
  goldenRequest(ConsumerGroupHeartbeatApi, 0, req, new Bytes()
    .cstr('g').cstr('m').i32(5).cstr(null).cstr(null).i32(-1)
    .carr(null)
    .cstr(null)
    .carr(1).uuid(T1).carr(2).i32(0).i32(2).tags0()
    .tags0().build());
});

test('ConsumerGroupHeartbeat v0 response: assignment present', () => {
  const res: ConsumerGroupHeartbeatResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: 'm-uuid', memberEpoch: 1, heartbeatIntervalMs: 5000,
    assignment: { topicPartitions: [{ topicId: T1, partitions: [0] }, { topicId: T2, partitions: [] }] },
  };
  goldenResponse(ConsumerGroupHeartbeatApi, 0, res, new Bytes()
    .i32(0).i16(0).cstr(null).cstr('m-uuid').i32(1).i32(5000)
    .i8(1).carr(2).uuid(T1).carr(1).i32(0).tags0().uuid(T2).carr(0).tags0().tags0()
    .tags0().build());
});

test('ConsumerGroupHeartbeat v1 request: subscribed topic regex', () => {
  const req: ConsumerGroupHeartbeatRequest = {
    groupId: 'g', memberId: 'client-made-id', memberEpoch: 0, instanceId: 'inst', rackId: null, rebalanceTimeoutMs: 45000,
    subscribedTopicNames: [], subscribedTopicRegex: 'orders-.*', serverAssignor: null, topicPartitions: [],
  };
  goldenRequest(ConsumerGroupHeartbeatApi, 1, req, new Bytes()
    .cstr('g').cstr('client-made-id').i32(0).cstr('inst').cstr(null).i32(45000)
    .carr(0)
    .cstr('orders-.*')
    .cstr(null)
    .carr(0)
    .tags0().build());
});

test('ConsumerGroupHeartbeat v1 response: error, no assignment', () => {
  const res: ConsumerGroupHeartbeatResponse = {
    throttleTimeMs: 0, errorCode: 110, errorMessage: 'fenced', memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0,
    assignment: null,
  };
  goldenResponse(ConsumerGroupHeartbeatApi, 1, res, new Bytes()
    .i32(0).i16(110).cstr('fenced').cstr(null).i32(0).i32(0).i8(-1)
    .tags0().build());
});

test('ConsumerGroupDescribe v0 request and response', () => {
  goldenRequest(ConsumerGroupDescribeApi, 0, { groupIds: ['g'], includeAuthorizedOperations: false }, new Bytes()
    .carr(1).cstr('g').bool(false).tags0().build());
  const res: ConsumerGroupDescribeResponse = {
    throttleTimeMs: 0,
    groups: [{
      errorCode: 0, errorMessage: null, groupId: 'g', groupState: 'Stable', groupEpoch: 4, assignmentEpoch: 4,
      assignorName: 'uniform',
      members: [{
        memberId: 'm', instanceId: null, rackId: 'r', memberEpoch: 4, clientId: 'c', clientHost: '/127.0.0.1',
        subscribedTopicNames: ['t'], subscribedTopicRegex: null,
        assignment: { topicPartitions: [{ topicId: T1, topicName: 't', partitions: [0, 1] }] },
        targetAssignment: { topicPartitions: [] },
      }],
      authorizedOperations: -2147483648,
    }],
  };
  goldenResponse(ConsumerGroupDescribeApi, 0, res, new Bytes()
    .i32(0).carr(1)
    .i16(0).cstr(null).cstr('g').cstr('Stable').i32(4).i32(4).cstr('uniform')
    .carr(1)
    .cstr('m').cstr(null).cstr('r').i32(4).cstr('c').cstr('/127.0.0.1')
    .carr(1).cstr('t').cstr(null)
    .carr(1).uuid(T1).cstr('t').carr(2).i32(0).i32(1).tags0().tags0()
    .carr(0).tags0()
    .tags0()
    .i32(-2147483648).tags0()
    .tags0().build());
});
