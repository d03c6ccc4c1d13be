// A deterministic simulation of the Raft core: N RaftNodes on one thread, driven over simulated
// time by one event queue (node ticks at drifting rates, message deliveries, disk completions,
// client proposals, crashes and restarts, network changes). The harness is the nodes' driver: it
// executes each Ready as the contract in src/coordinator/raft/types.ts says, and the Checker
// asserts the invariants after every event. Voter sets follow the logs (KIP-853): the client adds
// and removes voters during the safety phase, and a node's disk can be wiped. Everything random
// comes from the seed. Tests only.
import { RaftNode, type Mutation, type RaftConfig } from '../../../src/coordinator/raft/raft_node.js';
import type { Entry, Message, NodeId, Ready, Snapshot } from '../../../src/coordinator/raft/types.js';
import { decodeVoters, encodeVoters } from '../../../src/coordinator/raft/entry_batches.js';
import { Checker, InvariantViolation, MirrorLog } from './checker.js';
import { SimDisk } from './disk.js';
import type { FaultPlan } from './faults.js';
import { SimNetwork } from './network.js';
import { SimRandom } from './random.js';

/** Node timers, in ticks (KRaft's defaults at 100 ms a tick). */
export const ELECTION_TIMEOUT_TICKS = 10;
export const FETCH_TIMEOUT_TICKS = 20;
export const FETCH_WAIT_TICKS = 5;

/** The core's timers a run gives every node, in ticks. */
export type SimTimers = Pick<RaftConfig, 'electionTimeoutTicks' | 'fetchTimeoutTicks' | 'fetchWaitTicks'>;

/**
 * CPU starvation (brokers sharing busy cores): now and then a node's event loop stalls, and nothing
 * reaches its core until it runs again (ticks, deliveries, disk completions, transport reports).
 * The first tick after a stall catches up on the ticks it missed, at most `maxCatchUpTicks`, as
 * the quorum driver's timer does.
 */
export interface Starvation {
  /** Mean ticks between a node's stalls. */
  readonly stallEvery: number;
  /** A stall lasts [0, maxStall) ticks. */
  readonly maxStall: number;
  readonly maxCatchUpTicks: number;
}

const ENCODER = new TextEncoder();

type SimEvent =
  | { readonly kind: 'tick'; readonly node: NodeId; readonly incarnation: number }
  | { readonly kind: 'deliver'; readonly message: Message }
  | { readonly kind: 'disk'; readonly node: NodeId; readonly incarnation: number }
  | { readonly kind: 'restart'; readonly node: NodeId }
  | { readonly kind: 'propose' }
  | { readonly kind: 'crash' }
  | { readonly kind: 'transfer' }
  | { readonly kind: 'membership' }
  | { readonly kind: 'network' }
  | { readonly kind: 'flap'; readonly generation: number; readonly a: NodeId; readonly b: NodeId }
  | { readonly kind: 'hunt'; readonly generation: number }
  | { readonly kind: 'unreachable'; readonly node: NodeId; readonly incarnation: number; readonly peer: NodeId }
  | { readonly kind: 'spuriousReport' };

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly event: SimEvent;
}

/** A min-heap of events by (time, insertion order): equal times run in the order scheduled. */
class EventQueue {
  private readonly heap: Scheduled[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, event: SimEvent): void {
    const h = this.heap;
    h.push({ at, seq: this.seq++, event });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i] as Scheduled, h[parent] as Scheduled)) break;
      [h[i], h[parent]] = [h[parent] as Scheduled, h[i] as Scheduled];
      i = parent;
    }
  }

  peekTime(): number {
    return this.heap[0]?.at ?? Infinity;
  }

  /** The time of the last queued event that `matches`, or -Infinity. */
  lastAt(matches: (event: SimEvent) => boolean): number {
    let last = -Infinity;
    for (const s of this.heap) if (s.at > last && matches(s.event)) last = s.at;
    return last;
  }

  pop(): Scheduled {
    const h = this.heap;
    const top = h[0] as Scheduled;
    const last = h.pop() as Scheduled;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l] as Scheduled, h[m] as Scheduled)) m = l;
        if (r < h.length && before(h[r] as Scheduled, h[m] as Scheduled)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as Scheduled, h[i] as Scheduled];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Scheduled, b: Scheduled): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function sameEntry(a: Entry, b: Entry): boolean {
  if (a.offset !== b.offset || a.epoch !== b.epoch || a.kind !== b.kind || a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

class SimNode {
  raft: RaftNode | null = null;
  incarnation = 0;
  readonly disk: SimDisk;
  readonly log = new MirrorLog();
  /** End offset of what the state machine applied (this incarnation, or loaded from a snapshot). */
  applied = 0;
  lastHighWatermark = 0;
  /** The epoch this incarnation was last seen leading, or -1. */
  ledEpoch = -1;
  /** Under starvation: the node's event loop is stalled until then. */
  busyUntil = 0;
  lastTickAt = 0;

  constructor(readonly id: NodeId, readonly tickPeriod: number, readonly random: SimRandom) {
    this.disk = new SimDisk(id);
  }
}

/** Where a leader put a proposal the client made, and in which phase. */
interface Proposal {
  readonly offset: number;
  readonly epoch: number;
  readonly liveness: boolean;
}

export interface SimOptions {
  readonly seed: number;
  readonly plan: FaultPlan;
  readonly mutation?: Mutation | undefined;
  /** Keep this many trace lines (the last events); 0 records nothing. */
  readonly traceLines?: number;
  /** Default: ELECTION_TIMEOUT_TICKS, FETCH_TIMEOUT_TICKS and FETCH_WAIT_TICKS. */
  readonly timers?: SimTimers;
  readonly starvation?: Starvation;
  /**
   * A message sent to a crashed node is refused, as a connection to a dead process's port is: its
   * sender hears that the node is unreachable one message delay later.
   */
  readonly refuseToCrashed?: boolean;
}

/** A voter change the client asks of whoever leads. */
export type VoterChange = 'add' | 'remove';

export class Simulation {
  readonly checker: Checker;
  readonly nodes: SimNode[] = [];
  readonly network: SimNetwork;
  now = 0;
  /** Whether crashes, network changes and lossy links are active (the safety phase). */
  chaos = false;
  private readonly queue = new EventQueue();
  private readonly random: SimRandom;
  private readonly bootstrapVoters: NodeId[];
  private readonly trace: string[] = [];
  private readonly traceLines: number;
  private proposing = false;
  private proposalCount = 0;
  private leaderHint: NodeId = -1;
  readonly proposals: Proposal[] = [];
  /** Bumped whenever a flapping link is replaced, so the old one's toggles stop. */
  private flapGeneration = 0;
  /** Whether the leader-hunting flapping link is down now. */
  private huntDown = false;

  constructor(readonly options: SimOptions) {
    const { seed, plan } = options;
    this.random = SimRandom.derived(seed, 1);
    this.traceLines = options.traceLines ?? 0;
    this.network = new SimNetwork(SimRandom.derived(seed, 2), { ...plan });
    const total = plan.voters + plan.observers;
    this.bootstrapVoters = Array.from({ length: plan.voters }, (_, i) => i + 1);
    this.checker = new Checker(this.bootstrapVoters);
    for (let i = 1; i <= total; i++) {
      const period = 1 + this.random.between(-plan.clockDrift, plan.clockDrift);
      this.nodes.push(new SimNode(i, period, SimRandom.derived(seed, 100 + i)));
    }
  }

  node(id: NodeId): SimNode {
    const n = this.nodes[id - 1];
    if (n === undefined) throw new RangeError(`no node ${id}`);
    return n;
  }

  /** The voter set in force at the end of the committed log. */
  get voterIds(): NodeId[] {
    return [...this.checker.committedVoters];
  }

  /** Every voter set some node's log holds at its end, and the committed one: the sets that may decide. */
  voterSetsInForce(): (readonly NodeId[])[] {
    return [this.checker.committedVoters, ...this.nodes.map((n) => n.log.voters)];
  }

  /** Start every node from an empty disk, its clock at a random phase. */
  start(): void {
    for (const n of this.nodes) this.boot(n);
  }

  /** The last trace lines, oldest first. */
  traceTail(): string[] {
    return [...this.trace];
  }

  // ---- scenario controls ----

  runFor(ticks: number): void {
    this.runUntil(() => false, ticks);
  }

  /**
   * Run until `done()` holds after an event, or `ticks` pass; whether it held. With `every`, the
   * condition is only evaluated once per that many ticks (for costly cluster-wide conditions).
   */
  runUntil(done: () => boolean, ticks: number, every = 0): boolean {
    const end = this.now + ticks;
    let nextCheck = this.now;
    while (this.queue.peekTime() <= end) {
      const { at, event } = this.queue.pop();
      this.now = at;
      this.handle(event);
      if (at >= nextCheck && done()) return true;
      if (every > 0 && at >= nextCheck) nextCheck = at + every;
    }
    this.now = end;
    return false;
  }

  /**
   * A crash that also loses the node's whole disk: log, snapshot and election state (Kafka's
   * killAndDeletePersistentState). It restarts as a fresh node knowing only the bootstrap voters.
   */
  wipe(id: NodeId): void {
    this.crash(id);
    this.note(`wipe ${id}`);
    this.node(id).disk.wipe();
  }

  /** `resets`: up peers hear of it as the drawn transport reports would say (else nothing tells them: a silent crash). */
  crash(id: NodeId, resets = true): void {
    const n = this.node(id);
    if (n.raft === null) return;
    const torn = this.random.chance(this.options.plan.tornRate);
    this.note(`crash ${id}${torn && n.disk.pending.length > 0 ? ` (torn, ${n.disk.pending.length} writes in flight)` : ''}`);
    n.disk.crash(torn, this.random);
    n.raft = null;
    n.incarnation++;
    if (resets) this.reportConnectionResets(id);
  }

  restart(id: NodeId): void {
    const n = this.node(id);
    if (n.raft !== null) return;
    this.note(`restart ${id}`);
    this.boot(n);
  }

  split(sideA: readonly NodeId[], sideB: readonly NodeId[]): void {
    this.note(`split [${sideA.join(',')}] | [${sideB.join(',')}]`);
    this.network.split(sideA, sideB);
  }

  heal(): void {
    this.note('heal');
    this.flapGeneration++;
    this.network.heal();
  }

  up(id: NodeId): boolean {
    return this.node(id).raft !== null;
  }

  /**
   * A leader that a majority of the voters in force in its log, and every up voter of them
   * connected to it, follow in its epoch, or null.
   */
  stableLeader(): NodeId | null {
    for (const n of this.nodes) {
      const s = n.raft?.status();
      if (s === undefined || s.role !== 'leader') continue;
      const voters = s.voters.map((id) => this.node(id));
      let following = 0;
      let stray = false;
      for (const v of voters) {
        if (v === n) {
          following++;
          continue;
        }
        if (v.raft === null || !this.network.connected(v.id, n.id) || !this.network.connected(n.id, v.id)) continue;
        const vs = v.raft.status();
        if (vs.epoch === s.epoch && vs.leaderId === n.id) following++;
        else stray = true;
      }
      if (!stray && following > voters.length / 2) return n.id;
    }
    return null;
  }

  /** Whether every up node holds the committed log, knows it is committed and applied it. */
  converged(): boolean {
    const end = this.checker.committedEnd;
    if (end === 0) return false;
    const chain = this.checker.committedChainAt(end - 1);
    return this.nodes.every((n) => n.raft === null || (n.lastHighWatermark >= end && n.applied >= end && n.log.chainAt(end - 1) === chain));
  }

  /** Grows whenever the commit moves or any up voter's durable log grows. */
  replicationMark(): number {
    let mark = this.checker.committedEnd;
    for (const id of this.checker.committedVoters) {
      const n = this.node(id);
      if (n.raft !== null) mark += n.disk.endOffset;
    }
    return mark;
  }

  /** The highest epoch any up node is in. */
  maxEpoch(): number {
    let max = 0;
    for (const n of this.nodes) if (n.raft !== null) max = Math.max(max, n.raft.status().epoch);
    return max;
  }

  startProposing(): void {
    if (this.proposing) return;
    this.proposing = true;
    this.queue.push(this.now + this.exponential(this.options.plan.proposeEvery), { kind: 'propose' });
  }

  stopProposing(): void {
    this.proposing = false;
  }

  startChaos(): void {
    this.chaos = true;
    const plan = this.options.plan;
    this.queue.push(this.now + this.exponential(plan.crashEvery), { kind: 'crash' });
    this.queue.push(this.now + this.exponential(plan.networkChangeEvery), { kind: 'network' });
    this.queue.push(this.now + this.exponential(plan.transferEvery), { kind: 'transfer' });
    if (plan.membershipEvery > 0) this.queue.push(this.now + this.exponential(plan.membershipEvery), { kind: 'membership' });
    this.queue.push(this.now + this.exponential(plan.spuriousReportEvery), { kind: 'spuriousReport' });
  }

  /** The node that leads the highest epoch anyone leads, or null. */
  leader(): SimNode | null {
    let best: SimNode | null = null;
    for (const n of this.nodes) {
      const s = n.raft?.status();
      if (s?.role === 'leader' && (best === null || s.epoch > (best.raft as RaftNode).status().epoch)) best = n;
    }
    return best;
  }

  /** Asks the current leader to add or remove voter `id`; whether it accepted (it refuses while a change is uncommitted). */
  changeVoters(change: VoterChange, id: NodeId): boolean {
    const leader = this.leader();
    if (leader === null) return false;
    const raft = leader.raft as RaftNode;
    const result = change === 'add' ? raft.addVoter(id) : raft.removeVoter(id);
    if (result.ok) this.note(`node ${leader.id} accepts ${change} voter ${id} at ${result.offset} epoch ${result.epoch}`);
    this.drain(leader);
    return result.ok;
  }

  /** End the safety phase: no more faults, lossless links, every link healed. */
  stopChaos(): void {
    this.chaos = false;
    this.network.faults = { ...this.network.faults, dropRate: 0, duplicateRate: 0, spikeRate: 0 };
    this.heal();
  }

  /** Node `node` hears from its transport, `afterTicks` from now, that `peer` is unreachable (whether or not it is). */
  reportUnreachable(node: NodeId, peer: NodeId, afterTicks = 0): void {
    const n = this.node(node);
    this.queue.push(this.now + afterTicks, { kind: 'unreachable', node, incarnation: n.incarnation, peer });
  }

  /**
   * When the last message `from` sent `to` that is still in flight arrives (now if none): the
   * reset of their connection reaches `to` only after it, as on TCP.
   */
  inFlightUntil(from: NodeId, to: NodeId): number {
    return Math.max(this.now, this.queue.lastAt((e) => e.kind === 'deliver' && e.message.from === from && e.message.to === to));
  }

  /** Start the liveness phase's flapping link, which keeps cutting the leader off one follower. */
  startLeaderHuntingFlap(): void {
    this.huntDown = false;
    this.queue.push(this.now + FETCH_TIMEOUT_TICKS / 4, { kind: 'hunt', generation: ++this.flapGeneration });
  }

  /**
   * Proposals of the liveness phase not yet decided: neither committed nor gone from every log
   * (an entry no node holds any more can never be committed; one some node still holds might be).
   */
  undecidedLivenessProposals(): number {
    const end = this.checker.committedEnd;
    return this.proposals.filter((p) => p.liveness && p.offset >= end && this.someNodeHolds(p.offset, p.epoch)).length;
  }

  private someNodeHolds(offset: number, epoch: number): boolean {
    return this.nodes.some((n) => (n.raft === null ? n.disk.entryAt(offset) : n.log.entryAt(offset))?.epoch === epoch);
  }

  // ---- events ----

  private handle(event: SimEvent): void {
    const target = this.nodeOf(event);
    if (target !== null && this.now < target.busyUntil) {
      this.queue.push(target.busyUntil, event);
      return;
    }
    switch (event.kind) {
      case 'tick': {
        const n = this.node(event.node);
        if (n.raft === null || n.incarnation !== event.incarnation) return;
        const ticks = this.ticksDue(n);
        for (let i = 0; i < ticks; i++) n.raft.tick();
        this.drain(n);
        this.maybeStall(n);
        this.queue.push(this.now + n.tickPeriod, event);
        return;
      }
      case 'deliver': {
        const m = event.message;
        const n = this.node(m.to);
        if (!this.network.connected(m.from, m.to)) return;
        if (n.raft === null) {
          if (this.options.refuseToCrashed === true) this.reportUnreachable(m.from, m.to, this.random.between(this.network.faults.minDelay, this.network.faults.maxDelay));
          return;
        }
        if (this.traceLines > 0) this.note(`deliver ${describe(m)}`);
        n.raft.step(m);
        this.drain(n);
        return;
      }
      case 'disk': {
        const n = this.node(event.node);
        if (n.raft === null || n.incarnation !== event.incarnation) return;
        const r = n.disk.completeHead();
        if (this.traceLines > 0 && r.entries.length > 0) this.note(`node ${n.id} durable to ${n.disk.endOffset}`);
        n.raft.advance(r);
        this.drain(n);
        return;
      }
      case 'restart':
        this.restart(event.node);
        return;
      case 'propose':
        if (!this.proposing) return;
        this.propose();
        this.queue.push(this.now + this.exponential(this.options.plan.proposeEvery), event);
        return;
      case 'crash':
        if (!this.chaos) return;
        this.randomCrash();
        this.queue.push(this.now + this.exponential(this.options.plan.crashEvery), event);
        return;
      case 'membership':
        if (!this.chaos) return;
        this.randomVoterChange();
        this.queue.push(this.now + this.exponential(this.options.plan.membershipEvery), event);
        return;
      case 'transfer':
        if (!this.chaos) return;
        this.randomTransfer();
        this.queue.push(this.now + this.exponential(this.options.plan.transferEvery), event);
        return;
      case 'network':
        if (!this.chaos) return;
        this.randomNetworkChange();
        this.queue.push(this.now + this.exponential(this.options.plan.networkChangeEvery), event);
        return;
      case 'flap':
        if (event.generation !== this.flapGeneration) return;
        this.flapLink(event.a, event.b, event.generation);
        return;
      case 'hunt':
        if (event.generation !== this.flapGeneration) return;
        this.hunt(event.generation);
        return;
      case 'unreachable': {
        const n = this.node(event.node);
        if (n.raft === null || n.incarnation !== event.incarnation) return;
        this.note(`node ${n.id} hears ${event.peer} is unreachable`);
        n.raft.reportUnreachable(event.peer);
        this.drain(n);
        return;
      }
      case 'spuriousReport':
        if (!this.chaos) return;
        this.randomSpuriousReport();
        this.queue.push(this.now + this.exponential(this.options.plan.spuriousReportEvery), event);
        return;
    }
  }

  /** The node an event runs on (whose stall holds it back), or null for the harness's own events. */
  private nodeOf(event: SimEvent): SimNode | null {
    switch (event.kind) {
      case 'tick':
      case 'disk':
      case 'unreachable':
        return this.node(event.node);
      case 'deliver':
        return this.node(event.message.to);
      default:
        return null;
    }
  }

  /** One tick, or after a stall the ticks missed since the last one (up to the driver's catch-up bound). */
  private ticksDue(n: SimNode): number {
    const starvation = this.options.starvation;
    const late = this.now - n.lastTickAt;
    n.lastTickAt = this.now;
    if (starvation === undefined) return 1;
    return Math.min(starvation.maxCatchUpTicks, Math.max(1, Math.floor(late / n.tickPeriod + 1e-9)));
  }

  private maybeStall(n: SimNode): void {
    const starvation = this.options.starvation;
    if (starvation === undefined || !this.random.chance(1 / starvation.stallEvery)) return;
    n.busyUntil = this.now + this.random.between(0, starvation.maxStall);
    this.note(`node ${n.id} stalls until t=${n.busyUntil.toFixed(2)}`);
  }

  private boot(n: SimNode): void {
    const plan = this.options.plan;
    const unsafe = this.options.mutation === undefined ? undefined : new Set<Mutation>([this.options.mutation]);
    const timers = this.options.timers ?? { electionTimeoutTicks: ELECTION_TIMEOUT_TICKS, fetchTimeoutTicks: FETCH_TIMEOUT_TICKS, fetchWaitTicks: FETCH_WAIT_TICKS };
    const config: RaftConfig = {
      id: n.id,
      ...timers,
      maxFetchBytes: plan.maxFetchBytes,
      maxUncommittedBytes: plan.maxUncommittedBytes,
      random: () => n.random.float(),
      ...(unsafe === undefined ? {} : { unsafe }),
    };
    // The mirror of the core's log restarts from what the disk kept.
    const snap = n.disk.snapshot;
    const start = snap?.meta.id.endOffset ?? 0;
    n.log.reset(start, start === 0 ? 0 : this.snapshotChain(n.id, start, snap?.meta.id.epoch ?? 0), snap ? decodeVoters(snap.meta.votersRecord) : this.bootstrapVoters);
    for (const e of n.disk.entries) this.checker.appended(n.id, e, n.log);
    n.applied = start;
    n.lastHighWatermark = 0;
    n.ledEpoch = -1;
    n.busyUntil = 0;
    n.raft = new RaftNode(config, n.disk.restore(this.bootstrapVoters));
    const firstTick = this.now + this.random.between(0, n.tickPeriod);
    n.lastTickAt = firstTick - n.tickPeriod;
    this.queue.push(firstTick, { kind: 'tick', node: n.id, incarnation: n.incarnation });
    this.drain(n);
  }

  /** Execute every Ready the node has, in the contract's order, checking as it goes. */
  private drain(n: SimNode): void {
    const raft = n.raft;
    if (raft === null) return;
    if (!raft.hasReady()) {
      this.observe(n);
      return;
    }
    while (raft.hasReady()) {
      const r = raft.ready();
      this.persistAndQueue(n, r);
      for (const m of r.messages) {
        this.checker.sent(n.id, m, n.disk.hardState);
        for (const delay of this.network.fate(m)) this.queue.push(this.now + delay, { kind: 'deliver', message: m });
      }
      // The leader's commit is recorded before anything applies it.
      this.observe(n);
      if (r.committed.length > 0) {
        const hw = n.lastHighWatermark;
        for (const e of r.committed) {
          this.checker.applied(n.id, e, n.applied, n.log, n.disk.entryAt(e.offset), hw);
          const durable = n.disk.entryAt(e.offset);
          if (durable !== undefined && !sameEntry(durable, e)) {
            throw new InvariantViolation('applyDurable', `node ${n.id} applied offset ${e.offset}, which differs from its durable entry`);
          }
          n.applied = e.offset + 1;
        }
        this.maybeCompact(n, raft);
      }
    }
  }

  /**
   * The state machine snapshots what it applied and the core drops the log below it. The driver
   * persists the snapshot itself (synchronously, before compacting), so it builds the metadata the
   * core's log would: the epoch of the last entry and the voters in force there.
   */
  private maybeCompact(n: SimNode, raft: RaftNode): void {
    const every = this.options.plan.compactEvery;
    if (every === 0 || n.applied - n.disk.startOffset < every) return;
    const end = n.applied;
    const last = n.log.entryAt(end - 1);
    if (last === undefined) return;
    const chain = n.log.chainAt(end - 1) as number;
    const data = ENCODER.encode(`state to ${end}: ${chain}`);
    const snapshot: Snapshot = { meta: { id: { endOffset: end, epoch: last.epoch }, votersRecord: this.votersRecordAt(n, end), size: data.byteLength }, data };
    n.disk.installLocalSnapshot(snapshot);
    raft.compact(end, data);
    if (this.traceLines > 0) this.note(`node ${n.id} compacts to ${end}`);
  }

  /** The voters record in force below `offset` in the node's log: the last voters entry's, else the snapshot's or the bootstrap set's. */
  private votersRecordAt(n: SimNode, offset: number): Uint8Array {
    for (let o = offset - 1; o >= n.log.start; o--) {
      const e = n.log.entryAt(o);
      if (e?.kind === 'voters') return e.data;
    }
    return n.disk.snapshot?.meta.votersRecord ?? encodeVoters(this.bootstrapVoters);
  }

  private persistAndQueue(n: SimNode, r: Ready): void {
    if (r.hardState !== null) {
      this.checker.hardStatePersisted(n.id, n.disk.hardState, r.hardState);
      n.disk.hardState = r.hardState;
      if (this.traceLines > 0) this.note(`node ${n.id} persists epoch ${r.hardState.epoch} voted ${r.hardState.votedFor} leader ${r.hardState.leaderId}`);
    }
    if (r.truncateTo !== null) {
      if (r.truncateTo < n.applied) {
        throw new InvariantViolation('stateMachineSafety', `node ${n.id} truncates to ${r.truncateTo} below what it applied (${n.applied})`);
      }
      n.log.truncate(r.truncateTo);
      if (this.traceLines > 0) this.note(`node ${n.id} truncates to ${r.truncateTo}`);
    }
    if (r.snapshot !== null) {
      const id = r.snapshot.meta.id;
      if (id.endOffset < n.applied) {
        throw new InvariantViolation('stateMachineSafety', `node ${n.id} installs a snapshot ending at ${id.endOffset} below what it applied (${n.applied})`);
      }
      n.log.reset(id.endOffset, this.snapshotChain(n.id, id.endOffset, id.epoch), decodeVoters(r.snapshot.meta.votersRecord));
      n.applied = id.endOffset;
      if (this.traceLines > 0) this.note(`node ${n.id} installs snapshot to ${id.endOffset}`);
    }
    for (const e of r.entries) this.checker.appended(n.id, e, n.log);
    const hasWrites = r.hardState !== null || r.truncateTo !== null || r.snapshot !== null || r.entries.length > 0;
    const doneAt = n.disk.enqueue(r, this.now + (hasWrites ? this.random.between(0, this.options.plan.maxDiskDelay) : 0));
    this.queue.push(doneAt, { kind: 'disk', node: n.id, incarnation: n.incarnation });
  }

  /** The chain value at a snapshot's end: a snapshot holds only committed entries. */
  private snapshotChain(node: NodeId, endOffset: number, epoch: number): number {
    const chain = this.checker.committedChainAt(endOffset - 1);
    if (chain === undefined || this.checker.knownChain(endOffset - 1, epoch) !== chain) {
      throw new InvariantViolation('stateMachineSafety', `node ${node} holds a snapshot to ${endOffset} (epoch ${epoch}) that is not the committed log`);
    }
    return chain;
  }

  private observe(n: SimNode): void {
    const raft = n.raft;
    if (raft === null) return;
    const s = raft.status();
    const previousHighWatermark = n.lastHighWatermark;
    if (s.highWatermark < n.lastHighWatermark) {
      throw new InvariantViolation('monotonicCommit', `node ${n.id} high watermark went from ${n.lastHighWatermark} to ${s.highWatermark}`);
    }
    if (this.traceLines > 0 && s.highWatermark !== n.lastHighWatermark) this.note(`node ${n.id} high watermark ${s.highWatermark}`);
    n.lastHighWatermark = s.highWatermark;
    if (s.epoch < n.disk.hardState.epoch) {
      throw new InvariantViolation('monotonicEpoch', `node ${n.id} is in epoch ${s.epoch} with ${n.disk.hardState.epoch} persisted`);
    }
    // A leader that resigns in the step that moved its high watermark (a transfer completing, or
    // its own removal committing) still committed as leader of its epoch.
    const resignedOnCommit = n.ledEpoch === s.epoch && s.highWatermark > previousHighWatermark && s.role !== 'follower';
    if (s.role === 'leader' || resignedOnCommit) {
      n.ledEpoch = s.epoch;
      this.checker.leaderObserved(n.id, s.epoch, s.highWatermark, n.log, (voter, end) => this.durablyHolds(voter, end, n.log));
    }
  }

  /** Whether `voter`'s disk holds the log up to `end` as `log` does (a snapshot holds only committed entries). */
  private durablyHolds(voter: NodeId, end: number, log: MirrorLog): boolean {
    const disk = this.node(voter).disk;
    if (disk.startOffset >= end) return true;
    return disk.entryAt(end - 1)?.epoch === log.entryAt(end - 1)?.epoch;
  }

  // ---- the client and the faults ----

  private propose(): void {
    const up = this.nodes.filter((n) => n.raft !== null);
    if (up.length === 0) return;
    const hinted = this.leaderHint > 0 ? this.node(this.leaderHint) : undefined;
    const target = hinted?.raft != null ? hinted : this.random.pick(up);
    const raft = target.raft as RaftNode;
    const data = ENCODER.encode(`p${this.proposalCount++}`);
    const result = raft.propose(data);
    if (!result.ok) {
      this.leaderHint = result.leaderId;
      return;
    }
    this.leaderHint = target.id;
    this.proposals.push({ offset: result.offset, epoch: result.epoch, liveness: !this.chaos });
    if (this.traceLines > 0) this.note(`node ${target.id} accepts proposal ${this.proposalCount - 1} at ${result.offset} epoch ${result.epoch}`);
    this.drain(target);
  }

  /**
   * A crashed process's connections reset: each up node connected to it hears of it a moment later,
   * as its transport would (most of the time: a node with no connection open hears nothing).
   */
  private reportConnectionResets(crashed: NodeId): void {
    for (const n of this.nodes) {
      if (n.raft === null || n.id === crashed || !this.network.connected(crashed, n.id) || !this.random.chance(0.8)) continue;
      this.queue.push(this.now + this.random.between(0, 0.5), { kind: 'unreachable', node: n.id, incarnation: n.incarnation, peer: crashed });
    }
  }

  /** One up node hears that a peer is unreachable while it is not: usually its leader, else anyone. */
  private randomSpuriousReport(): void {
    const up = this.nodes.filter((n) => n.raft !== null);
    if (up.length === 0) return;
    const n = this.random.pick(up);
    const leader = (n.raft as RaftNode).status().leaderId;
    this.reportUnreachable(n.id, leader >= 0 && this.random.chance(0.7) ? leader : this.random.pick(this.nodes).id);
  }

  private randomCrash(): void {
    const up = this.nodes.filter((n) => n.raft !== null);
    if (up.length === 0) return;
    const victim = this.random.pick(up);
    this.crash(victim.id);
    this.queue.push(this.now + this.random.between(1, this.options.plan.maxDowntime), { kind: 'restart', node: victim.id });
  }

  /** Any node that thinks it leads is asked to hand leadership to a random other voter. */
  private randomTransfer(): void {
    const leaders = this.nodes.filter((n) => n.raft !== null && n.raft.status().role === 'leader');
    if (leaders.length === 0) return;
    const leader = this.random.pick(leaders);
    const raft = leader.raft as RaftNode;
    const others = raft.status().voters.filter((id) => id !== leader.id);
    if (others.length === 0) return;
    const to = this.random.pick(others);
    if (raft.transferLeadership(to)) this.note(`node ${leader.id} transfers leadership to ${to}`);
    this.drain(leader);
  }

  /**
   * The operator adds a non-voter or removes a voter (the leader too) through whoever leads, one
   * change at a time as far as it knows: the core must refuse a second while one is uncommitted.
   * With two voters or fewer it adds when it can; it removes down to the core's floor of one.
   */
  private randomVoterChange(): void {
    const leader = this.leader();
    if (leader === null) return;
    const voters = (leader.raft as RaftNode).status().voters;
    const others = this.nodes.filter((n) => !voters.includes(n.id)).map((n) => n.id);
    const add = others.length > 0 && (voters.length <= 2 || this.random.chance(0.5));
    this.changeVoters(add ? 'add' : 'remove', this.random.pick(add ? others : [...voters]));
  }

  private randomNetworkChange(): void {
    const ids = this.nodes.map((n) => n.id);
    const choice = this.random.float();
    this.heal();
    if (choice < 0.25) return;
    if (choice < 0.5) {
      const sideA = this.random.sample(ids, this.random.int(1, Math.floor(ids.length / 2)));
      this.split(sideA, ids.filter((id) => !sideA.includes(id)));
    } else if (choice < 0.65) {
      const [a, b] = this.random.sample(ids, 2) as [NodeId, NodeId];
      this.note(`cut ${a}>${b} one way`);
      this.network.cutLink(a, b, false);
    } else if (choice < 0.8) {
      const victim = this.random.pick(ids);
      this.split([victim], ids.filter((id) => id !== victim));
    } else {
      const [a, b] = this.random.sample(ids, 2) as [NodeId, NodeId];
      this.note(`flapping link ${a}-${b}`);
      this.flapLink(a, b, ++this.flapGeneration);
    }
  }

  /** A link that goes down and up every 1-10 ticks until the next network change. */
  private flapLink(a: NodeId, b: NodeId, generation: number): void {
    if (this.network.connected(a, b)) this.network.cutLink(a, b, true);
    else this.network.restoreLink(a, b);
    this.queue.push(this.now + this.random.between(1, 10), { kind: 'flap', generation, a, b });
  }

  /**
   * One toggle of the liveness phase's flapping link, which hunts the leader: each time it goes
   * down it cuts the current leader off a random follower for longer than the fetch timeout, then
   * comes back briefly. Pre-vote and check-quorum must keep the epoch steady through it.
   */
  private hunt(generation: number): void {
    if (this.huntDown) {
      this.network.heal();
      this.huntDown = false;
      this.queue.push(this.now + FETCH_TIMEOUT_TICKS / 4, { kind: 'hunt', generation });
      return;
    }
    const epoch = this.maxEpoch();
    const leader = this.nodes.find((n) => n.raft !== null && n.raft.status().role === 'leader' && n.raft.status().epoch === epoch);
    const voters = leader?.raft?.status().voters ?? [];
    const followers = this.nodes.filter((n) => voters.includes(n.id) && n !== leader && n.raft !== null);
    // Cutting one follower leaves the leader a majority only with three voters or more.
    if (leader !== undefined && followers.length > 0 && voters.length >= 3) {
      const victim = this.random.pick(followers);
      this.note(`flap cuts leader ${leader.id} off ${victim.id}`);
      this.network.cutLink(leader.id, victim.id, true);
      this.huntDown = true;
    }
    this.queue.push(this.now + FETCH_TIMEOUT_TICKS * 1.5, { kind: 'hunt', generation });
  }

  private exponential(mean: number): number {
    return -mean * Math.log(1 - this.random.float());
  }

  private note(line: string): void {
    if (this.traceLines === 0) return;
    this.trace.push(`t=${this.now.toFixed(2)} ${line}`);
    if (this.trace.length > this.traceLines) this.trace.shift();
  }
}

function describe(m: Message): string {
  const head = `${m.type} ${m.from}->${m.to} e${m.epoch}`;
  switch (m.type) {
    case 'vote':
      return `${head}${m.preVote ? ' pre' : ''} last=(${m.lastOffset},e${m.lastEpoch})`;
    case 'voteResponse':
      return `${head}${m.preVote ? ' pre' : ''} ${m.granted ? 'granted' : 'refused'}`;
    case 'fetch':
      return `${head} at=${m.fetchOffset} lastEpoch=${m.lastFetchedEpoch}`;
    case 'fetchResponse':
      return `${head} err=${m.errorCode} entries=${m.entries.length}${m.entries.length > 0 ? `@${m.entries[0]?.offset}` : ''} hw=${m.highWatermark}${m.divergingEpoch === null ? '' : ` diverge=(${m.divergingEpoch.endOffset},e${m.divergingEpoch.epoch})`}${m.snapshotId === null ? '' : ` snapshot=${m.snapshotId.endOffset}`}`;
    default:
      return head;
  }
}
