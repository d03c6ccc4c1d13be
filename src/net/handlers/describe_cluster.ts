// DescribeCluster: the live brokers (v2: on request the fenced ones too, marked) and the
// controller as the cluster view has them, each broker still warming up marked and each broker's
// admin HTTP address (Sluice's tags).
import type { ClusterView } from '../../cluster/cluster_view.js';
import { handler, type Wire } from '../handler.js';
import { DescribeClusterApi, type DescribeClusterRequest, type DescribeClusterResponse } from '../../protocol/apis/describe_cluster.js';

const NOT_REQUESTED = -2147483648;
/** Endpoint type 1: brokers (2 would be controllers, which this broker does not describe). */
const ENDPOINT_BROKERS = 1;

export interface DescribeClusterDeps {
  readonly cluster: ClusterView;
}

export const describeClusterHandler = handler({
  api: DescribeClusterApi,
  handle(_ctx, req: DescribeClusterRequest, deps: DescribeClusterDeps): Wire<DescribeClusterResponse> {
    const { cluster } = deps;
    const brokers = cluster.brokerStates()
      .filter((b) => b.host !== null && (req.includeFencedBrokers || !b.fenced))
      .map((b) => ({ brokerId: b.id, host: b.host!, port: b.port, rack: b.rack, isFenced: b.fenced, sluiceWarming: b.warming, sluiceAdminAddress: b.adminAddress }));
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: ENDPOINT_BROKERS,
      clusterId: cluster.clusterId,
      controllerId: cluster.controllerId(),
      brokers,
      clusterAuthorizedOperations: NOT_REQUESTED,
    };
  },
});
