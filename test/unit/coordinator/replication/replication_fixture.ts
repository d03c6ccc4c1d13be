// Shared set-up for the replication state machine tests: a leader on broker 0 with followers 1
// and 2, a leader-epoch cache per log, and builders for fetches and AlterPartition answers.
import { LeaderEpochCache } from '../../../../src/log/leader_epoch_cache.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import {
  PartitionLeader,
  type LeaderAssignment,
  type LocalLog,
  type ReplicaBroker,
  type ReplicationSettings,
} from '../../../../src/coordinator/replication/partition_leader.js';
import {
  LeaderRecoveryState,
  type AlterPartitionItem,
  type AlterPartitionResult,
  type ReplicaFetchPosition,
} from '../../../../src/coordinator/replication/types.js';

export const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const LAG_MS = 3000;
export const RETRY_MS = 500;

export function settings(flushAlways = false): ReplicationSettings {
  return { replicaLagTimeMaxMs: LAG_MS, alterPartitionRetryMs: RETRY_MS, flushAlways };
}

/** Brokers 0..2 registered at epoch 100 + id, all eligible unless listed in `ineligible`. */
export function brokers(ineligible: readonly number[] = []): Map<number, ReplicaBroker> {
  return new Map([0, 1, 2].map((id) => [id, { brokerEpoch: 100 + id, isrEligible: !ineligible.includes(id) }]));
}

export function assignment(over: Partial<LeaderAssignment> = {}): LeaderAssignment {
  return {
    leaderEpoch: 5,
    partitionEpoch: 10,
    replicas: [0, 1, 2],
    isr: [0, 1, 2],
    leaderRecoveryState: LeaderRecoveryState.RECOVERED,
    minInsyncReplicas: 1,
    brokers: brokers(),
    ...over,
  };
}

/** The leader's log; its latest epoch is 5, as in leaderAt's cache. */
export function localLog(logEndOffset: number, durableEndOffset = logEndOffset, logStartOffset = 0): LocalLog {
  return { logStartOffset, logEndOffset, durableEndOffset, latestEpoch: 5 };
}

/** A cache whose epochs start at the given offsets, e.g. [[0, 0], [3, 40]]. */
export function epochCache(entries: readonly (readonly [number, number])[]): LeaderEpochCache {
  const cache = LeaderEpochCache.of(entries.map(([epoch, startOffset]) => ({ epoch, startOffset })));
  if (cache === null) throw new Error('bad epoch entries');
  return cache;
}

/**
 * A leader at leader epoch 5 whose log holds epochs 3 (from 0) and 5 (from 40), ending at `end`,
 * high watermark `hw`, at time 0.
 */
export function leaderAt(end: number, hw: number, over: Partial<LeaderAssignment> = {}, flushAlways = false): PartitionLeader {
  const cache = epochCache([[3, 0], [5, 40]]);
  return new PartitionLeader(
    { topicId: TOPIC_ID, partitionIndex: 0, localBrokerId: 0 },
    settings(flushAlways),
    assignment(over),
    localLog(end),
    hw,
    (epoch, logEnd) => cache.endOffsetFor(epoch, logEnd),
    0,
  );
}

export function fetchFrom(replicaId: number, fetchOffset: number, over: Partial<ReplicaFetchPosition> = {}): ReplicaFetchPosition {
  return { replicaId, replicaEpoch: 100 + replicaId, currentLeaderEpoch: 5, fetchOffset, lastFetchedEpoch: 5, logStartOffset: 0, ...over };
}

export function accepted(item: AlterPartitionItem, partitionEpoch = item.partitionEpoch + 1): AlterPartitionResult {
  return {
    partitionIndex: item.partitionIndex,
    errorCode: ErrorCode.NONE,
    leaderId: 0,
    leaderEpoch: item.leaderEpoch,
    isr: item.newIsrWithEpochs.map((m) => m.brokerId),
    leaderRecoveryState: item.leaderRecoveryState,
    partitionEpoch,
  };
}

export function failed(item: AlterPartitionItem, errorCode: ErrorCode): AlterPartitionResult {
  return { partitionIndex: item.partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 };
}

export function isrOf(item: AlterPartitionItem | null): number[] | null {
  return item && item.newIsrWithEpochs.map((m) => m.brokerId);
}
