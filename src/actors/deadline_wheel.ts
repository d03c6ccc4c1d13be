// A coarse timer wheel: many deadlines, one timer. Deadlines fall into ticks of `tickMs`; while
// any deadline is pending one one-shot timer is armed for the end of the earliest pending tick,
// and when it fires the wheel expires every key whose tick has passed and arms for the next.
// Used on the main thread by PartitionRouter (produce timeouts, the fetch safety net) and on each
// shard worker (parked-fetch deadlines, pending-ack timeouts), where Kafka's millisecond timeouts
// need no finer granularity than a few tens of milliseconds.
// Why one-shot: most deadlines are deleted long before they fall due (a produce answered in
// milliseconds against a 30 s timeout), so a timer repeating every tick while anything was
// pending woke its thread 100 times a second under steady traffic to find nothing due. Now a
// thread wakes when the earliest deadline it armed for falls due; if that key left meanwhile,
// the wake-up only re-arms for the earliest one still pending.
// The timer is not cancelled when the wheel empties: it fires once more, finds nothing and arms
// nothing. Under steady traffic with few requests in flight the wheel empties at every answer,
// and arming and cancelling a timer per request allocated ~0.7 KB each time (a Timeout, its
// closures, a reslot in Node's timer lists); the one left armed serves the next request's later
// deadline as it is. For the same reason a bucket's set, emptied by deletes, is kept for the next
// tick that needs one.
// advance() jumps the cursor over ticks that hold nothing, so a firing after a quiet spell costs
// a scan of the pending ticks, not a step per tick of the spell.
// Invariants: a key never expires before its deadline, and expires at the first advance at or
// after the end of its deadline's tick (so within one tick of it when the timer runs on time);
// while any key is pending exactly one timer is armed, at or before the end of the earliest
// pending tick, and never for a tick already passed (the cursor moves only in advance(): a jump
// before any key expires, then one tick at a time through every bucket it passes, so no key is
// left behind it); at most one while the wheel is empty, and none once it fired empty. A key is
// pending at most once; adding it again moves its deadline.

/** Where the wheel reads time and sets its timer; injectable so tests can drive time by hand. */
export interface WheelClock {
  now(): number;
  /** Calls `fn` once, `ms` from now, unless the returned cancel function is called first. */
  after(ms: number, fn: () => void): () => void;
}

// The timer does not hold the thread's event loop open: whatever waits on a deadline (a client's
// connection, a shard's lane) holds its own handle, and an emptied wheel's timer, left to fire,
// would otherwise keep a process that embeds a stopped broker alive for up to a request timeout.
export const REAL_CLOCK: WheelClock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface Armed {
  readonly tick: number;
  readonly cancel: () => void;
}

export class DeadlineWheel<K> {
  private readonly buckets = new Map<number, Set<K>>();
  private readonly tickOf = new Map<K, number>();
  /** Every tick up to and including this one has been expired. */
  private cursor: number;
  /** The tick advance() is expiring, or -1. */
  private expiring = -1;
  private timer: Armed | null = null;
  /** An emptied bucket's set, for the next tick that needs one. */
  private spare: Set<K> | null = null;

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
    if (!bucket) {
      bucket = this.spare ?? new Set();
      this.spare = null;
      this.buckets.set(tick, bucket);
    }
    bucket.add(key);
    this.tickOf.set(key, tick);
    if (this.timer === null || tick < this.timer.tick) this.arm(tick);
  }

  delete(key: K): void {
    const tick = this.tickOf.get(key);
    if (tick === undefined) return;
    this.tickOf.delete(key);
    const bucket = this.buckets.get(tick)!;
    bucket.delete(key);
    // A bucket being expired stays in the map until advance() finished iterating it.
    if (bucket.size === 0 && tick !== this.expiring) {
      this.buckets.delete(tick);
      this.spare = bucket;
    }
  }

  /** Expires every key whose tick ended at or before `now`. */
  advance(now: number): void {
    const until = Math.floor(now / this.tickMs);
    // With one-shot timers advance() can come hours after the last one (the wheel sat empty, or
    // held only keys deleted before they fell due): jump to just before the earliest pending tick
    // rather than visit every tick between. Only here, before any key expires — onExpire may add
    // keys at cursor + 1, and moving the cursor under a running walk strands a bucket behind it.
    // Worth a scan of the buckets only when the walk would be longer.
    if (until - this.cursor > this.buckets.size) {
      this.cursor = Math.max(this.cursor, Math.min(this.earliestTick() - 1, until));
    }
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
      return;
    }
    const earliest = this.earliestTick();
    if (this.timer === null || this.timer.tick !== earliest) this.arm(earliest);
  }

  /** Stops the timer; pending keys stay and expire at a later advance(). */
  close(): void {
    this.idle();
  }

  private idle(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  /** (Re)arms the one timer for the end of `tick`. */
  private arm(tick: number): void {
    this.timer?.cancel();
    // The exact remaining time, not rounded up to whole milliseconds: rounding up would let the
    // timer fire after deadline + one tick for a deadline just past a tick boundary. A timer that
    // fires before its tick ended (the event loop's clock lags now()) only re-arms.
    const cancel = this.clock.after(Math.max(0, tick * this.tickMs - this.clock.now()), this.fire);
    this.timer = { tick, cancel };
  }

  private readonly fire = (): void => {
    this.timer = null;
    this.advance(this.clock.now());
  };

  /** The earliest tick with a pending key; runs once per timer firing, not per add or delete. */
  private earliestTick(): number {
    let earliest = Infinity;
    for (const tick of this.buckets.keys()) if (tick < earliest && tick !== this.expiring) earliest = tick;
    return earliest;
  }
}
