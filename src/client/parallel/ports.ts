// The parallel consumer's dependencies, as the narrow interfaces it uses: the consumer underneath
// (our Consumer satisfies ConsumerPort structurally; tests inject a fake), the dead-letter sink
// (our Producer satisfies it) and the message handler. Types only; consumer's thread.
import type {
  FetchedBatch,
  FetchSizeOptions,
  OffsetToCommit,
  RebalanceListener,
  TopicPartition,
  ConsumerMessage,
} from '../consumer/types.js';

/** The part of Consumer the parallel consumer drives. */
export interface ConsumerPort {
  subscribe(topics: readonly string[]): Promise<void>;
  /** Long-poll; [] on timeout; rejects (or returns []) once `signal` aborts. */
  poll(options?: { signal?: AbortSignal }): Promise<FetchedBatch[]>;
  pause(partitions: readonly TopicPartition[]): void;
  resume(partitions: readonly TopicPartition[]): void;
  setFetchSize(size: FetchSizeOptions): void;
  commit(offsets: readonly OffsetToCommit[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the consumer with the parallel consumer's rebalance listener, e.g.
 * `(listener) => new Consumer({ ...options, listener })`.
 */
export type ConsumerFactory = (listener: RebalanceListener) => ConsumerPort;

export interface DeadLetterHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

/** Where poison messages go; our Producer's `send` fits. */
export interface DeadLetterSink {
  send(topic: string, record: { key: Buffer | null; value: Buffer | null; headers: DeadLetterHeader[] }): Promise<unknown>;
}

/**
 * Processes one message; resolve when done, reject to retry. `signal` aborts when the message is
 * abandoned (its partition revoked or lost past the deadline, or shutdown past its deadline).
 */
export type MessageHandler = (message: ConsumerMessage, signal: AbortSignal) => Promise<void>;
