// Golden wire bytes for the group admin APIs: ListGroups (key 16) v0, v3 (first flexible), v5;
// DescribeGroups (15) v0, v5 (first flexible); DeleteGroups (42) v0, v2 (first flexible).

import { test } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { goldenRequest, goldenResponse } from './api_golden.js';
import { ListGroupsApi } from '../../../src/protocol/apis/list_groups.js';
import type { ListGroupsResponse } from '../../../src/protocol/apis/list_groups.js';
import { DescribeGroupsApi } from '../../../src/protocol/apis/describe_groups.js';
import type { DescribeGroupsResponse } from '../../../src/protocol/apis/describe_groups.js';
import { DeleteGroupsApi } from '../../../src/protocol/apis/delete_groups.js';

const INT32_MIN = -2147483648;

test('ListGroups v0: empty request, groups without state', () => {
  goldenRequest(ListGroupsApi, 0, { statesFilter: [], typesFilter: [] }, Buffer.alloc(0));
  const res: ListGroupsResponse = {
    throttleTimeMs: 0, errorCode: 0,
    groups: [{ groupId: 'g1', protocolType: 'consumer', groupState: '', groupType: '' }, { groupId: 'c', protocolType: '', groupState: '', groupType: '' }],
  };
  goldenResponse(ListGroupsApi, 0, res, new Bytes()
    .i16(0).arr(2).str('g1').str('consumer').str('c').str('')
    .build());
});

test('ListGroups v3: flexible, still no filters', () => {
  goldenRequest(ListGroupsApi, 3, { statesFilter: [], typesFilter: [] }, new Bytes().tags0().build());
});

test('ListGroups v5: states and types filters, group state and type', () => {
  goldenRequest(ListGroupsApi, 5, { statesFilter: ['Stable', 'Empty'], typesFilter: ['consumer'] }, new Bytes()
    .carr(2).cstr('Stable').cstr('Empty').carr(1).cstr('consumer')
    .tags0().build());
  const res: ListGroupsResponse = {
    throttleTimeMs: 0, errorCode: 0,
    groups: [{ groupId: 'g1', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }],
  };
  goldenResponse(ListGroupsApi, 5, res, new Bytes()
    .i32(0).i16(0).carr(1).cstr('g1').cstr('consumer').cstr('Stable').cstr('classic').tags0()
    .tags0().build());
});

test('DescribeGroups v0 request and response', () => {
  goldenRequest(DescribeGroupsApi, 0, { groups: ['g'], includeAuthorizedOperations: false }, new Bytes()
    .arr(1).str('g').build());
  const res: DescribeGroupsResponse = {
    throttleTimeMs: 0,
    groups: [{
      errorCode: 0, groupId: 'g', groupState: 'Stable', protocolType: 'consumer', protocolData: 'range',
      members: [{
        memberId: 'm', groupInstanceId: null, clientId: 'cli', clientHost: '/127.0.0.1',
        memberMetadata: Buffer.from([0, 0]), memberAssignment: Buffer.from([0, 1]),
      }],
      authorizedOperations: INT32_MIN,
    }],
  };
  goldenResponse(DescribeGroupsApi, 0, res, new Bytes()
    .arr(1).i16(0).str('g').str('Stable').str('consumer').str('range')
    .arr(1).str('m').str('cli').str('/127.0.0.1').bytes(Buffer.from([0, 0])).bytes(Buffer.from([0, 1]))
    .build());
});

test('DescribeGroups v5: flexible, instance ids and authorized operations', () => {
  goldenRequest(DescribeGroupsApi, 5, { groups: ['a', 'b'], includeAuthorizedOperations: true }, new Bytes()
    .carr(2).cstr('a').cstr('b').bool(true).tags0().build());
  const res: DescribeGroupsResponse = {
    throttleTimeMs: 0,
    groups: [
      {
        errorCode: 0, groupId: 'a', groupState: 'Stable', protocolType: 'consumer', protocolData: 'range',
        members: [{
          memberId: 'm', groupInstanceId: 'i', clientId: 'c', clientHost: 'h',
          memberMetadata: Buffer.alloc(0), memberAssignment: Buffer.from([9]),
        }],
        authorizedOperations: 0x1f8,
      },
      { errorCode: 0, groupId: 'b', groupState: 'Dead', protocolType: '', protocolData: '', members: [], authorizedOperations: INT32_MIN },
    ],
  };
  goldenResponse(DescribeGroupsApi, 5, res, new Bytes()
    .i32(0).carr(2)
    .i16(0).cstr('a').cstr('Stable').cstr('consumer').cstr('range')
    .carr(1).cstr('m').cstr('i').cstr('c').cstr('h').cbytes(Buffer.alloc(0)).cbytes(Buffer.from([9])).tags0()
    .i32(0x1f8).tags0()
    .i16(0).cstr('b').cstr('Dead').cstr('').cstr('').carr(0).i32(INT32_MIN).tags0()
    .tags0().build());
});

test('DeleteGroups v0 and v2', () => {
  goldenRequest(DeleteGroupsApi, 0, { groupsNames: ['a', 'b'] }, new Bytes().arr(2).str('a').str('b').build());
  const res = { throttleTimeMs: 0, results: [{ groupId: 'a', errorCode: 0 }, { groupId: 'b', errorCode: 68 }] };
  goldenResponse(DeleteGroupsApi, 0, res, new Bytes()
    .i32(0).arr(2).str('a').i16(0).str('b').i16(68).build());
  goldenRequest(DeleteGroupsApi, 2, { groupsNames: ['a'] }, new Bytes().carr(1).cstr('a').tags0().build());
  goldenResponse(DeleteGroupsApi, 2, res, new Bytes()
    .i32(0).carr(2).cstr('a').i16(0).tags0().cstr('b').i16(68).tags0()
    .tags0().build());
});
