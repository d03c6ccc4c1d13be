// Golden wire bytes for DescribeCluster (key 60): v0 (first, already flexible), v1, and v2 (max) with Sluice's warming tag.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { Reader } from '../../../src/protocol/reader.js';
import { DescribeClusterApi } from '../../../src/protocol/apis/describe_cluster.js';
import type {
  DescribeClusterRequest, DescribeClusterResponse,
} from '../../../src/protocol/apis/describe_cluster.js';

const INT32_MIN = -2147483648;

test('DescribeCluster v0 request', () => {
  const req: DescribeClusterRequest = { includeClusterAuthorizedOperations: true, endpointType: 1, includeFencedBrokers: false };
  goldenRequest(DescribeClusterApi, 0, req, new Bytes().bool(true).tags0().build());
});

test('DescribeCluster v1 request: endpoint type', () => {
  const req: DescribeClusterRequest = { includeClusterAuthorizedOperations: false, endpointType: 2, includeFencedBrokers: false };
  goldenRequest(DescribeClusterApi, 1, req, new Bytes().bool(false).i8(2).tags0().build());
});

test('DescribeCluster v0 response: brokers with and without rack', () => {
  const res: DescribeClusterResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: 1,
    clusterId: 'sluice-cluster', controllerId: 1,
    brokers: [
      { brokerId: 1, host: '127.0.0.1', port: 9092, rack: null, isFenced: false, sluiceWarming: false, sluiceAdminAddress: null },
      { brokerId: 2, host: 'localhost', port: 9093, rack: 'r1', isFenced: false, sluiceWarming: false, sluiceAdminAddress: null },
    ],
    clusterAuthorizedOperations: INT32_MIN,
  };
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null)
    .cstr('sluice-cluster').i32(1)
    .carr(2)
    .i32(1).cstr('127.0.0.1').i32(9092).cstr(null).tags0()
    .i32(2).cstr('localhost').i32(9093).cstr('r1').tags0()
    .i32(INT32_MIN)
    .tags0()
    .build();
  goldenResponse(DescribeClusterApi, 0, res, bytes);
});

test('DescribeCluster v1 response: endpoint type after the error message', () => {
  const res: DescribeClusterResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: 2,
    clusterId: 'c', controllerId: -1,
    brokers: [{ brokerId: 0, host: 'h', port: 1, rack: null, isFenced: false, sluiceWarming: false, sluiceAdminAddress: null }],
    clusterAuthorizedOperations: 0x2f8,
  };
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null).i8(2)
    .cstr('c').i32(-1)
    .carr(1).i32(0).cstr('h').i32(1).cstr(null).tags0()
    .i32(0x2f8)
    .tags0()
    .build();
  goldenResponse(DescribeClusterApi, 1, res, bytes);
});

test('DescribeCluster v1 request: unknown tagged fields are skipped', () => {
  const bytes = new Bytes()
    .bool(true).i8(1)
    .uvarint(2).tag(3, new Bytes().i32(7)).tag(9, new Bytes().cstr('future'))
    .build();
  const r = new Reader(bytes);
  assert.deepStrictEqual(DescribeClusterApi.decodeRequest(1, r),
    { includeClusterAuthorizedOperations: true, endpointType: 1, includeFencedBrokers: false });
  assert.equal(r.remaining(), 0);
});

test('DescribeCluster v2: fenced brokers on request, marked; a warming broker carries tag 1000', () => {
  goldenRequest(DescribeClusterApi, 2, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: true }, new Bytes().bool(false).i8(1).bool(true).tags0().build());
  const res: DescribeClusterResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: 1,
    clusterId: 'c', controllerId: 1,
    brokers: [
      { brokerId: 1, host: 'h', port: 1, rack: null, isFenced: true, sluiceWarming: false, sluiceAdminAddress: null },
      { brokerId: 4, host: 'h', port: 4, rack: null, isFenced: false, sluiceWarming: true, sluiceAdminAddress: null },
    ],
    clusterAuthorizedOperations: INT32_MIN,
  };
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null).i8(1)
    .cstr('c').i32(1)
    .carr(2)
    .i32(1).cstr('h').i32(1).cstr(null).bool(true).tags0()
    .i32(4).cstr('h').i32(4).cstr(null).bool(false).uvarint(1).tag(1000, new Bytes().bool(true))
    .i32(INT32_MIN)
    .tags0()
    .build();
  goldenResponse(DescribeClusterApi, 2, res, bytes);
});

test('DescribeCluster: a broker\'s admin address carries tag 1001 after the warming tag, null when unknown', () => {
  const res: DescribeClusterResponse = {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, endpointType: 1,
    clusterId: 'c', controllerId: 1,
    brokers: [
      { brokerId: 1, host: 'h', port: 1, rack: null, isFenced: false, sluiceWarming: false, sluiceAdminAddress: 'h:8081' },
      { brokerId: 2, host: 'h', port: 2, rack: null, isFenced: false, sluiceWarming: true, sluiceAdminAddress: 'h:8082' },
      { brokerId: 3, host: 'h', port: 3, rack: null, isFenced: false, sluiceWarming: false, sluiceAdminAddress: null },
    ],
    clusterAuthorizedOperations: INT32_MIN,
  };
  const bytes = new Bytes()
    .i32(0).i16(0).cstr(null).i8(1)
    .cstr('c').i32(1)
    .carr(3)
    .i32(1).cstr('h').i32(1).cstr(null).bool(false).uvarint(1).tag(1001, new Bytes().cstr('h:8081'))
    .i32(2).cstr('h').i32(2).cstr(null).bool(false).uvarint(2).tag(1000, new Bytes().bool(true)).tag(1001, new Bytes().cstr('h:8082'))
    .i32(3).cstr('h').i32(3).cstr(null).bool(false).tags0()
    .i32(INT32_MIN)
    .tags0()
    .build();
  goldenResponse(DescribeClusterApi, 2, res, bytes);
});
