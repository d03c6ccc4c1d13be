// The consumer's offset calls: committed positions (OffsetFetch, with metadata), commits
// (OffsetCommit with the member's generation or KIP-848 epoch) and log start/end lookups for
// resetting positions (ListOffsets, sent to each partition's leader). Runs on the consumer's thread.
// Invariants: coordinator calls retry at most COORDINATOR_ATTEMPTS times, and only on errors that
// mean "ask again elsewhere or later" (stale coordinator, loading, a dropped connection); every
// other error surfaces as a KafkaError naming the partition and code.
import { setTimeout as sleep } from 'node:timers/promises';
import { ListOffsetsApi } from '../../protocol/apis/list_offsets.js';
import { OffsetCommitApi } from '../../protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../protocol/apis/offset_fetch.js';
import type { OffsetFetchResponseTopic } from '../../protocol/apis/offset_fetch.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { fullJitterDelay } from '../../protocol/backoff.js';
import { brokerError, missingFrom } from '../broker_errors.js';
import { isStaleCoordinatorError, isStaleMetadataError } from '../cluster.js';
import { isTransient } from './membership.js';
import type { Cluster } from '../cluster.js';
import type { KafkaConnection } from '../connection.js';
import { byTopic, tpKey } from './topic_partitions.js';
import type { CommittedPosition, OffsetToCommit, TopicPartition } from './types.js';

const COORDINATOR_ATTEMPTS = 5;
const EARLIEST = -2;
const LATEST = -1;

/** Who commits: a classic member (generation id) or a KIP-848 member (member epoch); -1/'' outside a group. */
export interface CommitIdentity {
  readonly memberId: string;
  readonly generationIdOrMemberEpoch: number;
  readonly groupInstanceId: string | null;
}

/** Runs `call` against the group's coordinator, looking it up again after retriable failures. */
export async function withCoordinator<T>(cluster: Cluster, groupId: string, call: (conn: KafkaConnection) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(await cluster.coordinator(groupId));
    } catch (err) {
      if (!isTransient(err) || attempt + 1 >= COORDINATOR_ATTEMPTS) throw err;
      if (!(err instanceof KafkaError) || isStaleCoordinatorError(err.code)) cluster.forgetCoordinator(groupId);
      await sleep(fullJitterDelay(attempt, { baseMs: 100, maxMs: 1000 }));
    }
  }
}

function collectCommitted(topics: readonly OffsetFetchResponseTopic[], groupId: string, out: Map<string, CommittedPosition | null>): void {
  for (const t of topics) {
    for (const p of t.partitions) {
      if (p.errorCode !== ErrorCode.NONE) throw brokerError(p.errorCode, `committed offset of group ${groupId} on ${t.name}-${p.partitionIndex}`, null);
      out.set(tpKey(t.name, p.partitionIndex), p.committedOffset < 0 ? null : { offset: p.committedOffset, metadata: p.metadata });
    }
  }
}

/** The group's committed position (offset + metadata) of each partition, keyed by tpKey; null when none. */
export function fetchCommitted(cluster: Cluster, groupId: string, partitions: readonly TopicPartition[]): Promise<Map<string, CommittedPosition | null>> {
  const topics = [...byTopic(partitions)].map(([name, ps]) => ({ name, partitionIndexes: ps.map((p) => p.partition) }));
  return withCoordinator(cluster, groupId, async (conn) => {
    const version = conn.versionFor(OffsetFetchApi);
    const res = await conn.request(OffsetFetchApi, {
      groupId, topics, requireStable: false,
      groups: [{ groupId, memberId: null, memberEpoch: -1, topics }],
    }, version);
    const group = version >= 8 ? res.groups.find((g) => g.groupId === groupId) : res;
    if (group === undefined) throw missingFrom('OffsetFetch', `group ${groupId}`);
    if (group.errorCode !== ErrorCode.NONE) throw brokerError(group.errorCode, `committed offsets of group ${groupId}`, null);
    const out = new Map<string, CommittedPosition | null>();
    collectCommitted(group.topics, groupId, out);
    for (const p of partitions) if (!out.has(tpKey(p.topic, p.partition))) out.set(tpKey(p.topic, p.partition), null);
    return out;
  });
}

/** One OffsetCommit; the first failing partition's code is thrown (after coordinator retries). */
export function commitOffsets(cluster: Cluster, groupId: string, who: CommitIdentity, offsets: readonly OffsetToCommit[]): Promise<void> {
  if (offsets.length === 0) return Promise.resolve();
  const topics = [...byTopic(offsets)].map(([name, ps]) => ({
    name,
    partitions: ps.map((p) => ({ partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: -1, committedMetadata: p.metadata ?? null })),
  }));
  return withCoordinator(cluster, groupId, async (conn) => {
    const res = await conn.request(OffsetCommitApi, {
      groupId, generationIdOrMemberEpoch: who.generationIdOrMemberEpoch, memberId: who.memberId,
      groupInstanceId: who.groupInstanceId, retentionTimeMs: -1, topics,
    });
    for (const t of res.topics) {
      const bad = t.partitions.find((p) => p.errorCode !== ErrorCode.NONE);
      if (bad !== undefined) throw brokerError(bad.errorCode, `commit of group ${groupId} on ${t.name}-${bad.partitionIndex}`, null);
    }
  });
}

/** Log start ('earliest') or end ('latest') offsets, asked of each partition's leader; keyed by tpKey. */
export async function listOffsets(cluster: Cluster, partitions: readonly TopicPartition[], spec: 'earliest' | 'latest'): Promise<Map<string, number>> {
  const byLeader = new Map<number, TopicPartition[]>();
  for (const tp of partitions) {
    await cluster.topic(tp.topic);
    const leader = cluster.leaderOf(tp.topic, tp.partition);
    if (leader < 0) {
      cluster.markStale(tp.topic);
      throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `no leader for ${tp.topic}-${tp.partition}`);
    }
    const list = byLeader.get(leader);
    if (list === undefined) byLeader.set(leader, [tp]);
    else list.push(tp);
  }
  const out = new Map<string, number>();
  await Promise.all([...byLeader].map(async ([leader, tps]) => {
    const conn = await cluster.connection(leader);
    const res = await conn.request(ListOffsetsApi, {
      replicaId: -1, isolationLevel: 0,
      topics: [...byTopic(tps)].map(([name, ps]) => ({
        name, partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp: spec === 'earliest' ? EARLIEST : LATEST })),
      })),
    });
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== ErrorCode.NONE) {
          if (isStaleMetadataError(p.errorCode)) cluster.markStale(t.name);
          throw brokerError(p.errorCode, `list offsets of ${t.name}-${p.partitionIndex}`, null);
        }
        out.set(tpKey(t.name, p.partitionIndex), p.offset);
      }
    }
  }));
  return out;
}
