// DescribeCluster: this node is the whole cluster and its controller.
import { handler, type Wire } from '../handler.js';
import { DescribeClusterApi, type DescribeClusterResponse } from '../../protocol/apis/describe_cluster.js';

const NOT_REQUESTED = -2147483648;

export const describeClusterHandler = handler({
  api: DescribeClusterApi,
  handle(ctx): Wire<DescribeClusterResponse> {
    const b = ctx.broker;
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: 1,
      clusterId: b.clusterId,
      controllerId: b.nodeId,
      brokers: [{ brokerId: b.nodeId, host: b.advertisedHost, port: b.advertisedPort, rack: null }],
      clusterAuthorizedOperations: NOT_REQUESTED,
    };
  },
});
