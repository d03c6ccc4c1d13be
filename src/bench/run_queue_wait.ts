// How long a process's threads wait for a CPU while a bench run goes on (bench driver, main
// thread): each thread's run_delay (the second field of /proc/PID/task/TID/schedstat, the time it
// was ready to run but not running), sampled on a timer so that threads that end before the run
// does (a client's, io_uring's workers) keep what they had waited at their last sample. On a
// host whose cores the broker and its clients share, this is the queueing a latency tail holds
// that neither side's own path does.
// Bounds: one map entry per thread the process had at any sample.
import { threadSchedstats } from './process_cpu.js';

/**
 * Samples process `pid` now and every `everyMs` until stop(), which returns the milliseconds per
 * second its threads waited for a CPU in all (summed over threads, so it can exceed 1000) over
 * the span from the first sample to the last one the process was alive for; NaN when that span
 * is empty (the process was gone, or stopped at once). A thread born after the first sample counts
 * all of its wait; one that ended counts what it had at its last sample, so up to `everyMs` of it
 * is lost.
 */
export class RunQueueWaitSampler {
  private readonly first = new Map<number, number>();
  private readonly latest = new Map<number, number>();
  private firstAt = NaN;
  private lastAt = NaN;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number, everyMs = 500) {
    this.sample();
    for (const [tid, ns] of this.latest) this.first.set(tid, ns);
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    const spanS = (this.lastAt - this.firstAt) / 1000;
    if (!(spanS > 0)) return NaN;
    let waitedNs = 0;
    for (const [tid, ns] of this.latest) waitedNs += ns - (this.first.get(tid) ?? 0);
    return waitedNs / 1e6 / spanS;
  }

  private sample(): void {
    const now = performance.now();
    const threads = threadSchedstats(this.pid);
    if (threads === null || threads.size === 0) return;
    for (const [tid, t] of threads) this.latest.set(tid, t.waitNs);
    if (Number.isNaN(this.firstAt)) this.firstAt = now;
    this.lastAt = now;
  }
}
