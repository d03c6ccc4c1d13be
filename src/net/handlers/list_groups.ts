// ListGroups: every coordinator's groups, filtered by state (v4+) and type (v5+). Kafka matches
// filters case-insensitively (some clients send STABLE), so they are put in canonical form here.
import { handler, type Wire } from '../handler.js';
import type { GroupDeps } from './group_common.js';
import { ListGroupsApi, type ListGroupsRequest, type ListGroupsResponse } from '../../protocol/apis/list_groups.js';

const STATES = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Assigning', 'Reconciling'];
const canonicalState = (s: string): string => STATES.find((k) => k.toLowerCase() === s.toLowerCase()) ?? s;

export const listGroupsHandler = handler({
  api: ListGroupsApi,
  async handle(ctx, req: ListGroupsRequest, deps: GroupDeps): Promise<Wire<ListGroupsResponse>> {
    const groups = await deps.groups.list({
      kind: 'list',
      statesFilter: ctx.version >= 4 ? req.statesFilter.map(canonicalState) : [],
      typesFilter: ctx.version >= 5 ? req.typesFilter.map((t) => t.toLowerCase()) : [],
    });
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      groups: groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: g.type })),
    };
  },
});
