// Idle cost of a broker (bench process, main thread): starts a fresh single-node broker with the
// embedded defaults (no --shards, no --flush), optionally attaches one long-polling consumer
// (kcat on an empty topic), lets it settle, then reads every thread of the broker process from
// /proc before and after a window: run time (schedstat, ns), voluntary context switches (each is
// one sleep, so one wake-up) and involuntary ones. Prints CPU % of one core and wake-ups/s per
// thread, medians over the runs, and the process total (BrokerProcess.cpuSeconds, which also
// counts threads that exited in the window).
// Threads are labelled so that runs compare: `main` (tid = pid), `loop-N` (the other threads
// blocked in epoll: the shard workers, in creation order), the named native threads
// (sluice-sender, sluice-uring-N, io_uring's workers iou-wrk-N), and `helper-N` for the rest (V8
// platform workers, libuv's pool, Node's inspector and signal threads), all in creation (tid) order.
// `--producer RATE` measures a steady load instead: one paced acks=1 producer (our raw Produce
// connection, paced_producer.ts) sends RATE 1 KiB records/s, one per request, to a one-partition
// topic through settle and window, and the figures are also given per request (acknowledged in
// the window): wake-ups per thread and the process's CPU in microseconds.
// Linux only. Bounds: each run is settle + window seconds plus the broker's start and stop; the
// producer sends at most RATE x (settle + window + 10) records; the quiet gate waits at most
// 30 s for the machine to calm down and only reports.
// Run: node dist/bench/idle.js [--runs 3] [--settle-s 10] [--window-s 60] [--consumer]
//                               [--producer RATE] [--json] [--broker-arg=--flag --broker-arg=value ...]
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BrokerProcess } from '../src/bench/broker_process.js';
import { connectClient, createTopic, produceVersion } from '../src/bench/load/kafka_setup.js';
import { openPacedProducer, type PacedProducer } from '../src/bench/load/paced_producer.js';
import { waitQuiet } from './quiet.js';

const TOPIC = 'idle';
const RECORD_BYTES = 1024;
/** Produce requests in flight at most: far above what acks=1 at a steady rate keeps waiting. */
const PRODUCER_SLOTS = 64;
/** The producer's run beyond settle + window, so it is still sending when the window ends. */
const PRODUCER_SLACK_S = 10;
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
  /** Produce requests acknowledged per second in the window; 0 without --producer. */
  readonly requestsPerS: number;
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
    // io_uring's workers are named after the ring owner's tid (iou-wrk-1234): drop it so runs compare.
    else if (t.comm !== 'node') out.set(t.tid, next(t.comm.replace(/^(iou-\w+)-\d+$/, '$1')));
    else out.set(t.tid, next(t.loop ? 'loop' : 'helper'));
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Creates the bench's one-partition topic; returns the Produce version the broker speaks. */
async function setUpTopic(port: number): Promise<number> {
  const conn = await connectClient('127.0.0.1', port, 'idle-bench-setup');
  try {
    await createTopic(conn, TOPIC, 1);
    return produceVersion(conn);
  } finally {
    conn.close();
  }
}

/** One acks=1 producer of `rate` 1 KiB records/s, one record per request, already sending. */
async function startProducer(port: number, version: number, rate: number, runS: number): Promise<PacedProducer> {
  const producer = await openPacedProducer({
    host: '127.0.0.1', port, topic: TOPIC, partitions: 1, batchRecords: 1, recordBytes: RECORD_BYTES, acks: 1,
    ratePerSec: rate, messages: Math.ceil(rate * runS), durationMs: runS * 1000, inflight: PRODUCER_SLOTS,
    produceVersion: version, requestTimeoutMs: 30_000, clientId: 'idle-bench-producer',
  });
  producer.p.done.catch(() => undefined); // checked after the window through `ended`
  producer.start();
  return producer;
}

function startConsumer(port: number): Promise<ChildProcess> {
  // kcat's defaults: a Fetch long poll of fetch.wait.max.ms (500 ms) per round, as any idle consumer.
  const kcat = spawn('kcat', ['-C', '-q', '-b', `127.0.0.1:${port}`, '-t', TOPIC], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise<ChildProcess>((resolve, reject) => {
    kcat.once('spawn', () => resolve(kcat));
    kcat.once('error', reject);
  });
}

interface RunPlan {
  readonly settleS: number;
  readonly windowS: number;
  readonly consumer: boolean;
  /** Records (= requests) per second of the steady producer; 0: none. */
  readonly producerRate: number;
  readonly brokerArgs: string[];
}

async function oneRun(o: RunPlan): Promise<RunResult> {
  const quiet = await waitQuiet(30);
  const broker = await BrokerProcess.start({ args: o.brokerArgs });
  let kcat: ChildProcess | null = null;
  let producer: PacedProducer | null = null;
  try {
    if (o.consumer || o.producerRate > 0) {
      const version = await setUpTopic(broker.kafkaPort);
      if (o.producerRate > 0) producer = await startProducer(broker.kafkaPort, version, o.producerRate, o.settleS + o.windowS + PRODUCER_SLACK_S);
    }
    if (o.consumer) kcat = await startConsumer(broker.kafkaPort);
    await sleep(o.settleS * 1000);
    const pid = broker.pid;
    const before = sampleThreads(pid);
    const cpu0 = broker.cpuSeconds();
    const acked0 = producer?.acked ?? 0;
    const t0 = performance.now();
    await sleep(o.windowS * 1000);
    const after = sampleThreads(pid);
    const cpu1 = broker.cpuSeconds();
    const acked1 = producer?.acked ?? 0;
    const seconds = (performance.now() - t0) / 1000;
    if (producer !== null && producer.p.ended) throw new Error('the producer stopped before the window ended (a Produce failed or timed out)');
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
      processCpuPct: ((cpu1 - cpu0) * 100) / seconds,
      threadsCpuPct: threads.reduce((a, t) => a + t.cpuPct, 0),
      wakesPerS: threads.reduce((a, t) => a + t.wakesPerS, 0),
      threads,
      machineBusyPct: quiet.busyPct,
      requestsPerS: (acked1 - acked0) / seconds,
    };
  } finally {
    producer?.p.end(null);
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
      producer: { type: 'string', default: '0' },
      json: { type: 'boolean', default: false },
      'broker-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  const settings: RunPlan = {
    settleS: Number(values['settle-s']), windowS: Number(values['window-s']), consumer: values.consumer,
    producerRate: Number(values.producer), brokerArgs: values['broker-arg'],
  };
  if (!(settings.producerRate >= 0)) throw new Error(`--producer takes a rate in records/s, not ${values.producer}`);
  const perRequest = settings.producerRate > 0;
  const runs: RunResult[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const r = await oneRun(settings);
    runs.push(r);
    process.stderr.write(`run ${i + 1}: process ${r.processCpuPct.toFixed(3)}% of a core (threads ${r.threadsCpuPct.toFixed(3)}%), ` +
      `${r.wakesPerS.toFixed(1)} wake-ups/s${perRequest ? `, ${r.requestsPerS.toFixed(0)} requests/s` : ''}, machine busy ${r.machineBusyPct}% before\n`);
  }
  // Per request: each run's figure over its own acknowledged requests, then the median of those.
  const perReq = (perS: number, r: RunResult): number => (r.requestsPerS > 0 ? perS / r.requestsPerS : NaN);
  // Rows: every label seen in any run; a thread missing from a run counts as 0 there.
  const all = [...new Set(runs.flatMap((r) => r.threads.map((t) => t.label)))].sort(labelOrder);
  const rows = all.map((label) => {
    const of = (f: (t: ThreadRate, r: RunResult) => number): number => median(runs.map((r) => {
      const t = r.threads.find((x) => x.label === label);
      return f(t ?? { label, cpuPct: 0, wakesPerS: 0, involuntaryPerS: 0 }, r);
    }));
    return {
      label, cpuPct: of((t) => t.cpuPct), wakesPerS: of((t) => t.wakesPerS), involuntaryPerS: of((t) => t.involuntaryPerS),
      wakesPerRequest: of((t, r) => perReq(t.wakesPerS, r)),
    };
  });
  const summary = {
    settings: { runs: runs.length, ...settings },
    processCpuPct: median(runs.map((r) => r.processCpuPct)),
    threadsCpuPct: median(runs.map((r) => r.threadsCpuPct)),
    wakesPerS: median(runs.map((r) => r.wakesPerS)),
    requestsPerS: median(runs.map((r) => r.requestsPerS)),
    /** Process CPU (all threads, exited ones too) per acknowledged request, in microseconds. */
    processCpuUsPerRequest: median(runs.map((r) => perReq(r.processCpuPct * 1e4, r))),
    wakesPerRequest: median(runs.map((r) => perReq(r.wakesPerS, r))),
    perRun: runs.map((r) => ({ processCpuPct: r.processCpuPct, threadsCpuPct: r.threadsCpuPct, wakesPerS: r.wakesPerS, requestsPerS: r.requestsPerS, machineBusyPct: r.machineBusyPct })),
    threads: rows,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return;
  }
  const quietRows = rows.filter((r) => r.wakesPerS < 0.05 && r.cpuPct < 0.005);
  const clients = [
    ...(settings.consumer ? [`one kcat consumer long-polling ${perRequest ? 'the topic' : 'an empty topic'}`] : []),
    ...(perRequest ? [`an acks=1 producer of ${settings.producerRate} x 1 KiB records/s, one per request`] : []),
  ];
  console.log(`${perRequest ? 'broker' : 'idle broker'}${clients.length > 0 ? ` + ${clients.join(' + ')}` : ', no clients'}: ` +
    `medians of ${runs.length} runs, ${settings.windowS} s windows after ${settings.settleS} s`);
  console.log(`process: ${summary.processCpuPct.toFixed(3)}% of a core (all threads, exited ones too); threads: ${summary.threadsCpuPct.toFixed(3)}% (schedstat), ` +
    `${summary.wakesPerS.toFixed(1)} wake-ups/s`);
  if (perRequest) {
    console.log(`per request (${summary.requestsPerS.toFixed(0)} acknowledged/s): ${summary.processCpuUsPerRequest.toFixed(1)} µs of process CPU, ` +
      `${summary.wakesPerRequest.toFixed(2)} wake-ups`);
  }
  console.log(`| thread | CPU % of a core | wake-ups/s |${perRequest ? ' wake-ups/request |' : ''} involuntary/s |`);
  console.log(`|---|---:|---:|${perRequest ? '---:|' : ''}---:|`);
  for (const r of rows) {
    if (quietRows.includes(r)) continue;
    console.log(`| ${r.label} | ${r.cpuPct.toFixed(3)} | ${r.wakesPerS.toFixed(2)} |${perRequest ? ` ${r.wakesPerRequest.toFixed(3)} |` : ''} ${r.involuntaryPerS.toFixed(2)} |`);
  }
  console.log(`(${quietRows.length} more threads under 0.05 wake-ups/s and 0.005%: ${quietRows.map((r) => r.label).join(' ')})`);
}

await main();
