// Peers measured in the same sitting (bench process, main thread): librdkafka's producer
// (/work/shared/peers/rdkafka-producer-bench.c, compiled into a temp dir), librdkafka's end-to-end
// latency (rdkafka-e2e-latency.c, a paced producer and a consumer in one process) and kcat
// (kafka-client-bench.sh) against fresh Sluice brokers (the producer also against a warmed one,
// and against librdkafka's C mock broker, in its own process and apart: bench/mock_broker.c), the
// peer scripts for loopback TCP (iperf3), Redis Streams, NATS JetStream and the Node socket
// ceiling, invoked unchanged,
// and the CPU a write into fresh page cache costs here (cold and warm). The scripts write results/
// next to themselves, so they run through a temp dir of symlinks to the (read-only, shared) peers dir.
// fio's 1 MiB writes with an fdatasync after each, the durable target's disk figure, run here
// (one case of peers/02-fio.sh, shortened) on the file system the brokers' data dirs are on.
// A peer whose tools are missing is reported as unavailable, never as a failure of the bench.
// Bounds: every child process has a timeout and is killed by its pid (the mock broker process
// exits when its stdin closes); output kept is capped.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerProcess } from '../src/bench/broker_process.js';
import type { LatencyHistograms, ShardLag } from '../src/bench/broker_process.js';
import { processCpuTimes, type CpuTimes } from '../src/bench/process_cpu.js';
import { histogramGrowth, histogramQuantile, type Histogram } from '../src/cli/cluster_metrics.js';
import { onPath } from '../src/bench/peer_servers.js';
import { RunQueueWaitSampler } from '../src/bench/run_queue_wait.js';
import { waitQuiet } from './quiet.js';
import { spread } from './report.js';
import type { Spread } from './report.js';

export interface PeerFigure {
  readonly name: string;
  readonly unit: string;
  readonly value: Spread;
}

export interface PeerResults {
  readonly figures: PeerFigure[];
  /** Peers that could not run here, with the reason. */
  readonly unavailable: string[];
  readonly log: string[];
}

export interface PeerSettings {
  readonly peersDir: string;
  readonly runs: number;
  readonly shards: number | undefined;
  readonly quietWaitS: number;
  readonly rdkafkaMessages: number;
  /** Bytes of librdkafka produce load a broker takes before its warmed runs are measured. */
  readonly rdkafkaWarmupBytes: number;
  /** Subset of PEER_NAMES to run; empty = all. */
  readonly only: readonly string[];
}

export const PEER_NAMES = ['rdkafka', 'rdkafka-e2e', 'kcat', 'redis', 'nats', 'node-net', 'iperf3', 'pagecache', 'fio'] as const;

const OUTPUT_KEEP = 256 * 1024;


interface ProcResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command, killing it (by pid) after timeoutMs; `started` learns its pid once spawned. */
function run(
  cmd: string, args: readonly string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env, started?: (pid: number) => void,
): Promise<ProcResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid !== undefined) started?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout = (stdout + d.toString('utf8')).slice(-OUTPUT_KEEP); });
    child.stderr.on('data', (d: Buffer) => { stderr = (stderr + d.toString('utf8')).slice(-OUTPUT_KEEP); });
    // The scripts start servers in the background: end the whole process group we created.
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    const finish = (code: number | null): void => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    };
    child.on('error', (err) => {
      stderr += String(err);
      if (child.pid === undefined) finish(null); // never started: no 'close' follows
    });
    child.on('close', finish);
  });
}

/** A dir of symlinks to the peers dir's files, so the scripts' results/ land in our temp dir. */
function symlinkFarm(peersDir: string, work: string): string {
  const farm = join(work, 'peers');
  mkdirSync(farm);
  for (const f of readdirSync(peersDir)) if (f !== 'results') symlinkSync(join(peersDir, f), join(farm, f));
  return farm;
}

/** "<label> ... median/min/max/n: MED MIN MAX N" lines from stats.js, keyed by the regex's label. */
function statsLine(stdout: string, re: RegExp): Spread | null {
  const m = re.exec(stdout);
  if (m === null) return null;
  const [med, min, max, n] = (m[1] as string).trim().split(/\s+/).map(Number);
  if (med === undefined || !Number.isFinite(med)) return null;
  return { median: med, min: min ?? med, max: max ?? med, n: n ?? 1 };
}

export type Logger = (line: string) => void;

interface Ctx {
  readonly s: PeerSettings;
  readonly work: string;
  readonly farm: string;
  readonly log: Logger;
  readonly out: PeerResults;
  readonly env: NodeJS.ProcessEnv;
}

function add(ctx: Ctx, name: string, unit: string, value: Spread | null): void {
  if (value !== null && value.n > 0) ctx.out.figures.push({ name, unit, value });
}

function tail(text: string, lines = 4): string {
  return text.trim().split('\n').slice(-lines).join(' | ');
}

/** Runs `body` against a fresh broker (by default flush never: acks=1 semantics, like Kafka's default). */
async function withSluice<T>(
  ctx: Pick<Ctx, 's'>, body: (bootstrap: string, broker: BrokerProcess) => Promise<T>, flush: 'never' | 'always' = 'never',
): Promise<T> {
  const broker = await BrokerProcess.start({ flush, shards: ctx.s.shards });
  try {
    await waitQuiet(ctx.s.quietWaitS);
    return await body(`${broker.host}:${broker.kafkaPort}`, broker);
  } finally {
    await broker.stop();
  }
}

/** Compiles a librdkafka C tool (`source`, a path) into `work`; the binary path, or why not. */
async function buildRdkafkaTool(source: string, work: string): Promise<{ bin: string } | { error: string }> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h') || !onPath('cc')) {
    return { error: 'librdkafka-dev or cc missing (apt-get install -y librdkafka-dev)' };
  }
  const bin = join(work, `peers-${basename(source, '.c')}`);
  const cc = await run('cc', ['-O2', '-Wall', '-o', bin, source, '-lrdkafka', '-lpthread'], 120_000);
  return cc.code === 0 ? { bin } : { error: `compile failed: ${tail(cc.stderr)}` };
}

/** Compiles the shared librdkafka producer bench into `work`. */
export function buildRdkafkaBench(peersDir: string, work: string): Promise<{ bin: string } | { error: string }> {
  return buildRdkafkaTool(join(peersDir, 'rdkafka-producer-bench.c'), work);
}

/** Compiles the shared librdkafka end-to-end latency tool into `work`. */
export function buildRdkafkaE2e(peersDir: string, work: string): Promise<{ bin: string } | { error: string }> {
  return buildRdkafkaTool(join(peersDir, 'rdkafka-e2e-latency.c'), work);
}

/** Our own C program that serves librdkafka's mock broker as a process apart (bench/mock_broker.c). */
const MOCK_BROKER_SOURCE = fileURLToPath(new URL('../../bench/mock_broker.c', import.meta.url));

/** librdkafka's mock broker running as a process of its own: where it listens, and its CPU so far. */
interface MockBrokerProcess {
  readonly bootstrap: string;
  cpuTimes(): CpuTimes;
  stop(): Promise<void>;
}

/** Starts the compiled mock_broker and waits (up to 10 s) for the address on its first line. */
function startMockBroker(bin: string): Promise<MockBrokerProcess | { error: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const stop = async (): Promise<void> => {
      child.stdin.end(); // it serves until its stdin closes
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    };
    let settled = false;
    let out = '';
    let err = '';
    const settle = (r: MockBrokerProcess | { error: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if ('error' in r) void stop().then(() => resolve(r));
      else resolve(r);
    };
    const deadline = setTimeout(() => settle({ error: `mock broker printed no address in 10 s: ${tail(err)}` }), 10_000);
    child.stderr.on('data', (d: Buffer) => { err = (err + d.toString('utf8')).slice(-OUTPUT_KEEP); });
    child.once('error', (e) => settle({ error: `mock broker: ${String(e)}` }));
    void exited.then(() => settle({ error: `mock broker exited: ${tail(err)}` }));
    child.stdout.on('data', (d: Buffer) => {
      out = (out + d.toString('utf8')).slice(-OUTPUT_KEEP);
      const nl = out.indexOf('\n');
      const pid = child.pid;
      if (nl >= 0 && pid !== undefined) settle({ bootstrap: out.slice(0, nl).trim(), cpuTimes: () => processCpuTimes(pid), stop });
    });
  });
}

/** One librdkafka producer run (acks=1, linger 5 ms): its JSON line, or the error. */
export async function runRdkafkaBench(bin: string, bootstrap: string, topic: string, n: number, size: number): Promise<{ msgs_s: number; line: string } | { error: string }> {
  const args = ['-b', bootstrap, '-t', topic, '-n', String(n), '-s', String(size), '-a', '1', '-l', '5'];
  const r = await run(bin, args, 300_000);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !line.startsWith('{')) return { error: `exit ${r.code}: ${tail(`${r.stdout}\n${r.stderr}`)}` };
  return { msgs_s: (JSON.parse(line) as { msgs_s: number }).msgs_s, line };
}

/** CPU per message a broker process spent over a run, in µs: user code and kernel. */
interface CpuPerMessage {
  readonly userUs: number;
  readonly systemUs: number;
}

/** One producer run's rate, and the CPU per message a broker process spent over it. */
interface MeasuredRun extends CpuPerMessage {
  readonly msgs_s: number;
  readonly line: string;
}

function cpuPerMessage(before: CpuTimes, after: CpuTimes, messages: number): CpuPerMessage {
  return { userUs: ((after.user - before.user) / messages) * 1e6, systemUs: ((after.system - before.system) / messages) * 1e6 };
}

async function measuredRun(
  bin: string, bootstrap: string, topic: string, n: number, size: number, cpuTimes: () => CpuTimes,
): Promise<MeasuredRun | { error: string }> {
  const before = cpuTimes();
  const r = await runRdkafkaBench(bin, bootstrap, topic, n, size);
  if ('error' in r) return r;
  return { ...r, ...cpuPerMessage(before, cpuTimes(), n) };
}

/** One producer run against a mock broker process of its own (`mockBin`), with that process's CPU. */
async function mockProcessRun(mockBin: string, bin: string, topic: string, n: number, size: number): Promise<MeasuredRun | { error: string }> {
  const mock = await startMockBroker(mockBin);
  if ('error' in mock) return mock;
  try {
    return await measuredRun(bin, mock.bootstrap, topic, n, size, () => mock.cpuTimes());
  } finally {
    await mock.stop();
  }
}

function describeRun(r: MeasuredRun | { error: string }): string {
  if ('error' in r) return r.error;
  return `${r.line} CPU ${(r.userUs + r.systemUs).toFixed(3)} µs/msg (user ${r.userUs.toFixed(3)}, kernel ${r.systemUs.toFixed(3)})`;
}

/** The CPU figures of a set of runs: total and user µs per message. */
function addCpu(ctx: Ctx, prefix: string, runs: readonly CpuPerMessage[]): void {
  add(ctx, `${prefix}-cpu`, 'CPU µs/msg', spread(runs.map((r) => r.userUs + r.systemUs)));
  add(ctx, `${prefix}-user`, 'user CPU µs/msg', spread(runs.map((r) => r.userUs)));
}

/**
 * librdkafka's producer (acks=1, linger 5 ms) against Sluice and against librdkafka's C mock
 * broker, 1 KiB and 100 B records, with the rates and each broker's CPU per message (its process's
 * utime+stime over the run, topic auto-creation included, over the records acknowledged: DESIGN.md
 * §11's CPU figure), split into user and kernel time:
 * - fresh brokers, run by turns with the mock inside the producer's process (`-b mock`), the
 *   ceiling of this client on this machine, for the rate ratio; a fresh broker's figure includes
 *   V8 tiering its request path up (baseline code, and optimizing compiles on a helper thread);
 * - one broker given `rdkafkaWarmupBytes` of the same load first, then measured, by turns with the
 *   mock as a process of its own (bench/mock_broker.c), whose CPU is that of a C broker keeping
 *   the records in memory (no page-cache write) for the same client and load.
 * Each measured Sluice run starts after the page-cache peer's rest (see pagecachePeer), yet which
 * pages the kernel then hands its page-cache copies still varies (one sitting's fresh broker spent
 * 6 % of its samples in that copy, a warmed one 77 %, as a bare writer past its first GiB does):
 * read a fresh broker's kernel time against pagecache-write-cold and -warm of the same sitting, a
 * warmed broker's against pagecache-write-sustained, and the user time as the broker's own.
 */
async function rdkafkaPeer(ctx: Ctx): Promise<void> {
  const built = await buildRdkafkaBench(ctx.s.peersDir, ctx.work);
  if ('error' in built) {
    ctx.out.unavailable.push(`librdkafka producer: ${built.error}`);
    return;
  }
  const mockBuilt = await buildRdkafkaTool(MOCK_BROKER_SOURCE, ctx.work);
  if ('error' in mockBuilt) ctx.out.unavailable.push(`librdkafka mock broker process: ${mockBuilt.error}`);
  for (const size of [1024, 100]) {
    const n = size === 1024 ? ctx.s.rdkafkaMessages : ctx.s.rdkafkaMessages * 3;
    const label = `${size === 1024 ? '1k' : '100b'}-acks1`;
    const fresh: MeasuredRun[] = [];
    const mockRates: number[] = [];
    for (let i = 1; i <= ctx.s.runs; i++) {
      const r = await withSluice(ctx, async (bootstrap, broker) => {
        await sleep(PAGECACHE_REST_MS);
        return measuredRun(built.bin, bootstrap, `rdk-${size}-${i}`, n, size, () => broker.cpuTimes());
      });
      ctx.log(`librdkafka ${size} B acks=1 run ${i}, fresh broker: ${describeRun(r)}`);
      if (!('error' in r)) fresh.push(r);
      const mock = await runRdkafkaBench(built.bin, 'mock', `rdk-${size}-${i}`, n, size);
      ctx.log(`librdkafka ${size} B acks=1 against its C mock broker, run ${i}: ${'error' in mock ? mock.error : mock.line}`);
      if (!('error' in mock)) mockRates.push(mock.msgs_s);
    }
    add(ctx, `rdkafka-${label}`, 'msgs/s', spread(fresh.map((r) => r.msgs_s)));
    addCpu(ctx, `rdkafka-${label}-broker`, fresh);
    add(ctx, `rdkafka-mock-${label}`, 'msgs/s', spread(mockRates));

    const warmed: MeasuredRun[] = [];
    const mockProc: MeasuredRun[] = [];
    await withSluice(ctx, async (bootstrap, broker) => {
      for (let k = 1, sent = 0; sent * size < ctx.s.rdkafkaWarmupBytes; k++, sent += n) {
        const w = await measuredRun(built.bin, bootstrap, `rdk-${size}-warm-${k}`, n, size, () => broker.cpuTimes());
        ctx.log(`librdkafka ${size} B acks=1 warm-up run ${k}: ${describeRun(w)}`);
        if ('error' in w) return;
      }
      for (let i = 1; i <= ctx.s.runs; i++) {
        await sleep(PAGECACHE_REST_MS);
        const r = await measuredRun(built.bin, bootstrap, `rdk-${size}-warmed-${i}`, n, size, () => broker.cpuTimes());
        ctx.log(`librdkafka ${size} B acks=1 run ${i}, warmed broker: ${describeRun(r)}`);
        if (!('error' in r)) warmed.push(r);
        if ('error' in mockBuilt) continue;
        const m = await mockProcessRun(mockBuilt.bin, built.bin, `rdk-${size}-${i}`, n, size);
        ctx.log(`librdkafka ${size} B acks=1 run ${i}, C mock broker process: ${describeRun(m)}`);
        if (!('error' in m)) mockProc.push(m);
      }
    });
    add(ctx, `rdkafka-${label}-warmed`, 'msgs/s', spread(warmed.map((r) => r.msgs_s)));
    addCpu(ctx, `rdkafka-${label}-warmed-broker`, warmed);
    add(ctx, `rdkafka-mockproc-${label}`, 'msgs/s', spread(mockProc.map((r) => r.msgs_s)));
    addCpu(ctx, `rdkafka-mockproc-${label}`, mockProc);
  }
}

/** What rdkafka-e2e-latency prints: messages sent after its 1 s warm-up, received of them, latency percentiles. */
export interface RdkafkaE2e {
  readonly sent: number;
  readonly received: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly p999_ms: number;
  readonly max_ms: number;
}

/**
 * The broker's side of an end-to-end run, from its histograms over the whole run (the warm-up
 * second's included): Produce from decoded to response queued, and its group commits. Beside the
 * client's percentiles they say how much of a tail the broker's own path holds. The shards'
 * event-loop delay over the run (the worst shard's p99, and its p99 less the time it waited for a
 * CPU: DESIGN.md §11's own-delay target) says how long work queued behind other work on a shard;
 * the shards' scavenges over the run, how much of that delay GC alone holds.
 */
export interface BrokerSide {
  readonly produceP99Ms: number;
  readonly flushP50Ms: number;
  readonly flushP99Ms: number;
  readonly flushes: number;
  readonly shardDelayP99Ms: number;
  readonly shardOwnDelayP99Ms: number;
  /** The shards' scavenges over the run, and their pauses' p99: loop delay that GC alone holds. */
  readonly shardScavenges: number;
  readonly shardScavengeP99Ms: number;
}

/**
 * An end-to-end run, with the broker's CPU per message produced (the warm-up second's included)
 * and its side, when measured, and how long the client's and the broker's threads waited for a
 * CPU (ms per second of the run, summed over each process's threads: RunQueueWaitSampler).
 */
export interface RdkafkaE2eRun extends RdkafkaE2e {
  readonly brokerCpu?: CpuPerMessage;
  readonly brokerSide?: BrokerSide;
  readonly clientCpuWaitMsPerS?: number;
  readonly brokerCpuWaitMsPerS?: number;
}

/** The broker an end-to-end run reads its CPU, CPU waits and histograms from. */
export type MeasuredBroker = Pick<BrokerProcess, 'cpuTimes' | 'latencyHistograms' | 'shardLag' | 'pid'>;

function brokerSide(before: LatencyHistograms, after: LatencyHistograms, lag: ShardLag): BrokerSide {
  const flush = histogramGrowth(after.flush, before.flush);
  const scavenges = histogramGrowth(after.shardScavenges, before.shardScavenges);
  const ms = (q: number, h: Histogram): number => histogramQuantile(q, h) * 1000;
  const count = (h: Histogram): number => (h.length === 0 ? 0 : h[h.length - 1]![1]);
  return {
    produceP99Ms: ms(0.99, histogramGrowth(after.produce, before.produce)),
    flushP50Ms: ms(0.5, flush),
    flushP99Ms: ms(0.99, flush),
    flushes: count(flush),
    shardDelayP99Ms: lag.p99Ms,
    shardOwnDelayP99Ms: lag.ownP99Ms,
    shardScavenges: count(scavenges),
    shardScavengeP99Ms: ms(0.99, scavenges),
  };
}

/**
 * One librdkafka end-to-end run: 1 KiB records paced at `rate` msgs/s for `seconds` (after a 1 s
 * warm-up) by a linger-0 producer with `acks`, read back by a consumer in the same process. A run
 * whose consumer did not get every record sent is an error, not a latency. With `broker` (the
 * broker process), the broker's CPU over the whole run per message produced and its side come with it.
 */
export async function runRdkafkaE2e(
  bin: string, bootstrap: string, topic: string, rate: number, seconds: number, acks: '1' | 'all', broker?: MeasuredBroker,
): Promise<RdkafkaE2eRun | { error: string }> {
  const args = ['-b', bootstrap, '-t', topic, '-r', String(rate), '-d', String(seconds), '-s', '1024', '-a', acks];
  const histograms = await broker?.latencyHistograms();
  const before = broker?.cpuTimes();
  const brokerWaits = broker === undefined ? null : new RunQueueWaitSampler(broker.pid);
  const client: { waits?: RunQueueWaitSampler } = {};
  // The tool waits 3 s for its consumer, runs warm-up + seconds, then flushes for up to 10 s.
  const r = await run(bin, args, (seconds + 30) * 1000, process.env, (pid) => { client.waits = new RunQueueWaitSampler(pid); });
  const brokerCpuWaitMsPerS = brokerWaits?.stop() ?? NaN;
  const clientCpuWaitMsPerS = client.waits?.stop() ?? NaN;
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !line.startsWith('{')) return { error: `exit ${r.code}: ${tail(`${r.stdout}\n${r.stderr}`)}` };
  const e = JSON.parse(line) as RdkafkaE2e;
  if (e.received !== e.sent) return { error: `consumer received ${e.received} of ${e.sent} records: ${line}` };
  if (broker === undefined || before === undefined || histograms === undefined) return e;
  // The tool's warm-up second sends `rate` records (and one to create the topic) it does not count in `sent`.
  const brokerCpu = cpuPerMessage(before, broker.cpuTimes(), e.sent + rate + 1);
  // Each scrape restarts the shards' delay windows: the first histograms' scrape began this one.
  const lag = await broker.shardLag();
  return { ...e, brokerCpu, brokerSide: brokerSide(histograms, await broker.latencyHistograms(), lag), clientCpuWaitMsPerS, brokerCpuWaitMsPerS };
}

/** One latency case of DESIGN.md §11 (issue 16): 1 KiB, linger 0, fsync before ack. */
export interface E2eCase {
  readonly rate: number;
  readonly acks: '1' | 'all';
}

/** The latency targets' cases: 20k and 100k msgs/s, acks=1 and acks=all. */
const E2E_CASES: readonly E2eCase[] = [
  { rate: 20_000, acks: '1' }, { rate: 20_000, acks: 'all' }, { rate: 100_000, acks: '1' }, { rate: 100_000, acks: 'all' },
];
const E2E_SECONDS = 15;

const e2eCaseName = (c: E2eCase): string => `rdkafka-e2e-${c.rate / 1000}k-acks${c.acks}-always`;

/** What rdkafkaE2eCase needs of the peers' context. */
export type E2eCtx = Pick<Ctx, 's' | 'log'>;

/**
 * One case's runs under --flush always: `runs` through fresh brokers (a broker that starts and at
 * once takes the load runs its request path as V8 baseline code and compiles it meanwhile, and at
 * 100k msgs/s built a backlog of ~0.5 s in its first second in one run here, which then held that
 * run's p99), then `runs` through one broker after an unmeasured warm-up run of the same case
 * (each on its own topic, after the quiet gate): the latency of a broker that has been serving.
 */
export async function rdkafkaE2eCase(
  ctx: E2eCtx, bin: string, c: E2eCase, seconds: number,
): Promise<{ readonly fresh: RdkafkaE2eRun[]; readonly warmed: RdkafkaE2eRun[] }> {
  const name = e2eCaseName(c);
  const fresh: RdkafkaE2eRun[] = [];
  for (let i = 1; i <= ctx.s.runs; i++) {
    const r = await withSluice(ctx, (bootstrap, broker) =>
      runRdkafkaE2e(bin, bootstrap, `rdk-e2e-${i}`, c.rate, seconds, c.acks, broker), 'always');
    ctx.log(`${name} run ${i}, fresh broker: ${'error' in r ? r.error : JSON.stringify(r)}`);
    if (!('error' in r)) fresh.push(r);
  }
  const warmed: RdkafkaE2eRun[] = [];
  await withSluice(ctx, async (bootstrap, broker) => {
    const w = await runRdkafkaE2e(bin, bootstrap, 'rdk-e2e-warm-up', c.rate, seconds, c.acks);
    ctx.log(`${name} warm-up run: ${'error' in w ? w.error : JSON.stringify(w)}`);
    if ('error' in w) return;
    for (let i = 1; i <= ctx.s.runs; i++) {
      await waitQuiet(ctx.s.quietWaitS);
      const r = await runRdkafkaE2e(bin, bootstrap, `rdk-e2e-warmed-${i}`, c.rate, seconds, c.acks, broker);
      ctx.log(`${name} run ${i}, warmed broker: ${'error' in r ? r.error : JSON.stringify(r)}`);
      if (!('error' in r)) warmed.push(r);
    }
  }, 'always');
  return { fresh, warmed };
}

/** A case's p50, p99 and p99.9 and the broker's CPU per message over its runs, as `prefix`-* figures. */
function addE2e(ctx: Ctx, prefix: string, runs: readonly RdkafkaE2eRun[]): void {
  add(ctx, `${prefix}-p50`, 'ms', spread(runs.map((r) => r.p50_ms)));
  add(ctx, `${prefix}-p99`, 'ms', spread(runs.map((r) => r.p99_ms)));
  add(ctx, `${prefix}-p999`, 'ms', spread(runs.map((r) => r.p999_ms)));
  addCpu(ctx, `${prefix}-broker`, runs.flatMap((r) => (r.brokerCpu === undefined ? [] : [r.brokerCpu])));
  const sides = runs.flatMap((r) => (r.brokerSide === undefined ? [] : [r.brokerSide]));
  add(ctx, `${prefix}-broker-produce-p99`, 'ms', spread(sides.map((b) => b.produceP99Ms)));
  add(ctx, `${prefix}-broker-flush-p99`, 'ms', spread(sides.map((b) => b.flushP99Ms)));
  add(ctx, `${prefix}-broker-shard-own-delay-p99`, 'ms', spread(sides.map((b) => b.shardOwnDelayP99Ms)));
  add(ctx, `${prefix}-broker-shard-scavenge-p99`, 'ms', spread(sides.map((b) => b.shardScavengeP99Ms)));
  add(ctx, `${prefix}-broker-shard-scavenges`, 'count', spread(sides.map((b) => b.shardScavenges)));
  add(ctx, `${prefix}-client-cpu-wait`, 'ms/s', spread(runs.map((r) => r.clientCpuWaitMsPerS ?? NaN)));
  add(ctx, `${prefix}-broker-cpu-wait`, 'ms/s', spread(runs.map((r) => r.brokerCpuWaitMsPerS ?? NaN)));
}

/**
 * librdkafka's end-to-end latency under --flush always, through fresh brokers and through a
 * warmed one (rdkafkaE2eCase): p50, p99 and p99.9 per case, the broker's CPU per message (user
 * time apart), which says how much of the two cores the broker left the client at that rate, and
 * how long each side's threads waited for a CPU.
 */
async function rdkafkaE2ePeer(ctx: Ctx): Promise<void> {
  const built = await buildRdkafkaE2e(ctx.s.peersDir, ctx.work);
  if ('error' in built) {
    ctx.out.unavailable.push(`librdkafka e2e latency: ${built.error}`);
    return;
  }
  for (const c of E2E_CASES) {
    const { fresh, warmed } = await rdkafkaE2eCase(ctx, built.bin, c, E2E_SECONDS);
    addE2e(ctx, e2eCaseName(c), fresh);
    addE2e(ctx, `${e2eCaseName(c)}-warmed`, warmed);
  }
}

const KCAT_LINE = /produce: (\d+) ms (\d+) msgs\/s (\d+) MB\/s \| consume: got=(\d+) (\d+) ms (\d+) msgs\/s (\d+) MB\/s/g;

/**
 * The input file kafka-client-bench.sh would generate ($TMPDIR/peers-kcat-N-S.txt: N copies of one
 * line of S random alphanumerics). Written here because the script's own `yes | head` pipeline
 * exits 141 (SIGPIPE) under its `set -o pipefail`; the script skips generation when it exists.
 */
function writeKcatInput(path: string, lines: number, size: number): void {
  const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const line = Buffer.from(`${Array.from(randomBytes(size), (b) => alnum[b % alnum.length]).join('')}\n`);
  const perChunk = Math.max(1, Math.floor((1 << 20) / line.length));
  const chunk = Buffer.concat(Array.from({ length: perChunk }, () => line));
  const fd = openSync(path, 'w');
  try {
    for (let left = lines; left > 0; left -= perChunk) writeSync(fd, chunk, 0, Math.min(left, perChunk) * line.length);
  } finally {
    closeSync(fd);
  }
}

async function kcatPeer(ctx: Ctx): Promise<void> {
  if (!onPath('kcat')) {
    ctx.out.unavailable.push('kcat: not installed (apt-get install -y kcat)');
    return;
  }
  const n = ctx.s.rdkafkaMessages;
  writeKcatInput(join(ctx.work, `peers-kcat-${n}-1024.txt`), n, 1024);
  const r = await withSluice(ctx, (bootstrap) => run('bash',
    [join(ctx.farm, 'kafka-client-bench.sh'), bootstrap, String(n), '1024', String(ctx.s.runs), '1', '5', 'kcb'], 1_200_000, ctx.env));
  const produce: number[] = [];
  const consume: number[] = [];
  for (const m of r.stdout.matchAll(KCAT_LINE)) {
    ctx.log(`kcat: ${m[0]}`);
    produce.push(Number(m[2]));
    if (Number(m[4]) === n) consume.push(Number(m[7]));
  }
  if (produce.length === 0) ctx.out.unavailable.push(`kcat bench failed (exit ${r.code}): ${tail(`${r.stdout}\n${r.stderr}`)}`);
  add(ctx, 'kcat-produce-1k-acks1', 'msgs/s', spread(produce));
  add(ctx, 'kcat-consume-1k', 'MB/s', spread(consume));
}

/**
 * The rest before a cold page-cache run: this VM reports freed memory to its host (free page
 * reporting) within 2-6 s of a free, after which the first write to each page faults on the host.
 * An earlier stop measured 1 GiB with dd at 0.19-0.21 s of CPU when written at once after a
 * delete freed the last one's pages, and at 1.4-1.9 s after 6-20 s; later sittings found a first
 * GiB after this rest at 0.15-0.68 µs of CPU per KiB, with the host's price past it
 * (PAGECACHE_COLD_GIB).
 */
const PAGECACHE_REST_MS = 8000;
/**
 * GiB written by a cold run. Past its first GiB a writer pays far more per byte: a bare writer
 * (this peer's loop, 4-6 GiB, one sitting) took 0.37-0.68 µs of CPU per KiB for its first GiB and
 * 2.2-2.35 for each one after, 90 % of its samples in the kernel's copy into page-cache pages;
 * fio's 1 MiB + fdatasync writes fell from 904 MB/s in their first second to ~330 after it. The
 * guest's page_reporting has max_waiting_mib=1024, likely up to a GiB of freed memory kept backed
 * before it is reported. A broker that has written its first GiB pays the later rate, so a cold
 * run measures both.
 */
const PAGECACHE_COLD_GIB = 3;

/** Writes argv[2] GiB into a new file in 1 MiB writes, deletes it, prints the CPU µs each GiB took. */
const PAGECACHE_WRITER = `
const fs = require('node:fs');
const [path, gib] = [process.argv[1], Number(process.argv[2])];
const chunk = Buffer.alloc(1 << 20, 0x5a);
const fd = fs.openSync(path, 'w');
const used = [];
for (let g = 0; g < gib; g++) {
  const before = process.cpuUsage();
  for (let i = 0; i < 1024; i++) fs.writeSync(fd, chunk);
  const u = process.cpuUsage(before);
  used.push(u.user + u.system);
}
fs.closeSync(fd);
fs.unlinkSync(path);
console.log(used.join(' '));`;

/**
 * What one copy of each produced byte into the page cache costs on this machine, in CPU µs per
 * KiB (comparable with broker CPU per 1 KiB message, which includes that copy):
 * - cold: the first GiB written after a rest (PAGECACHE_REST_MS);
 * - sustained: the GiBs after it in the same run, the rate a broker that already wrote a GiB pays
 *   (see PAGECACHE_COLD_GIB);
 * - warm: 1 GiB right after a delete freed pages the write reuses.
 * Whether a broker run lands on warm or cold pages depends on what freed memory in the seconds
 * before it, so its CPU per message moves by about the difference between them.
 */
async function pagecachePeer(ctx: Ctx): Promise<void> {
  const file = join(ctx.work, 'pagecache-write');
  const perKiB = async (gib: number): Promise<number[] | null> => {
    const r = await run(process.execPath, ['-e', PAGECACHE_WRITER, file, String(gib)], 120_000);
    const us = r.stdout.trim().split(' ').map(Number);
    if (r.code !== 0 || us.length !== gib || !us.every(Number.isFinite)) {
      ctx.log(`page-cache write failed (exit ${r.code}): ${tail(r.stderr)}`);
      return null;
    }
    return us.map((u) => u / (1 << 20));
  };
  const cold: number[] = [];
  const sustained: number[] = [];
  const warm: number[] = [];
  const show = (v: number | undefined): string => v?.toFixed(3) ?? 'failed';
  for (let i = 1; i <= ctx.s.runs; i++) {
    await sleep(PAGECACHE_REST_MS);
    const [first, ...after] = (await perKiB(PAGECACHE_COLD_GIB)) ?? [];
    const [w] = (await perKiB(1)) ?? [];
    const later = after.length > 0 ? after.reduce((a, b) => a + b, 0) / after.length : undefined;
    ctx.log(`page-cache write run ${i}: cold ${show(first)}, sustained ${show(later)}, warm ${show(w)} CPU µs/KiB`);
    if (first !== undefined) cold.push(first);
    if (later !== undefined) sustained.push(later);
    if (w !== undefined) warm.push(w);
  }
  add(ctx, 'pagecache-write-cold', 'CPU µs/KiB', spread(cold));
  add(ctx, 'pagecache-write-sustained', 'CPU µs/KiB', spread(sustained));
  add(ctx, 'pagecache-write-warm', 'CPU µs/KiB', spread(warm));
}

/**
 * The case of peers/02-fio.sh the durable target (DESIGN.md §11) is set against: sequential 1 MiB
 * psync writes with an fdatasync after each, 2 GiB per run (20 s at most) as in the script; the
 * first run of a sitting is a warm-up, as there, since the VM's first touch of memory is slow.
 * Not 1 GiB: fio's first GiB lands on the page-cache pages this VM hands out cheaply (see
 * PAGECACHE_COLD_GIB), so 1 GiB runs read 1,139 MB/s where 2 GiB runs read 603-807 the same
 * morning.
 */
const FIO_ARGS = ['--name=fdatasync-each-1m', '--rw=write', '--ioengine=psync', '--bs=1m', '--size=2g', '--fdatasync=1',
  '--runtime=20', '--output-format=json'];

/** The name of fioPeer's figure, which bench/ratios.ts compares the durable scenarios with. */
export const FIO_FIGURE = 'fio-1m-fdatasync';

/** MB/s of one fio run's JSON report (the first job's writes), or null when it has none. */
export function fioWriteMBps(stdout: string): number | null {
  const start = stdout.indexOf('{'); // fio may print notes before the report
  if (start < 0) return null;
  try {
    const report = JSON.parse(stdout.slice(start)) as { jobs?: Array<{ write?: { bw_bytes?: number } }> };
    const bw = report.jobs?.[0]?.write?.bw_bytes;
    return typeof bw === 'number' && bw > 0 ? bw / 1e6 : null;
  } catch {
    return null;
  }
}

/** fio's 1 MiB + fdatasync write rate in MB/s, in a fresh dir per run under the bench's temp dir. */
async function fioPeer(ctx: Ctx): Promise<void> {
  if (!onPath('fio')) {
    ctx.out.unavailable.push('fio: not installed (apt-get install -y fio)');
    return;
  }
  const dir = join(ctx.work, 'fio');
  const rates: number[] = [];
  for (let i = 0; i <= ctx.s.runs; i++) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    await waitQuiet(ctx.s.quietWaitS);
    const r = await run('fio', [...FIO_ARGS, `--directory=${dir}`], 120_000);
    const mbps = r.code === 0 ? fioWriteMBps(r.stdout) : null;
    ctx.log(`fio 1 MiB + fdatasync ${i === 0 ? 'warm-up' : `run ${i}`}: ${mbps?.toFixed(0) ?? `failed (exit ${r.code}): ${tail(r.stderr)}`} MB/s`);
    if (i > 0 && mbps !== null) rates.push(mbps);
  }
  rmSync(dir, { recursive: true, force: true });
  add(ctx, FIO_FIGURE, 'MB/s', spread(rates));
}

interface ScriptPeer {
  readonly id: string;
  readonly label: string;
  readonly script: string;
  readonly needs: readonly string[];
  readonly files: readonly string[];
  readonly hint: string;
  /** figure name -> [regex capturing "MED MIN MAX N", unit, scale applied to every value]. */
  readonly figures: ReadonlyArray<readonly [string, RegExp, string, number]>;
}

const stats = (prefix: string): RegExp => new RegExp(`${prefix}\\s+median/min/max/n:\\s+([\\d.\\sNA]+?)(?:\\s{2}|\\n|$)`);

const SCRIPT_PEERS: readonly ScriptPeer[] = [
  {
    id: 'redis', label: 'Redis Streams', script: '05-redis.sh', needs: ['redis-server', 'redis-benchmark', 'redis-cli', 'gcc'],
    files: ['/usr/include/hiredis/hiredis.h'], hint: 'apt-get install -y redis-server redis-tools libhiredis-dev',
    figures: [
      ['redis-xadd-1k', stats('mode=mem size=1024 XADD msgs/s'), 'msgs/s', 1],
      ['redis-xadd-100b', stats('mode=mem size=100 XADD msgs/s'), 'msgs/s', 1],
      ['redis-xadd-1k-aof', stats('mode=aof size=1024 XADD msgs/s'), 'msgs/s', 1],
      ['redis-xrange-1k', stats('mode=mem size=1024 XRANGE msgs/s'), 'MB/s', 1024 / 1e6],
    ],
  },
  {
    id: 'nats', label: 'NATS JetStream', script: '06-nats.sh', needs: ['nats-server', 'go'],
    files: ['/usr/share/gocode/src/github.com/nats-io/nats.go'],
    hint: 'apt-get install -y nats-server golang-go golang-github-nats-io-go-nats-dev',
    figures: [
      ['nats-js-1k', stats('mode=js size=1024 msgs/s'), 'msgs/s', 1],
      ['nats-js-100b', stats('mode=js size=100 msgs/s'), 'msgs/s', 1],
    ],
  },
  {
    // Loopback TCP, the catch-up target's yardstick (DESIGN.md §11): one stream, as a consumer has
    // one connection, at iperf3's default 128 KiB writes and at 1 MiB; Gbit/s to MB/s.
    id: 'iperf3', label: 'iperf3 loopback', script: '01-iperf3.sh', needs: ['iperf3', 'node'], files: [], hint: 'apt-get install -y iperf3',
    figures: [
      ['iperf3-1stream', stats('len=128K P=1 Gbit/s'), 'MB/s', 125],
      ['iperf3-1stream-1m', stats('len=1M P=1 Gbit/s'), 'MB/s', 125],
    ],
  },
  {
    id: 'node-net', label: 'Node socket ceiling', script: '04-node-net.sh', needs: ['node'], files: [], hint: '',
    figures: [
      ['node-net-1k', stats('size=1024 mode=count MB/s  '), 'MB/s', 1],
      ['node-net-1k-msgs', stats('size=1024 mode=count msgs/s'), 'msgs/s', 1],
      ['node-net-100b-msgs', stats('size=100 mode=count msgs/s'), 'msgs/s', 1],
    ],
  },
];

async function scriptPeer(ctx: Ctx, p: ScriptPeer): Promise<void> {
  const missing = [...p.needs.filter((c) => !onPath(c)), ...p.files.filter((f) => !existsSync(f))];
  if (missing.length > 0) {
    ctx.out.unavailable.push(`${p.label}: missing ${missing.join(', ')}${p.hint === '' ? '' : ` (${p.hint})`}`);
    return;
  }
  ctx.log(`running ${p.script} ${ctx.s.runs} ...`);
  const r = await run('bash', [join(ctx.farm, p.script), String(ctx.s.runs)], 1_800_000, ctx.env);
  for (const line of r.stdout.split('\n')) if (line.includes('median')) ctx.log(`${p.script}: ${line}`);
  if (r.code !== 0) ctx.out.unavailable.push(`${p.label}: ${p.script} exited ${r.code}: ${tail(`${r.stdout}\n${r.stderr}`)}`);
  for (const f of scriptPeerFigures(p.id, r.stdout)) add(ctx, f.name, f.unit, f.value);
}

/** The figures of a peer script's output, in the peer's units (null: the script printed none). */
export function scriptPeerFigures(id: string, stdout: string): Array<{ name: string; unit: string; value: Spread | null }> {
  const peer = SCRIPT_PEERS.find((x) => x.id === id);
  if (peer === undefined) throw new Error(`no peer script ${id}`);
  return peer.figures.map(([name, re, unit, scale]) => {
    const v = statsLine(stdout, re);
    return { name, unit, value: v === null ? null : { median: v.median * scale, min: v.min * scale, max: v.max * scale, n: v.n } };
  });
}

/** Runs every peer that can run here; never throws for a missing peer. */
export async function runPeers(s: PeerSettings, log: Logger): Promise<PeerResults> {
  const out: PeerResults = { figures: [], unavailable: [], log: [] };
  const work = mkdtempSync(join(tmpdir(), 'sluice-bench-peers-'));
  const logAll: Logger = (line) => {
    out.log.push(line);
    log(line);
  };
  try {
    if (!existsSync(s.peersDir)) {
      out.unavailable.push(`peer scripts: ${s.peersDir} not found`);
      return out;
    }
    const ctx: Ctx = { s, work, farm: symlinkFarm(s.peersDir, work), log: logAll, out, env: { ...process.env, TMPDIR: work } };
    const wanted = (id: string): boolean => s.only.length === 0 || s.only.includes(id);
    if (wanted('rdkafka')) await rdkafkaPeer(ctx);
    if (wanted('rdkafka-e2e')) await rdkafkaE2ePeer(ctx);
    if (wanted('kcat')) await kcatPeer(ctx);
    for (const p of SCRIPT_PEERS) if (wanted(p.id)) await scriptPeer(ctx, p);
    if (wanted('pagecache')) await pagecachePeer(ctx);
    if (wanted('fio')) await fioPeer(ctx);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
