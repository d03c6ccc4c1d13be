// `sluice dev cluster` (main thread of the CLI process): a local cluster of `sluice start`
// processes on loopback for development and process-level tests. `up` starts N combined
// broker+controller nodes (or restarts those not running, with their data and ports), `add` starts
// broker-only nodes that observe the quorum, `status` asks every node for its quorum view and
// health, `down` stops them all. The nodes are detached processes that outlive the command; what
// they are lives in <dir>/cluster.json (dev_cluster_file.ts), each node's data and log under
// <dir>/node-<id>/. Every wait is bounded (--timeout-ms). Nodes sharing the machine get V8 helper
// pools sized to their share of the cores (server/node_args.ts).

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { join, resolve } from 'node:path';
import { KafkaConnection } from '../client/connection.js';
import { DescribeQuorumApi } from '../protocol/apis/describe_quorum.js';
import type { DescribeQuorumResponsePartition } from '../protocol/apis/describe_quorum.js';
import { CLI_ARGV } from '../native/embedded.js';
import { brokerNodeOptions } from '../server/node_args.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import { formatOption, renderer } from './output.js';
import type { OutputFormat } from './output.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import {
  CLUSTER_FILE, CLUSTER_HOST, MAX_DEV_NODES, MAX_DEV_VOTERS, addNodes, bootstrapList, formatClusterFile, isVoter,
  newCluster, nodeDataDir, nodeDir, nodeLogPath, parseClusterFile, rolesOf, startArgv, withPid,
} from './dev_cluster_file.js';
import type { DevCluster, DevNode } from './dev_cluster_file.js';
import { table } from './io.js';
import type { CliIo } from './io.js';

const DEFAULT_DIR = './sluice-cluster';
const DEFAULT_VOTERS = 3;
const DEFAULT_TIMEOUT_MS = 60_000;
/** `sluice start` exits by itself within its stop deadline (controlled shutdown, 5 s, + a heartbeat + 10 s); a little more before SIGKILL. */
const DEFAULT_STOP_TIMEOUT_MS = 20_000;
const POLL_MS = 100;
const PROBE_TIMEOUT_MS = 2_000;
const READY_PREFIX = 'sluice ready ';
/** The metadata quorum's topic-partition, as DescribeQuorum names it. */
const METADATA_TOPIC = '__cluster_metadata';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- cluster directory -----------------------------------------------------------------------

export function loadCluster(dir: string): DevCluster | null {
  const path = join(dir, CLUSTER_FILE);
  if (!existsSync(path)) return null;
  return parseClusterFile(readFileSync(path, 'utf8'), path);
}

/** Replaces cluster.json whole (write aside, rename), so a crash never leaves half a file. */
export function saveCluster(dir: string, cluster: DevCluster): void {
  const path = join(dir, CLUSTER_FILE);
  writeFileSync(`${path}.tmp`, formatClusterFile(cluster));
  renameSync(`${path}.tmp`, path);
}

function nodeOf(cluster: DevCluster, id: number): DevNode {
  const node = cluster.nodes.find((n) => n.id === id);
  if (node === undefined) throw new UsageError(`no node ${id} in the cluster`);
  return node;
}

/**
 * Whether the node's recorded process still runs. The pid alone could have been reused by another
 * program, so on Linux the process's command line must also name the node's directory.
 */
export function nodeRunning(dir: string, node: DevNode): boolean {
  if (node.pid === null) return false;
  try {
    const cmdline = readFileSync(`/proc/${node.pid}/cmdline`, 'utf8');
    // argv entries are NUL-terminated; matching whole entries keeps node-1 from matching node-10.
    return cmdline.includes(`\0${nodeDataDir(resolve(dir), node)}\0`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    process.kill(node.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `count` distinct ports that were free a moment ago and are not in `taken`: every listener stays
 * bound until all are chosen, so the kernel never hands out one twice.
 */
export async function freePorts(count: number, taken: ReadonlySet<number>): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    // A port in `taken` belongs to a node that is down now; skip it (bounded: each try holds one).
    for (let tries = 0; ports.length < count && tries < count + taken.size + 16; tries++) {
      const srv = createServer();
      servers.push(srv);
      await new Promise<void>((ok, fail) => {
        srv.once('error', fail);
        srv.listen(0, CLUSTER_HOST, () => ok());
      });
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      if (port > 0 && !taken.has(port)) ports.push(port);
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((ok) => s.close(() => ok()))));
  }
  if (ports.length < count) throw new Error(`could not find ${count} free loopback ports`);
  return ports;
}

function portsOf(cluster: DevCluster): Set<number> {
  return new Set(cluster.nodes.flatMap((n) => [n.kafkaPort, n.adminPort, ...(n.controllerPort === null ? [] : [n.controllerPort])]));
}

// ---- processes -------------------------------------------------------------------------------

export interface LaunchedNode {
  readonly pid: number;
  /** Resolves once the node printed its ready line; rejects (with the log path) if it exits or the deadline passes. */
  readonly ready: Promise<void>;
}

/** Starts one node as a detached `sluice start` appending to its log; the caller records the pid. */
export function launchNode(dir: string, cluster: DevCluster, node: DevNode, timeoutMs: number): LaunchedNode {
  const logPath = nodeLogPath(dir, node);
  mkdirSync(nodeDir(dir, node), { recursive: true });
  const logStart = existsSync(logPath) ? statSync(logPath).size : 0;
  const fd = openSync(logPath, 'a');
  let child;
  try {
    child = spawn(process.execPath, [...CLI_ARGV, ...startArgv(cluster, resolve(dir), node)], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, UV_THREADPOOL_SIZE: process.env['UV_THREADPOOL_SIZE'] ?? '16', NODE_OPTIONS: brokerNodeOptions(cluster.nodes.length) },
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`node ${node.id} could not be started (see ${logPath})`);
  let exited: string | null = null;
  child.once('exit', (code, signal) => { exited = signal === null ? `exit code ${String(code)}` : `signal ${signal}`; });
  child.unref();
  const ready = (async (): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (readyLineAfter(logPath, logStart) !== null) return;
      if (exited !== null) throw new Error(`node ${node.id} exited during start (${exited}); log: ${logPath}`);
      if (Date.now() >= deadline) throw new Error(`node ${node.id} not ready within ${timeoutMs} ms; log: ${logPath}`);
      await sleep(POLL_MS);
    }
  })();
  return { pid, ready };
}

/** The ready line `sluice start` printed after byte `from` of its log, if any. */
export function readyLineAfter(logPath: string, from: number): string | null {
  const text = readFileSync(logPath).subarray(from).toString('utf8');
  for (const line of text.split('\n')) if (line.startsWith(READY_PREFIX)) return line;
  return null;
}

/**
 * Starts the given nodes together (a quorum needs a majority up before anyone is ready), records
 * their pids in cluster.json and waits for all; returns the cluster as saved.
 */
export async function startNodes(dir: string, cluster: DevCluster, ids: readonly number[], timeoutMs: number, io: CliIo): Promise<DevCluster> {
  let current = cluster;
  const waits: Promise<void>[] = [];
  for (const id of ids) {
    const launched = launchNode(dir, current, nodeOf(current, id), timeoutMs);
    current = withPid(current, id, launched.pid);
    waits.push(launched.ready.then(() => io.err(`node ${id} ready (pid ${launched.pid})`)));
  }
  // Recorded before waiting, so `down` finds them even if this command is interrupted.
  saveCluster(dir, current);
  const results = await Promise.allSettled(waits);
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  if (failed.length > 0) throw new DevClusterError(failed.join('\n'));
  return current;
}

/** A node that did not come up; the message names its log. Exit code 1. */
export class DevClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevClusterError';
  }
}

// ---- verbs -----------------------------------------------------------------------------------

export interface UpOptions {
  /** Voters of a new cluster; an existing one must match if given. */
  readonly voters?: number;
  readonly startArgs?: readonly string[];
  readonly timeoutMs?: number;
}

/** Creates the cluster or restarts its nodes that are not running; returns the cluster as saved. */
export async function clusterUp(dir: string, opts: UpOptions, io: CliIo): Promise<DevCluster> {
  mkdirSync(dir, { recursive: true });
  let cluster = loadCluster(dir);
  if (cluster === null) {
    const voters = opts.voters ?? DEFAULT_VOTERS;
    const ports = await freePorts(voters * 3, new Set());
    cluster = newCluster(voters, opts.startArgs ?? [], () => ports.shift() as number);
    saveCluster(dir, cluster);
  } else {
    const voters = cluster.nodes.filter(isVoter).length;
    if (opts.voters !== undefined && opts.voters !== voters) {
      throw new UsageError(`the cluster in ${dir} has ${voters} voters; the voter set is fixed (use \`add\` for broker-only nodes)`);
    }
    if (opts.startArgs !== undefined && opts.startArgs.length > 0 && opts.startArgs.join('\0') !== cluster.startArgs.join('\0')) {
      throw new UsageError(`the cluster in ${dir} was created with start flags [${cluster.startArgs.join(' ')}]; they cannot change`);
    }
  }
  const down = cluster.nodes.filter((n) => !nodeRunning(dir, n)).map((n) => n.id);
  for (const n of cluster.nodes) if (!down.includes(n.id)) io.err(`node ${n.id} already running (pid ${String(n.pid)})`);
  return down.length === 0 ? cluster : startNodes(dir, cluster, down, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, io);
}

/** Adds and starts `count` broker-only nodes. */
export async function clusterAdd(dir: string, count: number, timeoutMs: number, io: CliIo): Promise<DevCluster> {
  const cluster = requireCluster(dir);
  const ports = await freePorts(count * 2, portsOf(cluster));
  const grown = addNodes(cluster, count, 'observer', () => ports.shift() as number);
  saveCluster(dir, grown);
  const added = grown.nodes.slice(cluster.nodes.length).map((n) => n.id);
  return startNodes(dir, grown, added, timeoutMs, io);
}

/** Sends `signal` to a running node; false if it is not running. */
export function signalNode(dir: string, node: DevNode, signal: NodeJS.Signals): boolean {
  if (!nodeRunning(dir, node) || node.pid === null) return false;
  process.kill(node.pid, signal);
  return true;
}

/** Waits until the node's process is gone; false at the deadline. */
export async function waitStopped(dir: string, node: DevNode, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (nodeRunning(dir, node)) {
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/** SIGTERM every node (SIGCONT too, for one paused by a test), SIGKILL those still up at the deadline. */
export async function clusterDown(dir: string, timeoutMs: number, io: CliIo): Promise<void> {
  let cluster = requireCluster(dir);
  const running = cluster.nodes.filter((n) => signalNode(dir, n, 'SIGTERM'));
  for (const n of running) signalNode(dir, n, 'SIGCONT');
  const stopped = await Promise.all(running.map((n) => waitStopped(dir, n, timeoutMs)));
  const stuck = running.filter((_, i) => stopped[i] !== true);
  for (const n of stuck) {
    io.err(`node ${n.id} (pid ${String(n.pid)}) still running after ${timeoutMs} ms; SIGKILL`);
    signalNode(dir, n, 'SIGKILL');
  }
  const killed = await Promise.all(stuck.map((n) => waitStopped(dir, n, 5_000)));
  for (const n of cluster.nodes) if (!nodeRunning(dir, n)) cluster = withPid(cluster, n.id, null);
  saveCluster(dir, cluster);
  if (killed.includes(false)) throw new DevClusterError('some nodes survived SIGKILL');
  io.err(`${running.length} node(s) stopped`);
}

function requireCluster(dir: string): DevCluster {
  const cluster = loadCluster(dir);
  if (cluster === null) throw new UsageError(`no dev cluster in ${dir} (run \`sluice dev cluster up\` first)`);
  return cluster;
}

// ---- status ----------------------------------------------------------------------------------

export interface QuorumView {
  /** This node's place: from its own answer (leader) or the leader's lists. */
  readonly role: 'leader' | 'follower' | 'observer' | 'unknown';
  /** The leader and epoch this node knows (the leader's, for a node without a controller listener). */
  readonly leaderId: number;
  readonly epoch: number;
  /** -1 when no leader answered. */
  readonly highWatermark: number;
  /** The leader's log end minus this node's; null when either is unknown. */
  readonly lag: number | null;
}

export interface NodeStatus {
  readonly id: number;
  readonly pid: number | null;
  readonly running: boolean;
  readonly roles: string;
  readonly kafka: string;
  readonly quorum: QuorumView | null;
  /** Why `quorum` is null (not running, unreachable, or a Kafka error name). */
  readonly quorumError: string | null;
  /** /v1/health's status, or 'unreachable'. */
  readonly health: string;
}

/**
 * One node's quorum view (pure). `own` is the node's DescribeQuorum answer (null for a node
 * without a controller listener); `leader` is the leader's full answer, if any node gave one.
 */
export function quorumView(id: number, own: DescribeQuorumResponsePartition | null, leader: DescribeQuorumResponsePartition | null): QuorumView | null {
  const known = own ?? leader;
  if (known === null) return null;
  const voter = leader?.currentVoters.find((r) => r.replicaId === id);
  const observer = leader?.observers.find((r) => r.replicaId === id);
  const leaderEnd = leader?.currentVoters.find((r) => r.replicaId === leader.leaderId)?.logEndOffset ?? -1;
  const ownEnd = (voter ?? observer)?.logEndOffset ?? -1;
  const role = own?.errorCode === 0 ? 'leader' : voter !== undefined ? 'follower' : observer !== undefined ? 'observer' : 'unknown';
  return {
    role,
    leaderId: known.leaderId,
    epoch: known.leaderEpoch,
    highWatermark: leader?.highWatermark ?? -1,
    lag: leaderEnd >= 0 && ownEnd >= 0 ? Math.max(0, leaderEnd - ownEnd) : null,
  };
}

/**
 * DescribeQuorum of the metadata partition over a controller listener. The leader answers in
 * full; another voter answers NOT_LEADER_OR_FOLLOWER with the leader and epoch it knows, which is
 * returned as is (errorCode set); any other failure throws.
 */
export async function describeQuorum(port: number, timeoutMs = PROBE_TIMEOUT_MS, host = CLUSTER_HOST): Promise<DescribeQuorumResponsePartition> {
  const conn = await KafkaConnection.connect({ host, port, clientId: 'sluice-dev-cluster', requestTimeoutMs: timeoutMs });
  try {
    const res = await conn.request(DescribeQuorumApi, { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] }] });
    const p = res.topics[0]?.partitions[0];
    if (res.errorCode !== 0) throw new Error(errorName(res.errorCode));
    if (p === undefined) throw new Error('DescribeQuorum answered without the metadata partition');
    if (p.errorCode !== 0 && p.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER) throw new Error(errorName(p.errorCode));
    return p;
  } finally {
    await conn.close();
  }
}

async function health(port: number): Promise<string> {
  try {
    const res = await fetch(`http://${CLUSTER_HOST}:${port}/v1/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body: unknown = await res.json();
    const status = typeof body === 'object' && body !== null ? (body as { status?: unknown }).status : undefined;
    return typeof status === 'string' ? status : `http ${res.status}`;
  } catch {
    return 'unreachable';
  }
}

type Answer = DescribeQuorumResponsePartition | string;

/**
 * Every running voter's DescribeQuorum answer (or why there is none), by node id, asked on its
 * controller listener (this plaintext client is refused by one secured with
 * --controller-security-protocol).
 */
export async function quorumAnswers(dir: string, cluster: DevCluster): Promise<Map<number, Answer>> {
  const voters = cluster.nodes.filter((n) => isVoter(n) && nodeRunning(dir, n));
  const answers = await Promise.all(voters.map((n) => describeQuorum(n.controllerPort as number).catch((err: unknown) => (err instanceof Error ? err.message : String(err)))));
  return new Map(voters.map((n, i) => [n.id, answers[i] as Answer]));
}

/** The leader's full answer among `answers`, if one gave it. */
export function leaderAnswer(answers: ReadonlyMap<number, Answer>): DescribeQuorumResponsePartition | null {
  for (const a of answers.values()) if (typeof a !== 'string' && a.errorCode === 0) return a;
  return null;
}

export async function clusterStatus(dir: string): Promise<NodeStatus[]> {
  const cluster = requireCluster(dir);
  const answers = await quorumAnswers(dir, cluster);
  const leader = leaderAnswer(answers);
  return Promise.all(cluster.nodes.map(async (node): Promise<NodeStatus> => {
    const running = nodeRunning(dir, node);
    const base = { id: node.id, pid: node.pid, running, roles: rolesOf(node), kafka: `${CLUSTER_HOST}:${node.kafkaPort}` };
    if (!running) return { ...base, quorum: null, quorumError: 'not running', health: 'down' };
    const own = answers.get(node.id);
    const view = typeof own === 'string' ? null : quorumView(node.id, own ?? null, leader);
    const quorumError = view !== null ? null : typeof own === 'string' ? own : 'no leader answered DescribeQuorum';
    return { ...base, quorum: view, quorumError, health: await health(node.adminPort) };
  }));
}

export function formatStatus(statuses: readonly NodeStatus[]): string {
  const dash = (v: number | null | undefined): string => (v === null || v === undefined || v < 0 ? '-' : String(v));
  return table([
    ['ID', 'PID', 'RUNNING', 'ROLES', 'KAFKA', 'QUORUM', 'LEADER', 'EPOCH', 'LAG', 'HEALTH'],
    ...statuses.map((s) => [
      String(s.id), dash(s.pid), s.running ? 'yes' : 'no', s.roles, s.kafka,
      s.quorum?.role ?? `? (${s.quorumError ?? ''})`, dash(s.quorum?.leaderId), dash(s.quorum?.epoch), dash(s.quorum?.lag), s.health,
    ]),
  ]);
}

// ---- command line ----------------------------------------------------------------------------

const DIR_OPTION: OptionSpec = { name: 'dir' };
const TIMEOUT_OPTION: OptionSpec = { name: 'timeout-ms' };

export const DEV_CLUSTER_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  up: [DIR_OPTION, TIMEOUT_OPTION],
  add: [DIR_OPTION, TIMEOUT_OPTION],
  status: [DIR_OPTION, { name: 'format' }],
  down: [DIR_OPTION, TIMEOUT_OPTION],
};

const COMMON_HELP = `  --dir DIR         the cluster's directory: cluster.json, node-<id>/data, node-<id>/sluice.log [${DEFAULT_DIR}]`;

export const DEV_CLUSTER_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice dev cluster <up|add|status|down> [options]

A local cluster of \`sluice start\` processes on 127.0.0.1 for development and tests.

Commands:
  up [N] [-- FLAGS]  start N broker+controller nodes (default ${DEFAULT_VOTERS}), or restart those not running
  add [K]            add K broker-only nodes (default 1) that observe the quorum
  status             each node's pid, quorum role, leader, epoch, lag and health
  down               stop every node (SIGTERM, then SIGKILL after --timeout-ms)

Run 'sluice dev cluster <command> --help' for a command's options.`,
  up: `Usage: sluice dev cluster up [N] [--dir DIR] [--timeout-ms N] [-- START-FLAGS...]

Creates a cluster of N (1-${MAX_DEV_VOTERS}, default ${DEFAULT_VOTERS}) combined broker+controller nodes with ids 1..N, or,
when DIR already holds one, restarts every node that is not running with its data and ports.
Each node is a detached \`sluice start --node-id I --controller-voters ...\` on free loopback
ports chosen once; START-FLAGS (e.g. --shards 1) are added to every node's start and kept.
Nodes authenticate each other with, e.g., -- --controller-security-protocol SASL_PLAINTEXT
--inter-broker-sasl-username broker --inter-broker-sasl-password-file F (the same F for all;
\`status\` then cannot read the quorum: it asks the controller listeners in plaintext).
Prints progress on stderr and the bootstrap list (127.0.0.1:P1,127.0.0.1:P2,...) on stdout once
every node printed its ready line; exit 1 naming the node's log if one does not.

Options:
${COMMON_HELP}
  --timeout-ms N    bound on waiting for the nodes to be ready [${DEFAULT_TIMEOUT_MS}]`,
  add: `Usage: sluice dev cluster add [K] [--dir DIR] [--timeout-ms N]

Adds K (default 1) broker-only nodes to the cluster (at most ${MAX_DEV_NODES} nodes in all); they
are not voters and observe the metadata quorum. Prints the new bootstrap list.

Options:
${COMMON_HELP}
  --timeout-ms N    bound on waiting for the nodes to be ready [${DEFAULT_TIMEOUT_MS}]`,
  status: `Usage: sluice dev cluster status [--dir DIR] [--format FORMAT]

Per node: id, pid, whether it runs, its roles, its Kafka listener, its place in the metadata
quorum (leader, follower or observer, from DescribeQuorum over the voters' controller listeners),
the leader and epoch it knows, its lag behind the leader's log end, and its /v1/health status.

Options:
${COMMON_HELP}
  --format FORMAT  text, wide, json or yaml [text]`,
  down: `Usage: sluice dev cluster down [--dir DIR] [--timeout-ms N]

Stops every node with SIGTERM (and SIGCONT, should one be paused) and SIGKILLs those still running
after the deadline. Data and logs stay; \`up\` starts the same cluster again.

Options:
${COMMON_HELP}
  --timeout-ms N    bound on waiting for the nodes to stop [${DEFAULT_STOP_TIMEOUT_MS}]`,
};

/** The parsed form of one `dev cluster` invocation (pure; exported for tests). */
export interface DevClusterCommand {
  readonly verb: 'up' | 'add' | 'status' | 'down';
  readonly dir: string;
  /** up: voters; add: nodes to add. */
  readonly count: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly format: OutputFormat;
  readonly startArgs: readonly string[];
}

function positiveCount(raw: string | undefined, what: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new UsageError(`${what} must be an integer in [1, ${max}], got "${raw}"`);
  return n;
}

export function parseDevCluster(verb: string, argv: readonly string[]): DevClusterCommand {
  const spec = DEV_CLUSTER_VERBS[verb];
  if (spec === undefined) throw new UsageError(`unknown dev cluster command "${verb}"`);
  const end = argv.indexOf('--');
  const own = end < 0 ? argv : argv.slice(0, end);
  const startArgs = end < 0 ? [] : argv.slice(end + 1);
  if (startArgs.length > 0 && verb !== 'up') throw new UsageError(`only \`up\` takes start flags after --`);
  const parsed: ParsedArgs = parseArgs(own, spec, false);
  const max = verb === 'up' ? MAX_DEV_VOTERS : MAX_DEV_NODES;
  const takesCount = verb === 'up' || verb === 'add';
  if (parsed.positionals.length > (takesCount ? 1 : 0)) throw new UsageError(`unexpected argument ${parsed.positionals[takesCount ? 1 : 0] ?? ''}`);
  return {
    verb: verb as DevClusterCommand['verb'],
    dir: optionValue(parsed, 'dir') ?? DEFAULT_DIR,
    count: positiveCount(parsed.positionals[0], verb === 'up' ? 'N' : 'K', max),
    timeoutMs: intOption(parsed, 'timeout-ms', 1, 2 ** 31 - 1),
    format: verb === 'status' ? formatOption(parsed) : 'text',
    startArgs,
  };
}

/** Runs `sluice dev cluster <verb> ...`; returns the exit code. */
export async function runDevCluster(verb: string, argv: readonly string[], io: CliIo): Promise<number> {
  const cmd = parseDevCluster(verb, argv);
  try {
    switch (cmd.verb) {
      case 'up': {
        const upOpts = { startArgs: cmd.startArgs, ...(cmd.count === undefined ? {} : { voters: cmd.count }), ...(cmd.timeoutMs === undefined ? {} : { timeoutMs: cmd.timeoutMs }) };
        io.out(bootstrapList(await clusterUp(cmd.dir, upOpts, io)));
        return 0;
      }
      case 'add':
        io.out(bootstrapList(await clusterAdd(cmd.dir, cmd.count ?? 1, cmd.timeoutMs ?? DEFAULT_TIMEOUT_MS, io)));
        return 0;
      case 'status': {
        const statuses = await clusterStatus(cmd.dir);
        io.out(renderer(cmd.format)(statuses, formatStatus(statuses)));
        return 0;
      }
      case 'down':
        await clusterDown(cmd.dir, cmd.timeoutMs ?? DEFAULT_STOP_TIMEOUT_MS, io);
        return 0;
    }
  } catch (err) {
    if (!(err instanceof DevClusterError)) throw err;
    io.err(`sluice: ${err.message}`);
    return 1;
  }
}
