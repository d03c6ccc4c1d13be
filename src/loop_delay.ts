// Event-loop delay of the calling thread: how late its timers ran. Node's histogram records the
// whole interval between runs of its sampling timer, resolution included (an idle loop reads about
// 10 ms at resolution 10), so the resolution is taken off here. Any thread; one per thread.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelay {
  readonly meanMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export const NO_LOOP_DELAY: LoopDelay = { meanMs: 0, p99Ms: 0, maxMs: 0 };

export class LoopDelayMonitor {
  private readonly histogram: IntervalHistogram;

  constructor(private readonly resolutionMs = 10) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.histogram.enable();
  }

  /** The delay since the previous take (null when the timer has not run since), then restarts. */
  take(): LoopDelay | null {
    const h = this.histogram;
    if (h.count === 0) return null;
    const late = (ns: number): number => Math.max(0, ns / 1e6 - this.resolutionMs);
    const delay = { meanMs: late(h.mean), p99Ms: late(h.percentile(99)), maxMs: late(h.max) };
    h.reset();
    return delay;
  }

  close(): void {
    this.histogram.disable();
  }
}
