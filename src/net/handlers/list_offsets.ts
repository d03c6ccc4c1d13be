// ListOffsets: earliest (-2), latest (-1: the high watermark, which is also the last stable
// offset since there are no transactions), max timestamp (-3) and by timestamp, answered by
// the owning shard over the control channel.
import { handler, type Wire } from '../handler.js';
import { ListOffsetsApi, type ListOffsetsRequest, type ListOffsetsResponse } from '../../protocol/apis/list_offsets.js';
import { ErrorCode } from '../../protocol/errors.js';

type PartitionOut = Wire<ListOffsetsResponse['topics'][number]['partitions'][number]>;

function out(partitionIndex: number, errorCode: number, offset = -1, timestamp = -1): PartitionOut {
  return { partitionIndex, errorCode, timestamp, offset, leaderEpoch: 0 };
}

export const listOffsetsHandler = handler({
  api: ListOffsetsApi,
  async handle(ctx, req: ListOffsetsRequest): Promise<Wire<ListOffsetsResponse>> {
    const b = ctx.broker;
    const topics = await Promise.all(
      req.topics.map(async (t) => {
        const topic = b.topics.table.get(t.name);
        const partitions = await Promise.all(
          t.partitions.map(async (p) => {
            if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) {
              return out(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            }
            const handle = b.topics.handle(t.name, p.partitionIndex);
            if (handle < 0) return out(p.partitionIndex, ErrorCode.NOT_LEADER_OR_FOLLOWER);
            const r = await b.router.host(b.router.table.shardOf(handle)).control.listOffset(handle, p.timestamp);
            return out(p.partitionIndex, r.errorCode, r.offset, r.timestamp);
          }),
        );
        return { name: t.name, partitions };
      }),
    );
    return { throttleTimeMs: 0, topics };
  },
});
