// When a partition's offsets were appended, as seen from its log end offset at successive metrics
// scrapes: the basis of consumer lag in seconds (how long ago the first record a group has not
// consumed was appended). Main thread; pure, the clock is the caller's.
// Model: a sample (t, e) says the log end offset was e at time t. A plateau (the end unchanged
// over several scrapes) keeps its first and its last sample, so the record at offset o was
// appended between the last sample whose end is <= o and the first whose end is > o; the
// estimate interpolates linearly in between. Precision is therefore one scrape interval at best.
// Invariants: ends never decrease along the samples (a lower end, a truncated or recreated log,
// starts the timeline afresh); at most `maxSamples` samples: when full, every other older sample
// is dropped, so the timeline reaches further back at a coarser resolution.

export class OffsetTimeline {
  private times: number[] = [];
  private ends: number[] = [];

  constructor(private readonly maxSamples: number) {
    if (!(maxSamples >= 4)) throw new RangeError('OffsetTimeline: maxSamples >= 4');
  }

  get size(): number {
    return this.ends.length;
  }

  /** The log end offset was `logEnd` at `nowMs` (times must not go backwards). */
  record(nowMs: number, logEnd: number): void {
    const n = this.ends.length;
    if (n > 0 && logEnd < this.ends[n - 1]!) {
      this.times = [];
      this.ends = [];
    } else if (n >= 2 && logEnd === this.ends[n - 1] && logEnd === this.ends[n - 2]) {
      // Still on the plateau: move its last sample forward.
      this.times[n - 1] = nowMs;
      return;
    }
    if (this.ends.length >= this.maxSamples) this.thin();
    this.times.push(nowMs);
    this.ends.push(logEnd);
  }

  /**
   * Seconds since the record at `offset` was appended, as of `nowMs`: 0 when `offset` is at or
   * past the newest log end (nothing to consume); at least the timeline's span when it was
   * appended before the oldest sample (a lower bound then).
   */
  secondsBehind(offset: number, nowMs: number): number {
    const n = this.ends.length;
    if (n === 0 || offset >= this.ends[n - 1]!) return 0;
    // First sample whose end is past `offset`: the record was appended by then.
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ends[mid]! > offset) hi = mid;
      else lo = mid + 1;
    }
    let appendedAt = this.times[lo]!;
    if (lo > 0) {
      const e0 = this.ends[lo - 1]!;
      const t0 = this.times[lo - 1]!;
      appendedAt = t0 + ((offset + 1 - e0) / (this.ends[lo]! - e0)) * (appendedAt - t0);
    }
    return Math.max(0, nowMs - appendedAt) / 1000;
  }

  /** Drops every other sample but the newest, halving the count. */
  private thin(): void {
    const n = this.ends.length;
    const times: number[] = [];
    const ends: number[] = [];
    for (let i = n % 2 === 0 ? 1 : 0; i < n; i += 2) {
      times.push(this.times[i]!);
      ends.push(this.ends[i]!);
    }
    this.times = times;
    this.ends = ends;
  }
}
