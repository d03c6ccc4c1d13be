// UnregisterBroker on the client listener of a cluster node (main thread): the registration is
// forgotten on the active controller, reached through the controller channel as ElectLeaders is.
// Kafka's controller refuses only an id it does not know (BROKER_ID_NOT_REGISTERED) and leaves
// partitions that still list the broker as they are; `sluice cluster remove-broker` refuses
// before sending while any do. The broker drops out of Metadata and DescribeCluster once the
// record commits; the same id registers again as a new incarnation.
import { callActiveController, type ControllerChannel } from '../../cluster/controller_channel.js';
import { UnregisterBrokerApi, type UnregisterBrokerRequest, type UnregisterBrokerResponse } from '../../protocol/apis/unregister_broker.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';

export interface UnregisterBrokerDeps {
  readonly controller: ControllerChannel;
}

/** Bound on how long one unregistration may wait for the controller. */
export const UNREGISTER_TIMEOUT_MS = 30_000;

export const unregisterBrokerHandler = handler({
  api: UnregisterBrokerApi,
  barrier: true,
  async handle(ctx, req: UnregisterBrokerRequest, deps: UnregisterBrokerDeps): Promise<Wire<UnregisterBrokerResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized on the cluster' };
    try {
      const r = await callActiveController(deps.controller, { kind: 'unregisterBroker', brokerId: req.brokerId }, UNREGISTER_TIMEOUT_MS);
      if (r.kind !== 'unregisterBroker') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered UnregisterBroker with ${r.kind}`);
      return { throttleTimeMs: 0, errorCode: r.errorCode, errorMessage: null };
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return { throttleTimeMs: 0, errorCode: err.code, errorMessage: err.message };
    }
  },
});
