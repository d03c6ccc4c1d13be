// A fixed-bucket histogram of durations in seconds, recorded on any thread and handed on as
// deltas: take() returns what was observed since the previous take() and starts over. Free of
// prom-client so shard workers can keep one; the main thread turns the deltas into Prometheus
// histograms (metrics/delta_histogram.ts). Bounded: one count per bucket, whatever the traffic.
// One instance per thread; not shared.

/** Upper bounds (seconds) for disk writes and fdatasyncs: 100 us to 5 s; a +Inf bucket follows. */
export const DISK_FLUSH_BOUNDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/**
 * Upper bounds (seconds) for request durations (sluice_request_duration_seconds,
 * sluice_fetch_serve_seconds): 500 us to 30 s; a +Inf bucket follows.
 */
export const REQUEST_LATENCY_BOUNDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** Observations since the previous take(), per bucket (not cumulative). */
export interface BucketCounts {
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last entry, past the final bound, is +Inf's. */
  readonly counts: number[];
  readonly sum: number;
  readonly count: number;
}

/** Index of the first bucket of `bounds` whose upper bound is at least `seconds` (bounds.length: +Inf's). */
export function bucketOf(bounds: readonly number[], seconds: number): number {
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]) i++;
  return i;
}

export class BucketHistogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  /** `bounds`: finite upper bounds, ascending. */
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Counts `seconds` in the first bucket whose upper bound is at least it. */
  observe(seconds: number): void {
    this.counts[bucketOf(this.bounds, seconds)]++;
    this.sum += seconds;
    this.count++;
  }

  /** How many observations the next take() holds. */
  get observed(): number {
    return this.count;
  }

  /** What was observed since the previous take(); starts the next interval from zero. */
  take(): BucketCounts {
    const taken: BucketCounts = { counts: [...this.counts], sum: this.sum, count: this.count };
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
    return taken;
  }
}

/** What each histogram with observations holds, by its key, each started over. */
export function takeObserved<K>(histograms: ReadonlyMap<K, BucketHistogram>): Array<readonly [K, BucketCounts]> {
  return [...histograms].filter(([, h]) => h.observed > 0).map(([k, h]) => [k, h.take()] as const);
}
