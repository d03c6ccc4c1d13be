// Test harness: a `sluice dev cluster` in a temp dir whose nodes a test can kill -9, pause
// (SIGSTOP), resume (SIGCONT) and restart, plus the quorum's view over the Kafka protocol. It drives
// the same functions as the CLI (src/cli/dev_cluster.ts), so tests and developers run identical
// clusters. Runs on the test's main thread. Invariants: every wait is bounded; every node still
// running when the test process exits is killed; the directory (logs included) is kept when a test
// failed and removed otherwise.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaConnection } from '../../src/client/connection.js';
import { KafkaAdmin } from '../../src/client/admin.js';
import {
  clusterDown, clusterUp, describeQuorum, launchNode, loadCluster, nodeRunning, saveCluster, signalNode, startNodes, waitStopped,
} from '../../src/cli/dev_cluster.js';
import { CLUSTER_HOST, bootstrapList, nodeDataDir, nodeLogPath, withPid } from '../../src/cli/dev_cluster_file.js';
import type { DevCluster, DevNode } from '../../src/cli/dev_cluster_file.js';
import type { CliIo } from '../../src/cli/io.js';
import { CONFIG_FLAGS } from '../../src/config.js';
import type { DescribeQuorumResponsePartition } from '../../src/protocol/apis/describe_quorum.js';
import { sleep } from '../helpers/broker_process.js';
import { metadata } from '../helpers/read_back.js';

/** Why process-level cluster tests cannot run on this build, or false when they can. */
export const CLUSTER_UNAVAILABLE: string | false = CONFIG_FLAGS.some((f) => f.flag === 'controller-voters')
  ? false
  : '`sluice start` has no --controller-voters yet (cluster mode, h-broker, has not landed)';

const quietIo: CliIo = { env: process.env, out: () => undefined, err: () => undefined };
const START_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

/** Directories of clusters still up; their nodes are SIGKILLed if the test process exits. */
const live = new Set<string>();
process.once('exit', () => {
  for (const dir of live) {
    for (const n of loadCluster(dir)?.nodes ?? []) if (nodeRunning(dir, n) && n.pid !== null) process.kill(n.pid, 'SIGKILL');
  }
});

export interface QuorumState {
  readonly leaderId: number;
  readonly epoch: number;
  readonly highWatermark: number;
  readonly voters: readonly number[];
  readonly observers: readonly number[];
}

export class ProcessCluster implements TestCluster {
  /** SLUICE_KEEP_CLUSTER=1 keeps every cluster's directory (data and broker logs) for a look afterwards. */
  private keep = process.env['SLUICE_KEEP_CLUSTER'] === '1';

  private constructor(readonly dir: string) {}

  /** A fresh cluster of `voters` combined nodes (one shard each unless `startArgs` say otherwise). */
  static async start(voters = 3, startArgs: readonly string[] = ['--shards', '1', '--log-level', 'info']): Promise<ProcessCluster> {
    const c = new ProcessCluster(mkdtempSync(join(tmpdir(), 'sluice-cluster-')));
    live.add(c.dir);
    try {
      await clusterUp(c.dir, { voters, startArgs, timeoutMs: START_TIMEOUT_MS }, quietIo);
    } catch (err) {
      c.keep = true;
      await c.dispose();
      throw err;
    }
    return c;
  }

  get cluster(): DevCluster {
    const c = loadCluster(this.dir);
    if (c === null) throw new Error(`no cluster.json in ${this.dir}`);
    return c;
  }

  node(id: number): DevNode {
    const n = this.cluster.nodes.find((x) => x.id === id);
    if (n === undefined) throw new Error(`no node ${id}`);
    return n;
  }

  get ids(): number[] {
    return this.cluster.nodes.map((n) => n.id);
  }

  get bootstrap(): string {
    return bootstrapList(this.cluster);
  }

  dataDir(id: number): string {
    return nodeDataDir(this.dir, this.node(id));
  }

  running(id: number): boolean {
    return nodeRunning(this.dir, this.node(id));
  }

  logPath(id: number): string {
    return nodeLogPath(this.dir, this.node(id));
  }

  async kill9(id: number): Promise<void> {
    const node = this.node(id);
    if (!signalNode(this.dir, node, 'SIGKILL')) throw new Error(`node ${id} is not running`);
    if (!(await waitStopped(this.dir, node, 10_000))) throw new Error(`node ${id} survived SIGKILL`);
  }

  /** SIGTERM: the node's own shutdown path (controlled shutdown where it has one); waits until it exited. */
  async terminate(id: number, timeoutMs = 30_000): Promise<void> {
    const node = this.node(id);
    if (!signalNode(this.dir, node, 'SIGTERM')) throw new Error(`node ${id} is not running`);
    if (!(await waitStopped(this.dir, node, timeoutMs))) throw new Error(`node ${id} still running ${timeoutMs} ms after SIGTERM`);
  }

  /** SIGSTOP: the process keeps its sockets but answers nothing, like a cut-off or frozen host. */
  pause(id: number): void {
    if (!signalNode(this.dir, this.node(id), 'SIGSTOP')) throw new Error(`node ${id} is not running`);
  }

  resume(id: number): void {
    if (!signalNode(this.dir, this.node(id), 'SIGCONT')) throw new Error(`node ${id} is not running`);
  }

  /** Starts stopped nodes again on their data and ports; waits until each is ready. */
  async restart(...ids: number[]): Promise<void> {
    for (const id of ids) if (this.running(id)) throw new Error(`node ${id} is still running`);
    await startNodes(this.dir, this.cluster, ids, START_TIMEOUT_MS, quietIo);
  }

  /**
   * Starts stopped node `id` again with `extraArgs` after the cluster's start flags, for this
   * process only: cluster.json keeps its flags, so a later restart() drops them.
   */
  async restartWith(id: number, extraArgs: readonly string[]): Promise<void> {
    if (this.running(id)) throw new Error(`node ${id} is still running`);
    const cluster = this.cluster;
    const launched = launchNode(this.dir, { ...cluster, startArgs: [...cluster.startArgs, ...extraArgs] }, this.node(id), START_TIMEOUT_MS);
    saveCluster(this.dir, withPid(cluster, id, launched.pid));
    await launched.ready;
  }

  /** Connection to a node's Kafka listener (the caller closes it). */
  connect(id: number, timeoutMs = 15_000): Promise<KafkaConnection> {
    return KafkaConnection.connect({ host: CLUSTER_HOST, port: this.node(id).kafkaPort, clientId: 'sluice-cluster-test', requestTimeoutMs: timeoutMs });
  }

  /** Admin client on a node's Kafka listener (the caller closes it). */
  admin(id: number, timeoutMs = 15_000): Promise<KafkaAdmin> {
    return KafkaAdmin.connect({ host: CLUSTER_HOST, port: this.node(id).kafkaPort, clientId: 'sluice-cluster-test', requestTimeoutMs: timeoutMs, operationTimeoutMs: timeoutMs });
  }

  isVoter(id: number): boolean {
    return this.node(id).controllerPort !== null;
  }

  describeQuorum(id: number): Promise<DescribeQuorumResponsePartition> {
    return describeQuorum(this.node(id).controllerPort as number);
  }

  /** See waitForLeader below. */
  waitForLeader(ask: readonly number[], ok: (q: QuorumState) => boolean = () => true, timeoutMs = 15_000): Promise<QuorumState> {
    return waitForLeader(this, ask, ok, timeoutMs);
  }

  /** For afterEach: keeps the directory (logs) if the test failed. */
  noteResult(testContext: object): void {
    if ((testContext as { passed?: boolean }).passed === false) this.keep = true;
  }

  /** Stops every node (resuming paused ones) and removes the directory unless kept. */
  async dispose(): Promise<void> {
    try {
      await clusterDown(this.dir, 15_000, quietIo);
    } catch {
      this.keep = true;
    }
    live.delete(this.dir);
    if (this.keep) {
      process.stderr.write(`# sluice cluster kept at ${this.dir}\n`);
      return;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What the quorum and metadata checks below need of a cluster under test, wherever its nodes run. */
export interface TestCluster {
  isVoter(id: number): boolean;
  /** DescribeQuorum on the node's controller listener, as dev_cluster.ts describeQuorum answers it. */
  describeQuorum(id: number): Promise<DescribeQuorumResponsePartition>;
  /** Connection to the node's Kafka listener (the caller closes it). */
  connect(id: number, timeoutMs?: number): Promise<KafkaConnection>;
}

/**
 * Polls the running, unpaused voters in `ask` (DescribeQuorum on their controller listeners)
 * until all name the same leader and epoch, that leader is one of them and answers in full, and
 * `ok` holds for its answer; bounded by `timeoutMs`.
 */
export async function waitForLeader(c: TestCluster, ask: readonly number[], ok: (q: QuorumState) => boolean = () => true, timeoutMs = 15_000): Promise<QuorumState> {
  const deadline = Date.now() + timeoutMs;
  const voters = ask.filter((id) => c.isVoter(id));
  for (;;) {
    const answers = await Promise.all(voters.map((id) => c.describeQuorum(id).catch((err: unknown) => (err instanceof Error ? err.message : String(err)))));
    const states = answers.filter((a): a is DescribeQuorumResponsePartition => typeof a !== 'string');
    const leader = states.find((a) => a.errorCode === 0);
    if (leader !== undefined && states.length === voters.length && voters.includes(leader.leaderId)
      && states.every((s) => s.leaderId === leader.leaderId && s.leaderEpoch === leader.leaderEpoch) && ok(stateOf(leader))) {
      return stateOf(leader);
    }
    if (Date.now() >= deadline) {
      const last = JSON.stringify(answers.map((a) => (typeof a === 'string' ? a : { leader: a.leaderId, epoch: a.leaderEpoch, error: a.errorCode, voters: a.currentVoters.map((v) => v.replicaId) })));
      throw new Error(`no agreed leader among voters ${voters.join(',')} within ${timeoutMs} ms; last answers: ${last}`);
    }
    await sleep(POLL_MS);
  }
}

export function stateOf(p: DescribeQuorumResponsePartition): QuorumState {
  return {
    leaderId: p.leaderId,
    epoch: p.leaderEpoch,
    highWatermark: p.highWatermark,
    voters: p.currentVoters.map((v) => v.replicaId).sort((a, b) => a - b),
    observers: p.observers.map((v) => v.replicaId).sort((a, b) => a - b),
  };
}

/** Retries `attempt` every `everyMs` until it resolves; rethrows the last failure after `timeoutMs`. */
export async function retryUntil<T>(timeoutMs: number, attempt: () => Promise<T>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await sleep(everyMs);
    }
  }
}

/** p-th percentile (0-100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Waits while `cond` holds, bounded. */
export async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * The cluster metadata a node serves, in a canonical form for comparing nodes: brokers, and per
 * topic its id and each partition's replicas, and unless `leadership` is false its leader, leader
 * epoch and ISR (which a restart of the brokers legitimately moves).
 */
export async function metadataDigest(c: TestCluster, id: number, leadership = true): Promise<string> {
  const conn = await c.connect(id);
  try {
    const res = await metadata(conn, null);
    const brokers = res.brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).sort();
    const topics = res.topics
      .filter((t) => !t.name?.startsWith('__'))
      .map((t) => ({
        name: t.name, id: t.topicId, error: t.errorCode,
        partitions: t.partitions.map((p) => [p.partitionIndex, p.replicaNodes.join('.'), ...(leadership ? [p.leaderId, p.leaderEpoch, p.isrNodes.join('.')] : [])].join(':')).sort(),
      }))
      .sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : 1));
    return JSON.stringify({ brokers, topics });
  } finally {
    await conn.close();
  }
}

/** Waits until every node in `ids` serves the same metadata; returns it. */
export async function waitSameMetadata(c: TestCluster, ids: readonly number[], timeoutMs = 15_000, leadership = true): Promise<string> {
  let digests: string[] = [];
  await waitUntil(`identical metadata on nodes ${ids.join(',')}`, async () => {
    digests = await Promise.all(ids.map((id) => metadataDigest(c, id, leadership).catch((err: unknown) => `error: ${String(err)}`)));
    return digests.every((d) => d === digests[0] && !d.startsWith('error'));
  }, timeoutMs).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${digests.join('\n')}`);
  });
  return digests[0] as string;
}
