// ACL vocabulary and rules with Kafka's semantics, pure (any thread): resource types, pattern
// types, operations and permissions with Kafka's int8 codes (as CreateAcls/DescribeAcls/DeleteAcls
// and the metadata records carry them), what makes a binding valid, and which bindings a filter
// (DescribeAcls, DeleteAcls) selects: ANY matches every value, MATCH every pattern that applies to
// the named resource (the literal name, the literal wildcard `*` and every prefix of it).
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5 } as const;
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternType = (typeof PatternType)[keyof typeof PatternType];

export const AclOperation = {
  UNKNOWN: 0, ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8,
  CLUSTER_ACTION: 9, DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12,
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermission = (typeof AclPermission)[keyof typeof AclPermission];

/** The one CLUSTER resource's name. */
export const CLUSTER_RESOURCE = 'kafka-cluster';
/** A literal resource name or principal/host that matches every one. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';
/** The principal of a connection that did not authenticate. */
export const ANONYMOUS_PRINCIPAL = 'User:ANONYMOUS';

/** Bounds on a binding's strings (each is held by every node) and on the bindings of a cluster. */
export const MAX_ACL_NAME_CHARS = 1000;
export const MAX_ACLS = 100_000;

/** One ACL: who may or may not do what to which resources, from where. */
export interface AclBinding {
  readonly resourceType: ResourceType;
  readonly resourceName: string;
  /** LITERAL or PREFIXED. */
  readonly patternType: PatternType;
  /** `User:NAME` or `User:*`. */
  readonly principal: string;
  /** A client address or `*`. */
  readonly host: string;
  readonly operation: AclOperation;
  /** ALLOW or DENY. */
  readonly permission: AclPermission;
}

/** A binding's fields with codes not yet checked, as CreateAcls carries them. */
export interface AclBindingFields {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permission: number;
}

/** A DescribeAcls or DeleteAcls filter: null strings and ANY codes match every value. */
export interface AclFilter {
  readonly resourceType: number;
  readonly resourceName: string | null;
  readonly patternType: number;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: number;
  readonly permission: number;
}

const NAMES = <T extends Record<string, number>>(codes: T): ReadonlyMap<number, string> => new Map(Object.entries(codes).map(([k, v]) => [v, k]));
const RESOURCE_NAMES = NAMES(ResourceType);
const PATTERN_NAMES = NAMES(PatternType);
const OPERATION_NAMES = NAMES(AclOperation);
const PERMISSION_NAMES = NAMES(AclPermission);

export function resourceTypeName(code: number): string {
  return RESOURCE_NAMES.get(code) ?? `UNKNOWN(${code})`;
}
export function patternTypeName(code: number): string {
  return PATTERN_NAMES.get(code) ?? `UNKNOWN(${code})`;
}
export function operationName(code: number): string {
  return OPERATION_NAMES.get(code) ?? `UNKNOWN(${code})`;
}
export function permissionName(code: number): string {
  return PERMISSION_NAMES.get(code) ?? `UNKNOWN(${code})`;
}

/** The code of an upper- or lower-case name (`read`, `PREFIXED`, `idempotent-write`), or undefined. */
export function codeOf<T extends Record<string, number>>(codes: T, name: string): T[keyof T] | undefined {
  const key = name.toUpperCase().replace(/-/g, '_');
  return Object.hasOwn(codes, key) ? codes[key as keyof T] : undefined;
}

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_REQUEST, message);
}

function checkText(what: string, s: string): void {
  if (s === '') throw invalid(`the ${what} must not be empty`);
  if (s.length > MAX_ACL_NAME_CHARS) throw invalid(`the ${what} is longer than ${MAX_ACL_NAME_CHARS} characters`);
}

/** The binding CreateAcls asked for, typed, or INVALID_REQUEST saying what is wrong (as Kafka refuses it). */
export function validBinding(b: AclBindingFields): AclBinding {
  const { resourceType, patternType, operation, permission } = b;
  if (resourceType < ResourceType.TOPIC || resourceType > ResourceType.TRANSACTIONAL_ID) throw invalid(`resource type ${resourceTypeName(resourceType)} cannot carry an ACL`);
  if (patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED) throw invalid(`pattern type ${patternTypeName(patternType)} cannot carry an ACL`);
  if (operation < AclOperation.ALL || operation > AclOperation.IDEMPOTENT_WRITE) throw invalid(`operation ${operationName(operation)} cannot carry an ACL`);
  if (permission !== AclPermission.ALLOW && permission !== AclPermission.DENY) throw invalid(`permission ${permissionName(permission)} cannot carry an ACL`);
  checkText('resource name', b.resourceName);
  checkText('host', b.host);
  checkText('principal', b.principal);
  if (resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE) throw invalid(`the cluster resource is named ${CLUSTER_RESOURCE}`);
  if (patternType === PatternType.PREFIXED && b.resourceName === WILDCARD) throw invalid('a prefixed pattern cannot be the wildcard');
  const colon = b.principal.indexOf(':');
  if (colon <= 0 || colon === b.principal.length - 1) throw invalid(`principal ${b.principal} is not TYPE:NAME`);
  return { resourceType, resourceName: b.resourceName, patternType, principal: b.principal, host: b.host, operation, permission } as AclBinding;
}

/** Whether a filter's own codes make sense (Kafka answers INVALID_REQUEST for UNKNOWN ones). */
export function checkFilter(f: AclFilter): void {
  const known = (names: ReadonlyMap<number, string>, code: number): boolean => code !== 0 && names.has(code);
  if (!known(RESOURCE_NAMES, f.resourceType) || !known(PATTERN_NAMES, f.patternType) || !known(OPERATION_NAMES, f.operation) || !known(PERMISSION_NAMES, f.permission)) {
    throw invalid('the filter has an unknown resource type, pattern type, operation or permission');
  }
}

/** Whether a binding's pattern applies to the resource named `name` (of the same type). */
export function patternApplies(b: Pick<AclBinding, 'patternType' | 'resourceName'>, name: string): boolean {
  return b.patternType === PatternType.LITERAL
    ? b.resourceName === name || b.resourceName === WILDCARD
    : name.startsWith(b.resourceName);
}

function patternMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.patternType === PatternType.MATCH) return f.resourceName === null || patternApplies(b, f.resourceName);
  if (f.patternType !== PatternType.ANY && f.patternType !== b.patternType) return false;
  return f.resourceName === null || f.resourceName === b.resourceName;
}

/** Whether DescribeAcls or DeleteAcls with filter `f` selects binding `b`. */
export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  return (f.resourceType === ResourceType.ANY || f.resourceType === b.resourceType)
    && patternMatches(f, b)
    && (f.principal === null || f.principal === b.principal)
    && (f.host === null || f.host === b.host)
    && (f.operation === AclOperation.ANY || f.operation === b.operation)
    && (f.permission === AclPermission.ANY || f.permission === b.permission);
}

/** The identity of a binding: two bindings with the same key are the same ACL (CreateAcls of an existing one adds nothing). */
export function bindingKey(b: AclBindingFields): string {
  return JSON.stringify([b.resourceType, b.resourceName, b.patternType, b.principal, b.host, b.operation, b.permission]);
}
