// ListOffsets: earliest (-2), latest (-1: the high watermark, which is also the last stable
// offset since there are no transactions), max timestamp (-3) and by timestamp, answered by
// the owning shard. Only the partition's leader answers; the client's current leader epoch
// (v4+) is checked against the cluster view's, whose epoch the answer carries.
import { checkLeaderEpoch, leadershipOf, type ClusterView } from '../../cluster/cluster_view.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import { handler, type Wire } from '../handler.js';
import { ListOffsetsApi, type ListOffsetsRequest, type ListOffsetsResponse } from '../../protocol/apis/list_offsets.js';
import { ErrorCode } from '../../protocol/errors.js';

type PartitionOut = Wire<ListOffsetsResponse['topics'][number]['partitions'][number]>;

export interface OffsetLookup {
  listOffset(handle: number, timestamp: number): Promise<{ errorCode: number; offset: number; timestamp: number }>;
}

export interface ListOffsetsDeps {
  readonly cluster: ClusterView;
  readonly partitions: PartitionLookup;
  readonly offsets: OffsetLookup;
}

function out(partitionIndex: number, errorCode: number, leaderEpoch = -1, offset = -1, timestamp = -1): PartitionOut {
  return { partitionIndex, errorCode, timestamp, offset, leaderEpoch };
}

export const listOffsetsHandler = handler({
  api: ListOffsetsApi,
  async handle(_ctx, req: ListOffsetsRequest, deps: ListOffsetsDeps): Promise<Wire<ListOffsetsResponse>> {
    const topics = await Promise.all(
      req.topics.map(async (t) => {
        const partitions = await Promise.all(
          t.partitions.map(async (p) => {
            const lead = leadershipOf(deps.cluster, t.name, p.partitionIndex);
            if (lead.kind === 'unknown') return out(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            if (lead.kind === 'notLeader') return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
            const epochError = checkLeaderEpoch(p.currentLeaderEpoch, lead.leaderEpoch);
            if (epochError !== ErrorCode.NONE) return out(p.partitionIndex, epochError);
            const handle = deps.partitions.handleOf(t.name, p.partitionIndex);
            if (handle < 0) return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
            const r = await deps.offsets.listOffset(handle, p.timestamp);
            return out(p.partitionIndex, r.errorCode, lead.leaderEpoch, r.offset, r.timestamp);
          }),
        );
        return { name: t.name, partitions };
      }),
    );
    return { throttleTimeMs: 0, topics };
  },
});
