// Open Messaging Benchmark's result layout for `sluice bench` (bench driver, main thread): a pure
// recorder that takes a workload's events (messages published with their publish latency and
// send delay, messages consumed with their end-to-end latency, failures), each with the time it
// happened on an injected clock, cuts them into fixed windows and yields OMB's TestResult: one
// value per window for rates, backlog and latency percentiles, and the aggregate over the run.
// Units as OMB's: rates in msgs/s, latencies in ms, publish delay in µs, backlog in messages.
// Bounds: one HDR histogram per series and window; windows are bounded by the workload's time.
import { newLatencyHistogram } from './load/latency.js';
import type { Histogram } from './load/latency.js';

/** OMB's percentile columns, in its naming: 50pct, 75pct, ..., 99999pct. */
const PERCENTILES: ReadonlyArray<readonly [string, number]> = [
  ['50pct', 50], ['75pct', 75], ['95pct', 95], ['99pct', 99], ['999pct', 99.9], ['9999pct', 99.99], ['99999pct', 99.999],
];

/** The quantiles of the aggregated-quantile maps (what OMB's charts plot). */
const QUANTILES = [50, 75, 90, 95, 99, 99.9, 99.99, 99.999];

/** The fields of OMB's TestResult (openmessaging/benchmark), as it writes them. */
export interface OmbTestResult {
  workload: string;
  driver: string;
  messageSize: number;
  topics: number;
  partitions: number;
  producersPerTopic: number;
  consumersPerTopic: number;
  publishRate: number[];
  publishErrorRate: number[];
  consumeRate: number[];
  backlog: number[];
  [series: string]: unknown;
}

export interface OmbShape {
  readonly workload: string;
  readonly driver: string;
  readonly messageSize: number;
  readonly partitions: number;
  /** 0 for a publish-only phase. */
  readonly consumers: number;
}

class Window {
  published = 0;
  failed = 0;
  consumed = 0;
  readonly publish: Histogram = newLatencyHistogram();
  readonly delay: Histogram = newLatencyHistogram();
  readonly e2e: Histogram = newLatencyHistogram();
}

/** Latencies are kept in µs (whole, at least 1) so sub-millisecond ones keep 3 digits. */
const micros = (ms: number): number => Math.max(1, Math.round(ms * 1000));

export class OmbRecorder {
  private readonly windows: Window[] = [];
  private readonly total = new Window();
  private published = 0;
  private consumed = 0;
  private readonly backlogAtEnd: number[] = [];
  private lastAtMs: number;

  constructor(private readonly windowMs: number, private readonly startMs: number) {
    if (!(windowMs > 0)) throw new RangeError('window must be > 0 ms');
    this.lastAtMs = startMs;
  }

  /** `records` messages acknowledged after `latencyMs`; they went out `delayMs` after they were due. */
  acked(atMs: number, records: number, latencyMs: number, delayMs: number): void {
    const w = this.windowAt(atMs);
    this.published += records;
    for (const h of [w, this.total]) {
      h.published += records;
      h.publish.recordValueWithCount(micros(latencyMs), records);
      h.delay.recordValueWithCount(micros(delayMs), records);
    }
  }

  publishFailed(atMs: number, records: number): void {
    this.windowAt(atMs).failed += records;
    this.total.failed += records;
  }

  /** One message consumed; `latencyMs` since it was due to be sent, or null when not stamped. */
  consumedOne(atMs: number, latencyMs: number | null): void {
    this.consumedMany(atMs, 1, latencyMs);
  }

  consumedMany(atMs: number, records: number, latencyMs: number | null): void {
    const w = this.windowAt(atMs);
    this.consumed += records;
    for (const h of [w, this.total]) {
      h.consumed += records;
      if (latencyMs !== null) h.e2e.recordValueWithCount(micros(latencyMs), records);
    }
  }

  get publishedCount(): number {
    return this.published;
  }

  get consumedCount(): number {
    return this.consumed;
  }

  /** The TestResult of everything recorded up to `endMs` (windows after the last event included). */
  result(shape: OmbShape, endMs: number): OmbTestResult {
    const last = Math.max(endMs, this.lastAtMs);
    // Windows [start + i*w, start + (i+1)*w) up to the one the run ends in (an end exactly on a
    // boundary ends the window before it, not an empty one after).
    this.windowAt(last - Math.min(1e-6, this.windowMs / 2));
    const seconds = this.windows.map((_, i) => {
      const from = this.startMs + i * this.windowMs;
      return Math.max(1e-3, (Math.min(from + this.windowMs, last) - from) / 1000);
    });
    const rate = (pick: (w: Window) => number): number[] => this.windows.map((w, i) => pick(w) / (seconds[i] ?? 1));
    const out: OmbTestResult = {
      workload: shape.workload,
      driver: shape.driver,
      messageSize: shape.messageSize,
      topics: 1,
      partitions: shape.partitions,
      producersPerTopic: 1,
      consumersPerTopic: shape.consumers,
      publishRate: rate((w) => w.published),
      publishErrorRate: rate((w) => w.failed),
      consumeRate: rate((w) => w.consumed),
      backlog: [...this.backlogAtEnd.slice(0, this.windows.length - 1), this.backlog()],
    };
    // HDR answers a percentile with its bucket's highest value, which may pass the exact max.
    const at = (h: Histogram, p: number): number => Math.min(h.getValueAtPercentile(p), h.maxValue);
    const series = (prefix: string, pick: (w: Window) => Histogram, toUnit: (us: number) => number): void => {
      const ofWindows = this.windows.map(pick);
      const agg = pick(this.total);
      out[`${prefix}Avg`] = ofWindows.map((h) => toUnit(h.totalCount === 0 ? 0 : h.mean));
      for (const [name, p] of PERCENTILES) out[`${prefix}${name}`] = ofWindows.map((h) => toUnit(at(h, p)));
      out[`${prefix}Max`] = ofWindows.map((h) => toUnit(h.maxValue));
      const aggName = `aggregated${prefix[0]?.toUpperCase() ?? ''}${prefix.slice(1)}`;
      out[`${aggName}Avg`] = toUnit(agg.totalCount === 0 ? 0 : agg.mean);
      for (const [name, p] of PERCENTILES) out[`${aggName}${name}`] = toUnit(at(agg, p));
      out[`${aggName}Max`] = toUnit(agg.maxValue);
      out[`${aggName}Quantiles`] = Object.fromEntries(QUANTILES.map((q) => [String(q), toUnit(at(agg, q))]));
    };
    const ms = (us: number): number => Math.round(us) / 1000;
    series('publishLatency', (w) => w.publish, ms);
    series('publishDelayLatency', (w) => w.delay, (us) => Math.round(us));
    series('endToEndLatency', (w) => w.e2e, ms);
    return out;
  }

  /** Messages acknowledged and not yet consumed; one consumed before its ack arrived is neither. */
  private backlog(): number {
    return Math.max(0, this.published - this.consumed);
  }

  /** The window holding `atMs`, opening (empty) windows up to it; events before the start count in the first. */
  private windowAt(atMs: number): Window {
    this.lastAtMs = Math.max(this.lastAtMs, atMs);
    const index = Math.max(0, Math.floor((atMs - this.startMs) / this.windowMs));
    while (this.windows.length <= index) {
      if (this.windows.length > 0) this.backlogAtEnd.push(this.backlog());
      this.windows.push(new Window());
    }
    return this.windows[Math.min(index, this.windows.length - 1)] as Window;
  }
}
