// FindCoordinator: a group's coordinator is the broker leading its `__consumer_offsets`
// partition, as the cluster view has it; each key (v0-3 one, v4+ batched) is answered with that
// broker's address, or COORDINATOR_NOT_AVAILABLE while the partition has no live leader. There
// is no transaction-state topic yet: transactional ids are placed the way group ids are (and
// InitProducerId refuses them). Empty keys are refused as Kafka does.
import { brokerById, coordinatorOf, type ClusterView } from '../../cluster/cluster_view.js';
import { handler, type Wire } from '../handler.js';
import { FindCoordinatorApi, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../../protocol/apis/find_coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType } from '../../coordinator/acl/acl.js';
import { permits, type ConnectionAuthorizer } from '../acl_authority.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

export interface FindCoordinatorDeps {
  readonly cluster: ClusterView;
}

type CoordinatorOut = Wire<FindCoordinatorResponse['coordinators'][number]>;

function answer(cluster: ClusterView, authorizer: ConnectionAuthorizer | null | undefined, key: string, keyType: number): CoordinatorOut {
  const fail = (errorCode: number, errorMessage: string): CoordinatorOut => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage });
  if (key.length === 0 || (keyType !== KEY_TYPE_GROUP && keyType !== KEY_TYPE_TRANSACTION)) {
    return fail(ErrorCode.INVALID_REQUEST, `invalid coordinator key '${key}' of type ${keyType}`);
  }
  const group = keyType === KEY_TYPE_GROUP;
  if (!permits(authorizer, AclOperation.DESCRIBE, group ? ResourceType.GROUP : ResourceType.TRANSACTIONAL_ID, key)) {
    return fail(group ? ErrorCode.GROUP_AUTHORIZATION_FAILED : ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, `not authorized to describe '${key}'`);
  }
  const node = brokerById(cluster, coordinatorOf(cluster, key));
  if (node === undefined) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, `the coordinator of '${key}' is not available`);
  return { key, nodeId: node.id, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

export const findCoordinatorHandler = handler({
  api: FindCoordinatorApi,
  handle(ctx, req: FindCoordinatorRequest, deps: FindCoordinatorDeps): Wire<FindCoordinatorResponse> {
    if (ctx.version >= 4) {
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: -1, host: '', port: -1, coordinators: req.coordinatorKeys.map((k) => answer(deps.cluster, ctx.authorizer, k, req.keyType)) };
    }
    const one = answer(deps.cluster, ctx.authorizer, req.key, req.keyType);
    return { throttleTimeMs: 0, errorCode: one.errorCode, errorMessage: one.errorMessage, nodeId: one.nodeId, host: one.host, port: one.port, coordinators: [] };
  },
});
