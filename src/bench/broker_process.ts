// A fresh Sluice broker as a child process for one bench run (bench driver, main thread): own
// temp data dir, Kafka and admin listeners on 127.0.0.1 with ports picked by the kernel (read
// back from the ready line), ready once GET /v1/health answers 200. Stopped by its pid with
// SIGTERM (SIGKILL after a deadline), then its data dir is removed.
// A cluster member (`member`) instead listens on the ports it is given (its peers and its own
// restart must find it there), joins the quorum of `--controller-voters`, and runs on a data dir
// the caller owns and removes (so it can be stopped and started again on the same data).
// Bounds: startup and stop each have a deadline; at most STDERR_KEEP bytes of stderr are kept.
// SLUICE_BENCH_BROKER_CLI=<another build's dist/src/cli/main.js> starts that build's broker
// instead, so one sitting measures a before and an after build with the same harness and peers.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { histogramOf, type Histogram } from '../cli/cluster_metrics.js';
import { parsePrometheusText } from '../cli/prometheus_text.js';
import { CLI_ARGV } from '../native/embedded.js';
import { brokerNodeOptions } from '../server/node_args.js';
import { ProcessCpuClock, processCpuTimes, type CpuTimes } from './process_cpu.js';

/** The broker's entry: this build's CLI, or the build SLUICE_BENCH_BROKER_CLI names. */
function brokerCliArgv(): readonly string[] {
  const other = process.env['SLUICE_BENCH_BROKER_CLI'];
  return other === undefined || other === '' ? CLI_ARGV : [resolve(other)];
}

export interface BrokerOptions {
  /** always | never | <ms>; left out, the broker's own default (as a plain `sluice start`). */
  readonly flush?: string;
  /** Left out or undefined, the broker's own default (one per CPU less one). */
  readonly shards?: number | undefined;
  /** Extra node flags for the broker process (e.g. --cpu-prof); not inside the single executable. */
  readonly nodeArgs?: readonly string[];
  /** Extra broker flags (e.g. group settings). */
  readonly args?: readonly string[];
  readonly startTimeoutMs?: number;
  /** Start as one node of a cluster (fixed ports, caller-owned data dir). */
  readonly member?: ClusterMember;
}

/** One node of a bench cluster: what `sluice start` needs to join it. */
export interface ClusterMember {
  readonly nodeId: number;
  /** KRaft's controller.quorum.voters: `1@127.0.0.1:P,...`. */
  readonly voters: string;
  readonly kafkaPort: number;
  readonly adminPort: number;
  /** Kept on stop: the caller removes it. */
  readonly dataDir: string;
}

const HOST = '127.0.0.1';
const STDERR_KEEP = 16 * 1024;

function healthOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: HOST, port, path: '/v1/health', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

export interface ShardLag {
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly ownP99Ms: number;
  readonly cpuWaitPct: number;
}

/** A broker's group commit and Produce latency histograms, all shards summed; cumulative since start (diff two readings). */
export interface LatencyHistograms {
  /** sluice_log_flush_seconds: submission to completion. */
  readonly flush: Histogram;
  /** sluice_log_flush_queue_seconds: earliest request to the start of its submission. */
  readonly queue: Histogram;
  /** sluice_request_duration_seconds of Produce: decoded to response queued, so its group commit included. */
  readonly produce: Histogram;
  /** sluice_gc_pause_seconds of the shards' scavenges (kind minor): each stops a shard's loop. */
  readonly shardScavenges: Histogram;
}

/** The fields of a /v1/actors entry the replication bench reads. */
export interface ReplicaState {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  readonly role: string;
}

/** Every partition replica the shards of the broker whose admin listener is 127.0.0.1:`adminPort` hold (GET /v1/actors). */
export async function replicasAt(adminPort: number): Promise<ReplicaState[]> {
  const res = await fetch(`http://${HOST}:${adminPort}/v1/actors`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET /v1/actors: HTTP ${res.status}`);
  const shards = (await res.json()) as { actors: ReplicaState[] }[];
  return shards.flatMap((s) => s.actors);
}

export class BrokerProcess {
  readonly host = HOST;
  private stderrTail = '';
  private exited: Promise<number | null>;
  private readonly cpu: ProcessCpuClock;

  private constructor(
    private readonly child: ChildProcess, readonly dataDir: string, private readonly ownsDataDir: boolean,
    readonly kafkaPort: number, readonly adminPort: number,
  ) {
    this.cpu = new ProcessCpuClock(child.pid ?? -1);
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
    child.stderr?.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-STDERR_KEEP);
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  static async start(o: BrokerOptions): Promise<BrokerProcess> {
    const m = o.member;
    const dataDir = m?.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-bench-'));
    const cleanUp = (): void => {
      if (m === undefined) rmSync(dataDir, { recursive: true, force: true });
    };
    const node = m === undefined ? [] : ['--node-id', String(m.nodeId), '--controller-voters', m.voters];
    const args = [...(o.nodeArgs ?? []), ...brokerCliArgv(), 'start', '--data-dir', dataDir, '--kafka-addr', `${HOST}:${m?.kafkaPort ?? 0}`,
      '--admin-addr', `${HOST}:${m?.adminPort ?? 0}`, ...node,
      ...(o.shards === undefined ? [] : ['--shards', String(o.shards)]), ...(o.flush === undefined ? [] : ['--flush', o.flush]), '--log-level', 'warn',
      ...(o.args ?? [])];
    // As the launchers (bin/sluice, npm start) do: the pools must be sized before the process starts.
    const env: NodeJS.ProcessEnv = { ...process.env, UV_THREADPOOL_SIZE: process.env['UV_THREADPOOL_SIZE'] ?? '16' };
    if (!(o.nodeArgs ?? []).some((a) => a.startsWith('--v8-pool-size'))) env['NODE_OPTIONS'] = brokerNodeOptions();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    try {
      const { kafka, admin } = await readyLine(child, o.startTimeoutMs ?? 30_000);
      const broker = new BrokerProcess(child, dataDir, m === undefined, kafka, admin);
      const deadline = Date.now() + (o.startTimeoutMs ?? 30_000);
      while (!(await healthOk(admin))) {
        if (Date.now() > deadline) throw new Error('broker health check did not pass in time');
        await new Promise((r) => setTimeout(r, 50));
      }
      return broker;
    } catch (err) {
      child.kill('SIGKILL');
      cleanUp();
      throw err;
    }
  }

  cpuSeconds(): number {
    return this.cpu.seconds();
  }

  cpuTimes(): CpuTimes {
    return processCpuTimes(this.pid);
  }

  /**
   * The largest shard event-loop delay figures since the previous call (each scrape of /metrics
   * makes the shards report and reset them): p99 and max, p99 less the time the shard waited for
   * a CPU, and the largest share of time a shard waited for a CPU (%).
   */
  async shardLag(): Promise<ShardLag> {
    const text = await this.metricsText();
    const worst = (name: string, scale: number): number => {
      let v = 0;
      for (const m of text.matchAll(new RegExp(`^${name}\\{thread="shard-\\d+"\\} (\\S+)$`, 'gm'))) v = Math.max(v, Number(m[1]) * scale);
      return v;
    };
    return {
      p99Ms: worst('sluice_event_loop_lag_p99_seconds', 1000),
      maxMs: worst('sluice_event_loop_lag_max_seconds', 1000),
      ownP99Ms: worst('sluice_event_loop_own_lag_p99_seconds', 1000),
      cpuWaitPct: worst('sluice_thread_cpu_wait_ratio', 100),
    };
  }

  /** The group commit, Produce and shard scavenge histograms so far (a /metrics scrape: it restarts the shards' delay windows too). */
  async latencyHistograms(): Promise<LatencyHistograms> {
    const samples = parsePrometheusText(await this.metricsText());
    const everyShard = (): boolean => true;
    return {
      flush: histogramOf(samples, 'sluice_log_flush_seconds', everyShard),
      queue: histogramOf(samples, 'sluice_log_flush_queue_seconds', everyShard),
      produce: histogramOf(samples, 'sluice_request_duration_seconds', (l) => l['api'] === 'Produce'),
      shardScavenges: histogramOf(samples, 'sluice_gc_pause_seconds', (l) => l['thread']?.startsWith('shard-') === true && l['kind'] === 'minor'),
    };
  }

  private async metricsText(): Promise<string> {
    const res = await fetch(`http://${HOST}:${this.adminPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`GET /metrics: HTTP ${res.status}`);
    return res.text();
  }

  /** Every partition replica the broker's shards hold, as GET /v1/actors lists them. */
  replicas(): Promise<ReplicaState[]> {
    return replicasAt(this.adminPort);
  }

  /** SIGTERM, wait for exit (SIGKILL after timeoutMs), remove the data dir if it owns it; the exit code. */
  async stop(timeoutMs = 15_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const code = await Promise.race([
      this.exited,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          this.child.kill('SIGKILL');
          resolve(null);
        }, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    await this.exited;
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    return code;
  }
}

/** Waits for "sluice ready kafka=HOST:PORT admin=HOST:PORT ..." on stdout. */
function readyLine(child: ChildProcess, timeoutMs: number): Promise<{ kafka: number; admin: number }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => done(new Error(`broker not ready after ${timeoutMs} ms: ${err.slice(-2000)}`)), timeoutMs);
    const onOut = (d: Buffer): void => {
      out = (out + d.toString('utf8')).slice(-4096);
      const m = /sluice ready kafka=\S+:(\d+) admin=\S+:(\d+)/.exec(out);
      if (m !== null) done(null, { kafka: Number(m[1]), admin: Number(m[2]) });
    };
    const onErr = (d: Buffer): void => {
      err = (err + d.toString('utf8')).slice(-STDERR_KEEP);
    };
    const onExit = (code: number | null): void => done(new Error(`broker exited (${code}) before ready: ${err.slice(-2000)}`));
    function done(e: Error | null, ports?: { kafka: number; admin: number }): void {
      clearTimeout(timer);
      child.stdout?.off('data', onOut);
      child.stderr?.off('data', onErr);
      child.off('exit', onExit);
      child.stdout?.resume();
      if (e !== null) reject(e);
      else resolve(ports as { kafka: number; admin: number });
    }
    child.stdout?.on('data', onOut);
    child.stderr?.on('data', onErr);
    child.once('exit', onExit);
  });
}
