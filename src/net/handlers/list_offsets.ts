// ListOffsets: earliest (-2), latest (-1: the high watermark, which is also the last stable
// offset since there are no transactions), max timestamp (-3) and by timestamp, answered by the
// partitions' actors through the rings (one message per owning shard). Only the partition's
// leader answers; the client's current leader epoch (v4+) is checked against the cluster view's,
// whose epoch the answer carries. A topic the client may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED.
import { checkLeaderEpoch, leadershipOf, type PartitionsView } from '../../cluster/cluster_view.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import type { ListOffsetsItem, PartitionRouter } from '../../actors/partition_router.js';
import { handler, type Wire } from '../handler.js';
import { ListOffsetsApi, type ListOffsetsRequest, type ListOffsetsResponse } from '../../protocol/apis/list_offsets.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';

type PartitionOut = Wire<ListOffsetsResponse['topics'][number]['partitions'][number]>;

export type OffsetLookup = Pick<PartitionRouter, 'listOffsets'>;

export interface ListOffsetsDeps {
  readonly cluster: PartitionsView;
  readonly partitions: PartitionLookup;
  readonly offsets: OffsetLookup;
}

function out(partitionIndex: number, errorCode: number, leaderEpoch = -1, offset = -1, timestamp = -1): PartitionOut {
  return { partitionIndex, errorCode, timestamp, offset, leaderEpoch };
}

export const listOffsetsHandler = handler({
  api: ListOffsetsApi,
  async handle(ctx, req: ListOffsetsRequest, deps: ListOffsetsDeps): Promise<Wire<ListOffsetsResponse>> {
    const items: ListOffsetsItem[] = [];
    const where: Array<[number, number, number, number]> = []; // item -> [topic index, index in response, partition, leader epoch]
    const topics = req.topics.map((t, ti) => {
      const describable = permitsTopic(ctx.authorizer, AclOperation.DESCRIBE, t.name);
      const partitions = t.partitions.map((p, pi) => {
        if (!describable) return out(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        const lead = leadershipOf(deps.cluster, t.name, p.partitionIndex);
        if (lead.kind === 'unknown') return out(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        if (lead.kind === 'notLeader') return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const epochError = checkLeaderEpoch(p.currentLeaderEpoch, lead.leaderEpoch);
        if (epochError !== ErrorCode.NONE) return out(p.partitionIndex, epochError);
        const handle = deps.partitions.handleOf(t.name, p.partitionIndex);
        if (handle < 0) return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        items.push({ handle, timestamp: p.timestamp });
        where.push([ti, pi, p.partitionIndex, lead.leaderEpoch]);
        return out(p.partitionIndex, ErrorCode.NONE);
      });
      return { name: t.name, partitions };
    });
    const outcomes = await deps.offsets.listOffsets(items);
    outcomes.forEach((o, i) => {
      const [ti, pi, index, leaderEpoch] = where[i]!;
      topics[ti]!.partitions[pi] = o.errorCode === ErrorCode.NONE ? out(index, 0, leaderEpoch, o.offset, o.timestamp) : out(index, o.errorCode);
    });
    return { throttleTimeMs: 0, topics };
  },
});
