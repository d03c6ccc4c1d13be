// ElectLeaders on the client listener of a cluster node (main thread): the election runs on the
// active controller, reached through the controller channel as forwarded topic changes are, and
// its per-partition results go back grouped by topic. The wire shape is shared with the
// controller listener, which answers ElectLeaders forwarded by brokers.
import { callActiveController, type ControllerChannel } from '../../cluster/controller_channel.js';
import type { ElectionResult } from '../../cluster/metadata/replication_control.js';
import { ElectLeadersApi, type ElectLeadersRequest, type ElectLeadersResponse } from '../../protocol/apis/elect_leaders.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';

/** Bound on how long one election request may wait for the controller. */
export const MAX_ELECTION_TIMEOUT_MS = 300_000;

export interface ElectLeadersDeps {
  readonly controller: ControllerChannel;
}

/** The request's partitions as the controller takes them; null: every partition. */
export function electionPartitions(req: ElectLeadersRequest): { readonly topic: string; readonly partitions: readonly number[] }[] | null {
  return req.topicPartitions?.map((t) => ({ topic: t.topic, partitions: t.partitionId })) ?? null;
}

/** Results grouped by topic, in the order the topics first appear. */
export function electionResponse(errorCode: ErrorCode, results: readonly ElectionResult[]): Wire<ElectLeadersResponse> {
  const byTopic = new Map<string, ElectLeadersResponse['replicaElectionResults'][number]>();
  for (const r of results) {
    let t = byTopic.get(r.topic);
    if (t === undefined) byTopic.set(r.topic, (t = { topic: r.topic, partitionResult: [] }));
    t.partitionResult.push({ partitionId: r.partition, errorCode: r.errorCode, errorMessage: r.message });
  }
  return { throttleTimeMs: 0, errorCode, replicaElectionResults: [...byTopic.values()] };
}

/** A request refused whole: the code at the top (v1+) and on every named partition (which v0 reads). */
export function refusedElection(req: ElectLeadersRequest, code: ErrorCode, message: string | null): Wire<ElectLeadersResponse> {
  const results = (electionPartitions(req) ?? []).flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition, errorCode: code, message })));
  return electionResponse(code, results);
}

export const electLeadersHandler = handler({
  api: ElectLeadersApi,
  barrier: true,
  async handle(ctx, req: ElectLeadersRequest, deps: ElectLeadersDeps): Promise<Wire<ElectLeadersResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return refusedElection(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized on the cluster');
    const timeoutMs = Math.min(MAX_ELECTION_TIMEOUT_MS, Math.max(1, req.timeoutMs));
    try {
      const r = await callActiveController(deps.controller, { kind: 'electLeaders', electionType: req.electionType, partitions: electionPartitions(req) }, timeoutMs);
      if (r.kind !== 'electLeaders') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered ElectLeaders with ${r.kind}`);
      if (r.errorCode !== ErrorCode.NONE) return refusedElection(req, r.errorCode, null);
      return electionResponse(ErrorCode.NONE, r.results);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refusedElection(req, err.code, err.message);
    }
  },
});
