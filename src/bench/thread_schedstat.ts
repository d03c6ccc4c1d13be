// The scheduler's own times for each thread of a process (bench driver, main thread), read from
// /proc/PID/task/TID/schedstat: in ns, how long the thread has run on a CPU and how long it
// waited ready to run. Exact, unlike stat's 10 ms ticks, but only for threads alive now.
// Bounds: one entry per thread the process has.
import { readdirSync, readFileSync } from 'node:fs';

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
