// DescribeGroups: state, chosen protocol and members (with their metadata and assignment) of
// classic groups; unknown groups come back as Dead with no error, as in Kafka. The coordinator
// names KIP-848 groups GROUP_ID_NOT_FOUND (DescribeGroups v6); our versions (≤5) answer them
// as Dead with no error, as Kafka does below v6.
import { handler, type Wire } from '../handler.js';
import { DescribeGroupsApi, type DescribeGroupsRequest, type DescribeGroupsResponse } from '../../protocol/apis/describe_groups.js';
import { ErrorCode } from '../../protocol/errors.js';
import { asBuffer, splitByGroupAccess, OPERATIONS_NOT_REQUESTED, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';

export const describeGroupsHandler = handler({
  api: DescribeGroupsApi,
  async handle(ctx, req: DescribeGroupsRequest, deps: GroupDeps): Promise<Wire<DescribeGroupsResponse>> {
    const { denied, allowed } = splitByGroupAccess(ctx, AclOperation.DESCRIBE, req.groups);
    const found = allowed.length === 0 ? [] : await deps.groups.callByGroup({ kind: 'describe', groupIds: allowed }, (r) => (r.kind === 'describe' ? r.groups : []));
    return {
      throttleTimeMs: 0,
      groups: [...denied.map((groupId) => ({
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, groupId, groupState: '', protocolType: '', protocolData: '', members: [],
        authorizedOperations: OPERATIONS_NOT_REQUESTED,
      })), ...found.map((g) => ({
        errorCode: g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND ? ErrorCode.NONE : g.errorCode,
        groupId: g.groupId,
        groupState: g.state,
        protocolType: g.protocolType,
        protocolData: g.protocol,
        members: g.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          memberMetadata: asBuffer(m.metadata), memberAssignment: asBuffer(m.assignment),
        })),
        authorizedOperations: OPERATIONS_NOT_REQUESTED,
      }))],
    };
  },
});
