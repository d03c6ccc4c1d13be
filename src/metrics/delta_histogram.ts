// A Prometheus histogram fed with bucket deltas recorded elsewhere (a shard's BucketHistogram,
// common/bucket_histogram.ts), for figures observed off the main thread, and with main's own
// single observations into the same series: prom-client's Histogram takes only single
// observations, so it cannot add a bucket's count or a sum. Main thread.
// Each series is cumulative from its first delta on, as Prometheus expects, until remove().
// It registers itself as a metric of its own: prom-client's Registry (lib/registry.js) renders
// any registered object from its name and the name, help, type and values its get() returns, and
// calls reset() from resetMetrics(); the typings list only the four built-in classes, hence the
// declaration below.
import type { Registry } from 'prom-client';
import { bucketOf, type BucketCounts } from '../common/bucket_histogram.js';

declare module 'prom-client' {
  // The type parameter repeats the class's own, as declaration merging requires.
  interface Registry<BoundRegistryContentType extends RegistryContentType = PrometheusContentType> {
    registerMetric(metric: DeltaHistogram<string>): void;
  }
}

/** One exposition line: `metricName{labels} value`. */
export interface HistogramSample {
  readonly metricName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** What Registry reads from get(). */
export interface HistogramExport {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly aggregator: 'sum';
  readonly values: HistogramSample[];
}

export interface DeltaHistogramConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Finite upper bounds (seconds), ascending: those of the BucketHistogram the deltas come from. */
  readonly bounds: readonly number[];
  readonly registry: Registry;
}

/** One labelled series of a DeltaHistogram; a caller may keep it to record into without a lookup each time. */
export class DeltaSeries {
  /** Per bucket, not cumulative; the last entry is +Inf's. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly name: string, readonly labels: Readonly<Record<string, string>>, private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Counts one observation in the first bucket whose upper bound is at least it. */
  observe(seconds: number): void {
    this.counts[bucketOf(this.bounds, seconds)]++;
    this.sum += seconds;
    this.count++;
  }

  /** Adds what was observed elsewhere since the previous delta. */
  add(delta: BucketCounts): void {
    if (delta.counts.length !== this.counts.length) {
      throw new Error(`${this.name}: ${delta.counts.length} bucket counts for ${this.bounds.length} bounds and +Inf`);
    }
    for (let i = 0; i < delta.counts.length; i++) this.counts[i] += delta.counts[i];
    this.sum += delta.sum;
    this.count += delta.count;
  }
}

export class DeltaHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, DeltaSeries>();

  constructor(config: DeltaHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.bounds = config.bounds;
    config.registry.registerMetric(this);
  }

  /** Adds what was observed since the previous delta of this series (a zero delta creates the series). */
  add(labels: Record<L, string>, delta: BucketCounts): void {
    this.child(labels).add(delta);
  }

  /** The series of `labels`, created empty if new (it is exported from then on, until remove()). */
  child(labels: Record<L, string>): DeltaSeries {
    const key = this.keyOf(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      s = new DeltaSeries(this.name, { ...labels }, this.bounds);
      this.series.set(key, s);
    }
    return s;
  }

  remove(labels: Record<L, string>): void {
    this.series.delete(this.keyOf(labels));
  }

  reset(): void {
    this.series.clear();
  }

  /** Cumulative `le` buckets (+Inf last), then _sum and _count, per series. */
  get(): Promise<HistogramExport> {
    const values: HistogramSample[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < s.counts.length; i++) {
        cumulative += s.counts[i];
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  private keyOf(labels: Record<L, string>): string {
    return this.labelNames.map((n) => labels[n]).join('\u0000');
  }
}
