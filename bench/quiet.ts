// Quiet gate before each measured run (bench process, main thread). Other workloads share this
// 2-core machine, so wait, at most maxWaitS seconds, until 3 seconds in a row each had: whole-
// machine CPU busy <= thresholdPct (the peer scripts' wait_quiet rule), the slowest of ten small
// appends with fdatasync in the temp dir (where the brokers' data dirs are) <= SLOW_SYNC_MS, and
// at most DIRTY_LIMIT_MIB of page cache waiting to be written. The disk half is there because the
// bench's phases disturb the next one through the disk: a flush=never broker leaves GiBs dirty and
// deleting a data dir discards GiBs (the root file system is mounted with `discard`); for up to
// ~25 s after either, any fdatasync here stalled 20-900 ms every other second (a bare probe loop
// shows it; the brokers' io-wq workers sat in blkdev_issue_flush: stop 26's note) while the
// guest's own disk statistics showed the device idle. Never fails: it reports.
import { closeSync, fdatasyncSync, ftruncateSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Page cache still to be written (Dirty + Writeback) that a quiet disk may hold, in MiB. */
const DIRTY_LIMIT_MIB = 256;
/** The slowest probe fdatasync a quiet disk takes (they take ~0.5-1 ms idle here). */
const SLOW_SYNC_MS = 10;
const PROBES_PER_S = 10;
/** Quiet seconds in a row the gate asks for: the stalls came every other second, so one quiet second said little. */
const QUIET_SECONDS = 3;
const PROBE = Buffer.alloc(4096, 0x71);

function cpuTimes(): { total: number; idle: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  return { total, idle: (v[3] ?? 0) + (v[4] ?? 0) };
}

/** Appends PROBE and fdatasyncs it: how long that took, ms. */
function probeSyncMs(fd: number): number {
  const t0 = performance.now();
  writeSync(fd, PROBE);
  fdatasyncSync(fd);
  return performance.now() - t0;
}

function dirtyMiB(): number {
  let text = '';
  try {
    text = readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return 0;
  }
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return Math.round((kib('Dirty') + kib('Writeback')) / 1024);
}

interface Busy {
  readonly cpuPct: number;
  readonly slowestSyncMs: number;
  readonly dirtyMiB: number;
}

async function busyOver1s(probeFd: number): Promise<Busy> {
  const a = cpuTimes();
  let slowest = 0;
  for (let i = 0; i < PROBES_PER_S; i++) {
    await new Promise((r) => setTimeout(r, 1000 / PROBES_PER_S));
    slowest = Math.max(slowest, probeSyncMs(probeFd));
  }
  ftruncateSync(probeFd, 0);
  const b = cpuTimes();
  const total = b.total - a.total;
  return {
    cpuPct: total > 0 ? Math.round((100 * (total - (b.idle - a.idle))) / total) : 0,
    slowestSyncMs: Math.round(slowest * 10) / 10,
    dirtyMiB: dirtyMiB(),
  };
}

export interface QuietReport {
  readonly quiet: boolean;
  /** Whole-machine CPU busy over the last second measured (-1: not measured). */
  readonly busyPct: number;
  /** The slowest probe fdatasync of that second, ms (-1: not measured). */
  readonly slowestSyncMs: number;
  /** Dirty + Writeback page cache at its end, MiB (-1: not measured). */
  readonly dirtyMiB: number;
  readonly waitedS: number;
}

/** What a report that did not find the machine quiet says of it. */
export function notQuietText(q: QuietReport): string {
  return `${q.busyPct}% CPU busy, slowest probe fdatasync ${q.slowestSyncMs} ms, ${q.dirtyMiB} MiB dirty after ${q.waitedS}s`;
}

export async function waitQuiet(maxWaitS: number, thresholdPct = 10): Promise<QuietReport> {
  if (maxWaitS <= 0) return { quiet: true, busyPct: -1, slowestSyncMs: -1, dirtyMiB: -1, waitedS: 0 };
  const probePath = join(tmpdir(), `sluice-bench-quiet-probe-${process.pid}`);
  const probeFd = openSync(probePath, 'w');
  try {
    let streak = 0;
    for (let t = 1; ; t++) {
      const b = await busyOver1s(probeFd);
      const quiet = b.cpuPct <= thresholdPct && b.slowestSyncMs <= SLOW_SYNC_MS && b.dirtyMiB <= DIRTY_LIMIT_MIB;
      streak = quiet ? streak + 1 : 0;
      if (streak >= Math.min(QUIET_SECONDS, maxWaitS) || t >= maxWaitS) {
        return { quiet, busyPct: b.cpuPct, slowestSyncMs: b.slowestSyncMs, dirtyMiB: b.dirtyMiB, waitedS: t };
      }
    }
  } finally {
    closeSync(probeFd);
    rmSync(probePath, { force: true });
  }
}
