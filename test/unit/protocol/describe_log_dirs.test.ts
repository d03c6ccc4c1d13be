// Golden wire bytes for DescribeLogDirs (key 35): v1 (classic), v2 (first flexible), v3 (top-level
// error code) and v4 (total and usable bytes after each dir's topics).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { DescribeLogDirsApi } from '../../../src/protocol/apis/describe_log_dirs.js';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse } from '../../../src/protocol/apis/describe_log_dirs.js';

const named: DescribeLogDirsRequest = { topics: [{ topic: 'orders', partitions: [0, 2] }] };

test('DescribeLogDirs v1 request: named partitions, and null for all', () => {
  goldenRequest(DescribeLogDirsApi, 1, named, new Bytes().arr(1).str('orders').arr(2).i32(0).i32(2).build());
  goldenRequest(DescribeLogDirsApi, 1, { topics: null }, new Bytes().arr(null).build());
});

test('DescribeLogDirs v2 request: compact and tagged', () => {
  goldenRequest(DescribeLogDirsApi, 2, named, new Bytes().carr(1).cstr('orders').carr(2).i32(0).i32(2).tags0().tags0().build());
});

function response(errorCode: number, totalBytes: number, usableBytes: number): DescribeLogDirsResponse {
  return {
    throttleTimeMs: 0, errorCode,
    results: [{
      errorCode: 0, logDir: '/data',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, partitionSize: 5_000_000_000, offsetLag: 0, isFutureKey: false }] }],
      totalBytes, usableBytes,
    }],
  };
}

test('DescribeLogDirs v1 response', () => {
  const bytes = new Bytes()
    .i32(0)
    .arr(1).i16(0).str('/data')
    .arr(1).str('orders').arr(1).i32(2).i64(5_000_000_000).i64(0).bool(false)
    .build();
  goldenResponse(DescribeLogDirsApi, 1, response(0, -1, -1), bytes);
});

test('DescribeLogDirs v3 response: the top-level error code follows the throttle time', () => {
  const bytes = new Bytes()
    .i32(0).i16(0)
    .carr(1).i16(0).cstr('/data')
    .carr(1).cstr('orders').carr(1).i32(2).i64(5_000_000_000).i64(0).bool(false).tags0().tags0()
    .tags0()
    .tags0()
    .build();
  goldenResponse(DescribeLogDirsApi, 3, response(0, -1, -1), bytes);
});

test('DescribeLogDirs v4 response: total and usable bytes after the topics', () => {
  const bytes = new Bytes()
    .i32(0).i16(0)
    .carr(1).i16(0).cstr('/data')
    .carr(1).cstr('orders').carr(1).i32(2).i64(5_000_000_000).i64(0).bool(false).tags0().tags0()
    .i64(1_919_445_725_184).i64(1_879_107_272_704)
    .tags0()
    .tags0()
    .build();
  goldenResponse(DescribeLogDirsApi, 4, response(0, 1_919_445_725_184, 1_879_107_272_704), bytes);
});
