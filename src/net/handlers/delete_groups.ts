// DeleteGroups: removes groups with no members together with their committed offsets
// (NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for unknown ones).
import { handler, type Wire } from '../handler.js';
import type { GroupDeps } from './group_common.js';
import { DeleteGroupsApi, type DeleteGroupsRequest, type DeleteGroupsResponse } from '../../protocol/apis/delete_groups.js';

export const deleteGroupsHandler = handler({
  api: DeleteGroupsApi,
  async handle(_ctx, req: DeleteGroupsRequest, deps: GroupDeps): Promise<Wire<DeleteGroupsResponse>> {
    const results = await deps.groups.callByGroup({ kind: 'deleteGroups', groupIds: req.groupsNames }, (r) => (r.kind === 'deleteGroups' ? r.results : []));
    return { throttleTimeMs: 0, results };
  },
});
