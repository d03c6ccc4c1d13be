// ConsumerGroupDescribe (KIP-848): epochs, assignor, and each member's current and target
// assignment. Unknown groups get GROUP_ID_NOT_FOUND, as in Kafka.
import { handler, type Wire } from '../handler.js';
import {
  ConsumerGroupDescribeApi,
  type ConsumerGroupDescribeRequest,
  type ConsumerGroupDescribeResponse,
} from '../../protocol/apis/consumer_group_describe.js';
import { splitByGroupAccess, OPERATIONS_NOT_REQUESTED, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { ErrorCode } from '../../protocol/errors.js';

export const consumerGroupDescribeHandler = handler({
  api: ConsumerGroupDescribeApi,
  async handle(ctx, req: ConsumerGroupDescribeRequest, deps: GroupDeps): Promise<Wire<ConsumerGroupDescribeResponse>> {
    const { denied, allowed } = splitByGroupAccess(ctx, AclOperation.DESCRIBE, req.groupIds);
    const found = allowed.length === 0 ? [] : await deps.groups.callByGroup({ kind: 'consumerDescribe', groupIds: allowed }, (r) => (r.kind === 'consumerDescribe' ? r.groups : []));
    return {
      throttleTimeMs: 0,
      groups: [...denied.map((groupId) => ({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: `not authorized on group ${groupId}`, groupId, groupState: '',
        groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [], authorizedOperations: OPERATIONS_NOT_REQUESTED,
      })), ...found.map((g) => ({
        errorCode: g.errorCode,
        errorMessage: g.errorMessage,
        groupId: g.groupId,
        groupState: g.state,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: g.assignorName,
        members: g.members.map((m) => ({
          memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, memberEpoch: m.memberEpoch,
          clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: m.subscribedTopicNames,
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: { topicPartitions: m.assignment }, targetAssignment: { topicPartitions: m.targetAssignment },
        })),
        authorizedOperations: OPERATIONS_NOT_REQUESTED,
      }))],
    };
  },
});
