// The parallel consumer: one fetch loop over our Consumer feeding a pool of concurrent handlers
// (async, or piscina workers for CPU-bound work) while keeping per-key (or per-partition) order,
// committing per partition the watermark of contiguous completed offsets plus the completed
// offsets above it, encoded in the commit metadata, so a restart skips work already done.
// Runs on the consumer's thread (the application's); handlers may hand work to other threads.
// Flow: poll → accept (backpressure counts it) → pending → admit (window rule, tracker; resumed
// complete offsets are skipped here) → router (order) → dispatch (concurrency) → retry runner →
// finish (tracker, backpressure, adaptive fetch size) → admit/dispatch again, wake the fetch loop.
// Why the window rule gates admission and not fetching: a message blocked by the metadata budget
// waits in its partition's pending queue (bounded by backpressure), other partitions go on, and
// completing the slow message always reopens the window, so the budget throttles, never stalls.
// Hand-over (revoke, and stop): no more fetches or starts for the partition, its running
// handlers drain until the deadline (then they are abandoned: aborted, left incomplete), the
// final watermark + metadata is committed, then the partition is released. Lost: released at
// once, nothing committed (the new owner's commits win).
// Invariants: queued bytes ≤ maxQueuedBytes + one fetch (the loop fetches only while
// backpressure allows, and sizes the fetch to the room left); per-key order (router lanes);
// an offset is marked complete only after its handler succeeded, was dead-lettered or was given
// up (never when abandoned); at most one commit request in flight.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fullJitterDelay } from '../../protocol/backoff.js';
import { Consumer } from '../consumer/consumer.js';
import type { AssignedPartition, CommittedPosition, ConsumerOptions, FetchedBatch, OffsetToCommit, RebalanceListener, TopicPartition } from '../consumer/types.js';
import { AdaptiveFetchSizer } from './adaptive_batch.js';
import { BackpressureController } from './backpressure.js';
import { KeyRouter, Ordering } from './key_router.js';
import { PartitionState, Work } from './partition_state.js';
import { createPiscinaHandler } from './piscina_pool.js';
import type { PiscinaHandler, PiscinaHandlerOptions } from './piscina_pool.js';
import type { ConsumerFactory, ConsumerPort, MessageHandler } from './ports.js';
import { Outcome, RetryRunner } from './retry.js';
import type { DeadLetterOptions, RetryCounters, RetryPolicy } from './retry.js';
import { mayStart } from './window.js';

export interface ParallelConsumerOptions {
  /** The consumer underneath: its options (we add our rebalance listener), or a factory given that listener. */
  readonly consumer: ConsumerOptions | ConsumerFactory;
  /** I/O-bound work: runs on this thread, `concurrency` at a time. Exactly one of handler/piscina. */
  readonly handler?: MessageHandler;
  /** CPU-bound work: a piscina worker module (see piscina_pool.ts). */
  readonly piscina?: PiscinaHandlerOptions;
  /** Default 'key'. */
  readonly ordering?: Ordering;
  /** Messages processed at once; default 64 (handler) or 2 per piscina thread. */
  readonly concurrency?: number;
  /** High watermarks of the in-memory buffer; defaults 10,000 messages, 64 MiB. */
  readonly maxQueuedMessages?: number;
  readonly maxQueuedBytes?: number;
  /** Low watermark as a fraction of the high one (fetching resumes there); default 0.5. */
  readonly resumeRatio?: number;
  /** Per-partition high watermark of buffered messages, so one backlog cannot take the whole buffer; default off. */
  readonly partitionMaxQueuedMessages?: number;
  /** Default 1000 ms. */
  readonly commitIntervalMs?: number;
  /** Commit metadata budget in characters; default 4000 (Kafka and Sluice allow 4096). */
  readonly metadataMaxChars?: number;
  /** Bound on a partition's window (lowest incomplete to last started); default 65,536. */
  readonly maxWindow?: number;
  readonly retries?: RetryPolicy;
  readonly deadLetter?: DeadLetterOptions;
  /** Keys whose order is waived: their messages run concurrently (a hot-key splitter). */
  readonly unorderedKeys?: readonly (string | Buffer)[];
  /** How long a revoke or stop waits for running handlers; default 30 s. */
  readonly shutdownDeadlineMs?: number;
  /** Fetch size bounds for the adaptive sizer; defaults 64 KiB .. min(50 MiB, maxQueuedBytes). */
  readonly fetchMinBytes?: number;
  readonly fetchMaxBytes?: number;
  /** Errors that do not stop the consumer (poll, commit, given-up messages). */
  readonly onError?: (error: unknown, context: string) => void;
}

export interface HotKeyStat extends TopicPartition {
  readonly key: Buffer | null;
  readonly depth: number;
}

export interface CommittedStat extends TopicPartition {
  readonly offset: number;
  readonly metadataChars: number;
}

export interface ParallelConsumerStats {
  /** Messages whose handler succeeded. */
  readonly processed: number;
  readonly deadLettered: number;
  /** Given up after the retries, with no dead-letter topic. */
  readonly failed: number;
  readonly retries: number;
  /** Skipped because a committed metadata marked them complete. */
  readonly skipped: number;
  readonly abandoned: number;
  readonly commits: number;
  readonly inFlight: number;
  readonly queuedMessages: number;
  readonly queuedBytes: number;
  readonly maxQueuedBytes: number;
  readonly maxQueuedBytesBound: number;
  /** Processing rate the fetch size follows (messages/s). */
  readonly rate: number;
  /** Deepest key lanes, deepest first. */
  readonly hotKeys: readonly HotKeyStat[];
  readonly paused: readonly TopicPartition[];
  readonly committed: readonly CommittedStat[];
}

const DEFAULT_MAX_MESSAGES = 10_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_FETCH_MAX_BYTES = 50 * 1024 * 1024;
const DEFAULT_FETCH_MIN_BYTES = 64 * 1024;
const PARTITION_FETCH_MAX_BYTES = 1024 * 1024;
const POLL_RETRY_BACKOFF = { baseMs: 100, maxMs: 5_000 };

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

interface Counters extends RetryCounters {
  processed: number;
  deadLettered: number;
  failed: number;
  skipped: number;
  abandoned: number;
  commits: number;
  maxQueuedBytes: number;
}

export class ParallelConsumer {
  private readonly states = new Map<string, PartitionState>();
  private readonly byId = new Map<number, PartitionState>();
  /** Partitions whose admission stopped at a full router. */
  private readonly blocked = new Set<PartitionState>();
  private readonly router: KeyRouter<Work>;
  private readonly backpressure: BackpressureController;
  private readonly sizer: AdaptiveFetchSizer;
  private readonly pool: PiscinaHandler | null;
  private readonly runner: RetryRunner;
  private readonly concurrency: number;
  private readonly budget: number;
  private readonly maxWindow: number;
  private readonly highBytes: number;
  private readonly fetchMinBytes: number;
  private readonly deadlineMs: number;
  private readonly unordered: ReadonlySet<string>;
  private readonly pollAbort = new AbortController();
  private readonly counters: Counters = {
    processed: 0, deadLettered: 0, failed: 0, skipped: 0, abandoned: 0, commits: 0, maxQueuedBytes: 0,
    retries: 0, handlerErrors: 0, lastError: undefined,
  };
  private consumer: ConsumerPort | null = null;
  private running = 0;
  private nextId = 0;
  private fetchBytes = 0;
  private stopping = false;
  private roomWaiter: (() => void) | null = null;
  private fetchLoopDone: Promise<void> = Promise.resolve();
  private commitTimer: NodeJS.Timeout | null = null;
  private commitChain: Promise<void> = Promise.resolve();
  private committing = false;
  private stopped: Promise<void> | null = null;

  constructor(private readonly options: ParallelConsumerOptions) {
    if ((options.handler === undefined) === (options.piscina === undefined)) {
      throw new TypeError('give exactly one of handler and piscina');
    }
    this.pool = options.piscina !== undefined ? createPiscinaHandler(options.piscina) : null;
    const handler = this.pool?.handler ?? (options.handler as MessageHandler);
    this.concurrency = options.concurrency ?? (this.pool !== null ? this.pool.threads * 2 : 64);
    const maxMessages = options.maxQueuedMessages ?? DEFAULT_MAX_MESSAGES;
    this.highBytes = options.maxQueuedBytes ?? DEFAULT_MAX_BYTES;
    const ratio = options.resumeRatio ?? 0.5;
    if (!Number.isSafeInteger(this.concurrency) || this.concurrency < 1) throw new RangeError('concurrency must be ≥ 1');
    if (!(ratio >= 0 && ratio < 1)) throw new RangeError('resumeRatio must be in [0, 1)');
    this.backpressure = new BackpressureController({
      highMessages: maxMessages,
      lowMessages: Math.floor(maxMessages * ratio),
      highBytes: this.highBytes,
      lowBytes: Math.floor(this.highBytes * ratio),
      ...(options.partitionMaxQueuedMessages !== undefined
        ? { partitionHighMessages: options.partitionMaxQueuedMessages, partitionLowMessages: Math.floor(options.partitionMaxQueuedMessages * ratio) }
        : {}),
    });
    this.router = new KeyRouter<Work>({ ordering: options.ordering ?? Ordering.key, maxQueued: maxMessages });
    this.fetchMinBytes = Math.min(options.fetchMinBytes ?? DEFAULT_FETCH_MIN_BYTES, this.highBytes);
    this.sizer = new AdaptiveFetchSizer({
      minBytes: this.fetchMinBytes,
      maxBytes: Math.max(this.fetchMinBytes, Math.min(options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES, this.highBytes)),
      maxRecords: maxMessages,
    });
    this.runner = new RetryRunner(handler, options.retries ?? {}, options.deadLetter ?? null, this.counters);
    this.budget = options.metadataMaxChars ?? 4000;
    this.maxWindow = options.maxWindow ?? 1 << 16;
    this.deadlineMs = options.shutdownDeadlineMs ?? 30_000;
    this.unordered = new Set((options.unorderedKeys ?? []).map((k) => (typeof k === 'string' ? Buffer.from(k) : k).toString('latin1')));
  }

  /** Subscribes and starts the fetch loop and the commit timer. */
  async start(topics: readonly string[]): Promise<void> {
    if (this.consumer !== null) throw new Error('already started');
    const listener: RebalanceListener = {
      onAssigned: (partitions) => this.assigned(partitions),
      onRevoked: (partitions) => this.revoked(partitions),
      onLost: (partitions) => this.lost(partitions),
    };
    const make = this.options.consumer;
    const consumer = typeof make === 'function' ? make(listener) : new Consumer({ ...make, listener });
    this.consumer = consumer;
    await consumer.subscribe(topics);
    this.commitTimer = setInterval(() => this.commitTick(), this.options.commitIntervalMs ?? 1000);
    this.commitTimer.unref();
    this.fetchLoopDone = this.fetchLoop(consumer);
  }

  /** Stops fetching, drains (or abandons at the deadline), commits, closes the consumer. */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  stats(topKeys = 10): ParallelConsumerStats {
    const c = this.counters;
    const hotKeys: HotKeyStat[] = [];
    for (const h of this.router.hotKeys(topKeys)) {
      const s = this.byId.get(h.partition);
      if (s !== undefined) hotKeys.push({ topic: s.topic, partition: s.partition, key: h.key, depth: h.depth });
    }
    const paused: TopicPartition[] = [];
    const committed: CommittedStat[] = [];
    for (const s of this.states.values()) {
      if (s.pausedOnConsumer) paused.push(s.topicPartition);
      if (s.lastCommit !== null) {
        committed.push({ topic: s.topic, partition: s.partition, offset: s.lastCommit.offset, metadataChars: (s.lastCommit.metadata ?? '').length });
      }
    }
    return {
      processed: c.processed, deadLettered: c.deadLettered, failed: c.failed, retries: c.retries, skipped: c.skipped,
      abandoned: c.abandoned, commits: c.commits, inFlight: this.running,
      queuedMessages: this.backpressure.totalMessages, queuedBytes: this.backpressure.totalBytes,
      maxQueuedBytes: c.maxQueuedBytes, maxQueuedBytesBound: this.highBytes, rate: this.sizer.rate,
      hotKeys, paused, committed,
    };
  }

  // ---- fetching ----

  private async fetchLoop(consumer: ConsumerPort): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      this.syncPaused(consumer);
      if (!this.backpressure.canFetch()) {
        await new Promise<void>((resolve) => {
          this.roomWaiter = resolve;
        });
        continue;
      }
      this.tuneFetchSize(consumer);
      let batches: FetchedBatch[];
      try {
        batches = await consumer.poll({ signal: this.pollAbort.signal });
        failures = 0;
      } catch (err) {
        if (this.stopping) return;
        this.report(err, 'poll');
        await sleep(fullJitterDelay(failures++, POLL_RETRY_BACKOFF), undefined, { signal: this.pollAbort.signal }).catch(() => undefined);
        continue;
      }
      for (const batch of batches) this.accept(batch);
      this.dispatch();
    }
  }

  /** Tells the consumer which partitions to leave out of fetches. */
  private syncPaused(consumer: ConsumerPort): void {
    let pause: TopicPartition[] | null = null;
    let resume: TopicPartition[] | null = null;
    for (const s of this.states.values()) {
      const want = s.revoking || this.backpressure.isPaused(s.id);
      if (want === s.pausedOnConsumer) continue;
      s.pausedOnConsumer = want;
      if (want) (pause ??= []).push(s.topicPartition);
      else (resume ??= []).push(s.topicPartition);
    }
    if (pause !== null) consumer.pause(pause);
    if (resume !== null) consumer.resume(resume);
  }

  /** Sizes the next fetch to the processing rate, and never beyond the room left in the buffer. */
  private tuneFetchSize(consumer: ConsumerPort): void {
    const wanted = this.sizer.next(this.backpressure.totalMessages, performance.now()).maxBytes;
    const maxBytes = Math.max(this.fetchMinBytes, Math.min(wanted, this.highBytes - this.backpressure.totalBytes));
    // Growth waits for a 25% change so a steady rate does not resend the same size every poll.
    if (maxBytes === this.fetchBytes || (maxBytes > this.fetchBytes && this.fetchBytes > 0 && maxBytes * 4 < this.fetchBytes * 5)) return;
    this.fetchBytes = maxBytes;
    consumer.setFetchSize({ maxBytes, partitionMaxBytes: Math.min(maxBytes, PARTITION_FETCH_MAX_BYTES) });
  }

  private accept(batch: FetchedBatch): void {
    const state = this.states.get(partitionKey(batch.topic, batch.partition));
    const n = batch.messages.length;
    if (state === undefined || state.revoking || n === 0) return;
    const share = Math.floor(batch.bytes / n);
    let extra = batch.bytes - share * n;
    let count = 0;
    let bytes = 0;
    for (const m of batch.messages) {
      const size = share + extra;
      extra = 0;
      if (!state.accepts(m.offset)) continue;
      const hot = this.unordered.size > 0 && m.key !== null && this.unordered.has(m.key.toString('latin1'));
      state.pending.push(new Work(m, state, size, hot ? Ordering.unordered : undefined));
      count++;
      bytes += size;
    }
    if (count === 0) return;
    this.backpressure.add(state.id, count, bytes);
    this.counters.maxQueuedBytes = Math.max(this.counters.maxQueuedBytes, this.backpressure.totalBytes);
    this.admit(state);
  }

  // ---- processing ----

  /** Moves a partition's pending messages into the router while the window rule allows. */
  private admit(state: PartitionState): void {
    const tracker = state.tracker;
    if (tracker === null || state.revoking) return;
    for (let w = state.pending.peek(); w !== undefined; w = state.pending.peek()) {
      if (this.router.full) {
        this.blocked.add(state);
        return;
      }
      if (!mayStart(tracker, w.offset, this.budget)) return; // a completion here reopens it
      state.pending.shift();
      if (tracker.started(w.offset)) {
        this.router.submit(w);
      } else {
        this.counters.skipped++;
        this.leaveBuffer(w);
      }
    }
  }

  private dispatch(): void {
    while (this.running < this.concurrency) {
      const w = this.router.next();
      if (w === null) return;
      const state = w.state;
      if (state.revoking) {
        // Handed over before it started: it stays incomplete, the next owner processes it.
        this.router.done(w);
        this.leaveBuffer(w);
        continue;
      }
      this.running++;
      state.running++;
      void this.execute(w);
    }
  }

  private async execute(w: Work): Promise<void> {
    const outcome = await this.runner.run(w.message, w.state.abort.signal);
    try {
      this.finish(w, outcome);
    } catch (err) {
      this.report(err, 'finish');
    }
  }

  private finish(w: Work, outcome: Outcome): void {
    const state = w.state;
    const c = this.counters;
    this.running--;
    this.router.done(w);
    if (outcome === Outcome.done) c.processed++;
    else if (outcome === Outcome.deadLettered) c.deadLettered++;
    else if (outcome === Outcome.failed) c.failed++;
    else c.abandoned++;
    if (outcome === Outcome.failed) this.report(c.lastError, `gave up ${state.topic}-${state.partition}@${w.offset}`);
    if (state.live && outcome !== Outcome.abandoned) (state.tracker as NonNullable<typeof state.tracker>).completed(w.offset);
    this.leaveBuffer(w);
    this.sizer.completed(1, w.bytes, performance.now());
    state.finished();
    this.admit(state);
    this.afterRelease();
  }

  /** A message left the buffer: release its accounting (a released partition's is gone already). */
  private leaveBuffer(w: Work): void {
    if (w.state.live) this.backpressure.remove(w.state.id, 1, w.bytes);
  }

  /** Buffer space or router room was freed: admit blocked partitions, start work, wake the fetch loop. */
  private afterRelease(): void {
    if (this.blocked.size > 0 && !this.router.full) {
      for (const s of this.blocked) {
        this.blocked.delete(s);
        this.admit(s);
        if (this.router.full) break;
      }
    }
    this.dispatch();
    if (this.roomWaiter !== null && (this.backpressure.canFetch() || this.stopping)) {
      const wake = this.roomWaiter;
      this.roomWaiter = null;
      wake();
    }
  }

  // ---- rebalance ----

  private assigned(partitions: readonly AssignedPartition[]): void {
    for (const p of partitions) {
      const key = partitionKey(p.topic, p.partition);
      const old = this.states.get(key);
      if (old !== undefined) this.release(old);
      const state = new PartitionState(p, this.nextId++, this.maxWindow);
      this.states.set(key, state);
      this.byId.set(state.id, state);
    }
  }

  private async revoked(partitions: readonly TopicPartition[]): Promise<void> {
    const states = this.find(partitions);
    for (const s of states) this.beginHandOver(s);
    await this.drain(states);
    await this.commit(states);
    for (const s of states) this.release(s);
    this.afterRelease();
  }

  private lost(partitions: readonly TopicPartition[]): void {
    for (const s of this.find(partitions)) this.release(s);
    this.afterRelease();
  }

  private find(partitions: readonly TopicPartition[]): PartitionState[] {
    const out: PartitionState[] = [];
    for (const p of partitions) {
      const s = this.states.get(partitionKey(p.topic, p.partition));
      if (s !== undefined) out.push(s);
    }
    return out;
  }

  /** No more fetches or starts for `s`; its fetched, unstarted messages are dropped. */
  private beginHandOver(s: PartitionState): void {
    s.revoking = true;
    this.blocked.delete(s);
    for (let w = s.pending.shift(); w !== undefined; w = s.pending.shift()) this.leaveBuffer(w);
  }

  /** Waits for the running handlers of `states`, at most the deadline; then abandons the rest. */
  private async drain(states: readonly PartitionState[]): Promise<void> {
    const waiting = states.filter((s) => s.running > 0 && !s.abort.signal.aborted);
    if (waiting.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.deadlineMs);
    });
    await Promise.race([Promise.all(waiting.map((s) => s.whenIdle())), deadline]);
    clearTimeout(timer);
    for (const s of waiting) if (s.running > 0) s.abort.abort();
  }

  /** Drops `s`: its accounting, its lookups; its still-running handlers are aborted and ignored. */
  private release(s: PartitionState): void {
    if (!s.live) return;
    s.revoking = true;
    for (let w = s.pending.shift(); w !== undefined; w = s.pending.shift()) this.leaveBuffer(w);
    s.live = false;
    s.abort.abort();
    this.backpressure.forget(s.id);
    this.blocked.delete(s);
    this.states.delete(partitionKey(s.topic, s.partition));
    this.byId.delete(s.id);
  }

  // ---- commits ----

  private commitTick(): void {
    if (this.committing || this.stopping) return;
    void this.commit([...this.states.values()]);
  }

  /** Commits the current positions of `states` after any commit already in flight. */
  private commit(states: readonly PartitionState[]): Promise<void> {
    const run = this.commitChain.then(() => this.commitPositions(states));
    this.commitChain = run;
    return run;
  }

  private async commitPositions(states: readonly PartitionState[]): Promise<void> {
    const consumer = this.consumer;
    if (consumer === null) return;
    const offsets: OffsetToCommit[] = [];
    const positions: [PartitionState, CommittedPosition][] = [];
    for (const s of states) {
      const position = s.live ? s.positionToCommit(this.budget) : null;
      if (position === null) continue;
      offsets.push({ topic: s.topic, partition: s.partition, offset: position.offset, metadata: position.metadata });
      positions.push([s, position]);
    }
    if (offsets.length === 0) return;
    this.committing = true;
    try {
      await consumer.commit(offsets);
      for (const [s, position] of positions) s.lastCommit = position;
      this.counters.commits++;
    } catch (err) {
      this.report(err, 'commit');
    } finally {
      this.committing = false;
    }
  }

  // ---- shutdown ----

  private async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.commitTimer !== null) clearInterval(this.commitTimer);
    this.pollAbort.abort();
    this.afterRelease();
    const consumer = this.consumer;
    if (consumer !== null) {
      await this.fetchLoopDone;
      const states = [...this.states.values()];
      for (const s of states) this.beginHandOver(s);
      await this.drain(states);
      await this.commit(states);
      try {
        await consumer.close();
      } catch (err) {
        this.report(err, 'close');
      }
      for (const s of [...this.states.values()]) this.release(s);
    }
    await this.pool?.close();
  }

  private report(error: unknown, context: string): void {
    this.counters.lastError = error;
    this.options.onError?.(error, context);
  }
}
