// A process's CPU time read from /proc (bench driver, main thread): stat's user and system
// times, in clock ticks (10 ms) and counting threads that have exited; each live thread's
// scheduler times (schedstat: ns run on a CPU, ns waited ready to run), exact but only for threads
// alive now; and ProcessCpuClock, which reads the one where the other falls short.
// Bounds: one map entry per thread the process has at a reading.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clockTicks = 0;
function ticksPerSecond(): number {
  if (clockTicks === 0) clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

/** CPU seconds a process (all threads) has used so far, in user code and in the kernel. */
export interface CpuTimes {
  readonly user: number;
  readonly system: number;
}

/** CPU seconds used so far by process `pid`, user and system apart; NaN each if it is gone. */
export function processCpuTimes(pid: number): CpuTimes {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / ticksPerSecond(), system: Number(fields[12]) / ticksPerSecond() };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/**
 * The CPU seconds (user + system, all threads) process `pid` has used, read as often as a bench
 * likes. stat counts in clock ticks, 10 ms each for user and for system, too coarse for a run
 * that costs its target tens of ms: a --quick fixed-rate run costs redis about 100 ms over its
 * 6,000 messages, and a run under a tick reads 0. So each reading adds what the threads' scheduler
 * times (ns) grew by since the last one. A thread that exited in between takes its time out of
 * that sum; when the tick counts grew by two ticks (their own error) more than it, the tick growth
 * is taken instead. Readings are exact while no thread exits and within two ticks otherwise.
 */
export class ProcessCpuClock {
  private threads: ReadonlyMap<number, ThreadSchedstat>;
  private ticked: number;
  private total: number;

  constructor(readonly pid: number) {
    this.ticked = processCpuSecondsTicked(pid);
    this.threads = threadSchedstats(pid) ?? new Map();
    this.total = this.ticked;
  }

  /** Seconds so far (from stat at the first reading, exact increments after it), or NaN once the process is gone. */
  seconds(): number {
    const ticked = processCpuSecondsTicked(this.pid);
    const threads = threadSchedstats(this.pid);
    if (!Number.isFinite(ticked) || !Number.isFinite(this.total) || threads === null) return NaN;
    let grewNs = 0;
    for (const [tid, t] of threads) grewNs += Math.max(0, t.runNs - (this.threads.get(tid)?.runNs ?? 0));
    const tickGrowth = ticked - this.ticked;
    this.total += tickGrowth - grewNs / 1e9 > 2 / ticksPerSecond() ? tickGrowth : grewNs / 1e9;
    this.threads = threads;
    this.ticked = ticked;
    return this.total;
  }
}

function processCpuSecondsTicked(pid: number): number {
  const t = processCpuTimes(pid);
  return t.user + t.system;
}

export interface ThreadSchedstat {
  readonly runNs: number;
  readonly waitNs: number;
}

/** Each live thread of process `pid` by thread id, or null once the process is gone. */
export function threadSchedstats(pid: number): Map<number, ThreadSchedstat> | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const stats = new Map<number, ThreadSchedstat>();
  for (const tid of tids) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
      stats.set(Number(tid), { runNs: Number(fields[0]), waitNs: Number(fields[1]) });
    } catch {
      // The thread ended between the listing and the read: left out, as if it had ended before.
    }
  }
  return stats;
}
