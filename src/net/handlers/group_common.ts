// What the consumer-group handlers share: their one dependency (the group coordinators),
// turning the coordinator's byte arrays back into Buffers for the codecs, and Kafka's
// "authorized operations not requested" marker, and the group ACL check. Main thread.
import type { GroupCalls } from '../../actors/group_directory.js';
import type { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsGroup } from '../acl_authority.js';
import type { HandlerContext } from '../handler.js';

export interface GroupDeps {
  readonly groups: GroupCalls;
}

/** Byte fields come back from a shard as Buffers or plain Uint8Arrays; the codecs take Buffers. */
export function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** INT32_MIN: the client did not ask for authorized operations. */
export const OPERATIONS_NOT_REQUESTED = -2147483648;

/** Whether the request's principal may not perform `op` on group `groupId` (then GROUP_AUTHORIZATION_FAILED). */
export function groupDenied(ctx: HandlerContext, op: AclOperation, groupId: string): boolean {
  return !permitsGroup(ctx.authorizer, op, groupId);
}

/** The groups the principal may not perform `op` on, and the others (in request order). */
export function splitByGroupAccess(ctx: HandlerContext, op: AclOperation, groupIds: readonly string[]): { readonly denied: string[]; readonly allowed: string[] } {
  const denied = groupIds.filter((g) => groupDenied(ctx, op, g));
  return { denied, allowed: denied.length === 0 ? [...groupIds] : groupIds.filter((g) => !denied.includes(g)) };
}
