// One assigned partition's state inside the parallel consumer, from assignment to hand-over:
// its watermark tracker (resumed from the committed metadata), the fetched messages waiting for
// the in-flight window, the handlers running for it, and what was last committed.
// Consumer's thread. Each assignment gets a fresh state with a fresh numeric id (the router and
// backpressure key on it), so work of an earlier incarnation of the same partition, still running
// after a revoke, can never touch the new one: it finds its own state no longer `live`.
// Invariants: offsets enter `pending` strictly ascending (re-fetched duplicates are dropped);
// the tracker exists once a committed position or the first fetched offset is known.
import { setMaxListeners } from 'node:events';
import type { AssignedPartition, CommittedPosition, ConsumerMessage, TopicPartition } from '../consumer/types.js';
import { Fifo } from './fifo.js';
import type { Ordering, RoutedMessage } from './key_router.js';
import { decodeOffsetMetadata, encodeOffsetMetadata } from './offset_codec.js';
import { WatermarkTracker } from './watermark.js';

/** A fetched message on its way through the router and the worker pool. */
/** Every handler of the partition may listen on this one signal: the default cap of 10 would warn. */
function abortWithoutListenerCap(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}

export class Work implements RoutedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;

  constructor(
    readonly message: ConsumerMessage,
    readonly state: PartitionState,
    /** Its share of the fetched bytes, released when it leaves the buffer. */
    readonly bytes: number,
    readonly ordering: Ordering | undefined,
  ) {
    this.partition = state.id;
    this.offset = message.offset;
    this.key = message.key;
  }
}

export class PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Fetched, not yet admitted into the window. */
  readonly pending = new Fifo<Work>();
  /** Aborts the handlers of this partition's messages (abandon at a deadline, or lost). */
  readonly abort = abortWithoutListenerCap();
  tracker: WatermarkTracker | null = null;
  /** Handlers running for this partition. */
  running = 0;
  /** Being handed over: no more fetches, no more starts. */
  revoking = false;
  /** False once handed over or lost. */
  live = true;
  /** Whether the consumer was last told to pause it. */
  pausedOnConsumer = false;
  /** The position last committed (or found committed at assignment). */
  lastCommit: CommittedPosition | null;
  private nextFetch = 0;
  /** Waiters for `running` to reach 0 (a revoke and a shutdown at most). */
  private readonly idle: (() => void)[] = [];

  constructor(
    assigned: AssignedPartition,
    readonly id: number,
    private readonly maxWindow: number,
  ) {
    this.topic = assigned.topic;
    this.partition = assigned.partition;
    this.lastCommit = assigned.committed;
    const committed = assigned.committed;
    if (committed !== null) {
      // Foreign or corrupt metadata decodes to null: nothing is skipped, never a wrong skip.
      this.tracker = new WatermarkTracker(committed.offset, maxWindow, decodeOffsetMetadata(committed.metadata, committed.offset));
      this.nextFetch = committed.offset;
    }
  }

  get topicPartition(): TopicPartition {
    return { topic: this.topic, partition: this.partition };
  }

  /** Whether a fetched `offset` is new (not below what was already taken). */
  accepts(offset: number): boolean {
    if (offset < this.nextFetch) return false;
    this.tracker ??= new WatermarkTracker(offset, this.maxWindow);
    this.nextFetch = offset + 1;
    return true;
  }

  /** The position to commit now, or null when there is nothing new since the last commit. */
  positionToCommit(budgetChars: number): CommittedPosition | null {
    const tracker = this.tracker;
    if (tracker === null) return null;
    const offset = tracker.committable();
    // The window rule keeps this within budget; should it ever not fit, committing the bare
    // watermark stays correct (those completions are just redone after a restart).
    const metadata = encodeOffsetMetadata(offset, tracker.completionRuns(), budgetChars) ?? '';
    const last = this.lastCommit;
    if (last !== null && last.offset === offset && (last.metadata ?? '') === metadata) return null;
    return { offset, metadata };
  }

  /** Resolves once no handler runs for this partition. */
  whenIdle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle.push(resolve);
    });
  }

  /** A handler of this partition finished. */
  finished(): void {
    this.running--;
    if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}
