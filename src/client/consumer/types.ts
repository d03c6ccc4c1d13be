// The public shapes of our consumer: what it hands out (messages, batches, assignments), what it
// takes (options, offsets to commit) and the rebalance listener through which the layer above it
// (the parallel consumer, or an application) hands partitions over cleanly.
// Types only; shared by src/client/consumer and src/client/parallel.
import type { ClusterOptions } from '../cluster.js';
import type { ConsumedRecord } from '../../protocol/records.js';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** One record as consumed: where it came from, its offset, key, value, headers, timestamp. */
export interface ConsumerMessage extends ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
}

/** What one poll returned for one partition, in offset order. */
export interface FetchedBatch extends TopicPartition {
  readonly messages: readonly ConsumerMessage[];
  /** Bytes of the record batches these messages came from (for memory accounting). */
  readonly bytes: number;
  /** The partition's high watermark at fetch time (lag = highWatermark - next offset). */
  readonly highWatermark: number;
}

/** A group's committed position for a partition: the next offset to consume, and its metadata. */
export interface CommittedPosition {
  readonly offset: number;
  readonly metadata: string | null;
}

export interface OffsetToCommit extends TopicPartition {
  /** The next offset to consume (Kafka's commit semantics). */
  readonly offset: number;
  /** Stored beside the offset (the parallel consumer keeps its completed-offset runs here). */
  readonly metadata?: string | null;
}

export interface AssignedPartition extends TopicPartition {
  /** The group's committed position, or null when none (fetching starts at autoOffsetReset). */
  readonly committed: CommittedPosition | null;
}

/**
 * Called on the consumer's own task as the group moves partitions. Assignment and revocation are
 * incremental (cooperative / KIP-848): only the partitions that change are named.
 */
export interface RebalanceListener {
  /** Before the first fetch of newly assigned partitions. */
  onAssigned?(partitions: readonly AssignedPartition[]): void | Promise<void>;
  /** Before giving partitions up: awaited (commit the final offsets here); fetching of them has stopped. */
  onRevoked?(partitions: readonly TopicPartition[]): void | Promise<void>;
  /** Partitions already taken away (session expired, member fenced): committing them would fail. */
  onLost?(partitions: readonly TopicPartition[]): void | Promise<void>;
}

export const GroupProtocol = { auto: 'auto', consumer: 'consumer', classic: 'classic' } as const;
export type GroupProtocol = (typeof GroupProtocol)[keyof typeof GroupProtocol];

export const OffsetReset = { earliest: 'earliest', latest: 'latest', none: 'none' } as const;
export type OffsetReset = (typeof OffsetReset)[keyof typeof OffsetReset];

export interface FetchSizeOptions {
  /** Bytes per fetch response; default 50 MiB. */
  readonly maxBytes?: number;
  /** Bytes per partition in a fetch response; default 1 MiB. */
  readonly partitionMaxBytes?: number;
}

export interface ConsumerOptions extends ClusterOptions, FetchSizeOptions {
  /** Without a group id only assign() works (no membership, no commits). */
  groupId?: string;
  /** 'auto' (default): KIP-848 where the broker offers ConsumerGroupHeartbeat, classic cooperative-sticky otherwise. */
  groupProtocol?: GroupProtocol;
  /** Static membership (group.instance.id). */
  groupInstanceId?: string;
  /** Classic protocol: session timeout, default 45 s; rebalance timeout, default 60 s; heartbeat, default 3 s. */
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** KIP-848 server-side assignor name ('uniform', 'range'); default: the broker's. */
  serverAssignor?: string;
  /** Where to start without a committed offset; default 'latest' (as Kafka). */
  autoOffsetReset?: OffsetReset;
  /** Longest a fetch waits for data; default 500 ms. */
  maxWaitMs?: number;
  /** Bytes a fetch waits for; default 1. */
  minBytes?: number;
  /** Commit the positions of polled messages every autoCommitIntervalMs; default false. */
  autoCommit?: boolean;
  autoCommitIntervalMs?: number;
  /**
   * How long commit() keeps retrying while the coordinator refuses it with REBALANCE_IN_PROGRESS
   * (the group is between JoinGroup and SyncGroup); default 30 s. Other errors are not retried here.
   */
  commitTimeoutMs?: number;
  listener?: RebalanceListener;
}
