// What a shard reports about its group coordinators at each metrics scrape. Shared by the shard
// worker (which builds it) and the main thread's GroupMetrics; kept free of prom-client so
// workers do not load it.

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
  committed: { group: string; topic: string; partition: number; offset: number }[];
}
