// JoinGroup (classic protocol): maps every version onto one coordinator call. v0 has no
// rebalance timeout (the session timeout stands in, as in Kafka); v4+ asks new dynamic members
// for a second round with MEMBER_ID_REQUIRED; names that are nullable only from v7 are sent as
// '' before that. The answer may take a whole rebalance to arrive.
import { handler, type Wire } from '../handler.js';
import { JoinGroupApi, type JoinGroupRequest, type JoinGroupResponse } from '../../protocol/apis/join_group.js';
import { ErrorCode } from '../../protocol/errors.js';
import { asBuffer, groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';

export const joinGroupHandler = handler({
  api: JoinGroupApi,
  async handle(ctx, req: JoinGroupRequest, deps: GroupDeps): Promise<Wire<JoinGroupResponse>> {
    const legacyNames = ctx.version < 7;
    if (req.groupId === '') {
      return { errorCode: ErrorCode.INVALID_GROUP_ID, generationId: -1, protocolName: legacyNames ? '' : null, leader: '', memberId: req.memberId, members: [] };
    }
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolName: legacyNames ? '' : null, leader: '', memberId: req.memberId, members: [] };
    }
    const r = await deps.groups.call(req.groupId, {
      kind: 'join',
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: ctx.version === 0 || req.rebalanceTimeoutMs < 0 ? req.sessionTimeoutMs : req.rebalanceTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols,
      clientId: ctx.header.clientId ?? '',
      clientHost: ctx.clientHost,
      requireKnownMemberId: ctx.version >= 4,
      reason: req.reason,
    });
    // Before v9 a static leader rejoining a stable group cannot be told to skip assigning; Kafka
    // answers it as a follower (no members, a leader id not its own), so it just syncs again.
    const asFollower = r.skipAssignment && ctx.version < 9;
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: r.protocolType,
      protocolName: r.protocolName ?? (legacyNames ? '' : null),
      leader: asFollower ? '' : r.leader,
      skipAssignment: r.skipAssignment,
      memberId: r.memberId,
      members: asFollower ? [] : r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: asBuffer(m.metadata) })),
    };
  },
});
