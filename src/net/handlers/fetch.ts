// Fetch: asks the owning shards for file ranges (they park the request until min_bytes or
// max_wait), then either reads those ranges and hands the buffers to the response by reference,
// or, on a natively served connection, answers with the ranges themselves (leased segment fds)
// for the addon's sender to sendfile().
// No fetch sessions: always answers session id 0, which every client treats as "sessionless".
import type { FetchItem } from '../../actors/partition_router.js';
import { handler, type Wire } from '../handler.js';
import { FetchApi, type FetchRequest, type FetchResponse } from '../../protocol/apis/fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { RecordsValue } from '../../protocol/schema.js';

type TopicOut = Wire<FetchResponse['responses'][number]>;
type PartitionOut = Wire<FetchResponse['responses'][number]['partitions'][number]>;

// librdkafka waits 500 ms and kafkajs 5 s; anything far beyond that only pins memory.
const MAX_WAIT_MS_MAX = 60_000;
const BYTES_MAX = 0x7fffffff;
const EMPTY = Buffer.alloc(0);

function partitionOut(partitionIndex: number, errorCode: number, hw = -1, logStart = -1, records: RecordsValue = EMPTY, committed = false): PartitionOut {
  return {
    partitionIndex,
    errorCode,
    highWatermark: hw,
    lastStableOffset: hw,
    logStartOffset: logStart,
    abortedTransactions: committed ? [] : null,
    preferredReadReplica: -1,
    records,
  };
}

export const fetchHandler = handler({
  api: FetchApi,
  async handle(ctx, req: FetchRequest): Promise<Wire<FetchResponse>> {
    const b = ctx.broker;
    const byId = ctx.version >= 13;
    const committed = req.isolationLevel === 1;
    const items: FetchItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    const partitionLists: PartitionOut[][] = [];
    const responses: TopicOut[] = req.topics.map((t, ti) => {
      const topic = byId ? b.topics.table.getById(t.topicId) : b.topics.table.get(t.topic);
      const partitions = t.partitions.map((p, pi) => {
        if (!topic) return partitionOut(p.partition, byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        const handle = p.partition >= 0 && p.partition < topic.partitions ? b.topics.handle(topic.name, p.partition) : -1;
        if (handle < 0) {
          const code = p.partition >= 0 && p.partition < topic.partitions ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          return partitionOut(p.partition, code);
        }
        items.push({ handle, fetchOffset: p.fetchOffset, partitionMaxBytes: Math.min(Math.max(0, p.partitionMaxBytes), BYTES_MAX) });
        where.push([ti, pi, p.partition]);
        return partitionOut(p.partition, ErrorCode.NONE);
      });
      partitionLists.push(partitions);
      return { topic: t.topic, topicId: t.topicId, partitions };
    });
    const maxWait = Math.min(Math.max(0, req.maxWaitMs), MAX_WAIT_MS_MAX);
    // Kafka caps every response at fetch.max.bytes, and the connection's bound on queued response
    // bytes may cap it further while earlier responses are unsent.
    const asked = Math.min(ctx.version >= 3 ? Math.max(0, req.maxBytes) : BYTES_MAX, b.config.fetchMaxBytes);
    const maxBytes = ctx.reserveResponseBytes?.(asked, b.config.messageMaxBytes) ?? asked;
    const results = await b.router.fetch(items, maxWait, Math.max(0, req.minBytes), maxBytes);
    const leases = ctx.fileLeases ?? null;
    const reads = await Promise.all(
      results.map((r) => {
        if (r.errorCode !== 0 || r.ranges.length === 0) return null;
        return leases === null ? b.segments.readRanges(r.ranges) : b.segments.fileRanges(r.ranges, leases);
      }),
    );
    let bytesOut = 0;
    results.forEach((r, i) => {
      const [ti, pi, partition] = where[i]!;
      const chunks = reads[i];
      if (chunks) for (const c of chunks) bytesOut += c.length;
      partitionLists[ti]![pi] = partitionOut(partition, r.errorCode, r.highWatermark, r.logStartOffset, chunks ?? EMPTY, committed);
    });
    b.metrics.addBytesOut(bytesOut);
    return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses };
  },
});
