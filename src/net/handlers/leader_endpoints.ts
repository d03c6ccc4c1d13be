// KIP-951: a response that names other brokers as partition leaders (Produce v10+, Fetch v16+)
// also carries their endpoints, so the client can go there without a Metadata round trip.
// Main thread, or a shard serving a placed connection.
import { brokerById, type ClusterView } from '../../cluster/cluster_view.js';
import type { NodeEndpoint } from '../../protocol/apis/leader_hints.js';

export function leaderEndpoints(cluster: Pick<ClusterView, 'brokers'>, leaderIds: Iterable<number>): NodeEndpoint[] {
  const out: NodeEndpoint[] = [];
  for (const id of leaderIds) {
    const b = brokerById(cluster, id);
    if (b !== undefined) out.push({ nodeId: b.id, host: b.host, port: b.port, rack: b.rack });
  }
  return out;
}
