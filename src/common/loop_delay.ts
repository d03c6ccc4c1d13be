// Event-loop delay of the calling thread, split by cause. A timer records how late it ran; each
// tick also reads how long the thread waited in the kernel's run queue (ready to run, no CPU free)
// from /proc/thread-self/schedstat. A tick's delay minus that wait is the part the thread caused
// itself (long tasks, GC pauses, blocking calls): a shard blocking on fsync shows there, while a
// machine with more busy threads than cores shows in the wait. Without schedstat (not Linux) the
// wait reads 0 and all delay counts as the thread's own.
// Resolution: `resolutionMs` while the thread works; while it sleeps (ran under IDLE_RUN_SHARE of
// the last interval and the tick was on time) the interval doubles up to `idleMaxMs` (1 s). Every
// wake-up costs a sleeping thread 100 us or more of CPU on a busy VM, so ticking at 10 ms cost an
// idle broker ~2% of a core per thread, and at the earlier 100 ms cap the monitors of the main
// thread and two shards were still 30 of an idle broker's ~50 wake-ups a second (bench/idle.ts).
// The price: on a sleeping thread, a block shorter than the relaxed interval may end before the
// tick is due and go unseen (a block of L ms is seen with odds of about L/1000); a block that is
// seen, or any interval in which the thread ran 5% of the time, brings full resolution back.
// Any thread, one monitor per thread, created on the thread it measures. Bounded: the most recent
// MAX_SAMPLES ticks are kept between two take() calls.
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface LoopDelay {
  /** Ticks the figures come from. */
  readonly samples: number;
  readonly meanMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** p99 of each tick's delay minus the run-queue wait within it. */
  readonly ownP99Ms: number;
  readonly ownMaxMs: number;
  /** Share of the window the thread was ready to run but waited for a CPU. */
  readonly cpuWaitRatio: number;
}

export const NO_LOOP_DELAY: LoopDelay = { samples: 0, meanMs: 0, p99Ms: 0, maxMs: 0, ownP99Ms: 0, ownMaxMs: 0, cpuWaitRatio: 0 };

/** One minute of ticks at the default resolution. */
const MAX_SAMPLES = 6000;
/** A thread that ran less than this share of an interval, with the tick on time, is sleeping. */
const IDLE_RUN_SHARE = 0.05;
/** The longest interval of a sleeping thread's ticks: one wake-up a second per monitored thread. */
export const IDLE_MAX_MS = 1000;
/**
 * A tick later than this by the thread's own doing is not "on time": ON_TIME_MS, or ON_TIME_SHARE
 * of a longer interval. Timer slack stays below 2 ms on short intervals, but timers of 300 ms and
 * more came 1.5-2.6 ms late on this VM with the thread asleep, and with a fixed 2 ms rule those
 * sent a sleeping thread back to 10 ms ticks every few seconds (20 ticks in 4 s instead of 10).
 */
const ON_TIME_MS = 2;
const ON_TIME_SHARE = 0.01;

/** The next tick's interval (pure): relaxed by doubling while the thread sleeps, `baseMs` once it works. */
export function nextTickMs(intervalMs: number, baseMs: number, idleMaxMs: number, ranMs: number, elapsedMs: number, ownLateMs: number): number {
  const sleeping = ownLateMs < Math.max(ON_TIME_MS, ON_TIME_SHARE * intervalMs) && ranMs < IDLE_RUN_SHARE * elapsedMs;
  return sleeping ? Math.min(idleMaxMs, Math.max(baseMs, intervalMs * 2)) : baseMs;
}

/** Run time and run-queue wait of the thread that constructed it, in ms (0 where the kernel doesn't say). */
class SchedStat {
  private readonly fd: number | null;
  private readonly buf = Buffer.alloc(96);
  /** Cumulative ms of the last read(); schedstat is "<run ns> <wait ns> <timeslices>". */
  runMs = 0;
  waitMs = 0;

  constructor() {
    let fd: number | null = null;
    try {
      // thread-self resolves at open: the fd keeps naming this thread.
      fd = openSync('/proc/thread-self/schedstat', 'r');
    } catch {
      fd = null;
    }
    this.fd = fd;
    this.read();
  }

  read(): void {
    if (this.fd === null) return;
    const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
    const text = this.buf.toString('latin1', 0, n);
    const gap = text.indexOf(' ');
    this.runMs = Number(text.slice(0, gap)) / 1e6;
    this.waitMs = Number(text.slice(gap + 1, text.indexOf(' ', gap + 1))) / 1e6;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

export class LoopDelayMonitor {
  private readonly sched = new SchedStat();
  private readonly late = new Float64Array(MAX_SAMPLES);
  private readonly own = new Float64Array(MAX_SAMPLES);
  private count = 0;
  private next = 0;
  private lastTick = performance.now();
  private lastWaitMs: number;
  private lastRunMs: number;
  private intervalMs: number;
  private windowStart = this.lastTick;
  private windowWaitMs: number;
  private timer: NodeJS.Timeout;

  constructor(
    private readonly resolutionMs = 10,
    private readonly idleMaxMs = IDLE_MAX_MS,
  ) {
    this.lastWaitMs = this.windowWaitMs = this.sched.waitMs;
    this.lastRunMs = this.sched.runMs;
    this.intervalMs = resolutionMs;
    this.timer = this.arm();
  }

  /** The delay since the previous take (null when the timer has not run since), then restarts. */
  take(): LoopDelay | null {
    const now = performance.now();
    this.sched.read();
    const delay = this.since(now, this.sched.waitMs);
    if (delay === null) return null;
    this.count = 0;
    this.next = 0;
    this.windowStart = now;
    this.windowWaitMs = this.sched.waitMs;
    return delay;
  }

  /** The delay since the previous take, without restarting: a look that must not cut the scrape's window. */
  peek(): LoopDelay | null {
    this.sched.read();
    return this.since(performance.now(), this.sched.waitMs);
  }

  close(): void {
    clearTimeout(this.timer);
    this.sched.close();
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(this.tick, this.intervalMs);
    timer.unref();
    return timer;
  }

  private since(now: number, waitMs: number): LoopDelay | null {
    if (this.count === 0) return null;
    const n = Math.min(this.count, MAX_SAMPLES);
    const late = this.late.slice(0, n).sort();
    const own = this.own.slice(0, n).sort();
    let sum = 0;
    for (const v of late) sum += v;
    return {
      samples: n,
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
    this.sched.read();
    const { runMs, waitMs } = this.sched;
    const elapsed = now - this.lastTick;
    const late = Math.max(0, elapsed - this.intervalMs);
    const own = Math.max(0, late - (waitMs - this.lastWaitMs));
    this.late[this.next] = late;
    this.own[this.next] = own;
    this.next = (this.next + 1) % MAX_SAMPLES;
    this.count++;
    // Lateness from waiting for a CPU is not the thread working: judge sleep by the own part.
    this.intervalMs = nextTickMs(this.intervalMs, this.resolutionMs, this.idleMaxMs, runMs - this.lastRunMs, elapsed, own);
    this.lastTick = now;
    this.lastWaitMs = waitMs;
    this.lastRunMs = runMs;
    this.timer = this.arm();
  };
}
