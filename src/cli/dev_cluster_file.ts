// The state of a `sluice dev cluster` directory (CLI process, pure): which nodes exist, the loopback
// ports each was given once, the pid of its last process, and the `sluice start` flags every node
// is started with. Persisted as `<dir>/cluster.json`; the I/O around it lives in dev_cluster.ts.
// Invariants: node ids are distinct and positive; every port appears once in the whole cluster;
// voters (nodes with a controller port) come first, and the voter set never changes after the
// first `up` (the static quorum of --controller-voters); the file's node count is bounded.

import { join } from 'node:path';
import { UsageError } from './args.js';

export const CLUSTER_FILE = 'cluster.json';
export const CLUSTER_HOST = '127.0.0.1';
/** The controller quorum's own bound on voters (--controller-voters). */
export const MAX_DEV_VOTERS = 32;
/** Voters plus broker-only nodes: every node is a process on this machine. */
export const MAX_DEV_NODES = 64;
/** Extra `sluice start` flags recorded in the file; each is a short token. */
const MAX_START_ARGS = 64;
const MAX_START_ARG_CHARS = 4096;

export interface DevNode {
  readonly id: number;
  readonly kafkaPort: number;
  readonly adminPort: number;
  /** The controller listener; null for a broker-only node, which observes the quorum. */
  readonly controllerPort: number | null;
  /** The last process started for the node; null before its first start. */
  readonly pid: number | null;
}

export interface DevCluster {
  readonly version: 1;
  /** Flags every node's `sluice start` gets after the ones the cluster sets (e.g. --shards 1). */
  readonly startArgs: readonly string[];
  readonly nodes: readonly DevNode[];
}

/** Flags the cluster sets itself; passing them through `--` would contradict cluster.json. */
const OWN_FLAGS = ['node-id', 'controller-voters', 'controller-addr', 'kafka-addr', 'admin-addr', 'data-dir', 'roles'];

export function isVoter(node: DevNode): boolean {
  return node.controllerPort !== null;
}

export function rolesOf(node: DevNode): string {
  return isVoter(node) ? 'broker,controller' : 'broker';
}

export function nodeDir(dir: string, node: Pick<DevNode, 'id'>): string {
  return join(dir, `node-${node.id}`);
}

/** The node's --data-dir; beside it, not inside, lives its log. */
export function nodeDataDir(dir: string, node: Pick<DevNode, 'id'>): string {
  return join(nodeDir(dir, node), 'data');
}

export function nodeLogPath(dir: string, node: Pick<DevNode, 'id'>): string {
  return join(nodeDir(dir, node), 'sluice.log');
}

/** KRaft's controller.quorum.voters for this cluster: `1@127.0.0.1:P,...`. */
export function controllerVoters(cluster: DevCluster): string {
  return cluster.nodes.filter(isVoter).map((n) => `${n.id}@${CLUSTER_HOST}:${String(n.controllerPort)}`).join(',');
}

/** The Kafka listeners of every node, for clients' bootstrap.servers. */
export function bootstrapList(cluster: DevCluster): string {
  return cluster.nodes.map((n) => `${CLUSTER_HOST}:${n.kafkaPort}`).join(',');
}

/** The argv after `sluice` that starts `node` (the same on every restart). */
export function startArgv(cluster: DevCluster, dir: string, node: DevNode): string[] {
  return [
    'start',
    '--node-id', String(node.id),
    '--controller-voters', controllerVoters(cluster),
    '--kafka-addr', `${CLUSTER_HOST}:${node.kafkaPort}`,
    '--admin-addr', `${CLUSTER_HOST}:${node.adminPort}`,
    '--data-dir', nodeDataDir(dir, node),
    ...cluster.startArgs,
  ];
}

/** Refuses pass-through flags that the cluster sets itself. */
export function checkStartArgs(args: readonly string[]): readonly string[] {
  if (args.length > MAX_START_ARGS) throw new UsageError(`at most ${MAX_START_ARGS} start flags after --`);
  for (const a of args) {
    if (a.length > MAX_START_ARG_CHARS) throw new UsageError(`start flag longer than ${MAX_START_ARG_CHARS} characters`);
    const m = /^--([a-z][a-z0-9-]*)/.exec(a);
    if (m !== null && OWN_FLAGS.includes(m[1] as string)) {
      throw new UsageError(`--${m[1] as string} is set by the dev cluster for each node; it cannot be passed after --`);
    }
  }
  return args;
}

/** A new cluster of `voters` combined broker+controller nodes, ids 1..voters. */
export function newCluster(voters: number, startArgs: readonly string[], takePort: () => number): DevCluster {
  if (!Number.isSafeInteger(voters) || voters < 1 || voters > MAX_DEV_VOTERS) {
    throw new UsageError(`a dev cluster has 1 to ${MAX_DEV_VOTERS} voters, got ${voters}`);
  }
  return addNodes({ version: 1, startArgs: checkStartArgs(startArgs), nodes: [] }, voters, 'voter', takePort);
}

/** `count` more nodes with the next free ids: voters only before the first start, then broker-only. */
export function addNodes(cluster: DevCluster, count: number, kind: 'voter' | 'observer', takePort: () => number): DevCluster {
  if (!Number.isSafeInteger(count) || count < 1) throw new UsageError(`the number of nodes to add must be positive, got ${count}`);
  if (cluster.nodes.length + count > MAX_DEV_NODES) {
    throw new UsageError(`a dev cluster has at most ${MAX_DEV_NODES} nodes; it has ${cluster.nodes.length}`);
  }
  let next = cluster.nodes.reduce((max, n) => Math.max(max, n.id), 0) + 1;
  const added: DevNode[] = [];
  for (let i = 0; i < count; i++) {
    added.push({
      id: next++,
      kafkaPort: takePort(),
      adminPort: takePort(),
      controllerPort: kind === 'voter' ? takePort() : null,
      pid: null,
    });
  }
  return validate({ ...cluster, nodes: [...cluster.nodes, ...added] });
}

export function withPid(cluster: DevCluster, id: number, pid: number | null): DevCluster {
  if (!cluster.nodes.some((n) => n.id === id)) throw new UsageError(`no node ${id} in the cluster`);
  return { ...cluster, nodes: cluster.nodes.map((n) => (n.id === id ? { ...n, pid } : n)) };
}

export function formatClusterFile(cluster: DevCluster): string {
  return `${JSON.stringify(validate(cluster), null, 2)}\n`;
}

/** Reads cluster.json; `where` names the file in errors. */
export function parseClusterFile(text: string, where: string): DevCluster {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${where}: not JSON (${(err as Error).message})`);
  }
  try {
    return validate(raw);
  } catch (err) {
    throw new UsageError(`${where}: ${(err as Error).message}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function port(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) throw new Error(`${what} must be a port in [1, 65535]`);
  return v;
}

function parseNode(v: unknown, i: number): DevNode {
  if (!isObject(v)) throw new Error(`nodes[${i}] must be an object`);
  const { id, kafkaPort, adminPort, controllerPort, pid } = v;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > 2 ** 31 - 1) throw new Error(`nodes[${i}].id must be a positive int32`);
  if (pid !== null && (typeof pid !== 'number' || !Number.isInteger(pid) || pid < 1)) throw new Error(`nodes[${i}].pid must be a pid or null`);
  return {
    id,
    kafkaPort: port(kafkaPort, `nodes[${i}].kafkaPort`),
    adminPort: port(adminPort, `nodes[${i}].adminPort`),
    controllerPort: controllerPort === null ? null : port(controllerPort, `nodes[${i}].controllerPort`),
    pid,
  };
}

function validate(raw: unknown): DevCluster {
  if (!isObject(raw)) throw new Error('must be an object');
  if (raw['version'] !== 1) throw new Error('version must be 1');
  const { startArgs, nodes } = raw;
  if (!Array.isArray(startArgs) || !startArgs.every((a): a is string => typeof a === 'string')) throw new Error('startArgs must be an array of strings');
  if (!Array.isArray(nodes)) throw new Error('nodes must be an array');
  if (nodes.length > MAX_DEV_NODES) throw new Error(`at most ${MAX_DEV_NODES} nodes`);
  const parsed = nodes.map(parseNode);
  const ids = new Set<number>();
  const ports = new Set<number>();
  let observerSeen = false;
  for (const n of parsed) {
    if (ids.has(n.id)) throw new Error(`node id ${n.id} appears twice`);
    ids.add(n.id);
    for (const p of [n.kafkaPort, n.adminPort, n.controllerPort]) {
      if (p === null) continue;
      if (ports.has(p)) throw new Error(`port ${p} is given to two listeners`);
      ports.add(p);
    }
    if (isVoter(n) && observerSeen) throw new Error(`voter ${n.id} comes after a broker-only node`);
    observerSeen ||= !isVoter(n);
  }
  const voters = parsed.filter(isVoter).length;
  if (voters < 1 || voters > MAX_DEV_VOTERS) throw new Error(`must have 1 to ${MAX_DEV_VOTERS} voters, has ${voters}`);
  return { version: 1, startArgs: checkStartArgs(startArgs), nodes: parsed };
}
