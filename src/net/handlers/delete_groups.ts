// DeleteGroups: removes groups with no members together with their committed offsets
// (NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for unknown ones).
import { handler, type Wire } from '../handler.js';
import { splitByGroupAccess, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { ErrorCode } from '../../protocol/errors.js';
import { DeleteGroupsApi, type DeleteGroupsRequest, type DeleteGroupsResponse } from '../../protocol/apis/delete_groups.js';

export const deleteGroupsHandler = handler({
  api: DeleteGroupsApi,
  async handle(ctx, req: DeleteGroupsRequest, deps: GroupDeps): Promise<Wire<DeleteGroupsResponse>> {
    const { denied, allowed } = splitByGroupAccess(ctx, AclOperation.DELETE, req.groupsNames);
    const results = allowed.length === 0 ? [] : await deps.groups.callByGroup({ kind: 'deleteGroups', groupIds: allowed }, (r) => (r.kind === 'deleteGroups' ? r.results : []));
    return { throttleTimeMs: 0, results: [...denied.map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })), ...results] };
  },
});
