// Event-loop delay of the calling thread, split by cause. A timer every `resolutionMs` records how
// late it ran; each tick also reads how long the thread waited in the kernel's run queue (ready to
// run, no CPU free) from /proc/thread-self/schedstat. A tick's delay minus that wait is the part
// the thread caused itself (long tasks, GC pauses, blocking calls): a shard blocking on fsync
// shows there, while a machine with more busy threads than cores shows in the wait. Without
// schedstat (not Linux) the wait reads 0 and all delay counts as the thread's own.
// Any thread, one monitor per thread, created on the thread it measures. Bounded: the most recent
// MAX_SAMPLES ticks are kept between two take() calls.
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface LoopDelay {
  readonly meanMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** p99 of each tick's delay minus the run-queue wait within it. */
  readonly ownP99Ms: number;
  readonly ownMaxMs: number;
  /** Share of the window the thread was ready to run but waited for a CPU. */
  readonly cpuWaitRatio: number;
}

export const NO_LOOP_DELAY: LoopDelay = { meanMs: 0, p99Ms: 0, maxMs: 0, ownP99Ms: 0, ownMaxMs: 0, cpuWaitRatio: 0 };

/** One minute of ticks at the default resolution. */
const MAX_SAMPLES = 6000;

/** Run-queue wait of the thread that constructed it, in ms (0 where the kernel doesn't say). */
class RunQueueWait {
  private readonly fd: number | null;
  private readonly buf = Buffer.alloc(96);

  constructor() {
    let fd: number | null = null;
    try {
      // thread-self resolves at open: the fd keeps naming this thread.
      fd = openSync('/proc/thread-self/schedstat', 'r');
    } catch {
      fd = null;
    }
    this.fd = fd;
  }

  /** Cumulative ms; schedstat is "<run ns> <wait ns> <timeslices>". */
  readMs(): number {
    if (this.fd === null) return 0;
    const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
    const text = this.buf.toString('latin1', 0, n);
    const from = text.indexOf(' ') + 1;
    return Number(text.slice(from, text.indexOf(' ', from))) / 1e6;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

export class LoopDelayMonitor {
  private readonly wait = new RunQueueWait();
  private readonly late = new Float64Array(MAX_SAMPLES);
  private readonly own = new Float64Array(MAX_SAMPLES);
  private count = 0;
  private next = 0;
  private lastTick = performance.now();
  private lastWaitMs: number;
  private windowStart = this.lastTick;
  private windowWaitMs: number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly resolutionMs = 10) {
    this.lastWaitMs = this.windowWaitMs = this.wait.readMs();
    this.timer = setInterval(this.tick, resolutionMs);
    this.timer.unref();
  }

  /** The delay since the previous take (null when the timer has not run since), then restarts. */
  take(): LoopDelay | null {
    const now = performance.now();
    const waitMs = this.wait.readMs();
    const delay = this.since(now, waitMs);
    if (delay === null) return null;
    this.count = 0;
    this.next = 0;
    this.windowStart = now;
    this.windowWaitMs = waitMs;
    return delay;
  }

  /** The delay since the previous take, without restarting: a look that must not cut the scrape's window. */
  peek(): LoopDelay | null {
    return this.since(performance.now(), this.wait.readMs());
  }

  close(): void {
    clearInterval(this.timer);
    this.wait.close();
  }

  private since(now: number, waitMs: number): LoopDelay | null {
    if (this.count === 0) return null;
    const n = Math.min(this.count, MAX_SAMPLES);
    const late = this.late.slice(0, n).sort();
    const own = this.own.slice(0, n).sort();
    let sum = 0;
    for (const v of late) sum += v;
    return {
      meanMs: sum / n,
      p99Ms: percentile(late, 0.99),
      maxMs: late[n - 1]!,
      ownP99Ms: percentile(own, 0.99),
      ownMaxMs: own[n - 1]!,
      cpuWaitRatio: now > this.windowStart ? Math.min(1, (waitMs - this.windowWaitMs) / (now - this.windowStart)) : 0,
    };
  }

  private readonly tick = (): void => {
    const now = performance.now();
    const waitMs = this.wait.readMs();
    const late = Math.max(0, now - this.lastTick - this.resolutionMs);
    this.late[this.next] = late;
    this.own[this.next] = Math.max(0, late - (waitMs - this.lastWaitMs));
    this.next = (this.next + 1) % MAX_SAMPLES;
    this.count++;
    this.lastTick = now;
    this.lastWaitMs = waitMs;
  };
}
