// ConsumerGroupHeartbeat (KIP-848): one call carries join, heartbeat, subscription changes,
// owned partitions and leave; the coordinator answers with the member's epoch and, when it
// changed, its new assignment.
import { handler, type Wire } from '../handler.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import {
  ConsumerGroupHeartbeatApi,
  type ConsumerGroupHeartbeatRequest,
  type ConsumerGroupHeartbeatResponse,
} from '../../protocol/apis/consumer_group_heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';

export const consumerGroupHeartbeatHandler = handler({
  api: ConsumerGroupHeartbeatApi,
  async handle(ctx, req: ConsumerGroupHeartbeatRequest, deps: GroupDeps): Promise<Wire<ConsumerGroupHeartbeatResponse>> {
    if (req.groupId === '') {
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'GroupId can\'t be empty.', memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    const refuse = (errorCode: number, errorMessage: string): Wire<ConsumerGroupHeartbeatResponse> => (
      { errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null }
    );
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) return refuse(ErrorCode.GROUP_AUTHORIZATION_FAILED, `not authorized on group ${req.groupId}`);
    const hidden = req.subscribedTopicNames?.find((t) => !permitsTopic(ctx.authorizer, AclOperation.DESCRIBE, t));
    if (hidden !== undefined) return refuse(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `not authorized on topic ${hidden}`);
    const r = await deps.groups.call(req.groupId, {
      kind: 'consumerHeartbeat',
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      instanceId: req.instanceId,
      rackId: req.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: req.subscribedTopicNames,
      subscribedTopicRegex: ctx.version >= 1 ? req.subscribedTopicRegex : null,
      serverAssignor: req.serverAssignor,
      ownedPartitions: req.topicPartitions,
      clientId: ctx.header.clientId ?? '',
      clientHost: ctx.clientHost,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      memberId: r.memberId,
      memberEpoch: r.memberEpoch,
      heartbeatIntervalMs: r.heartbeatIntervalMs,
      assignment: r.assignment === null ? null : { topicPartitions: r.assignment },
    };
  },
});
