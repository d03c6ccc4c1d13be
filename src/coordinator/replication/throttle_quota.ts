// A byte-rate quota as KIP-73's replication quotas measure it, pure (the clock is passed in, in
// ms): bytes are counted in `windows` samples of `windowMs` each (Kafka:
// replication.quota.window.num = 11 of replication.quota.window.size.seconds = 1), and the rate
// is their sum over the time they span, counted as at least windows - 1 whole samples so a
// fresh quota does not read one early burst as a huge rate. The quota is exceeded while that
// rate is above the limit; callers check before they send and record what they sent, so a sender
// is held back only after it went over, and a slow one is never held back. The owner keeps one
// per broker side: the fetch handler on main for the leader side, each shard's replica fetchers
// for the follower side; client quotas (client_quotas.ts) keep one per quota entity and ask it
// for KIP-219's delay instead.

export interface QuotaWindows {
  readonly windowMs: number;
  readonly windows: number;
}

/** Kafka's defaults for replication quotas: 11 samples of 1 s. */
export const REPLICATION_QUOTA_WINDOWS: QuotaWindows = { windowMs: 1000, windows: 11 };

export class ThrottleQuota {
  private limit = Infinity;
  /** Per sample slot: which window (floor(now / windowMs)) it counts, and its bytes. */
  private readonly windowOf: Float64Array;
  private readonly bytes: Float64Array;

  constructor(private readonly w: QuotaWindows = REPLICATION_QUOTA_WINDOWS) {
    if (!(w.windowMs > 0) || !Number.isInteger(w.windows) || w.windows < 2) throw new Error(`quota windows ${w.windows} x ${w.windowMs} ms`);
    this.windowOf = new Float64Array(w.windows).fill(-Infinity);
    this.bytes = new Float64Array(w.windows);
  }

  /** The limit in bytes/s; Infinity: unthrottled. Applies from the next check on. */
  setRate(bytesPerSecond: number): void {
    this.limit = bytesPerSecond;
  }

  record(bytes: number, nowMs: number): void {
    if (bytes <= 0) return;
    const window = Math.floor(nowMs / this.w.windowMs);
    const slot = ((window % this.w.windows) + this.w.windows) % this.w.windows;
    if (this.windowOf[slot] !== window) {
      this.windowOf[slot] = window;
      this.bytes[slot] = 0;
    }
    this.bytes[slot]! += bytes;
  }

  /** Bytes/s over the live samples. */
  rate(nowMs: number): number {
    const { total, spanMs } = this.measure(nowMs);
    return (total * 1000) / spanMs;
  }

  /** The live samples' sum and the time they span (at least windows - 1 whole samples). */
  private measure(nowMs: number): { total: number; spanMs: number } {
    const current = Math.floor(nowMs / this.w.windowMs);
    let total = 0;
    let oldest = current;
    for (let i = 0; i < this.w.windows; i++) {
      const window = this.windowOf[i]!;
      if (window <= current - this.w.windows || window > current) continue;
      total += this.bytes[i]!;
      if (window < oldest) oldest = window;
    }
    return { total, spanMs: Math.max(nowMs - oldest * this.w.windowMs, (this.w.windows - 1) * this.w.windowMs) };
  }

  isExceeded(nowMs: number): boolean {
    return this.limit !== Infinity && this.rate(nowMs) > this.limit;
  }

  /**
   * How long the sender must pause for the rate to fall back to the limit (KIP-219, as Kafka's
   * client quotas compute it): (rate - limit) / limit of the span the samples cover, at most
   * `capMs`; 0 while the rate is within the limit.
   */
  delayMs(nowMs: number, capMs: number): number {
    if (this.limit === Infinity) return 0;
    const { total, spanMs } = this.measure(nowMs);
    const rate = (total * 1000) / spanMs;
    if (rate <= this.limit) return 0;
    return Math.min(capMs, Math.round(((rate - this.limit) / this.limit) * spanMs));
  }
}
