// LeaveGroup (classic protocol): v0-2 name one member and carry its error at the top level;
// v3+ leave a batch of members (by member id and/or static instance id) with errors per member.
import { handler, type Wire } from '../handler.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { LeaveGroupApi, type LeaveGroupRequest, type LeaveGroupResponse } from '../../protocol/apis/leave_group.js';
import { ErrorCode } from '../../protocol/errors.js';

export const leaveGroupHandler = handler({
  api: LeaveGroupApi,
  async handle(ctx, req: LeaveGroupRequest, deps: GroupDeps): Promise<Wire<LeaveGroupResponse>> {
    const batched = ctx.version >= 3;
    if (req.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, members: [] };
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    const members = batched ? req.members : [{ memberId: req.memberId, groupInstanceId: null, reason: null }];
    const r = await deps.groups.call(req.groupId, { kind: 'leave', groupId: req.groupId, members });
    if (batched) return { throttleTimeMs: 0, errorCode: r.errorCode, members: r.members };
    return { throttleTimeMs: 0, errorCode: r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.members[0]?.errorCode ?? ErrorCode.NONE) };
  },
});
