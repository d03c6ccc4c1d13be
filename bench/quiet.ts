// Quiet gate before each measured run (bench process, main thread), the same rule as the peer
// scripts' wait_quiet: other workloads share this 2-core machine, so wait, at most maxWaitS
// seconds, until whole-machine CPU busy over 1 s is <= thresholdPct. Never fails: it reports.
import { readFileSync } from 'node:fs';

function cpuTimes(): { total: number; idle: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  return { total, idle: (v[3] ?? 0) + (v[4] ?? 0) };
}

async function busyPercentOver1s(): Promise<number> {
  const a = cpuTimes();
  await new Promise((r) => setTimeout(r, 1000));
  const b = cpuTimes();
  const total = b.total - a.total;
  return total > 0 ? Math.round((100 * (total - (b.idle - a.idle))) / total) : 0;
}

export interface QuietReport {
  readonly quiet: boolean;
  readonly busyPct: number;
  readonly waitedS: number;
}

export async function waitQuiet(maxWaitS: number, thresholdPct = 10): Promise<QuietReport> {
  if (maxWaitS <= 0) return { quiet: true, busyPct: -1, waitedS: 0 };
  for (let t = 1; ; t++) {
    const busy = await busyPercentOver1s();
    if (busy <= thresholdPct) return { quiet: true, busyPct: busy, waitedS: t };
    if (t >= maxWaitS) return { quiet: false, busyPct: busy, waitedS: t };
  }
}
