// DescribeClientQuotas (key 48) and AlterClientQuotas (key 49) wire schemas, v0-1, flexible from
// v1 (KIP-546). An entity is a list of (entity type, name) parts, a null name meaning the
// <default> of that type; Describe filters by components matched exactly (0), as the default (1)
// or as any name (2). Main thread.
import { defineApi, type Field } from '../schema.js';

/** KIP-546's match types of a DescribeClientQuotas component. */
export const QuotaMatch = { EXACT: 0, DEFAULT: 1, ANY: 2 } as const;

export interface QuotaEntityPart {
  entityType: string;
  /** null: the <default> of the type. */
  entityName: string | null;
}

export interface DescribeClientQuotasRequest {
  components: Array<{ entityType: string; matchType: number; match: string | null }>;
  /** Only entities with no part beyond the components match. */
  strict: boolean;
}

export interface DescribeClientQuotasEntry {
  entity: QuotaEntityPart[];
  values: Array<{ key: string; value: number }>;
}

export interface DescribeClientQuotasResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  /** null when the request failed. */
  entries: DescribeClientQuotasEntry[] | null;
}

export interface AlterClientQuotasEntry {
  entity: QuotaEntityPart[];
  ops: Array<{ key: string; value: number; remove: boolean }>;
}

export interface AlterClientQuotasRequest {
  entries: AlterClientQuotasEntry[];
  validateOnly: boolean;
}

export interface AlterClientQuotasResult {
  errorCode: number;
  errorMessage: string | null;
  entity: QuotaEntityPart[];
}

export interface AlterClientQuotasResponse {
  throttleTimeMs: number;
  entries: AlterClientQuotasResult[];
}

const ENTITY: readonly Field[] = [
  { name: 'entityType', type: 'string', versions: '0+' },
  { name: 'entityName', type: 'string', versions: '0+', nullableVersions: '0+' },
];

export const DescribeClientQuotasApi = defineApi<DescribeClientQuotasRequest, DescribeClientQuotasResponse>({
  apiKey: 48,
  name: 'DescribeClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '1+',
  request: [
    {
      name: 'components', type: [
        { name: 'entityType', type: 'string', versions: '0+' },
        { name: 'matchType', type: 'int8', versions: '0+' },
        { name: 'match', type: 'string', versions: '0+', nullableVersions: '0+' },
      ], array: true, versions: '0+',
    },
    { name: 'strict', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    {
      name: 'entries', type: [
        { name: 'entity', type: ENTITY, array: true, versions: '0+' },
        {
          name: 'values', type: [
            { name: 'key', type: 'string', versions: '0+' },
            { name: 'value', type: 'float64', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+', nullableVersions: '0+',
    },
  ],
});

export const AlterClientQuotasApi = defineApi<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  apiKey: 49,
  name: 'AlterClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '1+',
  request: [
    {
      name: 'entries', type: [
        { name: 'entity', type: ENTITY, array: true, versions: '0+' },
        {
          name: 'ops', type: [
            { name: 'key', type: 'string', versions: '0+' },
            { name: 'value', type: 'float64', versions: '0+' },
            { name: 'remove', type: 'bool', versions: '0+' },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'entries', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        { name: 'entity', type: ENTITY, array: true, versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});
