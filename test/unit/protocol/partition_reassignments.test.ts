// Golden wire bytes for AlterPartitionReassignments (key 45) and ListPartitionReassignments
// (key 46), v0 of each (flexible), written from Kafka's message schemas: a target and a cancel
// (null replicas), per-partition answers, a listing filter and its null (every partition).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { AlterPartitionReassignmentsApi } from '../../../src/protocol/apis/alter_partition_reassignments.js';
import { ListPartitionReassignmentsApi } from '../../../src/protocol/apis/list_partition_reassignments.js';

test('AlterPartitionReassignments v0 request: a target and a cancel', () => {
  const bytes = new Bytes()
    .i32(30000)
    .carr(1).cstr('t')
    .carr(2)
    .i32(0).carr(3).i32(2).i32(3).i32(4).tags0()
    .i32(1).carr(null).tags0()
    .tags0()
    .tags0()
    .build();
  goldenRequest(AlterPartitionReassignmentsApi, 0, {
    timeoutMs: 30000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [2, 3, 4] }, { partitionIndex: 1, replicas: null }] }],
  }, bytes);
});

test('AlterPartitionReassignments v0 response: top-level and per-partition errors', () => {
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null)
    .carr(1).cstr('t')
    .carr(2)
    .i32(0).i16(0).cstr(null).tags0()
    .i32(1).i16(85).cstr('none').tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(AlterPartitionReassignmentsApi, 0, {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null,
    responses: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null }, { partitionIndex: 1, errorCode: 85, errorMessage: 'none' }] }],
  }, bytes);
});

test('ListPartitionReassignments v0 request: named partitions, and null for every partition', () => {
  goldenRequest(ListPartitionReassignmentsApi, 0, { timeoutMs: 1000, topics: [{ name: 't', partitionIndexes: [0, 2] }] },
    new Bytes().i32(1000).carr(1).cstr('t').carr(2).i32(0).i32(2).tags0().tags0().build());
  goldenRequest(ListPartitionReassignmentsApi, 0, { timeoutMs: 1000, topics: null }, new Bytes().i32(1000).carr(null).tags0().build());
});

test('ListPartitionReassignments v0 response: replicas, adding and removing per partition', () => {
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null)
    .carr(1).cstr('t')
    .carr(1).i32(0).carr(4).i32(2).i32(3).i32(4).i32(1).carr(1).i32(4).carr(1).i32(1).tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(ListPartitionReassignmentsApi, 0, {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [2, 3, 4, 1], addingReplicas: [4], removingReplicas: [1] }] }],
  }, bytes);
});
