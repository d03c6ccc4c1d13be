// Latency histograms for the bench (bench driver, main thread): values are recorded in whole
// microseconds in an HDR histogram (3 significant digits) and reported in milliseconds.
import { build } from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';

export type { Histogram };

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

export function newLatencyHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
}

export function summarizeLatency(h: Histogram): LatencySummary {
  const ms = (us: number): number => Math.round(us) / 1000;
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    p999Ms: ms(h.getValueAtPercentile(99.9)),
    maxMs: ms(h.maxValue),
    meanMs: ms(h.mean),
  };
}
