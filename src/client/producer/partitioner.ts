// The producer's default partitioner: keyed records by murmur2 (Java-compatible, murmur2.ts),
// keyless records by sticky partitioning (KIP-480): every keyless record of a topic goes to one
// partition until the batch it was filling is full or drained, then the topic moves to another
// partition picked at random, preferring partitions whose leader is known. Sticking fills batches
// faster than round-robin, so fewer, larger requests at the same linger.
// Runs on the producer's thread; pure apart from the injected random source.
// Invariants: a keyed record's partition depends only on its key bytes and the partition count;
// the sticky map holds at most `maxTopics` topics (the oldest is forgotten, which only means
// a fresh random pick for it).
//
// Use in the send loop: `p = partitioner.partition(topic, key, count, available)` before
// accumulator.append; when append reports `ready` for that partition, or drain takes a batch
// from it, call `partitioner.onBatchDone(topic, p, count, available)`.

import { partitionForKey } from './murmur2.js';

export interface PartitionerOptions {
  /** Uniform in [0, 1); default Math.random. */
  readonly random?: () => number;
  /** Topics whose sticky partition is remembered; default 10,000. */
  readonly maxTopics?: number;
}

export class DefaultPartitioner {
  private readonly sticky = new Map<string, number>();
  private readonly random: () => number;
  private readonly maxTopics: number;

  constructor(options: PartitionerOptions = {}) {
    this.random = options.random ?? Math.random;
    this.maxTopics = options.maxTopics ?? 10_000;
  }

  /**
   * The partition for one record. `available` lists the partitions with a known leader; keyed
   * records ignore it (as Kafka does: a key's partition must not depend on broker health).
   */
  partition(topic: string, key: Uint8Array | null, numPartitions: number, available?: readonly number[]): number {
    if (key !== null) return partitionForKey(key, numPartitions);
    const current = this.sticky.get(topic);
    if (current !== undefined && current < numPartitions && (available === undefined || available.length === 0 || available.includes(current))) {
      return current;
    }
    return this.pick(topic, -1, numPartitions, available);
  }

  /** The batch of `partition` is full or was sent: keyless records of `topic` move on. */
  onBatchDone(topic: string, partition: number, numPartitions: number, available?: readonly number[]): void {
    if (this.sticky.get(topic) === partition) this.pick(topic, partition, numPartitions, available);
  }

  private pick(topic: string, previous: number, numPartitions: number, available?: readonly number[]): number {
    if (!Number.isInteger(numPartitions) || numPartitions <= 0) {
      throw new RangeError(`partition count ${numPartitions} must be a positive integer`);
    }
    const candidates = available !== undefined && available.length > 0 ? available : null;
    const count = candidates === null ? numPartitions : candidates.length;
    const at = (i: number): number => (candidates === null ? i : (candidates[i] as number));
    let index = Math.min(count - 1, Math.floor(this.random() * count));
    if (count > 1 && at(index) === previous) index = (index + 1) % count;
    const chosen = at(index);
    if (!this.sticky.has(topic) && this.sticky.size >= this.maxTopics) {
      const oldest = this.sticky.keys().next();
      if (oldest.done !== true) this.sticky.delete(oldest.value);
    }
    this.sticky.set(topic, chosen);
    return chosen;
  }
}
