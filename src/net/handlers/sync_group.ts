// SyncGroup (classic protocol): the leader hands in every member's assignment; each member,
// leader included, gets back its own once the group's record is durable.
import { handler, type Wire } from '../handler.js';
import { SyncGroupApi, type SyncGroupRequest, type SyncGroupResponse } from '../../protocol/apis/sync_group.js';
import { ErrorCode } from '../../protocol/errors.js';
import { asBuffer, groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';

export const syncGroupHandler = handler({
  api: SyncGroupApi,
  async handle(ctx, req: SyncGroupRequest, deps: GroupDeps): Promise<Wire<SyncGroupResponse>> {
    if (req.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, assignment: Buffer.alloc(0) };
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment: Buffer.alloc(0) };
    const r = await deps.groups.call(req.groupId, {
      kind: 'sync',
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId,
      protocolType: ctx.version >= 5 ? req.protocolType : null,
      protocolName: ctx.version >= 5 ? req.protocolName : null,
      assignments: req.assignments,
    });
    return { throttleTimeMs: 0, errorCode: r.errorCode, protocolType: r.protocolType, protocolName: r.protocolName, assignment: asBuffer(r.assignment) };
  },
});
