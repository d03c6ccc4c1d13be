// DescribeLogDirs: the replicas this broker holds (leaders and followers alike) in its one log
// dir, the data dir, each with the bytes of its segments, and the dir's total and usable bytes
// (v4). Runs on the main thread; the sizes come from the partition actors on the shards (the
// same per-partition snapshot the metrics scrape reads), so nothing here touches segment files.
// Kafka's rules: a request naming topics answers only those of its partitions held here (the
// rest are left out, not errors); null topics answers every partition; OffsetLag of a current
// replica is how far its log end is below the high watermark, never negative.
import type { PartitionSnapshot } from '../../actors/shard_snapshot.js';
import type { DiskSpace } from '../../common/disk_space.js';
import {
  DescribeLogDirsApi, type DescribeLogDirsPartition, type DescribeLogDirsRequest, type DescribeLogDirsResponse, type DescribeLogDirsTopic,
} from '../../protocol/apis/describe_log_dirs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';

export interface DescribeLogDirsDeps {
  readonly logDirs: {
    /** Absolute path of the data dir. */
    readonly path: string;
    /** Every partition open on this broker's shards. */
    partitions(): Promise<readonly PartitionSnapshot[]>;
    space(): Promise<DiskSpace>;
  };
}

/** The asked (topic, partition) pairs as "topic\0partition" keys; null: all. Bounded by the request frame. */
function wanted(req: DescribeLogDirsRequest): Set<string> | null {
  if (req.topics === null) return null;
  const keys = new Set<string>();
  for (const t of req.topics) for (const p of t.partitions) keys.add(`${t.topic}\0${p}`);
  return keys;
}

/** The partitions kept, grouped by topic, topics by name and partitions by index. */
function logDirTopics(partitions: readonly PartitionSnapshot[], keep: Set<string> | null): DescribeLogDirsTopic[] {
  const byTopic = new Map<string, DescribeLogDirsPartition[]>();
  for (const p of partitions) {
    if (keep !== null && !keep.has(`${p.topic}\0${p.partition}`)) continue;
    let list = byTopic.get(p.topic);
    if (list === undefined) byTopic.set(p.topic, (list = []));
    list.push({
      partitionIndex: p.partition,
      partitionSize: p.sizeBytes,
      offsetLag: Math.max(0, p.highWatermark - p.logEndOffset),
      isFutureKey: false,
    });
  }
  return [...byTopic.keys()].sort().map((name) => ({
    name,
    partitions: byTopic.get(name)!.sort((a, b) => a.partitionIndex - b.partitionIndex),
  }));
}

export const describeLogDirsHandler = handler({
  api: DescribeLogDirsApi,
  async handle(ctx, req: DescribeLogDirsRequest, deps: DescribeLogDirsDeps): Promise<Wire<DescribeLogDirsResponse>> {
    const { logDirs } = deps;
    // As Kafka: without DESCRIBE on the cluster the answer is the error (v3+) and no directories.
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    const keep = wanted(req);
    // Both reads run at once; a shard that cannot answer fails the dir, not the connection.
    const [partitions, space] = await Promise.all([logDirs.partitions().catch(() => null), logDirs.space()]);
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      results: [{
        errorCode: partitions === null ? ErrorCode.UNKNOWN_SERVER_ERROR : ErrorCode.NONE,
        logDir: logDirs.path,
        topics: partitions === null ? [] : logDirTopics(partitions, keep),
        totalBytes: space.totalBytes,
        usableBytes: space.usableBytes,
      }],
    };
  },
});
