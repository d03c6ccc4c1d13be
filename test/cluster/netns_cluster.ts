// Test harness: a cluster of combined broker+controller `sluice start` processes, node i alone in
// host i of a NetFabric (test/helpers/netns.ts) at that host's address, so a test can cut the
// network between nodes while it still reaches each of them. Runs on the test's main thread.
// Every node listens on the same ports, each on its own address (the ports sit below the
// ephemeral range, as NetFabric.blockConnects requires). Invariants: every wait is bounded;
// dispose() stops the nodes (SIGKILL at the deadline) and destroys the fabric, which also happens
// when the test process exits; the directory (data and logs) is kept when a test failed.

import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaAdmin } from '../../src/client/admin.js';
import { KafkaConnection } from '../../src/client/connection.js';
import { describeQuorum, readyLineAfter } from '../../src/cli/dev_cluster.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import type { DescribeQuorumResponsePartition } from '../../src/protocol/apis/describe_quorum.js';
import { BROKER_MAIN, sleep, withTimeout } from '../helpers/broker_process.js';
import { NetFabric } from '../helpers/netns.js';
import { waitForLeader } from './process_cluster.js';
import type { QuorumState, TestCluster } from './process_cluster.js';

const KAFKA_PORT = 9092;
const CONTROLLER_PORT = 9093;
const ADMIN_PORT = 8080;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const PROBE_TIMEOUT_MS = 2_000;
const POLL_MS = 50;

export class NetnsCluster implements TestCluster {
  private readonly children = new Map<number, ChildProcess>();
  private keep = false;

  private constructor(readonly fabric: NetFabric, readonly dir: string, readonly ids: readonly number[]) {}

  /** `voters` nodes with ids 1..voters, each in its own host; resolves once all printed their ready line. */
  static async start(voters = 3, startArgs: readonly string[] = ['--shards', '1', '--log-level', 'info']): Promise<NetnsCluster> {
    const ids = Array.from({ length: voters }, (_, i) => i + 1);
    const fabric = NetFabric.create(voters);
    const c = new NetnsCluster(fabric, mkdtempSync(join(tmpdir(), 'sluice-netns-')), ids);
    try {
      await Promise.all(ids.map((id) => c.launch(id, startArgs)));
    } catch (err) {
      c.keep = true;
      await c.dispose();
      throw err;
    }
    return c;
  }

  host(id: number): string {
    return this.fabric.address(id);
  }

  /** Clients' bootstrap.servers: every node's Kafka listener at its host's address. */
  get bootstrap(): string {
    return this.ids.map((id) => `${this.host(id)}:${KAFKA_PORT}`).join(',');
  }

  dataDir(id: number): string {
    return join(this.dir, `node-${id}`);
  }

  running(id: number): boolean {
    const child = this.children.get(id);
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  logPath(id: number): string {
    return join(this.dir, `node-${id}.log`);
  }

  private async launch(id: number, startArgs: readonly string[]): Promise<void> {
    const voters = this.ids.map((v) => `${v}@${this.host(v)}:${CONTROLLER_PORT}`).join(',');
    const dataDir = this.dataDir(id);
    mkdirSync(dataDir, { recursive: true });
    const fd = openSync(this.logPath(id), 'a');
    let child: ChildProcess;
    try {
      child = this.fabric.spawnIn(id, process.execPath, [
        BROKER_MAIN, 'start', '--node-id', String(id), '--controller-voters', voters,
        '--kafka-addr', `${this.host(id)}:${KAFKA_PORT}`, '--admin-addr', `${this.host(id)}:${ADMIN_PORT}`,
        '--data-dir', dataDir, ...startArgs,
      ], { stdio: ['ignore', fd, fd], env: { ...process.env, UV_THREADPOOL_SIZE: process.env['UV_THREADPOOL_SIZE'] ?? '16' } });
    } finally {
      closeSync(fd);
    }
    this.children.set(id, child);
    let exited: string | null = null;
    child.once('exit', (code, signal) => { exited = signal ?? `exit code ${String(code)}`; });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (readyLineAfter(this.logPath(id), 0) === null) {
      if (exited !== null) throw new Error(`node ${id} exited during start (${exited}); log: ${this.logPath(id)}`);
      if (Date.now() >= deadline) throw new Error(`node ${id} not ready within ${START_TIMEOUT_MS} ms; log: ${this.logPath(id)}`);
      await sleep(POLL_MS);
    }
  }

  isVoter(): boolean {
    return true;
  }

  describeQuorum(id: number): Promise<DescribeQuorumResponsePartition> {
    return describeQuorum(CONTROLLER_PORT, PROBE_TIMEOUT_MS, this.host(id));
  }

  waitForLeader(ask: readonly number[], ok: (q: QuorumState) => boolean = () => true, timeoutMs = 15_000): Promise<QuorumState> {
    return waitForLeader(this, ask, ok, timeoutMs);
  }

  connect(id: number, timeoutMs = 15_000): Promise<KafkaConnection> {
    return KafkaConnection.connect({ host: this.host(id), port: KAFKA_PORT, clientId: 'sluice-netns-test', requestTimeoutMs: timeoutMs });
  }

  /** Admin client on a node's Kafka listener (the caller closes it). */
  admin(id: number, timeoutMs = 15_000): Promise<KafkaAdmin> {
    return KafkaAdmin.connect({ host: this.host(id), port: KAFKA_PORT, clientId: 'sluice-netns-test', requestTimeoutMs: timeoutMs, operationTimeoutMs: timeoutMs });
  }

  /** The node's GET /v1/quorum: its own Raft state as its operators see it. */
  async quorumReport(id: number): Promise<QuorumReport> {
    const res = await fetch(`http://${this.host(id)}:${ADMIN_PORT}/v1/quorum`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`node ${id} /v1/quorum: http ${res.status}`);
    return (await res.json()) as QuorumReport;
  }

  /** For afterEach: keeps the directory (logs) if the test failed. */
  noteResult(testContext: object): void {
    if ((testContext as { passed?: boolean }).passed === false) this.keep = true;
  }

  /** SIGTERM every node, SIGKILL those still up at the deadline, destroy the fabric; removes the directory unless kept. */
  async dispose(): Promise<void> {
    const running = [...this.children.values()].filter((ch) => ch.exitCode === null && ch.signalCode === null);
    const exits = running.map((ch) => new Promise<void>((resolve) => ch.once('exit', () => resolve())));
    for (const ch of running) ch.kill('SIGTERM');
    await withTimeout(Promise.all(exits), STOP_TIMEOUT_MS, 'nodes stopping').catch(() => {
      this.keep = true;
    });
    this.fabric.destroy();
    if (this.keep) {
      process.stderr.write(`# sluice netns cluster kept at ${this.dir}\n`);
      return;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
