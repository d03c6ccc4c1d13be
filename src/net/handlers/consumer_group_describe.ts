// ConsumerGroupDescribe (KIP-848): epochs, assignor, and each member's current and target
// assignment. Unknown groups get GROUP_ID_NOT_FOUND, as in Kafka.
import { handler, type Wire } from '../handler.js';
import {
  ConsumerGroupDescribeApi,
  type ConsumerGroupDescribeRequest,
  type ConsumerGroupDescribeResponse,
} from '../../protocol/apis/consumer_group_describe.js';
import { OPERATIONS_NOT_REQUESTED, type GroupDeps } from './group_common.js';

export const consumerGroupDescribeHandler = handler({
  api: ConsumerGroupDescribeApi,
  async handle(_ctx, req: ConsumerGroupDescribeRequest, deps: GroupDeps): Promise<Wire<ConsumerGroupDescribeResponse>> {
    const found = await deps.groups.callByGroup({ kind: 'consumerDescribe', groupIds: req.groupIds }, (r) => (r.kind === 'consumerDescribe' ? r.groups : []));
    return {
      throttleTimeMs: 0,
      groups: found.map((g) => ({
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
      })),
    };
  },
});
