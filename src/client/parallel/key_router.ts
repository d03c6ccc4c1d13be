// Ordering router for the parallel consumer: decides which fetched message a free worker may
// start next so that per-key (or per-partition) order survives concurrent processing.
// Runs on the consumer's thread; a pure state machine (no I/O, no timers).
// Each message belongs to a lane by its ordering mode: 'key' → (partition, key); 'partition' →
// the partition; 'unordered' → no lane. A message with a null key in 'key' mode goes to its
// partition's lane (Kafka gives keyless records no identity to order by, so they keep partition
// order; they also share that lane with 'partition'-mode messages of the partition). A lane runs
// at most one message at a time, in submission order; the ready list holds each runnable lane
// once (and each unordered message), oldest first, so lanes are served round-robin.
// `partition` is any integer naming a topic-partition within this consumer.
// Invariants: queued + running ≤ maxQueued (submit throws beyond it: the backpressure controller
// is meant to stop fetching first); a lane exists only while it holds a message, so lanes ≤
// maxQueued; done() must be called once per started message, with the same object.

import { Fifo } from './fifo.js';

export const Ordering = { key: 'key', partition: 'partition', unordered: 'unordered' } as const;
export type Ordering = (typeof Ordering)[keyof typeof Ordering];

export interface RoutedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  /** Overrides the router's default, e.g. 'unordered' for a hot key whose order is waived. */
  readonly ordering?: Ordering;
}

export interface KeyRouterOptions {
  /** Default for messages that carry no ordering; 'key' if omitted. */
  readonly ordering?: Ordering;
  /** Bound on messages held (waiting or running). */
  readonly maxQueued: number;
}

export interface HotKey {
  readonly partition: number;
  /** null: the partition's lane (keyless or 'partition'-mode messages). */
  readonly key: Buffer | null;
  /** Messages in the lane, the running one included. */
  readonly depth: number;
}

class Lane<M> {
  readonly waiting = new Fifo<M>();
  running = false;
  partition = 0;
  keyId: string | null = null;
  key: Buffer | null = null;
}

interface PartitionLanes<M> {
  readonly keyed: Map<string, Lane<M>>;
  whole: Lane<M> | null;
}

/** Emptied lanes kept for reuse, so a steady stream over many keys does not churn the heap. */
const MAX_LANE_POOL = 1024;

export class KeyRouter<M extends RoutedMessage> {
  private readonly ordering: Ordering;
  private readonly maxQueued: number;
  private readonly partitions = new Map<number, PartitionLanes<M>>();
  private readonly ready = new Fifo<Lane<M> | M>(64);
  /** Started messages → their lane (null for unordered ones). */
  private readonly active = new Map<M, Lane<M> | null>();
  private readonly pool: Lane<M>[] = [];
  private held = 0;

  constructor(options: KeyRouterOptions) {
    if (!Number.isSafeInteger(options.maxQueued) || options.maxQueued < 1) throw new RangeError('maxQueued must be ≥ 1');
    this.ordering = options.ordering ?? Ordering.key;
    this.maxQueued = options.maxQueued;
  }

  /** Messages held: waiting plus running. */
  get size(): number {
    return this.held;
  }

  /** Messages started and not yet done. */
  get running(): number {
    return this.active.size;
  }

  /** Whether `submit` would accept another message. */
  get full(): boolean {
    return this.held >= this.maxQueued;
  }

  /** Queues `msg` behind its lane's earlier messages. Throws when the router is full. */
  submit(msg: M): void {
    if (this.held >= this.maxQueued) throw new RangeError(`router full (${this.maxQueued} messages)`);
    this.held++;
    const ordering = msg.ordering ?? this.ordering;
    if (ordering === Ordering.unordered) {
      this.ready.push(msg);
      return;
    }
    const lane = this.laneFor(msg.partition, ordering === Ordering.key ? msg.key : null, true) as Lane<M>;
    if (!lane.running && lane.waiting.length === 0) this.ready.push(lane);
    lane.waiting.push(msg);
  }

  /** A message whose lane predecessor has finished, marked running; null when none is ready. */
  next(): M | null {
    const item = this.ready.shift();
    if (item === undefined) return null;
    if (!(item instanceof Lane)) {
      this.active.set(item, null);
      return item;
    }
    const msg = item.waiting.shift() as M;
    item.running = true;
    this.active.set(msg, item);
    return msg;
  }

  /** Marks a started message finished, which lets its lane's next message run. */
  done(msg: M): void {
    const lane = this.active.get(msg);
    if (lane === undefined) throw new RangeError(`message at offset ${msg.offset} is not running`);
    this.active.delete(msg);
    this.held--;
    if (lane === null) return;
    lane.running = false;
    if (lane.waiting.length > 0) this.ready.push(lane);
    else this.release(lane);
  }

  /** Messages in the lane of (partition, key), running one included; 0 when idle. */
  depth(key: Buffer | null, partition: number): number {
    const lane = this.laneFor(partition, key, false);
    return lane === null ? 0 : lane.waiting.length + (lane.running ? 1 : 0);
  }

  /** The `n` deepest lanes, deepest first (scans every lane: for periodic metrics). */
  hotKeys(n: number): HotKey[] {
    const top: HotKey[] = [];
    const consider = (lane: Lane<M>): void => {
      const depth = lane.waiting.length + (lane.running ? 1 : 0);
      if (top.length === n && (top[n - 1] as HotKey).depth >= depth) return;
      let at = top.length === n ? n - 1 : top.length;
      while (at > 0 && (top[at - 1] as HotKey).depth < depth) at--;
      top.splice(at, 0, { partition: lane.partition, key: lane.key, depth });
      if (top.length > n) top.pop();
    };
    if (n < 1) return top;
    for (const lanes of this.partitions.values()) {
      if (lanes.whole !== null) consider(lanes.whole);
      for (const lane of lanes.keyed.values()) consider(lane);
    }
    return top;
  }

  private laneFor(partition: number, key: Buffer | null, create: boolean): Lane<M> | null {
    let lanes = this.partitions.get(partition);
    if (lanes === undefined) {
      if (!create) return null;
      lanes = { keyed: new Map(), whole: null };
      this.partitions.set(partition, lanes);
    }
    if (key === null) {
      if (lanes.whole === null && create) lanes.whole = this.newLane(partition, null, null);
      return lanes.whole;
    }
    // latin1 maps each byte to one char, so distinct keys never share an id.
    const keyId = key.toString('latin1');
    let lane = lanes.keyed.get(keyId);
    if (lane === undefined) {
      if (!create) return null;
      lane = this.newLane(partition, keyId, key);
      lanes.keyed.set(keyId, lane);
    }
    return lane;
  }

  private newLane(partition: number, keyId: string | null, key: Buffer | null): Lane<M> {
    const lane = this.pool.pop() ?? new Lane<M>();
    lane.partition = partition;
    lane.keyId = keyId;
    lane.key = key;
    return lane;
  }

  private release(lane: Lane<M>): void {
    const lanes = this.partitions.get(lane.partition) as PartitionLanes<M>;
    if (lane.keyId === null) lanes.whole = null;
    else lanes.keyed.delete(lane.keyId);
    if (lanes.whole === null && lanes.keyed.size === 0) this.partitions.delete(lane.partition);
    lane.key = null;
    lane.keyId = null;
    if (this.pool.length < MAX_LANE_POOL) this.pool.push(lane);
  }
}
