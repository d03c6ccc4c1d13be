// ListGroups: every coordinator's groups, filtered by state (v4+) and type (v5+). Kafka matches
// filters case-insensitively (some clients send STABLE), so they are put in canonical form here.
import { handler, type Wire } from '../handler.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
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
    // As Kafka: DESCRIBE on the cluster lists every group, otherwise only those the principal may describe.
    const visible = permitsCluster(ctx.authorizer, AclOperation.DESCRIBE) ? groups : groups.filter((g) => !groupDenied(ctx, AclOperation.DESCRIBE, g.groupId));
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      groups: visible.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: g.type })),
    };
  },
});
