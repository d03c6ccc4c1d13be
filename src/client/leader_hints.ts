// KIP-951 leader hints in our client's metadata cache: a Produce or Fetch answer of
// NOT_LEADER_OR_FOLLOWER may name the partition's current leader and its epoch (and, in
// nodeEndpoints, that leader's address). This module decides what a hint does to the cached
// partition and builds the updated topic. Pure; runs on the thread of the producer or consumer.
// Invariants: a cached leader epoch never goes back (a hint applies only with a strictly newer
// epoch, so hints applied in any order leave the highest one); cached TopicMetadata objects are
// never mutated (callers key memoised state by them), an applied hint makes a new object.

import type { LeaderIdAndEpoch, NodeEndpoint } from '../protocol/apis/leader_hints.js';

export interface PartitionMetadata {
  readonly partition: number;
  /** -1 while the partition has no leader. */
  readonly leader: number;
  readonly leaderEpoch: number;
}

export interface TopicMetadata {
  readonly name: string;
  readonly topicId: string;
  /** Indexed by partition number. */
  readonly partitions: readonly PartitionMetadata[];
  readonly fetchedAt: number;
}

export interface BrokerEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface LeaderHint {
  readonly topic: string;
  readonly partition: number;
  /** -1: the answering broker knows no leader either. */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  /** The leader's address when the answer carried it (Produce v10+, Fetch v16+). */
  readonly endpoint: BrokerEndpoint | null;
}

/** The hint a partition's answer carries (leaderId -1 when the answer predates KIP-951). */
export function hintFrom(topic: string, partition: number, current: LeaderIdAndEpoch, endpoints: readonly NodeEndpoint[]): LeaderHint {
  const node = current.leaderId < 0 ? undefined : endpoints.find((e) => e.nodeId === current.leaderId);
  const endpoint = node === undefined ? null : { host: node.host, port: node.port };
  return { topic, partition, leaderId: current.leaderId, leaderEpoch: current.leaderEpoch, endpoint };
}

/**
 * What a hint means for the cache: `apply` (a newer leader: use it without asking for
 * metadata), `known` (the cache is as new or newer: nothing to learn from it) or `refresh` (no
 * leader named, or no cached partition to compare with: ask the cluster as before KIP-951).
 */
export type HintVerdict = 'apply' | 'known' | 'refresh';

export function judgeHint(cached: TopicMetadata | undefined, hint: LeaderHint): HintVerdict {
  if (hint.leaderId < 0 || hint.leaderEpoch < 0) return 'refresh';
  const p = cached?.partitions[hint.partition];
  if (p === undefined) return 'refresh';
  return hint.leaderEpoch > p.leaderEpoch ? 'apply' : 'known';
}

/** `topic` with `hint`'s leader and epoch for its partition (only for a verdict of `apply`). */
export function withHintedLeader(topic: TopicMetadata, hint: LeaderHint): TopicMetadata {
  const partitions = topic.partitions.slice();
  partitions[hint.partition] = { partition: hint.partition, leader: hint.leaderId, leaderEpoch: hint.leaderEpoch };
  return { ...topic, partitions };
}

/**
 * The partition a Metadata answer brings, unless the cache already holds a newer epoch of the
 * same topic: a lagging broker's answer must not undo a hint (or a fresher answer) already applied.
 */
export function newerPartition(cached: TopicMetadata | undefined, topicId: string, fresh: PartitionMetadata): PartitionMetadata {
  if (cached === undefined || cached.topicId !== topicId) return fresh;
  const old = cached.partitions[fresh.partition];
  return old !== undefined && old.leaderEpoch > fresh.leaderEpoch ? old : fresh;
}
