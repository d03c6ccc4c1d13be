// Golden wire bytes for CreateTopics (key 19): v0 (first), v5 (first flexible), v7 (max).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { CreateTopicsApi } from '../../../src/protocol/apis/create_topics.js';
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../../src/protocol/apis/create_topics.js';

const ZERO_ID = '0'.repeat(32);
const TOPIC_ID = '0123456789abcdef0123456789abcdef';

test('CreateTopics v0 request: manual assignment and configs, no validateOnly', () => {
  const req: CreateTopicsRequest = {
    topics: [{
      name: 'orders', numPartitions: -1, replicationFactor: -1,
      assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }, { partitionIndex: 1, brokerIds: [2] }],
      configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: null }],
    }],
    timeoutMs: 30000,
    validateOnly: false,
  };
  const bytes = new Bytes()
    .arr(1)
    .str('orders').i32(-1).i16(-1)
    .arr(2)
    .i32(0).arr(2).i32(1).i32(2)
    .i32(1).arr(1).i32(2)
    .arr(2)
    .str('cleanup.policy').str('compact')
    .str('retention.ms').str(null)
    .i32(30000)
    .build();
  goldenRequest(CreateTopicsApi, 0, req, bytes);
});

test('CreateTopics v5 request: compact, validateOnly', () => {
  const req: CreateTopicsRequest = {
    topics: [{
      name: 't', numPartitions: 3, replicationFactor: 1,
      assignments: [],
      configs: [{ name: 'segment.bytes', value: '1048576' }],
    }],
    timeoutMs: 60000,
    validateOnly: true,
  };
  const bytes = new Bytes()
    .carr(1)
    .cstr('t').i32(3).i16(1)
    .carr(0)
    .carr(1).cstr('segment.bytes').cstr('1048576').tags0()
    .tags0()
    .i32(60000).bool(true)
    .tags0()
    .build();
  goldenRequest(CreateTopicsApi, 5, req, bytes);
});

test('CreateTopics v7 request: assignment with null config value', () => {
  const req: CreateTopicsRequest = {
    topics: [{
      name: 'x', numPartitions: -1, replicationFactor: -1,
      assignments: [{ partitionIndex: 0, brokerIds: [0] }],
      configs: [{ name: 'k', value: null }],
    }],
    timeoutMs: 5000,
    validateOnly: false,
  };
  const bytes = new Bytes()
    .carr(1)
    .cstr('x').i32(-1).i16(-1)
    .carr(1).i32(0).carr(1).i32(0).tags0()
    .carr(1).cstr('k').cstr(null).tags0()
    .tags0()
    .i32(5000).bool(false)
    .tags0()
    .build();
  goldenRequest(CreateTopicsApi, 7, req, bytes);
});

test('CreateTopics v0 response: name and error code only', () => {
  const res: CreateTopicsResponse = {
    throttleTimeMs: 0,
    topics: [
      { name: 'orders', topicId: ZERO_ID, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0,
        numPartitions: -1, replicationFactor: -1, configs: null },
      { name: 'dup', topicId: ZERO_ID, errorCode: 36, errorMessage: null, topicConfigErrorCode: 0,
        numPartitions: -1, replicationFactor: -1, configs: null },
    ],
  };
  const bytes = new Bytes()
    .arr(2)
    .str('orders').i16(0)
    .str('dup').i16(36)
    .build();
  goldenResponse(CreateTopicsApi, 0, res, bytes);
});

test('CreateTopics v5 response: echoed configs, default tag omitted', () => {
  const res: CreateTopicsResponse = {
    throttleTimeMs: 0,
    topics: [{
      name: 't', topicId: ZERO_ID, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0,
      numPartitions: 3, replicationFactor: 1,
      configs: [
        { name: 'cleanup.policy', value: 'delete', readOnly: false, configSource: 5, isSensitive: false },
        { name: 'secret', value: null, readOnly: true, configSource: 1, isSensitive: true },
      ],
    }],
  };
  const bytes = new Bytes()
    .i32(0)
    .carr(1)
    .cstr('t').i16(0).cstr(null).i32(3).i16(1)
    .carr(2)
    .cstr('cleanup.policy').cstr('delete').bool(false).i8(5).bool(false).tags0()
    .cstr('secret').cstr(null).bool(true).i8(1).bool(true).tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(CreateTopicsApi, 5, res, bytes);
});

test('CreateTopics v7 response: topic id, tagged TopicConfigErrorCode, null configs', () => {
  const res: CreateTopicsResponse = {
    throttleTimeMs: 100,
    topics: [{
      name: 'x', topicId: TOPIC_ID, errorCode: 0, errorMessage: null, topicConfigErrorCode: 29,
      numPartitions: 1, replicationFactor: 1, configs: null,
    }, {
      name: 'bad', topicId: ZERO_ID, errorCode: 37, errorMessage: 'Number of partitions must be larger than 0.',
      topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null,
    }],
  };
  const bytes = new Bytes()
    .i32(100)
    .carr(2)
    .cstr('x').uuid(TOPIC_ID).i16(0).cstr(null).i32(1).i16(1).carr(null)
    .uvarint(1).tag(0, new Bytes().i16(29))
    .cstr('bad').uuid(ZERO_ID).i16(37).cstr('Number of partitions must be larger than 0.')
    .i32(-1).i16(-1).carr(null).tags0()
    .tags0()
    .build();
  goldenResponse(CreateTopicsApi, 7, res, bytes);
});
