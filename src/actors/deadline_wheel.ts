// A coarse timer wheel: many deadlines, one timer. Deadlines fall into ticks of `tickMs`; while
// any deadline is pending one repeating timer advances the wheel once a tick and expires every
// key whose tick has passed. Used on the main thread by PartitionRouter (produce timeouts, the
// fetch safety net) and on each shard worker (parked-fetch deadlines, pending-ack timeouts),
// where Kafka's millisecond timeouts need no finer granularity than a few tens of milliseconds.
// Invariants: a key never expires before its deadline, and expires at the first advance at or
// after the end of its deadline's tick (so within one tick of it when the timer runs on time).
// A key is pending at most once; adding it again moves its deadline.

/** Where the wheel reads time and how it repeats; injectable so tests can drive time by hand. */
export interface WheelClock {
  now(): number;
  /** Calls `fn` every `ms` until the returned stop function is called. */
  every(ms: number, fn: () => void): () => void;
}

export const REAL_CLOCK: WheelClock = {
  now: () => performance.now(),
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    return () => clearInterval(timer);
  },
};

export class DeadlineWheel<K> {
  private readonly buckets = new Map<number, Set<K>>();
  private readonly tickOf = new Map<K, number>();
  /** Every tick up to and including this one has been expired. */
  private cursor: number;
  /** The tick advance() is expiring, or -1. */
  private expiring = -1;
  private stop: (() => void) | null = null;

  constructor(
    private readonly tickMs: number,
    private readonly onExpire: (key: K) => void,
    private readonly clock: WheelClock = REAL_CLOCK,
  ) {
    if (!(tickMs > 0)) throw new RangeError(`DeadlineWheel: tickMs ${tickMs} must be positive`);
    this.cursor = Math.floor(clock.now() / tickMs);
  }

  now(): number {
    return this.clock.now();
  }

  get size(): number {
    return this.tickOf.size;
  }

  /** Expires `key` once the clock reaches `deadline` (same time base as the clock's now()). */
  add(key: K, deadline: number): void {
    this.delete(key);
    // The end of the tick holding the deadline, and never a tick the cursor already passed.
    const tick = Math.max(Math.ceil(deadline / this.tickMs), this.cursor + 1);
    let bucket = this.buckets.get(tick);
    if (!bucket) this.buckets.set(tick, (bucket = new Set()));
    bucket.add(key);
    this.tickOf.set(key, tick);
    this.stop ??= this.clock.every(this.tickMs, () => this.advance(this.clock.now()));
  }

  delete(key: K): void {
    const tick = this.tickOf.get(key);
    if (tick === undefined) return;
    this.tickOf.delete(key);
    const bucket = this.buckets.get(tick)!;
    bucket.delete(key);
    // A bucket being expired stays in the map until advance() finished iterating it.
    if (bucket.size === 0 && tick !== this.expiring) this.buckets.delete(tick);
    if (this.tickOf.size === 0) this.idle();
  }

  /** Expires every key whose tick ended at or before `now`. */
  advance(now: number): void {
    const until = Math.floor(now / this.tickMs);
    while (this.cursor < until && this.tickOf.size > 0) {
      this.cursor++;
      const bucket = this.buckets.get(this.cursor);
      if (!bucket) continue;
      // onExpire may delete keys of this bucket (they are then skipped) or add keys (they land
      // in later ticks, since the cursor already points here).
      this.expiring = this.cursor;
      for (const key of bucket) {
        bucket.delete(key);
        this.tickOf.delete(key);
        this.onExpire(key);
      }
      this.expiring = -1;
      this.buckets.delete(this.cursor);
    }
    // An empty wheel skips the ticks nobody waits on.
    if (this.tickOf.size === 0) {
      this.cursor = Math.max(this.cursor, until);
      this.idle();
    }
  }

  /** Stops the timer; pending keys stay and expire at a later advance(). */
  close(): void {
    this.idle();
  }

  private idle(): void {
    this.stop?.();
    this.stop = null;
  }
}
