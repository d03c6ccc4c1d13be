// Test fixture: metadata-quorum nodes in this process, each a MetadataQuorum (driver, real storage
// in a tmp dir, real TCP transport) behind its own controller listener on a loopback port. A
// node's links can be cut (isolation) without stopping it, and a stopped node restarts from its
// directory. Timers are shortened (10 ms ticks, election timeout 20 ticks) to keep tests quick.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetadataQuorum } from '../../../../src/actors/quorum/metadata_quorum.js';
import type { QuorumLink } from '../../../../src/actors/quorum/quorum_driver.js';
import type { ControllerConfig } from '../../../../src/cluster/metadata/controller.js';
import { createLogger } from '../../../../src/common/logger.js';
import { DescriptorBudget } from '../../../../src/common/descriptor_budget.js';
import type { NodeId } from '../../../../src/coordinator/raft/types.js';
import type { IoBackend } from '../../../../src/log/io_backend.js';
import { startControllerListener, type ControllerEndpoint } from '../../../../src/net/controller_server.js';
import type { KafkaServer } from '../../../../src/net/kafka_server.js';
import { QuorumTransport } from '../../../../src/net/quorum_transport.js';
import { readResponseHeader } from '../../../../src/protocol/header.js';
import { Reader } from '../../../../src/protocol/reader.js';
import type { Api } from '../../../../src/protocol/schema.js';
import { RawConn, converse, requestFrame } from '../../../helpers/raw_socket.js';
import { PLAINTEXT_PEER } from '../../../../src/common/peer_socket.js';

export const CLUSTER_ID = 'quorum-fixture-cluster';
const log = createLogger('silent');

export const controllerConfig: ControllerConfig = {
  sessionTimeoutMs: 60_000,
  maxBrokers: 100,
  maxPartitions: 10_000,
  maxPendingBatches: 1000,
  defaultPartitions: 1,
  defaultReplicationFactor: 1,
  newTopicId: () => Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join(''),
  checkTopicConfigs: () => {},
  leaderImbalanceCheckIntervalMs: 0,
  leaderImbalancePerBrokerPercentage: 10,
};

const noMetrics = { protocolError: () => {}, recordRequest: () => {}, connectionOpened: () => {}, connectionClosed: () => {}, connectionRejected: () => {}, requestMemoryWaited: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 20 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface FixtureNode {
  readonly id: NodeId;
  readonly quorum: MetadataQuorum;
  readonly server: KafkaServer;
  readonly port: number;
  readonly transport: QuorumTransport;
  /** Drops every message to and from the network while set. */
  cut: boolean;
}

export interface FixtureOptions {
  /** Voters of the static quorum. */
  readonly voters: readonly NodeId[];
  /** Every node that may run (voters and observers); each gets a controller port. */
  readonly nodes: readonly NodeId[];
  /** Peers each transport starts with: every node (default), or the static voters only, as --controller-voters configures. */
  readonly peers?: 'nodes' | 'voters';
  readonly snapshotEveryEntries?: number;
  /** The metadata log's write path per node (default libuv's pool). */
  readonly io?: (id: NodeId) => IoBackend | undefined;
}

export class QuorumFixture {
  readonly running = new Map<NodeId, FixtureNode>();
  private readonly dirs = new Map<NodeId, string>();
  private endpoints: ControllerEndpoint[] = [];
  fatal: unknown[] = [];

  private constructor(private readonly opts: FixtureOptions) {}

  static async create(opts: FixtureOptions): Promise<QuorumFixture> {
    const f = new QuorumFixture(opts);
    for (const id of opts.nodes) {
      f.endpoints.push({ id, host: '127.0.0.1', port: await freePort() });
      f.dirs.set(id, mkdtempSync(join(tmpdir(), `sluice-quorum-${id}-`)));
    }
    return f;
  }

  async start(id: NodeId): Promise<FixtureNode> {
    const endpoint = this.endpoints.find((e) => e.id === id)!;
    let node: FixtureNode | null = null;
    const built: QuorumTransport[] = [];
    const configured = this.opts.peers === 'voters' ? this.endpoints.filter((e) => this.opts.voters.includes(e.id)) : this.endpoints;
    const quorum = new MetadataQuorum({
      id,
      dir: this.dirs.get(id)!,
      bootstrapVoters: this.opts.voters,
      log,
      onFatal: (err) => this.fatal.push(err),
      electionTimeoutTicks: 20,
      fetchTimeoutTicks: 40,
      fetchWaitTicks: 10,
      ...(this.opts.io?.(id) ? { io: this.opts.io(id)! } : {}),
      ...(this.opts.snapshotEveryEntries !== undefined ? { snapshotEveryEntries: this.opts.snapshotEveryEntries } : {}),
      controller: controllerConfig,
      transport: ({ deliver, isVoter, unreachable }) => {
        const t = new QuorumTransport({
          self: id,
          clusterId: CLUSTER_ID,
          security: PLAINTEXT_PEER,
          peers: configured.filter((e) => e.id !== id),
          deliver: (m) => {
            if (node?.cut !== true) deliver(m);
          },
          isVoter,
          unreachable: (peer, refused) => {
            if (node?.cut !== true) unreachable(peer, refused);
          },
          maxPeers: 32,
          maxQueuedPerPeer: 64,
          maxInflightPerPeer: 4,
          requestTimeoutMs: 2000,
          maxPendingInbound: 64,
          maxResponseBytes: 16 << 20,
          backoff: { baseMs: 20, maxMs: 200 },
        });
        built.push(t);
        const link: QuorumLink = {
          send: (m) => {
            if (node?.cut !== true) t.send(m);
          },
          receive: (req) => t.receive(req),
          learnPeers: (endpoints) => t.learnPeers(endpoints),
          close: () => t.close(),
        };
        return link;
      },
    });
    const { server } = await startControllerListener(
      { quorum, clusterId: CLUSTER_ID, endpoints: this.endpoints },
      { host: '127.0.0.1', port: endpoint.port },
      { log, metrics: noMetrics, descriptors: new DescriptorBudget(1 << 16, 0) },
    );
    const transport = built[0];
    if (transport === undefined) throw new Error(`node ${id}'s driver built no transport`);
    node = { id, quorum, server, port: endpoint.port, transport, cut: false };
    this.running.set(id, node);
    return node;
  }

  async stop(id: NodeId): Promise<void> {
    const node = this.running.get(id);
    if (node === undefined) return;
    this.running.delete(id);
    await node.quorum.stop();
    await node.server.close();
  }

  /** The node every running, uncut voter agrees leads; undefined until there is one. */
  leader(): FixtureNode | undefined {
    const live = [...this.running.values()].filter((n) => !n.cut);
    const leaders = live.filter((n) => n.quorum.driver.status().role === 'leader');
    if (leaders.length !== 1) return undefined;
    const leader = leaders[0]!;
    const epoch = leader.quorum.driver.status().epoch;
    const agreed = live.every((n) => {
      const s = n.quorum.driver.status();
      return s.epoch === epoch && s.leaderId === leader.id;
    });
    return agreed && leader.quorum.isActiveController ? leader : undefined;
  }

  waitForLeader(timeoutMs = 10_000): Promise<FixtureNode> {
    return waitFor('a leader', () => this.leader(), timeoutMs);
  }

  async close(): Promise<void> {
    closeHeldConnections();
    for (const id of [...this.running.keys()]) await this.stop(id);
    for (const dir of this.dirs.values()) rmSync(dir, { recursive: true, force: true });
  }
}

/** One request over a fresh connection to `port`, its response decoded. */
export async function call<Req, Res>(port: number, api: Api<Req, Res>, version: number, req: Req): Promise<Res> {
  const out = await converse(port, [requestFrame(api, version, 7, req)], { frames: 1, timeoutMs: 5000 });
  return decodeAnswer(api, version, out.frames[0]);
}

/**
 * Brokers keep their connection to the controller open, and the controller ends the session of a
 * broker whose connection closes: heartbeats go over a connection left open (closeHeldConnections
 * closes them).
 */
const held: RawConn[] = [];

export async function callHeld<Req, Res>(port: number, api: Api<Req, Res>, version: number, req: Req): Promise<Res> {
  const conn = await RawConn.open(port);
  held.push(conn);
  conn.write(requestFrame(api, version, 7, req));
  const out = await conn.wait({ frames: 1, timeoutMs: 5000, quietMs: 0 });
  return decodeAnswer(api, version, out.frames[0]);
}

export function closeHeldConnections(): void {
  for (const c of held.splice(0)) c.destroy();
}

function decodeAnswer<Req, Res>(api: Api<Req, Res>, version: number, frame: Buffer | undefined): Res {
  if (frame === undefined) throw new Error(`no response to ${api.name}`);
  const r = new Reader(frame);
  readResponseHeader(r, api.key, api.isFlexible(version));
  return api.decodeResponse(version, r);
}
