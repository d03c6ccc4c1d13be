// Recent log-end offsets of the partitions this broker hosts, the one source of append rates and
// consumer lag in seconds (the console's /v1/topics and /v1/groups, and the Prometheus
// sluice_group_lag_seconds). Main thread; pure, each sample brings its own clock reading. One
// instance per broker, fed whenever the admin HTTP reads the shards' partition figures.
//
// Lag in seconds is how long ago the first record after the committed offset was appended. A
// sample (t, e) says the log end was e at time t; a plateau (the end unchanged over several
// samples) keeps its first and last sample, so the record at offset o was appended between the
// last sample whose end is <= o and the first whose end is > o, and the estimate interpolates
// linearly in between: precision is one sampling interval. A committed offset older than the
// oldest sample gives a lower bound (the history's age), marked as such.
//
// Bounded: at most MAX_TRACKED_PARTITIONS partitions and `maxSamples` samples each; when full,
// every other older sample is dropped, so the history reaches further back at a coarser
// resolution. A partition absent from a sample (closed, moved away) is forgotten; a log end that
// goes back (truncation, a recreated partition) starts its history afresh.

/** Partitions tracked; further ones get no rate or lag in seconds. */
export const MAX_TRACKED_PARTITIONS = 20_000;
/** Samples kept per partition: this many at full resolution, then thinned. */
export const MAX_SAMPLES = 64;
/** Samples closer together than this are skipped, so frequent readers do not shorten the history. */
export const MIN_SAMPLE_INTERVAL_MS = 1000;
/** The append rate is measured over this much of the latest history. */
export const RATE_WINDOW_MS = 10_000;

export interface LogEndReading {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
}

export interface LagSeconds {
  readonly seconds: number;
  /** The committed offset predates the history: the true lag is at least `seconds`. */
  readonly atLeast: boolean;
}

/** One partition's samples. Invariant: `at` ascending, `ends` non-decreasing, same length. */
class Timeline {
  at: number[] = [];
  ends: number[] = [];

  constructor(private readonly maxSamples: number) {}

  record(nowMs: number, logEnd: number): void {
    const n = this.ends.length;
    if (n > 0 && logEnd < this.ends[n - 1]!) {
      this.at = [];
      this.ends = [];
    } else if (n >= 2 && logEnd === this.ends[n - 1] && logEnd === this.ends[n - 2]) {
      // Still on the plateau: move its last sample forward.
      this.at[n - 1] = nowMs;
      return;
    }
    if (this.ends.length >= this.maxSamples) this.thin();
    this.at.push(nowMs);
    this.ends.push(logEnd);
  }

  /** Drops every other sample but the newest, halving the count. */
  private thin(): void {
    const n = this.ends.length;
    const at: number[] = [];
    const ends: number[] = [];
    for (let i = n % 2 === 0 ? 1 : 0; i < n; i += 2) {
      at.push(this.at[i]!);
      ends.push(this.ends[i]!);
    }
    this.at = at;
    this.ends = ends;
  }
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class OffsetHistory {
  private timelines = new Map<string, Timeline>();
  private lastSampleMs = Number.NEGATIVE_INFINITY;

  /** `maxSamples` per partition (at least 4, so thinning keeps a plateau and a change). */
  constructor(private readonly maxSamples: number = MAX_SAMPLES) {
    if (!(maxSamples >= 4)) throw new RangeError('OffsetHistory: maxSamples >= 4');
  }

  /** Records one reading of every hosted partition at `nowMs`; returns false when skipped as too soon. */
  record(readings: Iterable<LogEndReading>, nowMs: number): boolean {
    if (nowMs - this.lastSampleMs < MIN_SAMPLE_INTERVAL_MS) return false;
    this.lastSampleMs = nowMs;
    const next = new Map<string, Timeline>();
    for (const r of readings) {
      const key = keyOf(r.topic, r.partition);
      if (next.has(key)) continue;
      const timeline = this.timelines.get(key) ?? (next.size < MAX_TRACKED_PARTITIONS ? new Timeline(this.maxSamples) : undefined);
      if (timeline === undefined) continue;
      timeline.record(nowMs, r.logEndOffset);
      next.set(key, timeline);
    }
    this.timelines = next;
    return true;
  }

  /** Records appended per second over the last RATE_WINDOW_MS; null before a second of history. */
  messagesPerSecond(topic: string, partition: number, nowMs: number): number | null {
    const h = this.timelines.get(keyOf(topic, partition));
    if (h === undefined) return null;
    const since = Math.max(h.at[0]!, nowMs - RATE_WINDOW_MS);
    if (nowMs - since < MIN_SAMPLE_INTERVAL_MS) return null;
    // The log end in force at `since`: that of the latest sample at or before it.
    let from = h.ends[0]!;
    for (let i = 0; i < h.at.length && h.at[i]! <= since; i++) from = h.ends[i]!;
    return ((h.ends[h.ends.length - 1]! - from) * 1000) / (nowMs - since);
  }

  /**
   * How long before `nowMs` the first record after `committed` was appended: 0 when `committed`
   * is at or past the newest sampled log end; null when the partition is untracked.
   */
  lagSeconds(topic: string, partition: number, committed: number, nowMs: number): LagSeconds | null {
    const h = this.timelines.get(keyOf(topic, partition));
    if (h === undefined) return null;
    const n = h.ends.length;
    if (committed >= h.ends[n - 1]!) return { seconds: 0, atLeast: false };
    // First sample whose end is past `committed`: the record was appended by then.
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h.ends[mid]! > committed) hi = mid;
      else lo = mid + 1;
    }
    let appendedAt = h.at[lo]!;
    if (lo > 0) {
      const e0 = h.ends[lo - 1]!;
      const t0 = h.at[lo - 1]!;
      appendedAt = t0 + ((committed + 1 - e0) / (h.ends[lo]! - e0)) * (appendedAt - t0);
    }
    return { seconds: Math.max(0, nowMs - appendedAt) / 1000, atLeast: lo === 0 };
  }

  /** Samples held for a partition (0 when untracked). */
  sampleCount(topic: string, partition: number): number {
    return this.timelines.get(keyOf(topic, partition))?.ends.length ?? 0;
  }

  get trackedPartitions(): number {
    return this.timelines.size;
  }
}
