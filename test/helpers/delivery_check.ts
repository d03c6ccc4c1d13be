// Test helper: judges a produce/consume run under faults. Given what producers had acknowledged
// (each message's partition and its producer index, see messages.ts) and what readers got back, it
// counts lost messages (acknowledged, never read), duplicates (read more than once), reordered
// ones (per partition, the fewest first reads to remove so the rest follow the produce order:
// their count minus the longest increasing run of indices), misplaced ones (read from another
// partition than acknowledged) and unacknowledged ones that landed anyway (allowed: a send whose
// ack was lost to a fault). Pure apart from readBack, which reads a topic through read_back.ts.
// Runs on the test's main thread; memory is linear in the messages.

import type { KafkaConnection } from '../../src/client/connection.js';
import { messageIndex } from './messages.js';
import { scanPartition } from './read_back.js';

/** A message its producer saw acknowledged; `index` is its place in that producer's send order. */
export interface AckedMessage {
  readonly partition: number;
  readonly index: number;
}

/** A record read back; `index` is -1 for a record no producer of the run wrote. */
export interface ReadMessage {
  readonly partition: number;
  readonly offset: number;
  readonly index: number;
}

export interface DeliveryReport {
  readonly acked: number;
  readonly read: number;
  /** Acknowledged indices never read (all of them, sorted). */
  readonly lost: readonly number[];
  readonly duplicated: number;
  readonly reordered: number;
  readonly misplaced: number;
  readonly unacked: number;
  readonly foreign: number;
}

/** Length of the longest strictly increasing subsequence (patience sorting, O(n log n)). */
export function longestIncreasing(values: readonly number[]): number {
  const tails: number[] = [];
  for (const v of values) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((tails[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = v;
  }
  return tails.length;
}

/** `read` must be in offset order within each partition (the order a reader sees). */
export function checkDelivery(acked: Iterable<AckedMessage>, read: Iterable<ReadMessage>): DeliveryReport {
  const ackedAt = new Map<number, number>();
  for (const a of acked) ackedAt.set(a.index, a.partition);
  const seen = new Set<number>();
  const firstReads = new Map<number, number[]>();
  let reads = 0;
  let duplicated = 0;
  let misplaced = 0;
  let unacked = 0;
  let foreign = 0;
  for (const r of read) {
    reads++;
    if (r.index < 0) {
      foreign++;
      continue;
    }
    if (seen.has(r.index)) {
      duplicated++;
      continue;
    }
    seen.add(r.index);
    const partition = ackedAt.get(r.index);
    if (partition === undefined) unacked++;
    else if (partition !== r.partition) misplaced++;
    const list = firstReads.get(r.partition);
    if (list === undefined) firstReads.set(r.partition, [r.index]);
    else list.push(r.index);
  }
  let reordered = 0;
  for (const indices of firstReads.values()) reordered += indices.length - longestIncreasing(indices);
  const lost = [...ackedAt.keys()].filter((i) => !seen.has(i)).sort((a, b) => a - b);
  return { acked: ackedAt.size, read: reads, lost, duplicated, reordered, misplaced, unacked, foreign };
}

/**
 * Every record of `partitions` of `topic`, each with the index `tag`'s producer gave it; `leaderOf`
 * gives a connection to the broker that leads a partition (in a cluster each may differ).
 */
export async function readBack(leaderOf: (partition: number) => Promise<KafkaConnection>, topic: string, partitions: number, tag: string, timeoutMs = 60_000): Promise<ReadMessage[]> {
  const out: ReadMessage[] = [];
  for (let p = 0; p < partitions; p++) {
    const conn = await leaderOf(p);
    await scanPartition(conn, topic, p, (r) => out.push({ partition: p, offset: r.offset, index: messageIndex(tag, r.value) }), { timeoutMs });
  }
  return out;
}

/** One line for a test's output: the counts, and the first lost indices. */
export function describeDelivery(r: DeliveryReport): string {
  const lostHead = r.lost.slice(0, 10).join(',') + (r.lost.length > 10 ? ',...' : '');
  return `acked=${r.acked} read=${r.read} lost=${r.lost.length}${r.lost.length > 0 ? ` [${lostHead}]` : ''} duplicated=${r.duplicated} reordered=${r.reordered} misplaced=${r.misplaced} unacked=${r.unacked} foreign=${r.foreign}`;
}
