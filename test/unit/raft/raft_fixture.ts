// A tiny hand-driven harness for Raft core scenario tests: a few RaftNodes, an in-memory disk per
// node that executes each Ready in the documented order, and a FIFO message pump with cut links and
// a drop filter. Deliberately minimal; the randomized simulation lives in test/sim/raft.
import assert from 'node:assert/strict';
import { RaftNode, type Mutation, type RaftConfig } from '../../../src/coordinator/raft/raft_node.js';
import type { Entry, HardState, Message, NodeId, Ready, Snapshot } from '../../../src/coordinator/raft/types.js';
import { mulberry32 as seeded } from '../../helpers/seeded_random.js';

export interface Disk {
  hardState: HardState;
  snapshot: Snapshot | null;
  entries: Entry[];
  /** Everything handed to the state machine: committed entries, and snapshots as `snapshot@end`. */
  applied: Array<Entry | string>;
  truncations: number[];
}

export interface NodeOptions {
  readonly electionTimeoutTicks?: number;
  readonly fetchTimeoutTicks?: number;
  readonly fetchWaitTicks?: number;
  readonly maxFetchBytes?: number;
  readonly maxUncommittedBytes?: number;
  readonly unsafe?: ReadonlySet<Mutation>;
  readonly restore?: { hardState?: HardState; entries?: Entry[] };
}

/** Deterministic [0,1) source, for scenario tests and properties. */
export { seeded };

export const FRESH: HardState = { epoch: 0, votedFor: -1, leaderId: -1 };

export function entry(offset: number, epoch: number, text = '', kind: Entry['kind'] = 'data'): Entry {
  return { offset, epoch, kind, data: new TextEncoder().encode(text) };
}

export function text(e: Entry | string): string {
  return typeof e === 'string' ? e : `${e.offset}@${e.epoch}:${new TextDecoder().decode(e.data)}`;
}

export class Cluster {
  readonly nodes = new Map<NodeId, RaftNode>();
  readonly disks = new Map<NodeId, Disk>();
  /** Every message delivered (after cuts and drops), for assertions on what crossed the network. */
  readonly delivered: Message[] = [];
  /** Nodes whose disk does not confirm writes: their Readies wait in `stalled` until `unstall`. */
  private readonly stalledNodes = new Set<NodeId>();
  private readonly stalled = new Map<NodeId, Ready[]>();
  private readonly cuts = new Set<string>();
  private readonly down = new Set<NodeId>();
  private queue: Message[] = [];
  drop: (m: Message) => boolean = () => false;

  constructor(
    readonly voters: readonly NodeId[],
    private readonly options: Record<NodeId, NodeOptions> = {},
    observers: readonly NodeId[] = [],
    seed = 1,
  ) {
    for (const id of [...voters, ...observers]) {
      const restore = options[id]?.restore;
      this.disks.set(id, { hardState: restore?.hardState ?? FRESH, snapshot: null, entries: [...(restore?.entries ?? [])], applied: [], truncations: [] });
      this.start(id, seed + id);
    }
  }

  node(id: NodeId): RaftNode {
    return this.nodes.get(id)!;
  }

  /** Starts (or restarts, from its disk) node `id`. */
  start(id: NodeId, seed = id): void {
    const o = this.options[id] ?? {};
    const config: RaftConfig = {
      id,
      electionTimeoutTicks: o.electionTimeoutTicks ?? 10,
      fetchTimeoutTicks: o.fetchTimeoutTicks ?? 20,
      fetchWaitTicks: o.fetchWaitTicks ?? 5,
      maxFetchBytes: o.maxFetchBytes ?? 1 << 20,
      maxUncommittedBytes: o.maxUncommittedBytes ?? 1 << 20,
      random: seeded(seed),
      ...(o.unsafe === undefined ? {} : { unsafe: o.unsafe }),
    };
    const disk = this.disks.get(id)!;
    this.down.delete(id);
    this.nodes.set(id, new RaftNode(config, { hardState: disk.hardState, snapshot: disk.snapshot, entries: disk.entries, bootstrapVoters: this.voters }));
  }

  /** The node stops: nothing more in or out, and whatever its disk had not confirmed is lost. */
  crash(id: NodeId): void {
    this.down.add(id);
    this.stalled.delete(id);
  }

  cut(a: NodeId, b: NodeId): void {
    this.cuts.add(`${a}>${b}`).add(`${b}>${a}`);
  }

  isolate(id: NodeId): void {
    for (const other of this.nodes.keys()) if (other !== id) this.cut(id, other);
  }

  heal(): void {
    this.cuts.clear();
  }

  stall(id: NodeId): void {
    this.stalledNodes.add(id);
  }

  unstall(id: NodeId): void {
    this.stalledNodes.delete(id);
    for (const r of this.stalled.get(id) ?? []) this.node(id).advance(r);
    this.stalled.delete(id);
    this.drain();
  }

  /** Runs Readies and delivers messages until nothing is left to do. */
  drain(): void {
    for (let rounds = 0; rounds < 100_000; rounds++) {
      let busy = false;
      for (const [id, node] of this.nodes) {
        if (this.down.has(id) || !node.hasReady()) continue;
        busy = true;
        this.execute(id, node.ready());
      }
      const next = this.queue.shift();
      if (next !== undefined) {
        busy = true;
        if (!this.down.has(next.to) && !this.cuts.has(`${next.from}>${next.to}`) && !this.drop(next) && this.nodes.has(next.to)) {
          this.delivered.push(next);
          this.node(next.to).step(next);
        }
      }
      if (!busy) return;
    }
    assert.fail('the cluster never went quiet');
  }

  tick(times = 1): void {
    for (let i = 0; i < times; i++) {
      for (const [id, node] of this.nodes) if (!this.down.has(id)) node.tick();
      this.drain();
    }
  }

  /** Ticks until `done` holds, failing after `limit` ticks. */
  tickUntil(done: () => boolean, limit = 2000): void {
    for (let i = 0; i < limit && !done(); i++) this.tick();
    assert.ok(done(), `condition not reached within ${limit} ticks`);
  }

  leaders(): NodeId[] {
    return [...this.nodes.entries()].filter(([id, n]) => !this.down.has(id) && n.status().role === 'leader').map(([id]) => id);
  }

  /** Ticks until exactly one live leader exists that every live voter follows in its epoch. */
  elect(limit = 2000): NodeId {
    this.tickUntil(() => {
      const [leader, ...more] = this.leaders();
      if (leader === undefined || more.length > 0) return false;
      const epoch = this.node(leader).status().epoch;
      return [...this.nodes.entries()].every(([id, n]) => this.down.has(id) || (n.status().epoch === epoch && n.status().leaderId === leader));
    }, limit);
    return this.leaders()[0]!;
  }

  /** Proposes `text` on the leader and returns its offset. */
  propose(leader: NodeId, data: string): number {
    const result = this.node(leader).propose(new TextEncoder().encode(data));
    assert.ok(result.ok, `proposal refused: ${JSON.stringify(result)}`);
    this.drain();
    return result.offset;
  }

  appliedText(id: NodeId): string[] {
    return this.disks.get(id)!.applied.map(text);
  }

  private execute(id: NodeId, r: Ready): void {
    const disk = this.disks.get(id)!;
    if (r.hardState !== null) disk.hardState = r.hardState;
    if (r.truncateTo !== null) {
      disk.truncations.push(r.truncateTo);
      disk.entries = disk.entries.filter((e) => e.offset < r.truncateTo!);
    }
    if (r.snapshot !== null) {
      disk.snapshot = r.snapshot;
      disk.entries = [];
      disk.applied.push(`snapshot@${r.snapshot.meta.id.endOffset}`);
    }
    for (const e of r.entries) {
      const last = disk.entries[disk.entries.length - 1];
      const expected = last === undefined ? (disk.snapshot?.meta.id.endOffset ?? e.offset) : last.offset + 1;
      assert.equal(e.offset, expected, `node ${id} appends ${e.offset} to a log ending at ${expected}`);
      disk.entries.push(e);
    }
    this.queue.push(...r.messages);
    disk.applied.push(...r.committed);
    if (this.stalledNodes.has(id)) this.stalled.set(id, [...(this.stalled.get(id) ?? []), r]);
    else this.nodes.get(id)!.advance(r);
  }
}
