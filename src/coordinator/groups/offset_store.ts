// Committed offsets per group, exactly as the durable offset records say: it changes only by
// applying records (on load, or once an append is known durable). Runs inside the pure
// coordinator. Invariants: `counts` equals the number of partitions held per group; a group with
// no offsets has no entry; stored metadata is never null (Kafka stores null as ""); every held
// offset has an expiry (a record without one expires offsets.retention.ms after its commit).
import type { GroupRecord } from './group_api.js';

export type OffsetRecord = Extract<GroupRecord, { kind: 'offset' }>;

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestamp: number;
  readonly expireTimestamp: number;
}

export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly value: CommittedOffset;
}

/**
 * When an offset of a group without members expires: its retention period counts from the later
 * of its commit and the moment the group became empty (KIP-211), so a group that was busy for a
 * long time without committing does not lose its offsets the moment its last member leaves.
 */
export function expiresAt(o: CommittedOffset, emptySince: number): number {
  return Math.max(o.expireTimestamp, emptySince + (o.expireTimestamp - o.commitTimestamp));
}

/** A partition's key in the sets of partitions to skip. */
export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class OffsetStore {
  private readonly groups = new Map<string, Map<string, Map<number, CommittedOffset>>>();
  private readonly counts = new Map<string, number>();

  /** offsets.retention.ms, for records that carry no expiry of their own. */
  constructor(private readonly retentionMs: number) {}

  apply(r: OffsetRecord): void {
    let topics = this.groups.get(r.groupId);
    if (r.value === null) {
      const partitions = topics?.get(r.topic);
      if (partitions === undefined || !partitions.delete(r.partition)) return;
      if (partitions.size === 0) topics!.delete(r.topic);
      this.bump(r.groupId, -1);
      return;
    }
    if (topics === undefined) this.groups.set(r.groupId, (topics = new Map()));
    let partitions = topics.get(r.topic);
    if (partitions === undefined) topics.set(r.topic, (partitions = new Map()));
    if (!partitions.has(r.partition)) this.bump(r.groupId, 1);
    const v = r.value;
    partitions.set(r.partition, {
      offset: v.offset,
      leaderEpoch: v.leaderEpoch,
      metadata: v.metadata ?? '',
      commitTimestamp: v.commitTimestamp,
      expireTimestamp: v.expireTimestamp ?? v.commitTimestamp + this.retentionMs,
    });
  }

  get(groupId: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.groups.get(groupId)?.get(topic)?.get(partition);
  }

  count(groupId: string): number {
    return this.counts.get(groupId) ?? 0;
  }

  groupIds(): IterableIterator<string> {
    return this.groups.keys();
  }

  /** Every partition of the group, topics by name then partitions ascending. */
  list(groupId: string): PartitionOffset[] {
    const topics = this.groups.get(groupId);
    if (topics === undefined) return [];
    const out: PartitionOffset[] = [];
    for (const topic of [...topics.keys()].sort()) {
      const partitions = topics.get(topic)!;
      for (const partition of [...partitions.keys()].sort((a, b) => a - b)) {
        out.push({ topic, partition, value: partitions.get(partition)! });
      }
    }
    return out;
  }

  /** Earliest expiry among partitions not in `skip` (keys from offsetKey). */
  nextExpiry(groupId: string, emptySince: number, skip: { has(key: string): boolean }): number | null {
    let min: number | null = null;
    for (const p of this.iterate(groupId)) {
      if (skip.has(offsetKey(p.topic, p.partition))) continue;
      const at = expiresAt(p.value, emptySince);
      if (min === null || at < min) min = at;
    }
    return min;
  }

  expired(groupId: string, now: number, emptySince: number, skip: { has(key: string): boolean }): { topic: string; partition: number }[] {
    const out: { topic: string; partition: number }[] = [];
    for (const p of this.iterate(groupId)) {
      if (skip.has(offsetKey(p.topic, p.partition))) continue;
      if (now >= expiresAt(p.value, emptySince)) out.push({ topic: p.topic, partition: p.partition });
    }
    return out;
  }

  private *iterate(groupId: string): Generator<PartitionOffset> {
    const topics = this.groups.get(groupId);
    if (topics === undefined) return;
    for (const [topic, partitions] of topics) {
      for (const [partition, value] of partitions) yield { topic, partition, value };
    }
  }

  private bump(groupId: string, by: number): void {
    const n = (this.counts.get(groupId) ?? 0) + by;
    if (n > 0) {
      this.counts.set(groupId, n);
    } else {
      this.counts.delete(groupId);
      this.groups.delete(groupId);
    }
  }
}
