// What a shard reports at each metrics scrape: its partitions, rings, event loop, group commit
// timings and group coordinators. Built on the shard worker, read by the main thread's
// BrokerMetrics and GroupMetrics; kept free of prom-client so workers do not load it.
import type { GcPauseCounts } from '../common/gc_pauses.js';
import type { LoopDelay } from '../common/loop_delay.js';
import type { CommitTimings } from '../log/group_commit.js';
import type { RingStats } from './ring_buffer.js';

/** Per-(group, topic, partition) offset series the broker exposes; shards send no more. */
export const MAX_OFFSET_SERIES = 10_000;

export interface GroupShardSnapshot {
  /** Groups by state name, summed over the shard's coordinators. */
  byState: Record<string, number>;
  members: number;
  /** Cumulative per reason since the shard started. */
  rebalances: Record<string, number>;
  /** Durations (ms) of rebalances finished since the previous snapshot. */
  rebalanceMs: number[];
  /** Per (group, topic, partition): the committed offset, and the group's members now. */
  committed: { group: string; members: number; topic: string; partition: number; offset: number }[];
}

export type RingStatsSnapshot = RingStats;

export interface PartitionSnapshot {
  topic: string;
  partition: number;
  sizeBytes: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
}

export interface ShardSnapshot {
  shard: number;
  /** Event-loop delay since the previous snapshot. */
  loopDelay: LoopDelay;
  toShard: RingStatsSnapshot;
  toMain: RingStatsSnapshot;
  partitions: PartitionSnapshot[];
  handled: number;
  busyMs: number;
  lastError: string | null;
  /** Storage failures since the shard started (cumulative). */
  storageErrors: number;
  /** Segments rescanned by log recovery as partitions opened, since the shard started (cumulative). */
  rescannedSegments: number;
  /** The most produced bytes the shard's logs held until their commit settled, since the previous snapshot. */
  uncommittedProduceBytesPeak: number;
  /** Times the shard's produces began to wait for room under --max-uncommitted-produce-bytes (cumulative). */
  uncommittedProduceWaits: number;
  groups: GroupShardSnapshot;
  traffic: ShardTraffic;
  /** The shard's group commit durations and queue waits since the previous snapshot. */
  logFlush: CommitTimings;
  /** The shard's garbage-collection pauses since the previous snapshot. */
  gcPauses: GcPauseCounts;
}

/** Byte totals of a shard since it started (cumulative). */
export interface ShardTraffic {
  /** Bytes read from / written to the replica fetchers' sockets. */
  linkBytesIn: number;
  linkBytesOut: number;
  /** Record bytes the replica fetchers received. */
  replicaBytesFetched: number;
  /** Record batch bytes appended to the shard's logs. */
  logBytesWritten: number;
}
