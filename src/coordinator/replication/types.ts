// The vocabulary partition replication shares between a leader, its followers and the controller:
// the follower's fetch position and the leader's answer to it (the replication fields of Fetch
// v15+), and a leader's AlterPartition proposals (API 56 v3) per partition, whose ISR members the
// controller's request (replication_control.ts) shares. Pure types and constants; any thread.
import type { ErrorCode } from '../../protocol/errors.js';

/** A broker id; -1 where none applies. */
export type BrokerId = number;

/** KIP-704: a partition led by an uncleanly elected leader is RECOVERING until it reports RECOVERED. */
export const LeaderRecoveryState = { RECOVERED: 0, RECOVERING: 1 } as const;
export type LeaderRecoveryState = (typeof LeaderRecoveryState)[keyof typeof LeaderRecoveryState];

/**
 * Sluice's `replica.lag.time.max.ms`: a follower that has not been caught up for longer leaves the
 * ISR. Kafka's default is 30 s; Sluice takes Kafka's pre-2.5 value, 10 s, close to the broker
 * session timeout (9 s) after which the controller fences a silent broker anyway, so an acks=all
 * produce stalls behind a dead follower for at most about as long as fencing would take.
 */
export const DEFAULT_REPLICA_LAG_TIME_MAX_MS = 10_000;

/**
 * How long a follower waits before fetching again after its leader refused it (NOT_LEADER_OR_FOLLOWER,
 * FENCED_LEADER_EPOCH, ...) with no newer metadata in sight. Kafka's replica.fetch.backoff.ms is
 * 1 s; Sluice aims at leader failover within 1 s, so a follower that learned of the new leader
 * before the leader itself did retries sooner.
 */
export const DEFAULT_REPLICA_FETCH_BACKOFF_MS = 100;

/** How long a leader waits before proposing again after a retriable AlterPartition failure. */
export const DEFAULT_ALTER_PARTITION_RETRY_MS = 500;

/** What a follower sends per partition in a replica Fetch (Fetch v15+ ReplicaState and partition fields). */
export interface ReplicaFetchPosition {
  readonly replicaId: BrokerId;
  /** The follower's broker epoch (ReplicaState.ReplicaEpoch), -1 when the fetch version has none. */
  readonly replicaEpoch: number;
  /** The leader epoch the follower believes current, -1 to skip fencing. */
  readonly currentLeaderEpoch: number;
  /** The follower's log end (its durable end under flush-always): everything below it is acknowledged. */
  readonly fetchOffset: number;
  /** The epoch of the follower's last batch, -1 when its log has none (KIP-595 truncation on fetch). */
  readonly lastFetchedEpoch: number;
  readonly logStartOffset: number;
}

/** The leader's history ends before the follower's fetch position: truncate to `endOffset` (KIP-320). */
export interface DivergingEpoch {
  readonly epoch: number;
  readonly endOffset: number;
}

/**
 * The leader's answer to one replica fetch, the replication fields of a Fetch response partition.
 * Records are read from the fetch offset up to the leader's log end only when `errorCode` is NONE
 * and `divergingEpoch` is null.
 */
export interface ReplicaFetchAnswer {
  readonly errorCode: ErrorCode;
  readonly highWatermark: number;
  readonly logStartOffset: number;
  readonly divergingEpoch: DivergingEpoch | null;
}

/**
 * One member of a proposed ISR with the broker epoch the leader saw it fetch with (KIP-903); the
 * controller's AlterPartition takes the same shape, with -1 when the sender's version carries no
 * broker epochs (v0-2).
 */
export interface IsrMember {
  readonly brokerId: BrokerId;
  readonly brokerEpoch: number;
}

/** One partition of an AlterPartition v3 request (API 56), with the topic id it belongs to. */
export interface AlterPartitionItem {
  readonly topicId: string;
  readonly partitionIndex: number;
  readonly leaderEpoch: number;
  readonly newIsrWithEpochs: readonly IsrMember[];
  readonly leaderRecoveryState: LeaderRecoveryState;
  /** The partition epoch of the state the proposal is based on: the controller's compare-and-set token. */
  readonly partitionEpoch: number;
}

/** One partition of an AlterPartition v3 response; on error only `errorCode` is meaningful. */
export interface AlterPartitionResult {
  readonly partitionIndex: number;
  readonly errorCode: ErrorCode;
  readonly leaderId: BrokerId;
  readonly leaderEpoch: number;
  readonly isr: readonly BrokerId[];
  readonly leaderRecoveryState: LeaderRecoveryState;
  readonly partitionEpoch: number;
}

/** A broker as a partition's replication sees it in the metadata image. */
export interface ReplicaBrokerInfo {
  readonly id: BrokerId;
  /** Its broker epoch (the offset of its registration record). */
  readonly epoch: number;
  /** Unfenced and not in controlled shutdown: it may join an ISR. */
  readonly isrEligible: boolean;
  /** Its client listener, where followers fetch from; null when fenced or without one. */
  readonly endpoint: { readonly host: string; readonly port: number } | null;
}

/**
 * What the metadata image makes a broker of one of its replicas, as main tells the hosting shard:
 * its leader (with what PartitionLeader needs of the partition), a follower of `leaderId`, or a
 * replica with no leader to follow (leaderless partition).
 */
export type PartitionRole =
  | {
      readonly kind: 'leader';
      readonly topicId: string;
      readonly leaderEpoch: number;
      readonly partitionEpoch: number;
      readonly replicas: readonly BrokerId[];
      readonly isr: readonly BrokerId[];
      readonly minInsyncReplicas: number;
    }
  | {
      readonly kind: 'follower';
      readonly topicId: string;
      readonly leaderId: BrokerId;
      readonly leaderEpoch: number;
      /** Listed in the topic's follower.replication.throttled.replicas and not in the ISR: its fetches count against the follower throttle (KIP-73). */
      readonly throttled: boolean;
    }
  | { readonly kind: 'leaderless'; readonly topicId: string; readonly leaderEpoch: number };
