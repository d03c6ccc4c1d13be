// Test harness: one Sluice broker as a child process on free loopback ports, for e2e and interop
// tests. Runs on the test's main thread. Owns the child, its temp dir (data + log file) and the
// ports. Invariants: every wait is bounded (start, stop, kill); the child's stdout/stderr go to a
// log file that is kept (and its path reported) when a test failed or the child misbehaved, and
// removed with the data dir otherwise; restart() reuses the same data dir and ports.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI, resolved from this compiled file so it works from dist/ and from dist-<name>/. */
export const BROKER_MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface BrokerStartOptions {
  /** Worker shards; default 2. */
  shards?: number;
  /** always | never | a number of ms; default 'always'. */
  flush?: string;
  /** Extra CLI flags, e.g. ['--auto-create-topics', 'false']. */
  args?: readonly string[];
  /** Default 'warn' so logs stay small; 'info' when diagnosing. */
  logLevel?: string;
  /** Bound on waiting for /v1/health; default 30 s. */
  startTimeoutMs?: number;
  /** Runs the broker under this RLIMIT_NOFILE (soft and hard, through util-linux prlimit). */
  nofile?: number;
  /** An executable that is the CLI itself (the single executable) run instead of node with main.js. */
  executable?: string;
  /** Working directory of the broker process; default: this process's. */
  cwd?: string;
  /** Variables added to (or, when undefined, removed from) the broker's environment. */
  env?: Readonly<Record<string, string | undefined>>;
  /** More client listeners, NAME://HOST:PORT each: the broker then runs --listeners with PLAINTEXT on kafkaPort first. */
  listeners?: readonly string[];
  /** Binds the admin HTTP to this host (e.g. 0.0.0.0) instead of 127.0.0.1; the harness still reaches it on 127.0.0.1. */
  adminBind?: string;
  /** The admin HTTP speaks HTTPS (--admin-ssl-cert-file in args): the harness trusts this CA file when it asks for health. */
  adminCaFile?: string;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const HEALTH_POLL_MS = 50;

/** Brokers still running; killed if the test process exits without disposing of them. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A port that was free a moment ago (bound to 0 and released). */
/**
 * Ports this process handed out lately. The kernel may give a just-closed port 0 listener's port
 * out again at once, so two brokers of one cluster could otherwise be handed the same port.
 */
const handedOut = new Set<number>();
const MAX_REMEMBERED_PORTS = 4096;

function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A loopback port free right now and not handed out by this process before (bounded memory). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await ephemeralPort();
    if (!handedOut.has(port) || attempt >= 20) {
      if (handedOut.size >= MAX_REMEMBERED_PORTS) handedOut.clear();
      handedOut.add(port);
      return port;
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with `promise`, or rejects after `ms` with `what` in the message. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts of a new broker whose own ports were taken before it bound them, at most. */
const START_ATTEMPTS = 3;
/** Restarts on ports someone took while the broker was down, at most, and the pause between them. */
const RESTART_ATTEMPTS = 20;
const RESTART_RETRY_MS = 500;

export class BrokerProcess {
  readonly host = '127.0.0.1';
  readonly dataDir: string;
  readonly logPath: string;
  private child: ChildProcess | null = null;
  private exited: Promise<ExitStatus> = Promise.resolve({ code: null, signal: null });
  private keepLogs = false;
  private starts = 0;

  private constructor(
    private readonly root: string,
    readonly kafkaPort: number,
    readonly adminPort: number,
    private readonly opts: BrokerStartOptions,
  ) {
    this.dataDir = join(root, 'data');
    this.logPath = join(root, 'broker.log');
  }

  /**
   * Starts a broker in a fresh temp dir and waits until it is healthy. A port found free can be
   * taken by another test process (a listener or an outgoing connection's ephemeral port) before
   * the broker binds it: then it starts again on other ports, a bounded number of times.
   */
  static async start(opts: BrokerStartOptions = {}): Promise<BrokerProcess> {
    for (let attempt = 1; ; attempt++) {
      const root = mkdtempSync(join(tmpdir(), 'sluice-e2e-'));
      const broker = new BrokerProcess(root, await freePort(), await freePort(), opts);
      try {
        await broker.launch();
        return broker;
      } catch (err) {
        const portTaken = broker.portTakenIn(err);
        broker.keepLogs = !portTaken || attempt >= START_ATTEMPTS;
        await broker.dispose();
        if (!portTaken || attempt >= START_ATTEMPTS) throw err;
      }
    }
  }

  get bootstrap(): string {
    return `${this.host}:${this.kafkaPort}`;
  }

  get pid(): number {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error('broker is not running');
    return pid;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Resident set size of the broker process (all its threads), in KiB. */
  rssKb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (m === null) throw new Error('no VmRSS line in /proc status');
    return Number(m[1]);
  }

  /** One sample of the Prometheus text at /metrics, e.g. 'sluice_connections' (0 when absent). */
  async metric(sample: string): Promise<number> {
    const res = await fetch(`http://${this.host}:${this.adminPort}/metrics`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    for (const line of text.split('\n')) {
      if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
    }
    return 0;
  }

  /** Polls `sample` until `ok(value)` (bounded); returns the last value seen. */
  async waitMetric(sample: string, ok: (v: number) => boolean, timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await this.metric(sample);
      if (ok(v) || Date.now() >= deadline) return v;
      await sleep(50);
    }
  }

  /** The last `lines` lines of the broker's combined stdout/stderr. */
  logTail(lines = 40): string {
    try {
      return readFileSync(this.logPath, 'utf8').split('\n').slice(-lines - 1).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** For afterEach: keeps the temp dir (log + data) after dispose() if the test failed. */
  noteResult(testContext: object): void {
    if ((testContext as { passed?: boolean }).passed === false) this.keepLogs = true;
  }

  /** SIGTERM and wait for exit (bounded; SIGKILL and throw if it hangs). */
  async stop(timeoutMs = 20_000): Promise<ExitStatus> {
    const child = this.child;
    if (child === null) throw new Error('broker is not running');
    child.kill('SIGTERM');
    try {
      return await withTimeout(this.exited, timeoutMs, `broker pid ${child.pid} after SIGTERM`);
    } catch (err) {
      this.keepLogs = true;
      child.kill('SIGKILL');
      await withTimeout(this.exited, 10_000, `broker pid ${child.pid} after SIGKILL`);
      throw err;
    }
  }

  async kill9(): Promise<ExitStatus> {
    const child = this.child;
    if (child === null) throw new Error('broker is not running');
    child.kill('SIGKILL');
    return withTimeout(this.exited, 10_000, `broker pid ${child.pid} after SIGKILL`);
  }

  /**
   * Starts again on the same data dir and ports (the previous process must have exited);
   * `untilHealthy` false: returns once it is spawned, for a node expected never to become healthy.
   * While the broker was down another test process may have been given one of its ports (an
   * outgoing connection's ephemeral port): that start is retried on the same ports, a bounded
   * number of times, since a restart must keep them.
   */
  async restart(opts: { readonly untilHealthy?: boolean } = {}): Promise<void> {
    if (this.child !== null) throw new Error('broker is still running');
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch(opts.untilHealthy ?? true);
        return;
      } catch (err) {
        if (!this.portTakenIn(err) || attempt >= RESTART_ATTEMPTS) throw err;
        await sleep(RESTART_RETRY_MS);
      }
    }
  }

  /** Whether a failed start names one of this broker's own ports as taken. */
  private portTakenIn(err: unknown): boolean {
    return [this.kafkaPort, this.adminPort].some((port) => String(err).includes(`EADDRINUSE: address already in use 127.0.0.1:${port}`));
  }

  /** Stops the broker if it runs (kill -9 if SIGTERM hangs) and removes the temp dir unless kept. */
  async dispose(): Promise<void> {
    if (this.child !== null) {
      try {
        await this.stop(10_000);
      } catch {
        this.keepLogs = true;
      }
    }
    if (this.keepLogs) {
      process.stderr.write(`# sluice broker log kept at ${this.logPath}\n`);
      return;
    }
    rmSync(this.root, { recursive: true, force: true });
  }

  private args(): string[] {
    return [
      'start',
      '--data-dir', this.dataDir,
      ...(this.opts.listeners === undefined
        ? ['--kafka-addr', `${this.host}:${this.kafkaPort}`]
        : ['--listeners', [`PLAINTEXT://${this.host}:${this.kafkaPort}`, ...this.opts.listeners].join(',')]),
      '--admin-addr', `${this.opts.adminBind ?? this.host}:${this.adminPort}`,
      '--shards', String(this.opts.shards ?? 2),
      '--flush', this.opts.flush ?? 'always',
      '--log-level', this.opts.logLevel ?? 'warn',
      ...(this.opts.args ?? []),
    ];
  }

  private async launch(untilHealthy = true): Promise<void> {
    const fd = openSync(this.logPath, 'a');
    this.starts++;
    let child: ChildProcess;
    try {
      const cli = this.opts.executable === undefined ? [process.execPath, BROKER_MAIN, ...this.args()] : [this.opts.executable, ...this.args()];
      const [command, ...args] = this.opts.nofile === undefined ? cli : ['prlimit', `--nofile=${this.opts.nofile}:${this.opts.nofile}`, '--', ...cli];
      const env: NodeJS.ProcessEnv = { ...process.env, UV_THREADPOOL_SIZE: process.env['UV_THREADPOOL_SIZE'] ?? '16', ...this.opts.env };
      for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
      child = spawn(command ?? process.execPath, args, { stdio: ['ignore', fd, fd], env, ...(this.opts.cwd === undefined ? {} : { cwd: this.opts.cwd }) });
    } finally {
      closeSync(fd);
    }
    this.child = child;
    live.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        live.delete(child);
        if (this.child === child) this.child = null;
        if (code !== 0 && signal !== 'SIGKILL') this.keepLogs = true;
        resolve({ code, signal });
      });
    });
    if (untilHealthy) await this.waitHealthy(child);
  }

  /** /v1/health's HTTP status (over HTTPS trusting adminCaFile when set). */
  private async healthStatus(): Promise<number> {
    const ca = this.opts.adminCaFile;
    if (ca === undefined) {
      const res = await fetch(`http://${this.host}:${this.adminPort}/v1/health`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return res.status;
    }
    return new Promise((resolve, reject) => {
      const req = httpsGet({ host: this.host, port: this.adminPort, path: '/v1/health', ca: readFileSync(ca), timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('timeout', () => req.destroy(new Error('health probe timed out')));
      req.on('error', reject);
    });
  }

  private async waitHealthy(child: ChildProcess): Promise<void> {
    const timeoutMs = this.opts.startTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child !== child) {
        const status = await this.exited;
        throw new Error(`broker exited during start #${this.starts} (code ${status.code}, signal ${status.signal}):\n${this.logTail()}`);
      }
      try {
        if (await this.healthStatus() === 200) return;
      } catch {
        // Not listening yet.
      }
      await sleep(HEALTH_POLL_MS);
    }
    child.kill('SIGKILL');
    await withTimeout(this.exited, 10_000, 'broker after SIGKILL');
    throw new Error(`broker not healthy within ${timeoutMs} ms (start #${this.starts}):\n${this.logTail()}`);
  }
}
