// What CreateAcls and DeleteAcls make of the image's ACLs, pure (Kafka's AclControlManager rules):
// each creation is answered on its own (INVALID_REQUEST for a binding Kafka refuses, nothing
// written for one that already exists); each deletion filter is answered with the ACLs it
// removes, an ACL matched by two filters removed once. Run by the active controller against its
// working image. Main thread.
import {
  bindingKey, checkFilter, filterMatches, MAX_ACLS, validBinding,
  type AclBinding, type AclBindingFields, type AclFilter,
} from '../../coordinator/acl/acl.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { MetadataImage } from './image.js';
import type { MetadataRecord } from './records.js';

/** A creation as CreateAcls carries it (codes not yet checked). */
export type AclCreation = AclBindingFields;

export interface AclResult {
  readonly errorCode: ErrorCode;
  readonly message: string | null;
}

export interface AclDeletionResult extends AclResult {
  readonly removed: readonly AclBinding[];
}

/** Bound on the creations or filters of one request. */
export const MAX_ACL_CHANGES = 1000;

function refusal(err: unknown): AclResult {
  if (!(err instanceof KafkaError)) throw err;
  return { errorCode: err.code, message: err.message };
}

function checkCount(n: number): void {
  if (n > MAX_ACL_CHANGES) throw new KafkaError(ErrorCode.INVALID_REQUEST, `more than ${MAX_ACL_CHANGES} ACL changes in one request`);
}

/** The records CreateAcls writes and one result per creation, in order; `newId` names each new ACL. */
export function aclCreations(image: MetadataImage, creations: readonly AclCreation[], newId: () => string): { records: MetadataRecord[]; results: AclResult[] } {
  checkCount(creations.length);
  const existing = new Set([...image.acls.values()].map(bindingKey));
  const records: MetadataRecord[] = [];
  const results = creations.map((c): AclResult => {
    try {
      const binding = validBinding(c);
      const key = bindingKey(binding);
      if (existing.has(key)) return { errorCode: ErrorCode.NONE, message: null };
      if (image.acls.size + records.length >= MAX_ACLS) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${MAX_ACLS} ACLs`);
      existing.add(key);
      records.push({ type: 'accessControlEntry', id: newId(), ...binding });
      return { errorCode: ErrorCode.NONE, message: null };
    } catch (err) {
      return refusal(err);
    }
  });
  return { records, results };
}

/** The records DeleteAcls writes and one result per filter, in order. */
export function aclDeletions(image: MetadataImage, filters: readonly AclFilter[]): { records: MetadataRecord[]; results: AclDeletionResult[] } {
  checkCount(filters.length);
  const removedIds = new Set<string>();
  const records: MetadataRecord[] = [];
  const results = filters.map((f): AclDeletionResult => {
    try {
      checkFilter(f);
    } catch (err) {
      return { ...refusal(err), removed: [] };
    }
    const removed = [...image.acls.values()].filter((acl) => filterMatches(f, acl));
    for (const acl of removed) {
      if (removedIds.has(acl.id)) continue;
      removedIds.add(acl.id);
      records.push({ type: 'removeAccessControlEntry', id: acl.id });
    }
    return { errorCode: ErrorCode.NONE, message: null, removed };
  });
  return { records, results };
}
