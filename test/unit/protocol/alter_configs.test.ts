// Golden wire bytes for AlterConfigs (key 33: v0, v2 flexible) and IncrementalAlterConfigs
// (key 44: v0, v1 flexible), requests and responses.

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import {
  AlterConfigsApi, IncrementalAlterConfigsApi,
  type AlterConfigsRequest, type AlterConfigsResponse, type IncrementalAlterConfigsRequest,
} from '../../../src/protocol/apis/alter_configs.js';

const altered: IncrementalAlterConfigsRequest = {
  resources: [
    { resourceType: 2, resourceName: 'orders', configs: [{ name: 'leader.replication.throttled.replicas', configOperation: 2, value: '0:1' }, { name: 'retention.ms', configOperation: 1, value: null }] },
    { resourceType: 4, resourceName: '', configs: [{ name: 'follower.replication.throttled.rate', configOperation: 0, value: '1048576' }] },
  ],
  validateOnly: true,
};

test('IncrementalAlterConfigs v0 request', () => {
  const bytes = new Bytes()
    .arr(2)
    .i8(2).str('orders').arr(2).str('leader.replication.throttled.replicas').i8(2).str('0:1').str('retention.ms').i8(1).str(null)
    .i8(4).str('').arr(1).str('follower.replication.throttled.rate').i8(0).str('1048576')
    .bool(true)
    .build();
  goldenRequest(IncrementalAlterConfigsApi, 0, altered, bytes);
});

test('IncrementalAlterConfigs v1 request: compact', () => {
  const bytes = new Bytes()
    .carr(2)
    .i8(2).cstr('orders').carr(2).cstr('leader.replication.throttled.replicas').i8(2).cstr('0:1').tags0().cstr('retention.ms').i8(1).cstr(null).tags0().tags0()
    .i8(4).cstr('').carr(1).cstr('follower.replication.throttled.rate').i8(0).cstr('1048576').tags0().tags0()
    .bool(true)
    .tags0()
    .build();
  goldenRequest(IncrementalAlterConfigsApi, 1, altered, bytes);
});

test('AlterConfigs v0 and v2 requests', () => {
  const req: AlterConfigsRequest = { resources: [{ resourceType: 2, resourceName: 't', configs: [{ name: 'retention.ms', value: '1' }] }], validateOnly: false };
  goldenRequest(AlterConfigsApi, 0, req, new Bytes().arr(1).i8(2).str('t').arr(1).str('retention.ms').str('1').bool(false).build());
  goldenRequest(AlterConfigsApi, 2, req, new Bytes().carr(1).i8(2).cstr('t').carr(1).cstr('retention.ms').cstr('1').tags0().tags0().bool(false).tags0().build());
});

test('AlterConfigs and IncrementalAlterConfigs responses: one error per resource', () => {
  const res: AlterConfigsResponse = {
    throttleTimeMs: 3,
    responses: [
      { errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't' },
      { errorCode: 40, errorMessage: 'bad', resourceType: 4, resourceName: '1' },
    ],
  };
  goldenResponse(AlterConfigsApi, 1, res, new Bytes().i32(3).arr(2).i16(0).str(null).i8(2).str('t').i16(40).str('bad').i8(4).str('1').build());
  goldenResponse(IncrementalAlterConfigsApi, 1, res, new Bytes()
    .i32(3).carr(2).i16(0).cstr(null).i8(2).cstr('t').tags0().i16(40).cstr('bad').i8(4).cstr('1').tags0().tags0().build());
});
