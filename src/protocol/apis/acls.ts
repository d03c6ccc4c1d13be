// DescribeAcls (key 29), CreateAcls (key 30) and DeleteAcls (key 31) wire schemas, v0-3, flexible
// from v2 (v1 adds the resource pattern type, KIP-290; LITERAL when absent). Resource types,
// pattern types, operations and permissions travel as Kafka's int8 codes (coordinator/acl/acl.ts).
// Main thread.

import { defineApi, type Field } from '../schema.js';

/** LITERAL: what a v0 request or response means by its resources. */
const LITERAL = 3;

export interface AclFilterWire {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

const FILTER_FIELDS: Field[] = [
  { name: 'resourceTypeFilter', type: 'int8', versions: '0+' },
  { name: 'resourceNameFilter', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'patternTypeFilter', type: 'int8', versions: '1+', default: LITERAL },
  { name: 'principalFilter', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'hostFilter', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'operation', type: 'int8', versions: '0+' },
  { name: 'permissionType', type: 'int8', versions: '0+' },
];

/** Who, from where, what and whether: the fields every ACL entry ends with. */
const ENTRY_FIELDS: Field[] = [
  { name: 'principal', type: 'string', versions: '0+' },
  { name: 'host', type: 'string', versions: '0+' },
  { name: 'operation', type: 'int8', versions: '0+' },
  { name: 'permissionType', type: 'int8', versions: '0+' },
];

export type DescribeAclsRequest = AclFilterWire;

export interface AclDescriptionWire {
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export interface DescribeAclsResource {
  resourceType: number;
  resourceName: string;
  patternType: number;
  acls: AclDescriptionWire[];
}

export interface DescribeAclsResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  resources: DescribeAclsResource[];
}

export const DescribeAclsApi = defineApi<DescribeAclsRequest, DescribeAclsResponse>({
  apiKey: 29,
  name: 'DescribeAcls',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '2+',
  request: FILTER_FIELDS,
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    {
      name: 'resources', type: [
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        { name: 'patternType', type: 'int8', versions: '1+', default: LITERAL },
        { name: 'acls', type: ENTRY_FIELDS, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});

export interface AclCreationWire {
  resourceType: number;
  resourceName: string;
  resourcePatternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export interface CreateAclsRequest {
  creations: AclCreationWire[];
}

export interface CreateAclsResponse {
  throttleTimeMs: number;
  results: Array<{ errorCode: number; errorMessage: string | null }>;
}

export const CreateAclsApi = defineApi<CreateAclsRequest, CreateAclsResponse>({
  apiKey: 30,
  name: 'CreateAcls',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '2+',
  request: [
    {
      name: 'creations', type: [
        { name: 'resourceType', type: 'int8', versions: '0+' },
        { name: 'resourceName', type: 'string', versions: '0+' },
        { name: 'resourcePatternType', type: 'int8', versions: '1+', default: LITERAL },
        ...ENTRY_FIELDS,
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'results', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
      ], array: true, versions: '0+',
    },
  ],
});

export interface DeleteAclsRequest {
  filters: AclFilterWire[];
}

export interface DeleteAclsMatchingAcl {
  errorCode: number;
  errorMessage: string | null;
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export interface DeleteAclsFilterResult {
  errorCode: number;
  errorMessage: string | null;
  matchingAcls: DeleteAclsMatchingAcl[];
}

export interface DeleteAclsResponse {
  throttleTimeMs: number;
  filterResults: DeleteAclsFilterResult[];
}

export const DeleteAclsApi = defineApi<DeleteAclsRequest, DeleteAclsResponse>({
  apiKey: 31,
  name: 'DeleteAcls',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '2+',
  request: [{ name: 'filters', type: FILTER_FIELDS, array: true, versions: '0+' }],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'filterResults', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        {
          name: 'matchingAcls', type: [
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
            { name: 'resourceType', type: 'int8', versions: '0+' },
            { name: 'resourceName', type: 'string', versions: '0+' },
            { name: 'patternType', type: 'int8', versions: '1+', default: LITERAL },
            ...ENTRY_FIELDS,
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
