// A bench cluster of `sluice start` child processes on 127.0.0.1 (bench process, main thread):
// N combined broker+controller nodes (ids 1..N) on ports reserved up front, each on its own temp
// data dir. They are started together because each waits for the others' quorum. A node can be
// stopped (SIGTERM) and started again on its data and ports. Every wait is bounded; dispose stops
// every node and removes the data dirs. Each node's V8 helper pool is sized to its share of the
// cores (brokerNodeArgs) unless the caller passes node flags of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../src/cli/dev_cluster.js';
import { brokerNodeArgs } from '../src/server/node_args.js';
import { BrokerProcess } from '../src/bench/broker_process.js';
import type { BrokerOptions, ClusterMember } from '../src/bench/broker_process.js';

const HOST = '127.0.0.1';
/** A cluster's first start includes the quorum's first election. */
const START_TIMEOUT_MS = 60_000;

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
    const c = new BrokerCluster(members, { nodeArgs: brokerNodeArgs(count), ...o });
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
