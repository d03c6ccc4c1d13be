// An in-memory stand-in for our Consumer, for the parallel consumer's tests (test thread):
// partitions with fixed logs, a group's committed offsets + metadata that outlive a consumer
// (FakeGroup), pause/resume and fetch sizing honoured by poll, and rebalances (assign, revoke,
// lose) run inside poll as the real consumer does, before fetching.
// Bounds: a poll returns at most `maxPerPoll` messages per partition and about the fetch size
// in bytes (at least one message, as Kafka).
import type {
  AssignedPartition,
  ConsumerMessage,
  FetchedBatch,
  FetchSizeOptions,
  OffsetToCommit,
  RebalanceListener,
  TopicPartition,
} from '../../../../src/client/consumer/types.js';
import type { ConsumerPort } from '../../../../src/client/parallel/ports.js';

export const TOPIC = 't';
export const MESSAGE_BYTES = 100;

export interface Committed {
  readonly offset: number;
  readonly metadata: string;
}

/** What survives a consumer: the logs and the group's commits. */
export class FakeGroup {
  readonly committed = new Map<number, Committed>();
  readonly commitHistory: { partition: number; offset: number; metadata: string }[] = [];

  constructor(readonly logs: readonly (readonly ConsumerMessage[])[]) {}

  static withKeys(partitions: number, perPartition: number, keys: number): FakeGroup {
    const logs: ConsumerMessage[][] = [];
    for (let p = 0; p < partitions; p++) {
      const log: ConsumerMessage[] = [];
      for (let o = 0; o < perPartition; o++) {
        const key = Buffer.from(`k${(o * 7 + p) % keys}`);
        log.push({ topic: TOPIC, partition: p, offset: o, timestamp: 0, key, value: Buffer.from(`v${p}-${o}`), headers: [] });
      }
      logs.push(log);
    }
    return new FakeGroup(logs);
  }

  get total(): number {
    return this.logs.reduce((n, log) => n + log.length, 0);
  }
}

type Rebalance = () => Promise<void>;

export class FakeConsumer implements ConsumerPort {
  readonly paused = new Set<number>();
  pauseCalls = 0;
  resumeCalls = 0;
  maxPollBytes = 0;
  fetchMaxBytes = Number.MAX_SAFE_INTEGER;
  /** After kill(): polls return nothing and commits fail, as for a crashed process. */
  dead = false;
  closed = false;
  onResume: (() => void) | null = null;
  private readonly positions = new Map<number, number>();
  private readonly rebalances: Rebalance[] = [];

  constructor(
    readonly group: FakeGroup,
    private readonly listener: RebalanceListener,
    private readonly maxPerPoll = 10,
  ) {}

  async subscribe(): Promise<void> {
    const all = this.group.logs.map((_, p) => p);
    this.scheduleAssign(all);
  }

  scheduleAssign(partitions: readonly number[]): void {
    this.rebalances.push(async () => {
      const assigned: AssignedPartition[] = partitions.map((p) => {
        const c = this.group.committed.get(p);
        this.positions.set(p, c?.offset ?? 0);
        return { topic: TOPIC, partition: p, committed: c === undefined ? null : { offset: c.offset, metadata: c.metadata } };
      });
      await this.listener.onAssigned?.(assigned);
    });
  }

  /** Resolves once the listener's onRevoked returned. */
  revoke(partitions: readonly number[]): Promise<void> {
    return new Promise((resolve) => {
      this.rebalances.push(async () => {
        await this.listener.onRevoked?.(partitions.map((p) => ({ topic: TOPIC, partition: p })));
        for (const p of partitions) this.positions.delete(p);
        resolve();
      });
    });
  }

  lose(partitions: readonly number[]): Promise<void> {
    return new Promise((resolve) => {
      this.rebalances.push(async () => {
        for (const p of partitions) this.positions.delete(p);
        await this.listener.onLost?.(partitions.map((p) => ({ topic: TOPIC, partition: p })));
        resolve();
      });
    });
  }

  kill(): void {
    this.dead = true;
  }

  async poll(options: { signal?: AbortSignal } = {}): Promise<FetchedBatch[]> {
    for (let r = this.rebalances.shift(); r !== undefined && !this.dead; r = this.rebalances.shift()) await r();
    await new Promise((resolve) => setImmediate(resolve));
    const batches = this.dead ? [] : this.fetch();
    if (batches.length === 0) await this.idle(options.signal);
    return batches;
  }

  private fetch(): FetchedBatch[] {
    const batches: FetchedBatch[] = [];
    let budget = this.fetchMaxBytes;
    let total = 0;
    for (const [p, position] of this.positions) {
      if (this.paused.has(p)) continue;
      const log = this.group.logs[p] as readonly ConsumerMessage[];
      const messages: ConsumerMessage[] = [];
      for (let o = position; o < log.length && messages.length < this.maxPerPoll; o++) {
        if (total > 0 && budget < MESSAGE_BYTES) break;
        messages.push(log[o] as ConsumerMessage);
        budget -= MESSAGE_BYTES;
        total += MESSAGE_BYTES;
      }
      if (messages.length === 0) continue;
      this.positions.set(p, position + messages.length);
      batches.push({ topic: TOPIC, partition: p, messages, bytes: messages.length * MESSAGE_BYTES, highWatermark: log.length });
    }
    this.maxPollBytes = Math.max(this.maxPollBytes, total);
    return batches;
  }

  private idle(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, 2);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  pause(partitions: readonly TopicPartition[]): void {
    this.pauseCalls++;
    for (const tp of partitions) this.paused.add(tp.partition);
  }

  resume(partitions: readonly TopicPartition[]): void {
    this.resumeCalls++;
    this.onResume?.();
    for (const tp of partitions) this.paused.delete(tp.partition);
  }

  setFetchSize(size: FetchSizeOptions): void {
    if (size.maxBytes !== undefined) this.fetchMaxBytes = size.maxBytes;
  }

  async commit(offsets: readonly OffsetToCommit[]): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.dead) throw new Error('fenced: consumer is dead');
    for (const o of offsets) {
      const metadata = o.metadata ?? '';
      this.group.committed.set(o.partition, { offset: o.offset, metadata });
      this.group.commitHistory.push({ partition: o.partition, offset: o.offset, metadata });
    }
  }

  async close(): Promise<void> {
    if (!this.dead && this.positions.size > 0) {
      await this.listener.onRevoked?.([...this.positions.keys()].map((p) => ({ topic: TOPIC, partition: p })));
    }
    this.positions.clear();
    this.closed = true;
  }
}
