// Golden wire bytes for DescribeConfigs (key 32): v0 (first), v3 (last non-flexible, all fields),
// v4 (first flexible and max).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { DescribeConfigsApi } from '../../../src/protocol/apis/describe_configs.js';
import type {
  DescribeConfigsRequest, DescribeConfigsResponse,
} from '../../../src/protocol/apis/describe_configs.js';

test('DescribeConfigs v0 request: listed keys and null (all) keys', () => {
  const req: DescribeConfigsRequest = {
    resources: [
      { resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'cleanup.policy'] },
      { resourceType: 4, resourceName: '1', configurationKeys: null },
    ],
    includeSynonyms: false,
    includeDocumentation: false,
  };
  const bytes = new Bytes()
    .arr(2)
    .i8(2).str('orders').arr(2).str('retention.ms').str('cleanup.policy')
    .i8(4).str('1').arr(null)
    .build();
  goldenRequest(DescribeConfigsApi, 0, req, bytes);
});

test('DescribeConfigs v3 request: synonyms and documentation flags', () => {
  const req: DescribeConfigsRequest = {
    resources: [{ resourceType: 2, resourceName: 't', configurationKeys: null }],
    includeSynonyms: true,
    includeDocumentation: true,
  };
  const bytes = new Bytes().arr(1).i8(2).str('t').arr(null).bool(true).bool(true).build();
  goldenRequest(DescribeConfigsApi, 3, req, bytes);
});

test('DescribeConfigs v4 request: compact', () => {
  const req: DescribeConfigsRequest = {
    resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }],
    includeSynonyms: true,
    includeDocumentation: false,
  };
  const bytes = new Bytes()
    .carr(1).i8(2).cstr('orders').carr(1).cstr('retention.ms').tags0()
    .bool(true).bool(false)
    .tags0()
    .build();
  goldenRequest(DescribeConfigsApi, 4, req, bytes);
});

test('DescribeConfigs v0 response: IsDefault, no source or synonyms', () => {
  const res: DescribeConfigsResponse = {
    throttleTimeMs: 0,
    results: [{
      errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders',
      configs: [
        { name: 'retention.ms', value: '604800000', readOnly: false, isDefault: true, configSource: -1,
          isSensitive: false, synonyms: [], configType: 0, documentation: null },
        { name: 'ssl.key.password', value: null, readOnly: true, isDefault: false, configSource: -1,
          isSensitive: true, synonyms: [], configType: 0, documentation: null },
      ],
    }],
  };
  const bytes = new Bytes()
    .i32(0)
    .arr(1)
    .i16(0).str(null).i8(2).str('orders')
    .arr(2)
    .str('retention.ms').str('604800000').bool(false).bool(true).bool(false)
    .str('ssl.key.password').str(null).bool(true).bool(false).bool(true)
    .build();
  goldenResponse(DescribeConfigsApi, 0, res, bytes);
});

test('DescribeConfigs v3 response: source, synonyms, type and documentation', () => {
  const res: DescribeConfigsResponse = {
    throttleTimeMs: 1,
    results: [{
      errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't',
      configs: [{
        name: 'retention.ms', value: '1000', readOnly: false, isDefault: false, configSource: 1,
        isSensitive: false,
        synonyms: [{ name: 'retention.ms', value: '1000', source: 1 }, { name: 'log.retention.ms', value: null, source: 5 }],
        configType: 5, documentation: 'How long to keep data.',
      }],
    }],
  };
  const bytes = new Bytes()
    .i32(1)
    .arr(1)
    .i16(0).str(null).i8(2).str('t')
    .arr(1)
    .str('retention.ms').str('1000').bool(false).i8(1).bool(false)
    .arr(2).str('retention.ms').str('1000').i8(1).str('log.retention.ms').str(null).i8(5)
    .i8(5).str('How long to keep data.')
    .build();
  goldenResponse(DescribeConfigsApi, 3, res, bytes);
});

test('DescribeConfigs v4 response: compact with nested tag buffers, error result', () => {
  const res: DescribeConfigsResponse = {
    throttleTimeMs: 0,
    results: [{
      errorCode: 0, errorMessage: null, resourceType: 4, resourceName: '1',
      configs: [{
        name: 'num.partitions', value: '1', readOnly: true, isDefault: false, configSource: 5,
        isSensitive: false, synonyms: [{ name: 'num.partitions', value: '1', source: 5 }],
        configType: 3, documentation: null,
      }],
    }, {
      errorCode: 3, errorMessage: 'Topic nope does not exist', resourceType: 2, resourceName: 'nope', configs: [],
    }],
  };
  const bytes = new Bytes()
    .i32(0)
    .carr(2)
    .i16(0).cstr(null).i8(4).cstr('1')
    .carr(1)
    .cstr('num.partitions').cstr('1').bool(true).i8(5).bool(false)
    .carr(1).cstr('num.partitions').cstr('1').i8(5).tags0()
    .i8(3).cstr(null).tags0()
    .tags0()
    .i16(3).cstr('Topic nope does not exist').i8(2).cstr('nope').carr(0).tags0()
    .tags0()
    .build();
  goldenResponse(DescribeConfigsApi, 4, res, bytes);
});
