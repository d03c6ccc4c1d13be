// Idle cost of a broker (bench process, main thread): starts a fresh single-node broker with the
// embedded defaults (no --shards, no --flush), optionally attaches one long-polling consumer
// (kcat on an empty topic), lets it settle, then reads every thread of the broker process from
// /proc before and after a window: run time (schedstat, ns), voluntary context switches (each is
// one sleep, so one wake-up) and involuntary ones. Prints CPU % of one core and wake-ups/s per
// thread, medians over the runs, and the process total (utime+stime from /proc/PID/stat, which
// also counts threads that exited in the window).
// Threads are labelled so that runs compare: `main` (tid = pid), `loop-N` (the other threads
// blocked in epoll: the shard workers, in creation order), the named native threads
// (sluice-sender, sluice-uring-N), and `helper-N` for the rest (V8 platform workers, libuv's
// pool, Node's inspector and signal threads), all in creation (tid) order.
// Linux only. Bounds: each run is settle + window seconds plus the broker's start and stop; the
// quiet gate waits at most --quiet-wait-s for the machine to calm down and only reports.
// Run: node dist/bench/idle.js [--runs 3] [--settle-s 10] [--window-s 60] [--consumer] [--json]
//                               [--broker-arg=--flag --broker-arg=value ...]
import { spawn, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BrokerProcess } from '../src/bench/broker_process.js';
import { connectClient, createTopic } from '../src/bench/load/kafka_setup.js';
import { waitQuiet } from './quiet.js';

const TOPIC = 'idle';
/** x86-64 and arm64 numbers of the calls an event loop sleeps in (epoll_wait, epoll_pwait, epoll_pwait2). */
const EPOLL_SYSCALLS = new Set([232, 281, 441, 22]);

interface ThreadSample {
  readonly tid: number;
  readonly comm: string;
  readonly runNs: number;
  readonly voluntary: number;
  readonly involuntary: number;
  /** Blocked in epoll when read: an event loop. */
  readonly loop: boolean;
}

interface ThreadRate {
  readonly label: string;
  readonly cpuPct: number;
  readonly wakesPerS: number;
  readonly involuntaryPerS: number;
}

interface RunResult {
  readonly processCpuPct: number;
  readonly threadsCpuPct: number;
  readonly wakesPerS: number;
  readonly threads: ThreadRate[];
  readonly machineBusyPct: number;
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function isLoop(pid: number, tid: number): boolean {
  // A thread that happens to be running has no syscall to show; look a few times.
  for (let i = 0; i < 5; i++) {
    const first = readOr(`/proc/${pid}/task/${tid}/syscall`, 'running').split(' ', 1)[0] ?? 'running';
    if (first !== 'running') return EPOLL_SYSCALLS.has(Number(first));
  }
  return false;
}

function sampleThreads(pid: number): Map<number, ThreadSample> {
  const out = new Map<number, ThreadSample>();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    const tid = Number(name);
    const base = `/proc/${pid}/task/${tid}`;
    const status = readOr(`${base}/status`, '');
    const field = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    out.set(tid, {
      tid,
      comm: readOr(`${base}/comm`, '?').trim(),
      runNs: Number(readOr(`${base}/schedstat`, 'NaN').split(' ', 1)[0]),
      voluntary: field('voluntary_ctxt_switches'),
      involuntary: field('nonvoluntary_ctxt_switches'),
      loop: tid !== pid && isLoop(pid, tid),
    });
  }
  return out;
}

let clockTicks = 0;
function processCpuMs(pid: number): number {
  if (clockTicks === 0) clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks;
}

/** Stable names for the threads alive through the whole window (see the header). */
function labels(pid: number, threads: readonly ThreadSample[]): Map<number, string> {
  const byTid = [...threads].sort((a, b) => a.tid - b.tid);
  const out = new Map<number, string>();
  const counters = new Map<string, number>();
  const next = (kind: string): string => {
    const n = counters.get(kind) ?? 0;
    counters.set(kind, n + 1);
    return `${kind}-${n}`;
  };
  for (const t of byTid) {
    if (t.tid === pid) out.set(t.tid, 'main');
    else if (t.comm !== 'node') out.set(t.tid, next(t.comm));
    else out.set(t.tid, next(t.loop ? 'loop' : 'helper'));
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function startConsumer(port: number): Promise<ChildProcess> {
  const conn = await connectClient('127.0.0.1', port, 'idle-bench-setup');
  try {
    await createTopic(conn, TOPIC, 1);
  } finally {
    conn.close();
  }
  // kcat's defaults: a Fetch long poll of fetch.wait.max.ms (500 ms) per round, as any idle consumer.
  const kcat = spawn('kcat', ['-C', '-q', '-b', `127.0.0.1:${port}`, '-t', TOPIC], { stdio: ['ignore', 'ignore', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    kcat.once('spawn', resolve);
    kcat.once('error', reject);
  });
  return kcat;
}

async function oneRun(o: { settleS: number; windowS: number; consumer: boolean; brokerArgs: string[] }): Promise<RunResult> {
  const quiet = await waitQuiet(30);
  const broker = await BrokerProcess.start({ args: o.brokerArgs });
  let kcat: ChildProcess | null = null;
  try {
    if (o.consumer) kcat = await startConsumer(broker.kafkaPort);
    await sleep(o.settleS * 1000);
    const pid = broker.pid;
    const before = sampleThreads(pid);
    const cpu0 = processCpuMs(pid);
    const t0 = performance.now();
    await sleep(o.windowS * 1000);
    const after = sampleThreads(pid);
    const cpu1 = processCpuMs(pid);
    const seconds = (performance.now() - t0) / 1000;
    const alive = [...after.values()].filter((t) => before.has(t.tid));
    const names = labels(pid, alive);
    const threads: ThreadRate[] = alive.map((t) => {
      const b = before.get(t.tid)!;
      return {
        label: names.get(t.tid)!,
        cpuPct: (t.runNs - b.runNs) / 1e7 / seconds,
        wakesPerS: (t.voluntary - b.voluntary) / seconds,
        involuntaryPerS: (t.involuntary - b.involuntary) / seconds,
      };
    });
    return {
      processCpuPct: (cpu1 - cpu0) / 10 / seconds,
      threadsCpuPct: threads.reduce((a, t) => a + t.cpuPct, 0),
      wakesPerS: threads.reduce((a, t) => a + t.wakesPerS, 0),
      threads,
      machineBusyPct: quiet.busyPct,
    };
  } finally {
    // kcat first, and gone before the broker stops: otherwise it reports the broker's loss on stderr.
    if (kcat !== null && kcat.exitCode === null) {
      const exited = new Promise((resolve) => kcat?.once('exit', resolve));
      kcat.kill('SIGTERM');
      await exited;
    }
    await broker.stop();
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function labelOrder(a: string, b: string): number {
  const rank = (l: string): number => (l === 'main' ? 0 : l.startsWith('loop-') ? 1 : l.startsWith('helper-') ? 3 : 2);
  const [ka, na] = [rank(a), Number(/-(\d+)$/.exec(a)?.[1] ?? 0)];
  const [kb, nb] = [rank(b), Number(/-(\d+)$/.exec(b)?.[1] ?? 0)];
  return ka - kb || (ka === 2 ? a.localeCompare(b) : 0) || na - nb;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      'settle-s': { type: 'string', default: '10' },
      'window-s': { type: 'string', default: '60' },
      consumer: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'broker-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  const settings = {
    settleS: Number(values['settle-s']), windowS: Number(values['window-s']), consumer: values.consumer, brokerArgs: values['broker-arg'],
  };
  const runs: RunResult[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const r = await oneRun(settings);
    runs.push(r);
    process.stderr.write(`run ${i + 1}: process ${r.processCpuPct.toFixed(3)}% of a core (threads ${r.threadsCpuPct.toFixed(3)}%), ` +
      `${r.wakesPerS.toFixed(1)} wake-ups/s, machine busy ${r.machineBusyPct}% before\n`);
  }
  // Rows: every label seen in any run; a thread missing from a run counts as 0 there.
  const all = [...new Set(runs.flatMap((r) => r.threads.map((t) => t.label)))].sort(labelOrder);
  const rows = all.map((label) => {
    const of = (f: (t: ThreadRate) => number): number => median(runs.map((r) => { const t = r.threads.find((x) => x.label === label); return t === undefined ? 0 : f(t); }));
    return { label, cpuPct: of((t) => t.cpuPct), wakesPerS: of((t) => t.wakesPerS), involuntaryPerS: of((t) => t.involuntaryPerS) };
  });
  const summary = {
    settings: { runs: runs.length, ...settings },
    processCpuPct: median(runs.map((r) => r.processCpuPct)),
    threadsCpuPct: median(runs.map((r) => r.threadsCpuPct)),
    wakesPerS: median(runs.map((r) => r.wakesPerS)),
    perRun: runs.map((r) => ({ processCpuPct: r.processCpuPct, threadsCpuPct: r.threadsCpuPct, wakesPerS: r.wakesPerS, machineBusyPct: r.machineBusyPct })),
    threads: rows,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return;
  }
  const quietRows = rows.filter((r) => r.wakesPerS < 0.05 && r.cpuPct < 0.005);
  console.log(`idle broker${settings.consumer ? ' + one kcat consumer long-polling an empty topic' : ', no clients'}: ` +
    `medians of ${runs.length} runs, ${settings.windowS} s windows after ${settings.settleS} s`);
  console.log(`process: ${summary.processCpuPct.toFixed(3)}% of a core (utime+stime); threads: ${summary.threadsCpuPct.toFixed(3)}% (schedstat), ` +
    `${summary.wakesPerS.toFixed(1)} wake-ups/s`);
  console.log('| thread | CPU % of a core | wake-ups/s | involuntary/s |');
  console.log('|---|---:|---:|---:|');
  for (const r of rows) {
    if (quietRows.includes(r)) continue;
    console.log(`| ${r.label} | ${r.cpuPct.toFixed(3)} | ${r.wakesPerS.toFixed(2)} | ${r.involuntaryPerS.toFixed(2)} |`);
  }
  console.log(`(${quietRows.length} more threads under 0.05 wake-ups/s and 0.005%: ${quietRows.map((r) => r.label).join(' ')})`);
}

await main();
