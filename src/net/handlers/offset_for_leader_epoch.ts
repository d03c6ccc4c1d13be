// OffsetForLeaderEpoch: for each partition, the largest leader epoch <= the asked one that the
// log knows and where it ends (the next epoch's start, or the log end for the latest), read from
// the partition's leader-epoch cache by its actor through the rings; -1/-1 when the log cannot
// place the epoch. As in Kafka only the partition's leader answers, whoever asks: consumers
// (replica id -1, KIP-320 truncation detection), tools (-2) and followers (>= 0, which must be
// replicas of the partition). The client's current leader epoch (v2+) is checked against the
// cluster view's. A consumer's or tool's request for a topic it may not DESCRIBE is
// TOPIC_AUTHORIZATION_FAILED; a follower's from a principal without CLUSTER_ACTION on the cluster
// is CLUSTER_AUTHORIZATION_FAILED for every partition, as Kafka answers it. Main thread.
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import type { EpochEndItem, PartitionRouter } from '../../actors/partition_router.js';
import { checkLeaderEpoch, isFalseFollower, leadershipOf, type PartitionsView } from '../../cluster/cluster_view.js';
import { handler, type Wire } from '../handler.js';
import {
  OffsetForLeaderEpochApi,
  type OffsetForLeaderEpochRequest,
  type OffsetForLeaderEpochResponse,
} from '../../protocol/apis/offset_for_leader_epoch.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsReplication, permitsTopic } from '../acl_authority.js';

type PartitionOut = Wire<OffsetForLeaderEpochResponse['topics'][number]['partitions'][number]>;

export type EpochEndLookup = Pick<PartitionRouter, 'epochEndOffsets'>;

export interface OffsetForLeaderEpochDeps {
  readonly cluster: PartitionsView;
  readonly partitions: PartitionLookup;
  readonly offsets: EpochEndLookup;
}

function out(partition: number, errorCode: number, leaderEpoch = -1, endOffset = -1): PartitionOut {
  return { errorCode, partition, leaderEpoch, endOffset };
}

export const offsetForLeaderEpochHandler = handler({
  api: OffsetForLeaderEpochApi,
  async handle(ctx, req: OffsetForLeaderEpochRequest, deps: OffsetForLeaderEpochDeps): Promise<Wire<OffsetForLeaderEpochResponse>> {
    const replicaId = ctx.version >= 3 ? req.replicaId : -2;
    const items: EpochEndItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    const denied = replicaId >= 0 && !permitsReplication(ctx.authorizer) ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : null;
    const topics = req.topics.map((t, ti) => {
      const refusal = denied ?? (replicaId < 0 && !permitsTopic(ctx.authorizer, AclOperation.DESCRIBE, t.topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : null);
      const partitions = t.partitions.map((p, pi) => {
        if (refusal !== null) return out(p.partition, refusal);
        const lead = leadershipOf(deps.cluster, t.topic, p.partition);
        if (lead.kind === 'unknown') return out(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        if (lead.kind === 'notLeader') return out(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const epochError = checkLeaderEpoch(p.currentLeaderEpoch, lead.leaderEpoch);
        if (epochError !== ErrorCode.NONE) return out(p.partition, epochError);
        if (isFalseFollower(deps.cluster, t.topic, p.partition, replicaId)) return out(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const handle = deps.partitions.handleOf(t.topic, p.partition);
        if (handle < 0) return out(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        items.push({ handle, leaderEpoch: p.leaderEpoch });
        where.push([ti, pi, p.partition]);
        return out(p.partition, ErrorCode.NONE);
      });
      return { topic: t.topic, partitions };
    });
    const outcomes = await deps.offsets.epochEndOffsets(items);
    outcomes.forEach((o, i) => {
      const [ti, pi, partition] = where[i]!;
      topics[ti]!.partitions[pi] = o.errorCode === ErrorCode.NONE ? out(partition, ErrorCode.NONE, o.leaderEpoch, o.offset) : out(partition, o.errorCode);
    });
    return { throttleTimeMs: 0, topics };
  },
});
