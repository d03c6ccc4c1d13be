// Test helper: what consumers' deliveries say about stalls and latency, for the online-expansion
// test. A delivery is a record stamped with the time the test saw it; from them come end-to-end
// latencies (seen minus the record's CreateTime) and, per partition, the largest wait between
// consecutive deliveries inside a window. Pure; runs on the test's main thread.

import type { QueueRead } from './queue_checker.js';

/** A delivery to a consumer: the record, where, and when the test saw it (Date.now()). */
export interface Delivery extends QueueRead {
  readonly topic: string;
  readonly at: number;
  /** Record CreateTime (ms since the epoch); -1 where the consumer does not report it. */
  readonly createdAt: number;
}

/** The key of a partition in the sets and maps of the expansion test. */
export const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/**
 * Our group's end-to-end latencies (poll time minus CreateTime, ms) of records created in
 * [from, to), of every partition or only of `partitions` (partitionKey).
 */
export function latencies(deliveries: readonly Delivery[], from: number, to: number, partitions?: ReadonlySet<string>): number[] {
  return deliveries
    .filter((d) => d.createdAt >= from && d.createdAt < to && (partitions === undefined || partitions.has(partitionKey(d.topic, d.partition))))
    .map((d) => d.at - d.createdAt);
}

/**
 * The largest wait, per partition of `partitions` (partitionKey), between consecutive deliveries
 * seen in [from, to], counting from `from` to the first and from the last to `to` (a partition
 * with nothing in the window waits the whole window); the worst of them with its partition.
 */
export function largestGap(deliveries: readonly Delivery[], partitions: ReadonlySet<string>, from: number, to: number): { partition: string; gapMs: number } {
  const times = new Map<string, number[]>([...partitions].map((p) => [p, [from]]));
  for (const d of deliveries) {
    if (d.at < from || d.at > to) continue;
    times.get(partitionKey(d.topic, d.partition))?.push(d.at);
  }
  let worst = { partition: '', gapMs: 0 };
  for (const [partition, ts] of times) {
    ts.sort((a, b) => a - b).push(to);
    for (let i = 1; i < ts.length; i++) {
      const gap = (ts[i] as number) - (ts[i - 1] as number);
      if (gap > worst.gapMs) worst = { partition, gapMs: gap };
    }
  }
  return worst;
}
