// The metadata quorum's driver (main thread): runs one pure RaftNode over its durable storage
// (quorum_storage.ts) and its TCP transport (net/quorum_transport.ts). It ticks the core every
// `tickMs`, feeds it what the transport delivers, and executes each Ready in the order types.ts
// prescribes: the election state durable before any message leaves, then truncation or snapshot
// install, then the entries appended and fdatasync'd, then advance(), then the committed entries
// applied to the QuorumStateMachine. One Ready at a time: ready() is never called again before
// the previous one is advanced. It snapshots the state machine every `snapshotEveryEntries`
// entries or `snapshotEveryBytes` bytes applied (compact), resolves proposals once their entry
// commits, and tells listeners when the leader or epoch changes.
// A storage failure stops the node for good (KRaft halts on a failed flush): nothing more is sent
// or applied and `onFatal` decides the process's fate.
import type { Logger } from 'pino';
import { RaftNode, type RaftStatus } from '../../coordinator/raft/raft_node.js';
import type { Entry, Message, NodeId, ProposeResult, Ready, Role, Snapshot } from '../../coordinator/raft/types.js';
import type { QuorumRequest, QuorumResponse } from '../../coordinator/raft/quorum_wire.js';
import { decodeVoterEndpoints, type VoterEndpoints } from '../../coordinator/raft/entry_batches.js';
import type { VoterEndpoint } from '../../protocol/kraft_control.js';
import type { IoBackend } from '../../log/io_backend.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { openQuorumStorage, type QuorumStorage } from './quorum_storage.js';

/** What the committed log feeds: the metadata image (and, on the leader, the controller). */
export interface QuorumStateMachine {
  /**
   * Replaces the state with a snapshot's: at start-up with the durable one, and when a follower
   * installs one from the leader. Entries applied next continue from its end offset.
   */
  restore(snapshot: Snapshot): void;
  /** Committed entries of every kind in offset order (only `data` entries carry state). */
  apply(entries: readonly Entry[]): void;
  /** The state after every entry applied so far, as bytes (Snapshot.data). */
  snapshot(): Uint8Array;
}

/** What the driver needs of the transport (net/quorum_transport.ts's QuorumTransport). */
export interface QuorumLink {
  /** A request to a peer, or the answer to a pending inbound request. */
  send(m: Message): void;
  /** The inbound hook: a decoded quorum request from the controller listener, answered by the core. */
  receive(req: QuorumRequest): Promise<QuorumResponse>;
  /** Voters' endpoints a `voters` entry carries (added by AddRaftVoter): peers to reach from now on. */
  learnPeers(endpoints: VoterEndpoints): void;
  close(): void;
}

/** What the driver hands the transport it is built with. */
export interface QuorumTransportHooks {
  /** A message from the network for the core. */
  readonly deliver: (m: Message) => void;
  /** Whether `id` is a voter as the core sees it now. */
  readonly isVoter: (id: NodeId) => boolean;
  /** The connection to `id` failed (reset, refused, timed out); `refused`: nothing listens at its address. */
  readonly unreachable: (id: NodeId, refused: boolean) => void;
}

/** A proposal or voter change the quorum refused or lost; `leaderId` is the leader hint (-1: unknown). */
export class QuorumProposalError extends KafkaError {
  constructor(
    code: ErrorCode,
    readonly leaderId: NodeId,
    message?: string,
  ) {
    super(code, message);
    this.name = 'QuorumProposalError';
  }
}

/** An entry the leader appended: where, and a promise settled when it commits or is lost. */
export interface Proposal {
  readonly offset: number;
  readonly committed: Promise<number>;
}

export interface LeaderChange {
  readonly epoch: number;
  /** -1 while no leader is known. */
  readonly leaderId: NodeId;
  readonly role: Role;
}

export interface QuorumDriverOptions {
  readonly id: NodeId;
  /** The metadata log directory (quorum-state, snapshots, __cluster_metadata-0). */
  readonly dir: string;
  /** Voters when neither snapshot nor log names them (the static `--controller-voters` set). */
  readonly bootstrapVoters: readonly NodeId[];
  readonly stateMachine: QuorumStateMachine;
  /** The metadata log's write-and-fdatasync path (the native io_uring backend when loaded); default libuv's pool. */
  readonly io?: IoBackend;
  /** Built by the caller around the hooks the driver supplies: `deliver`, `isVoter` and `unreachable`. */
  readonly transport: (hooks: QuorumTransportHooks) => QuorumLink;
  readonly log: Logger;
  /** A storage failure: the node has stopped; the process should exit (code 1). */
  readonly onFatal: (err: unknown) => void;
  /** A peer refused a connection (its process is gone), with the wall clock. */
  readonly onPeerRefused?: (id: NodeId, nowMs: number) => void;
  /** Called on every tick with the wall clock (the controller's session expiry runs on it). */
  readonly onTick?: (nowMs: number) => void;
  /**
   * The earliest wall-clock ms at which onTick has work (Infinity: none until something changes).
   * Without it a lone voter's leader keeps its 100 ms timer whenever onTick is given.
   */
  readonly nextTimedWork?: () => number;
  readonly tickMs?: number;
  readonly electionTimeoutTicks?: number;
  readonly fetchTimeoutTicks?: number;
  readonly fetchWaitTicks?: number;
  readonly maxFetchBytes?: number;
  readonly maxUncommittedBytes?: number;
  readonly snapshotEveryEntries?: number;
  readonly snapshotEveryBytes?: number;
  /** Bound on proposals awaiting commit; past it propose() is refused with THROTTLING_QUOTA_EXCEEDED. */
  readonly maxPendingProposals?: number;
  readonly random?: () => number;
}

/** KRaft's defaults at 10 ms a tick: election timeout 1 s, fetch timeout 2 s, fetch wait 500 ms. */
export const QUORUM_DEFAULTS = {
  tickMs: 10,
  electionTimeoutTicks: 100,
  fetchTimeoutTicks: 200,
  fetchWaitTicks: 50,
  maxFetchBytes: 8 << 20,
  maxUncommittedBytes: 32 << 20,
  snapshotEveryEntries: 10_000,
  snapshotEveryBytes: 20 << 20,
  maxPendingProposals: 10_000,
} as const;

/**
 * The timer's period while this node is the leader and only voter: nothing then waits on a tick
 * (its appends commit as they are written), and each wake-up of an idle thread costs ~100 us of CPU
 * on a busy VM. onTimer catches up the ticks due, so Raft time still advances at tickMs.
 */
const SOLO_TIMER_MS = 100;
/**
 * A lone leader that no other replica has fetched from this epoch (so no fetch is parked on it)
 * and with no Ready to run has nothing for Raft time to do: it sleeps until the state machine's
 * next timed work (a broker session running out, the leader balance check), at least
 * SOLO_TIMER_MS and at most this. At 100 ms this timer was 10 of an idle single node's ~50
 * wake-ups a second. Anything that can bring work sooner re-arms it (pump, timedWorkChanged).
 */
const SOLO_IDLE_MAX_MS = 5_000;
/** A timer that fires late by many ticks catches up by at most this many (a stalled loop does not storm the core). */
const MAX_CATCH_UP_TICKS = 20;
/** How long stop() gives a leader's hand-off to a caught-up voter before closing anyway. */
const RESIGN_WAIT_MS = 500;

interface PendingProposal {
  readonly epoch: number;
  /** performance.now() when proposed. */
  readonly proposedAt: number;
  readonly resolve: (offset: number) => void;
  readonly reject: (err: Error) => void;
}

export class QuorumDriver {
  private readonly node: RaftNode;
  private readonly storage: QuorumStorage;
  private readonly transport: QuorumLink;
  private readonly sm: QuorumStateMachine;
  private readonly tickMs: number;
  private readonly electionTimeoutTicks: number;
  private timer: NodeJS.Timeout;
  /** The period the timer was armed with, and when it is due (Date.now() ms). */
  private armedMs = 0;
  private timerDueAt = 0;
  /** The longest period armed since the core was last given ticks: how far behind Raft time may rightly be. */
  private sleptMs = 0;
  private lastTickAt: number;
  /** A Ready is being executed; the next waits for its advance(). */
  private busy = false;
  private stopped = false;
  private readonly pending = new Map<number, PendingProposal>();
  private readonly maxPending: number;
  private readonly listeners: ((c: LeaderChange) => void)[] = [];
  private readonly commitListeners: ((latencyMs: number) => void)[] = [];
  private last: LeaderChange;
  private readonly snapshotEveryEntries: number;
  private readonly snapshotEveryBytes: number;
  private appliedOffset: number;
  private entriesSinceSnapshot = 0;
  private bytesSinceSnapshot = 0;
  /** Ticks given to the core so far: its clock, which tickToMs turns into wall-clock times. */
  private ticks = 0;

  constructor(private readonly opts: QuorumDriverOptions) {
    this.tickMs = opts.tickMs ?? QUORUM_DEFAULTS.tickMs;
    this.electionTimeoutTicks = opts.electionTimeoutTicks ?? QUORUM_DEFAULTS.electionTimeoutTicks;
    this.maxPending = opts.maxPendingProposals ?? QUORUM_DEFAULTS.maxPendingProposals;
    this.snapshotEveryEntries = opts.snapshotEveryEntries ?? QUORUM_DEFAULTS.snapshotEveryEntries;
    this.snapshotEveryBytes = opts.snapshotEveryBytes ?? QUORUM_DEFAULTS.snapshotEveryBytes;
    this.sm = opts.stateMachine;
    const opened = openQuorumStorage(opts.dir, { bootstrapVoters: opts.bootstrapVoters, ...(opts.io ? { io: opts.io } : {}) });
    for (const refused of opened.refusedSnapshots) opts.log.warn({ err: refused }, 'damaged metadata snapshot refused; an older one is in force');
    this.storage = opened.storage;
    const random = opts.random ?? Math.random;
    this.node = new RaftNode(
      {
        id: opts.id,
        electionTimeoutTicks: this.electionTimeoutTicks,
        fetchTimeoutTicks: opts.fetchTimeoutTicks ?? QUORUM_DEFAULTS.fetchTimeoutTicks,
        fetchWaitTicks: opts.fetchWaitTicks ?? QUORUM_DEFAULTS.fetchWaitTicks,
        maxFetchBytes: opts.maxFetchBytes ?? QUORUM_DEFAULTS.maxFetchBytes,
        maxUncommittedBytes: opts.maxUncommittedBytes ?? QUORUM_DEFAULTS.maxUncommittedBytes,
        random,
      },
      opened.restore,
    );
    if (opened.restore.snapshot) this.sm.restore(opened.restore.snapshot);
    this.appliedOffset = opened.restore.snapshot?.meta.id.endOffset ?? 0;
    this.transport = opts.transport({
      deliver: (m) => this.deliver(m),
      isVoter: (id) => this.node.status().voters.includes(id),
      unreachable: (id, refused) => this.reportUnreachable(id, refused),
    });
    this.learnPeers(opened.restore.snapshot, opened.restore.entries);
    const s = this.node.status();
    this.last = { epoch: s.epoch, leaderId: s.leaderId, role: s.role };
    this.lastTickAt = Date.now();
    this.timer = this.armTimer();
  }

  /** The inbound hook for the controller listener's quorum handlers. */
  get inbound(): Pick<QuorumLink, 'receive'> {
    return this.transport;
  }

  get nodeId(): NodeId {
    return this.opts.id;
  }

  /** The election timeout in wall-clock ms (operators judge quorum loss against it). */
  get electionTimeoutMs(): number {
    return this.electionTimeoutTicks * this.tickMs;
  }

  get isLeader(): boolean {
    return this.last.role === 'leader';
  }

  get leader(): LeaderChange {
    return this.last;
  }

  status(): RaftStatus {
    return this.node.status();
  }

  /** Wall-clock ms of a core tick count (ReplicaStatus.lastFetchTick and lastCaughtUpTick); -1 stays -1. */
  tickToMs(tick: number): number {
    return tick < 0 ? -1 : Date.now() - (this.ticks - tick) * this.tickMs;
  }

  onLeaderChange(listener: (c: LeaderChange) => void): void {
    this.listeners.push(listener);
  }

  /** Called on the leader as each of its proposals commits, with the ms from propose to commit. */
  onProposalCommitted(listener: (latencyMs: number) => void): void {
    this.commitListeners.push(listener);
  }

  /** Appends `data` as the leader; resolves with its offset once committed and applied here. */
  propose(data: Uint8Array): Promise<number> {
    try {
      return this.proposeAt(data).committed;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * propose() for a caller that must know at once where the entry went (the controller pairs its
   * pending batch with the offset): throws QuorumProposalError synchronously when refused.
   */
  proposeAt(data: Uint8Array): Proposal {
    return this.submit(() => this.node.propose(data), ErrorCode.NOT_CONTROLLER);
  }

  /** AddRaftVoter: resolves once the voters entry naming `id` (with its `endpoints`) commits. */
  addVoter(id: NodeId, endpoints: readonly VoterEndpoint[] = []): Promise<number> {
    return this.submitVoters(() => this.node.addVoter(id, endpoints));
  }

  removeVoter(id: NodeId): Promise<number> {
    return this.submitVoters(() => this.node.removeVoter(id));
  }

  /**
   * Stops the node: a leader first hands off with EndQuorumEpoch to its most caught-up voter
   * (waiting briefly), then the transport and the storage close. Pending proposals fail NOT_CONTROLLER.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    if (this.isLeader) await this.resign();
    this.halt(ErrorCode.NOT_CONTROLLER);
    await this.storage.close();
  }

  private async resign(): Promise<void> {
    const s = this.node.status();
    const successor = s.replicas.filter((r) => r.voter && r.id !== this.opts.id).sort((a, b) => b.logEndOffset - a.logEndOffset)[0];
    if (successor === undefined || !this.node.transferLeadership(successor.id)) return;
    this.pump();
    const deadline = Date.now() + RESIGN_WAIT_MS;
    while (this.isLeader && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, this.tickMs));
    // Let the EndQuorumEpoch already handed to the transport reach the socket.
    await new Promise((resolve) => setImmediate(resolve));
  }

  private submitVoters(attempt: () => ProposeResult): Promise<number> {
    try {
      return this.submit(attempt, ErrorCode.NOT_LEADER_OR_FOLLOWER).committed;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private submit(attempt: () => ProposeResult, notLeaderCode: ErrorCode): Proposal {
    if (this.stopped) throw new QuorumProposalError(notLeaderCode, -1, 'the quorum driver is stopped');
    if (this.pending.size >= this.maxPending) {
      throw new QuorumProposalError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, this.opts.id, 'too many proposals awaiting commit');
    }
    const r = attempt();
    if (!r.ok) {
      const code = r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ? notLeaderCode : (r.errorCode as ErrorCode);
      throw new QuorumProposalError(code, r.leaderId);
    }
    const committed = new Promise<number>((resolve, reject) => this.pending.set(r.offset, { epoch: r.epoch, proposedAt: performance.now(), resolve, reject }));
    this.pump();
    return { offset: r.offset, committed };
  }

  private deliver(m: Message): void {
    if (this.stopped) return;
    // After a long idle sleep Raft time lags the clock by up to SOLO_IDLE_MAX_MS: bring it up to
    // date first, so a fetch parked now waits its full fetchWaitTicks (and not the lag less).
    if (this.sleptMs > SOLO_TIMER_MS) this.advanceTicks(Date.now(), this.catchUpLimit());
    this.node.step(m);
    this.pump();
  }

  /**
   * The state machine's timed work may have come nearer (a broker's session was cut short, a
   * heartbeat recorded where none was): a lone leader sleeping longer than that wakes in time.
   */
  timedWorkChanged(): void {
    if (!this.stopped) this.rearmIfLater();
  }

  /**
   * Hands the transport the endpoints the voters of `snapshot` carry (a voter added by AddRaftVoter
   * before the snapshot has its endpoints only there), then those of every `voters` entry among
   * `entries`, oldest first.
   */
  private learnPeers(snapshot: Snapshot | null, entries: readonly Entry[]): void {
    if (snapshot) this.transport.learnPeers(decodeVoterEndpoints(snapshot.meta.votersRecord));
    for (const e of entries) if (e.kind === 'voters') this.transport.learnPeers(decodeVoterEndpoints(e.data));
  }

  /** A connection reset or refused: if `id` leads, the core pre-votes within a few ticks instead of waiting out its fetch timeout. */
  private reportUnreachable(id: NodeId, refused: boolean): void {
    if (this.stopped) return;
    if (refused) this.opts.onPeerRefused?.(id, Date.now());
    this.node.reportUnreachable(id);
    this.pump();
  }

  /** The timer's next period: tickMs; a lone leader's SOLO_TIMER_MS, or longer while nothing is due. */
  private timerPeriodMs(): number {
    const s = this.node.status();
    if (s.role !== 'leader' || s.voters.length !== 1) return this.tickMs;
    // Another replica (an observer) fetches here, or the core has work: Raft time matters.
    if (s.replicas.length > 1 || this.busy || this.node.hasReady()) return SOLO_TIMER_MS;
    const nextWork = this.opts.nextTimedWork?.() ?? (this.opts.onTick === undefined ? Infinity : -Infinity);
    return Math.min(SOLO_IDLE_MAX_MS, Math.max(SOLO_TIMER_MS, Math.ceil(nextWork - Date.now())));
  }

  private armTimer(): NodeJS.Timeout {
    this.armedMs = this.timerPeriodMs();
    this.timerDueAt = Date.now() + this.armedMs;
    this.sleptMs = Math.max(this.sleptMs, this.armedMs);
    const timer = setTimeout(() => this.onTimer(), this.armedMs);
    timer.unref();
    return timer;
  }

  /** Re-arms a long idle timer that would fire later than the period due now. */
  private rearmIfLater(): void {
    if (this.armedMs <= SOLO_TIMER_MS) return;
    if (Date.now() + this.timerPeriodMs() >= this.timerDueAt) return;
    clearTimeout(this.timer);
    this.timer = this.armTimer();
  }

  private onTimer(): void {
    if (this.stopped) return;
    const now = Date.now();
    // Ticks missed while the timer slept as armed are caught up in full; beyond that (a stalled
    // loop) at most MAX_CATCH_UP_TICKS, so a stall does not storm the core.
    const limit = this.catchUpLimit();
    this.timer = this.armTimer();
    if (this.advanceTicks(now, limit)) this.pump();
  }

  private catchUpLimit(): number {
    return this.sleptMs > SOLO_TIMER_MS ? Math.ceil(this.sleptMs / this.tickMs) + MAX_CATCH_UP_TICKS : MAX_CATCH_UP_TICKS;
  }

  /** Gives the core the ticks due by `now` (at most `limit`) and the state machine its tick; false when none was due. */
  private advanceTicks(now: number, limit: number): boolean {
    const due = Math.floor((now - this.lastTickAt) / this.tickMs);
    if (due <= 0) return false;
    const n = Math.min(due, limit);
    this.lastTickAt = n === due ? this.lastTickAt + due * this.tickMs : now;
    for (let i = 0; i < n; i++) {
      this.node.tick();
      this.ticks++;
    }
    this.sleptMs = this.armedMs;
    this.opts.onTick?.(now);
    return true;
  }

  /** Starts executing the next Ready if none is in progress. */
  private pump(): void {
    this.noticeLeaderChange();
    if (!this.stopped) this.rearmIfLater();
    if (this.busy || this.stopped || !this.node.hasReady()) return;
    this.busy = true;
    const r = this.node.ready();
    this.execute(r).then(
      () => {
        this.busy = false;
        this.pump();
      },
      (err: unknown) => this.fatal(err),
    );
  }

  private async execute(r: Ready): Promise<void> {
    if (r.hardState) await this.storage.saveHardState(r.hardState);
    if (this.stopped) return;
    // A snapshot's voters and a voters entry's are in force from install or append: reachable before anything is sent.
    this.learnPeers(r.snapshot, r.entries);
    for (const m of r.messages) this.transport.send(m);
    if (r.snapshot) {
      await this.storage.installSnapshot(r.snapshot);
      this.sm.restore(r.snapshot);
      this.appliedOffset = r.snapshot.meta.id.endOffset;
      this.entriesSinceSnapshot = this.bytesSinceSnapshot = 0;
    } else if (r.truncateTo !== null) await this.storage.truncateTo(r.truncateTo);
    if (r.entries.length > 0) await this.storage.append(r.entries);
    if (this.stopped) return;
    this.node.advance(r);
    if (r.committed.length > 0) this.applyCommitted(r.committed);
  }

  private applyCommitted(entries: readonly Entry[]): void {
    this.sm.apply(entries);
    for (const e of entries) {
      this.appliedOffset = e.offset + 1;
      this.entriesSinceSnapshot++;
      this.bytesSinceSnapshot += e.data.byteLength;
      const waiting = this.pending.get(e.offset);
      if (waiting === undefined) continue;
      this.pending.delete(e.offset);
      // Another leader's entry took the offset: the proposal was lost with its epoch.
      if (waiting.epoch === e.epoch) {
        const latencyMs = performance.now() - waiting.proposedAt;
        for (const listener of this.commitListeners) listener(latencyMs);
        waiting.resolve(e.offset);
      } else waiting.reject(new QuorumProposalError(ErrorCode.NOT_CONTROLLER, this.last.leaderId, 'leadership was lost before the proposal committed'));
    }
    if (this.entriesSinceSnapshot >= this.snapshotEveryEntries || this.bytesSinceSnapshot >= this.snapshotEveryBytes) this.takeSnapshot();
  }

  private takeSnapshot(): void {
    const snapshot = this.node.compact(this.appliedOffset, this.sm.snapshot());
    this.entriesSinceSnapshot = this.bytesSinceSnapshot = 0;
    this.storage.compact(snapshot).catch((err: unknown) => this.fatal(err));
  }

  private noticeLeaderChange(): void {
    const s = this.node.status();
    const prev = this.last;
    if (s.epoch === prev.epoch && s.leaderId === prev.leaderId && s.role === prev.role) return;
    this.last = { epoch: s.epoch, leaderId: s.leaderId, role: s.role };
    // Once per change of epoch, leader or role: what an operator reads a failover's timeline from.
    this.opts.log.info({ epoch: s.epoch, leaderId: s.leaderId, role: s.role }, 'metadata quorum leadership changed');
    if (prev.role === 'leader') this.failPending(ErrorCode.NOT_CONTROLLER);
    for (const listener of this.listeners) listener(this.last);
  }

  private failPending(code: ErrorCode): void {
    const err = new QuorumProposalError(code, this.last.leaderId, 'leadership was lost before the proposal committed');
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** No more ticks, messages or applies; listeners hear that this node leads nothing any more. */
  private halt(code: ErrorCode): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.transport.close();
    this.failPending(code);
    this.last = { epoch: this.last.epoch, leaderId: -1, role: 'resigned' };
    for (const listener of this.listeners) listener(this.last);
  }

  private fatal(err: unknown): void {
    if (this.stopped) return;
    this.opts.log.fatal({ err }, 'metadata quorum storage failed; stopping the node');
    this.halt(ErrorCode.KAFKA_STORAGE_ERROR);
    this.opts.onFatal(err);
  }
}
