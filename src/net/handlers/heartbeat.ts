// Heartbeat (classic protocol): keeps a member's session alive and tells it, with
// REBALANCE_IN_PROGRESS, when it must rejoin.
import { handler, type Wire } from '../handler.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { HeartbeatApi, type HeartbeatRequest, type HeartbeatResponse } from '../../protocol/apis/heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';

export const heartbeatHandler = handler({
  api: HeartbeatApi,
  async handle(ctx, req: HeartbeatRequest, deps: GroupDeps): Promise<Wire<HeartbeatResponse>> {
    if (req.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID };
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const r = await deps.groups.call(req.groupId, {
      kind: 'heartbeat', groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId,
    });
    return { throttleTimeMs: 0, errorCode: r.errorCode };
  },
});
