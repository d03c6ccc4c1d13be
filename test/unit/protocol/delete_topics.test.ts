// Golden wire bytes for DeleteTopics (key 20): v0 (first), v4 (first flexible), v6 (max: topics
// by name or by id).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { DeleteTopicsApi } from '../../../src/protocol/apis/delete_topics.js';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../../src/protocol/apis/delete_topics.js';

const ZERO_ID = '0'.repeat(32);
const TOPIC_ID = 'fedcba9876543210fedcba9876543210';

test('DeleteTopics v0 request: plain name array', () => {
  const req: DeleteTopicsRequest = { topics: [], topicNames: ['a', 'orders'], timeoutMs: 15000 };
  const bytes = new Bytes().arr(2).str('a').str('orders').i32(15000).build();
  goldenRequest(DeleteTopicsApi, 0, req, bytes);
});

test('DeleteTopics v4 request: compact name array', () => {
  const req: DeleteTopicsRequest = { topics: [], topicNames: ['orders'], timeoutMs: 30000 };
  const bytes = new Bytes().carr(1).cstr('orders').i32(30000).tags0().build();
  goldenRequest(DeleteTopicsApi, 4, req, bytes);
});

test('DeleteTopics v6 request: one topic by name, one by id', () => {
  const req: DeleteTopicsRequest = {
    topics: [{ name: 'orders', topicId: ZERO_ID }, { name: null, topicId: TOPIC_ID }],
    topicNames: [],
    timeoutMs: 30000,
  };
  const bytes = new Bytes()
    .carr(2)
    .cstr('orders').uuid(ZERO_ID).tags0()
    .cstr(null).uuid(TOPIC_ID).tags0()
    .i32(30000)
    .tags0()
    .build();
  goldenRequest(DeleteTopicsApi, 6, req, bytes);
});

test('DeleteTopics v0 response: no throttle time', () => {
  const res: DeleteTopicsResponse = {
    throttleTimeMs: 0,
    responses: [
      { name: 'a', topicId: ZERO_ID, errorCode: 0, errorMessage: null },
      { name: 'missing', topicId: ZERO_ID, errorCode: 3, errorMessage: null },
    ],
  };
  const bytes = new Bytes().arr(2).str('a').i16(0).str('missing').i16(3).build();
  goldenResponse(DeleteTopicsApi, 0, res, bytes);
});

test('DeleteTopics v4 response: compact', () => {
  const res: DeleteTopicsResponse = {
    throttleTimeMs: 12,
    responses: [{ name: 'orders', topicId: ZERO_ID, errorCode: 0, errorMessage: null }],
  };
  const bytes = new Bytes().i32(12).carr(1).cstr('orders').i16(0).tags0().tags0().build();
  goldenResponse(DeleteTopicsApi, 4, res, bytes);
});

test('DeleteTopics v6 response: null name for an id lookup, error message', () => {
  const res: DeleteTopicsResponse = {
    throttleTimeMs: 0,
    responses: [
      { name: 'orders', topicId: TOPIC_ID, errorCode: 0, errorMessage: null },
      { name: null, topicId: TOPIC_ID, errorCode: 100, errorMessage: 'unknown topic id' },
    ],
  };
  const bytes = new Bytes()
    .i32(0)
    .carr(2)
    .cstr('orders').uuid(TOPIC_ID).i16(0).cstr(null).tags0()
    .cstr(null).uuid(TOPIC_ID).i16(100).cstr('unknown topic id').tags0()
    .tags0()
    .build();
  goldenResponse(DeleteTopicsApi, 6, res, bytes);
});
