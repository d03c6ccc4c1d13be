// A bench cluster of `sluice start` child processes on 127.0.0.1 (bench process, main thread):
// N combined broker+controller nodes (ids 1..N) on ports reserved up front, each on its own temp
// data dir. They are started together because each waits for the others' quorum. A node can be
// stopped (SIGTERM) and started again on its data and ports. Every wait is bounded; dispose stops
// every node and removes the data dirs. Each node's V8 helper pool is sized to its share of the
// cores (colocatedNodeArgs) unless the caller passes node flags of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../src/cli/dev_cluster.js';
import { BrokerProcess } from '../src/bench/broker_process.js';
import type { BrokerOptions, ClusterMember } from '../src/bench/broker_process.js';

const HOST = '127.0.0.1';
/** A cluster's first start includes the quorum's first election. */
const START_TIMEOUT_MS = 60_000;

/**
 * Node flags for one of `count` brokers sharing this machine: V8's helper pool (concurrent GC
 * marking and sweeping, compilation) sized to the broker's share of the cores. Node makes it 4
 * threads whatever the machine, so three brokers on two cores ran twelve helpers that preempted
 * the brokers' main and shard threads. In one sitting (RF 3, acks=all, flush always, 1 KiB, two
 * runs per rate and side) e2e p99 went from 19.2-24.5 to 18.0-20.4 ms and p99.9 from 34.5-48.9 to
 * 25.3-32.5 ms at 2000 and 10000 msgs/s. A broker alone on its machine keeps Node's default.
 */
export function colocatedNodeArgs(count: number, cores = availableParallelism()): string[] {
  return [`--v8-pool-size=${Math.max(1, Math.floor(cores / count))}`];
}

export class BrokerCluster {
  private readonly nodes = new Map<number, BrokerProcess>();

  private constructor(private readonly members: readonly ClusterMember[], private readonly o: Omit<BrokerOptions, 'member'>) {}

  static async start(count: number, o: Omit<BrokerOptions, 'member'>): Promise<BrokerCluster> {
    const ports = await freePorts(count * 3, new Set());
    const take = (): number => ports.shift() as number;
    const plan = Array.from({ length: count }, (_, i) => ({ nodeId: i + 1, kafkaPort: take(), adminPort: take(), controllerPort: take() }));
    const voters = plan.map((p) => `${p.nodeId}@${HOST}:${p.controllerPort}`).join(',');
    const members = plan.map((p) => ({
      nodeId: p.nodeId, voters, kafkaPort: p.kafkaPort, adminPort: p.adminPort, dataDir: mkdtempSync(join(tmpdir(), `sluice-bench-n${p.nodeId}-`)),
    }));
    const c = new BrokerCluster(members, { nodeArgs: colocatedNodeArgs(count), ...o });
    try {
      await Promise.all(members.map((m) => c.startNode(m.nodeId)));
    } catch (err) {
      await c.dispose();
      throw err;
    }
    return c;
  }

  get ids(): number[] {
    return this.members.map((m) => m.nodeId);
  }

  node(id: number): BrokerProcess {
    const b = this.nodes.get(id);
    if (b === undefined) throw new Error(`node ${id} is not running`);
    return b;
  }

  running(): BrokerProcess[] {
    return [...this.nodes.values()];
  }

  /** Starts node `id` on its ports and data dir; resolves once it is ready. */
  async startNode(id: number): Promise<BrokerProcess> {
    const member = this.members.find((m) => m.nodeId === id);
    if (member === undefined) throw new Error(`no node ${id}`);
    if (this.nodes.has(id)) throw new Error(`node ${id} is already running`);
    const b = await BrokerProcess.start({ startTimeoutMs: START_TIMEOUT_MS, ...this.o, member });
    this.nodes.set(id, b);
    return b;
  }

  /** SIGTERM (the broker's own shutdown path); the exit code. The data dir stays. */
  async stopNode(id: number): Promise<number | null> {
    const b = this.node(id);
    this.nodes.delete(id);
    return b.stop(30_000);
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.nodes.keys()].map((id) => this.stopNode(id)));
    for (const m of this.members) rmSync(m.dataDir, { recursive: true, force: true });
  }
}
