// ListOffsets: earliest (-2), latest (-1: the high watermark, which is also the last stable
// offset since there are no transactions), max timestamp (-3) and by timestamp, answered by
// the partitions' actors through the rings (one message per owning shard).
import type { ListOffsetsItem } from '../../actors/partition_router.js';
import { handler, type Wire } from '../handler.js';
import { ListOffsetsApi, type ListOffsetsRequest, type ListOffsetsResponse } from '../../protocol/apis/list_offsets.js';
import { ErrorCode } from '../../protocol/errors.js';

type PartitionOut = Wire<ListOffsetsResponse['topics'][number]['partitions'][number]>;

function out(partitionIndex: number, errorCode: number, offset = -1, timestamp = -1, leaderEpoch = 0): PartitionOut {
  return { partitionIndex, errorCode, timestamp, offset, leaderEpoch };
}

export const listOffsetsHandler = handler({
  api: ListOffsetsApi,
  async handle(ctx, req: ListOffsetsRequest): Promise<Wire<ListOffsetsResponse>> {
    const b = ctx.broker;
    const items: ListOffsetsItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    const topics = req.topics.map((t, ti) => {
      const topic = b.topics.table.get(t.name);
      const partitions = t.partitions.map((p, pi) => {
        if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) {
          return out(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        }
        const handle = b.topics.handle(t.name, p.partitionIndex);
        if (handle < 0) return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        items.push({ handle, timestamp: p.timestamp });
        where.push([ti, pi, p.partitionIndex]);
        return out(p.partitionIndex, ErrorCode.NONE);
      });
      return { name: t.name, partitions };
    });
    const outcomes = await b.router.listOffsets(items);
    outcomes.forEach((o, i) => {
      const [ti, pi, index] = where[i]!;
      // Errors keep the answer's old shape (leader epoch 0), whatever the shard filled in.
      topics[ti]!.partitions[pi] = o.errorCode === ErrorCode.NONE ? out(index, 0, o.offset, o.timestamp, o.leaderEpoch) : out(index, o.errorCode);
    });
    return { throttleTimeMs: 0, topics };
  },
});
