// The metadata quorum's Raft core: one node's election, replication, commit, snapshot and
// membership logic as a pure state machine. Pure and single-threaded; it lives on whichever thread
// its driver runs. Events come in through tick(), step() and the propose-style calls; everything
// the node wants done (persist, append, send, apply) comes out of ready(), in etcd-raft's shape,
// while the protocol is KRaft's: followers pull with Fetch, new leaders announce themselves with
// BeginQuorumEpoch, resigning ones hand off with EndQuorumEpoch, divergence is resolved in one
// round trip, snapshots are pulled in chunks, and a pre-vote round precedes every election.
import { ErrorCode } from '../../protocol/errors.js';
import { RaftLog, entryBytes } from './log.js';
import { MAX_TRACKED_OBSERVERS, ProgressTracker } from './progress.js';
import type {
  Entry,
  FetchRequest,
  FetchResponse,
  FetchSnapshotRequest,
  FetchSnapshotResponse,
  HardState,
  Message,
  NodeId,
  OffsetAndEpoch,
  ProposeResult,
  Ready,
  Role,
  Snapshot,
  SnapshotMeta,
  VoteRequest,
  VoteResponse,
} from './types.js';
import type { VoterEndpoint } from '../../protocol/kraft_control.js';
import { decodeVoterEndpoints, encodeVoters } from './entry_batches.js';
import { majorityEnd, majorityOf } from './voters.js';

export interface RaftConfig {
  readonly id: NodeId;
  /** Drawn uniformly from [T, 2T) with `random`, redrawn on every reset (KRaft: 1000 ms). */
  readonly electionTimeoutTicks: number;
  /** A voter-follower without a successful fetch for this long starts a pre-election (KRaft: 2000 ms); the leader's check-quorum window is 1.5x. */
  readonly fetchTimeoutTicks: number;
  /** The leader parks a fetch with nothing new this long (KRaft: 500 ms). */
  readonly fetchWaitTicks: number;
  /** Bytes of entries per fetch response and per snapshot chunk. */
  readonly maxFetchBytes: number;
  /** The leader refuses proposals past this many uncommitted bytes (etcd's MaxUncommittedEntriesSize). */
  readonly maxUncommittedBytes: number;
  /** [0,1); seeded in simulation. */
  readonly random: () => number;
  /** Deliberately broken variants, only for showing the simulation's invariants bite. */
  readonly unsafe?: ReadonlySet<Mutation>;
}

/**
 * Each breaks one rule at one place: `voteTwice` grants a second candidate in an epoch;
 * `countOldTermReplicas` lets the high watermark move before the leader's epoch start offset;
 * `applyBeforeDurable` hands out committed entries before they are durable locally;
 * `skipPreVote` campaigns without a pre-vote and lets disruptive votes through;
 * `ignoreUnreachable` drops the transport's reports, leaving a dead leader to the fetch timeout.
 */
export type Mutation = 'voteTwice' | 'countOldTermReplicas' | 'applyBeforeDurable' | 'skipPreVote' | 'ignoreUnreachable';

export interface RaftRestore {
  /** {epoch: 0, votedFor: -1, leaderId: -1} on a fresh node. */
  readonly hardState: HardState;
  /** The latest durable snapshot. */
  readonly snapshot: Snapshot | null;
  /** Durable entries after the snapshot, contiguous. */
  readonly entries: readonly Entry[];
  /** Voters when neither the snapshot nor the log carries a `voters` entry (static quorum). */
  readonly bootstrapVoters: readonly NodeId[];
}

export interface ReplicaStatus {
  readonly id: NodeId;
  readonly logEndOffset: number;
  readonly lastFetchTick: number;
  readonly lastCaughtUpTick: number;
  readonly voter: boolean;
}

export interface RaftStatus {
  readonly role: Role;
  readonly epoch: number;
  readonly leaderId: NodeId;
  readonly votedFor: NodeId;
  readonly highWatermark: number;
  /** Everything below this has been handed out in Ready.committed (or a snapshot). */
  readonly appliedOffset: number;
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly durableEndOffset: number;
  readonly voters: readonly NodeId[];
  /** Leader only: itself first, then what it knows of every replica that fetches from it. */
  readonly replicas: readonly ReplicaStatus[];
}

const NO_NODE = -1;

/** The fetch or snapshot chunk request a follower has outstanding; answers to anything else are stale. */
type Outstanding =
  | { readonly kind: 'fetch'; readonly to: NodeId; readonly fetchOffset: number; readonly lastFetchedEpoch: number; readonly sentAt: number }
  | { readonly kind: 'snapshot'; readonly to: NodeId; readonly position: number; readonly sentAt: number };

interface SnapshotDownload {
  readonly id: OffsetAndEpoch;
  meta: SnapshotMeta | null;
  readonly chunks: Uint8Array[];
  received: number;
}

/** A Ready handed out and not yet advanced: up to `limit` its entries (or snapshot) become durable. */
interface InflightReady {
  readonly ready: Ready;
  limit: number;
}

interface ParkedFetch {
  readonly request: FetchRequest;
  readonly parkedAt: number;
}

interface Transfer {
  readonly to: NodeId;
  readonly startedAt: number;
}

/** The leader's state for its epoch. */
interface Leadership {
  readonly progress: ProgressTracker;
  readonly epochStartOffset: number;
  readonly parked: Map<NodeId, ParkedFetch>;
  lastBeginQuorumTick: number;
  transfer: Transfer | null;
}

export class RaftNode {
  private readonly id: NodeId;
  private readonly log: RaftLog;
  private role: Role;
  private epoch: number;
  private votedFor: NodeId;
  private leaderId: NodeId;
  /** The HardState last handed out in a Ready. */
  private emittedHardState: HardState;
  private now = 0;

  private electionElapsed = 0;
  private electionTimeout = 0;
  /** Ticks since the last successful fetch response from the leader. */
  private fetchElapsed = 0;
  /** A successful fetch from this epoch's leader arrived: pre-votes are refused (KIP-996). */
  private fetchedFromLeader = false;
  private outstanding: Outstanding | null = null;
  private fetchBackoffUntil = 0;
  private download: SnapshotDownload | null = null;
  /** Voters that granted the current (pre-)vote round. */
  private readonly grants = new Set<NodeId>();
  /** Voters that refused the current (pre-)vote round. */
  private readonly refusals = new Set<NodeId>();
  /** Whether the current round already counted as lost (its retry is scheduled). */
  private roundLost = false;
  /** Rounds lost in a row since this node last followed or led: the retry backoff's exponent. */
  private lostRounds = 0;
  /**
   * Voters the transport reported unreachable and not heard from since (TCP delivers what a peer
   * wrote before its connection reset, so a message after the report means it is back). A round
   * counts them as refusing: a dead voter's silence must not hold a lost round open.
   */
  private readonly unreachable = new Set<NodeId>();
  private leadership: Leadership | null = null;

  private highWatermark: number;
  private applied: number;
  /** Entries below this have been handed out in a Ready. */
  private stableEnd: number;
  /** Entries below this are durable locally (advance confirmed them). */
  private durableEnd: number;
  private readonly inflight: InflightReady[] = [];
  private pendingTruncate: number | null = null;
  private pendingSnapshot: Snapshot | null = null;
  private messages: Message[] = [];

  constructor(
    private readonly config: RaftConfig,
    restore: RaftRestore,
  ) {
    this.id = config.id;
    this.log = new RaftLog(restore.snapshot, restore.entries, restore.bootstrapVoters);
    this.epoch = restore.hardState.epoch;
    this.votedFor = restore.hardState.votedFor;
    this.leaderId = restore.hardState.leaderId;
    this.emittedHardState = restore.hardState;
    this.stableEnd = this.durableEnd = this.log.endOffset;
    this.highWatermark = this.applied = this.log.logStartOffset;
    // A restarted leader cannot know what it had committed: it resigns, as KRaft's Resigned state does.
    if (!this.isVoter()) {
      this.role = 'observer';
      if (this.leaderId === this.id) this.leaderId = NO_NODE;
    } else if (this.leaderId === this.id) this.role = 'resigned';
    else this.role = this.leaderId >= 0 ? 'follower' : 'unattached';
    // A sole voter has no vote to split and no leader to wait for: it campaigns on its first tick.
    this.resetElectionTimer(this.isSoleVoter() ? 1 : undefined);
  }

  // ---- events in ----

  tick(): void {
    this.now++;
    switch (this.role) {
      case 'leader':
        this.tickLeader();
        break;
      case 'follower':
      case 'observer':
        if (++this.fetchElapsed >= this.config.fetchTimeoutTicks) this.onFetchTimeout();
        break;
      case 'unattached':
      case 'prospective':
      case 'candidate':
      case 'resigned':
        if (++this.electionElapsed >= this.electionTimeout) this.campaign();
        break;
    }
    const retryAfter = this.config.fetchWaitTicks + Math.ceil(this.config.fetchTimeoutTicks / 4);
    if (this.outstanding !== null && this.now - this.outstanding.sentAt >= retryAfter) this.outstanding = null;
    this.maybeFetch();
  }

  step(m: Message): void {
    if (m.to !== this.id || m.from === this.id) return;
    this.unreachable.delete(m.from);
    if (m.epoch > this.epoch && !(m.type === 'vote' && m.preVote)) {
      if (m.type === 'vote' && this.refusesDisruptiveVote()) {
        this.send(this.voteResponse(m, false));
        return;
      }
      this.stepUp(m);
    }
    switch (m.type) {
      case 'vote':
        this.onVote(m);
        break;
      case 'voteResponse':
        this.onVoteResponse(m);
        break;
      case 'beginQuorumEpoch':
        if (m.epoch < this.epoch) this.send({ type: 'beginQuorumEpochResponse', from: this.id, to: m.from, epoch: this.epoch });
        else {
          if (this.role !== 'leader' && !(this.isFollowing() && this.leaderId === m.from)) this.becomeFollower(m.epoch, m.from);
          this.send({ type: 'beginQuorumEpochResponse', from: this.id, to: m.from, epoch: this.epoch });
        }
        break;
      case 'beginQuorumEpochResponse':
        break;
      case 'endQuorumEpoch':
        this.onEndQuorumEpoch(m.epoch, m.from, m.preferredSuccessors);
        break;
      case 'fetch':
        this.onFetch(m);
        break;
      case 'fetchResponse':
        this.onFetchResponse(m);
        break;
      case 'fetchSnapshot':
        this.onFetchSnapshot(m);
        break;
      case 'fetchSnapshotResponse':
        this.onFetchSnapshotResponse(m);
        break;
    }
    this.maybeFetch();
  }

  /**
   * The transport lost its connection to `id` (reset or refused: on one host a killed process's
   * sockets close at once, long before the fetch timeout runs out), as etcd's ReportUnreachable.
   * A voter-follower of that leader stops trusting it: it grants other voters' pre-votes (every
   * surviving follower sees the same reset, and each would otherwise refuse the others for having
   * heard from the leader lately, KIP-996) and starts its own pre-vote after a short delay. A
   * spurious report deposes nobody: the pre-vote fails while the other followers still fetch from
   * a live leader, and the next successful fetch makes this node a follower again. An observer
   * forgets the leader and asks the voters who leads. A campaigning node counts an unreachable
   * voter as refusing its round (checkElectionLost). Reports change nothing else.
   */
  reportUnreachable(id: NodeId): void {
    if (this.unsafe('ignoreUnreachable')) return;
    if (id !== this.id && this.log.hasVoter(id)) {
      this.unreachable.add(id);
      this.checkElectionLost();
    }
    if (!this.isFollowing() || id !== this.leaderId) return;
    // The fetch in flight to it died with the connection: the next tick sends another at once.
    if (this.outstanding?.to === id) this.outstanding = null;
    this.fetchedFromLeader = false;
    const delay = this.role === 'observer' ? 0 : this.suspicionDelay(id);
    // Repeated reports (every refused reconnect) never postpone a pre-vote already due sooner.
    this.fetchElapsed = Math.max(this.fetchElapsed, this.config.fetchTimeoutTicks - delay);
  }

  propose(data: Uint8Array): ProposeResult {
    const refusal = this.leaderRefusal();
    if (refusal !== null) return refusal;
    const entry: Entry = { offset: this.log.endOffset, epoch: this.epoch, kind: 'data', data };
    const uncommitted = this.uncommittedBytes();
    if (uncommitted > 0 && uncommitted + entryBytes(entry) > this.config.maxUncommittedBytes) {
      return { ok: false, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, leaderId: this.id };
    }
    this.appendAsLeader(entry);
    return { ok: true, offset: entry.offset, epoch: entry.epoch };
  }

  /** AddRaftVoter: `endpoints` (the request's listeners) go into the voters entry, so every node, restarts included, can reach the new voter. */
  addVoter(id: NodeId, endpoints: readonly VoterEndpoint[] = []): ProposeResult {
    const refusal = this.votersChangeRefusal();
    if (refusal !== null) return refusal;
    const voters = this.log.voters;
    if (voters.includes(id)) return { ok: false, errorCode: ErrorCode.DUPLICATE_VOTER, leaderId: this.id };
    // KIP-853: only a node that has caught up as an observer joins, so it cannot stall the commit.
    const progress = this.leadership!.progress.get(id);
    const caughtUp = progress !== undefined && progress.lastCaughtUpTick >= 0 && this.now - progress.lastCaughtUpTick <= this.config.fetchTimeoutTicks;
    if (!caughtUp) return { ok: false, errorCode: ErrorCode.REQUEST_TIMED_OUT, leaderId: this.id };
    return this.appendVoters([...voters, id], new Map([...this.voterEndpoints(), [id, endpoints]]));
  }

  removeVoter(id: NodeId): ProposeResult {
    const refusal = this.votersChangeRefusal();
    if (refusal !== null) return refusal;
    const voters = this.log.voters;
    if (!voters.includes(id)) return { ok: false, errorCode: ErrorCode.VOTER_NOT_FOUND, leaderId: this.id };
    if (voters.length === 1) return { ok: false, errorCode: ErrorCode.INVALID_REQUEST, leaderId: this.id };
    return this.appendVoters(voters.filter((voter) => voter !== id), this.voterEndpoints());
  }

  transferLeadership(to: NodeId): boolean {
    const leadership = this.leadership;
    if (leadership === null || leadership.transfer !== null || to === this.id || !this.log.hasVoter(to)) return false;
    leadership.transfer = { to, startedAt: this.now };
    this.maybeCompleteTransfer();
    return true;
  }

  /** Returns the snapshot as the core now holds it (id and voters filled in), for the driver to make durable. */
  compact(snapshotEndOffset: number, data: Uint8Array): Snapshot {
    if (snapshotEndOffset > this.applied) {
      throw new RangeError(`snapshot at ${snapshotEndOffset} is past the applied offset ${this.applied}`);
    }
    return this.log.compact(snapshotEndOffset, data);
  }

  // ---- work out ----

  hasReady(): boolean {
    return (
      !sameHardState(this.hardState(), this.emittedHardState) ||
      this.pendingTruncate !== null ||
      this.pendingSnapshot !== null ||
      this.stableEnd < this.log.endOffset ||
      this.messages.length > 0 ||
      this.applied < this.commitLimit()
    );
  }

  ready(): Ready {
    const hardState = this.hardState();
    const changed = !sameHardState(hardState, this.emittedHardState);
    this.emittedHardState = hardState;
    const entries = this.log.range(this.stableEnd, this.log.endOffset);
    this.stableEnd = this.log.endOffset;
    const limit = this.commitLimit();
    const committed = this.applied < limit ? this.log.range(this.applied, limit) : [];
    this.applied = Math.max(this.applied, limit);
    const snapshot = this.pendingSnapshot;
    const ready: Ready = {
      hardState: changed ? hardState : null,
      truncateTo: snapshot === null ? this.pendingTruncate : null,
      snapshot,
      entries,
      messages: this.messages,
      committed,
    };
    this.messages = [];
    this.pendingTruncate = null;
    this.pendingSnapshot = null;
    const durableAfter = entries.length > 0 ? entries[entries.length - 1]!.offset + 1 : snapshot?.meta.id.endOffset;
    if (durableAfter !== undefined) this.inflight.push({ ready, limit: durableAfter });
    return ready;
  }

  advance(r: Ready): void {
    const at = this.inflight.findIndex((inflight) => inflight.ready === r);
    if (at < 0) return;
    // Readies are persisted in order: confirming one confirms every earlier one.
    for (const done of this.inflight.splice(0, at + 1)) this.durableEnd = Math.max(this.durableEnd, Math.min(done.limit, this.log.endOffset));
    if (this.role === 'leader') this.maybeAdvanceHighWatermark();
    this.maybeFetch();
  }

  status(): RaftStatus {
    const voters = this.log.voters;
    const replicas: ReplicaStatus[] = [];
    if (this.leadership !== null) {
      // DescribeQuorum lists the leader too, always caught up with itself.
      replicas.push({ id: this.id, logEndOffset: this.log.endOffset, lastFetchTick: this.now, lastCaughtUpTick: this.now, voter: voters.includes(this.id) });
    }
    for (const p of this.leadership?.progress.all() ?? []) {
      replicas.push({ id: p.id, logEndOffset: p.logEndOffset, lastFetchTick: p.lastFetchTick, lastCaughtUpTick: p.lastCaughtUpTick, voter: voters.includes(p.id) });
    }
    return {
      role: this.role,
      epoch: this.epoch,
      leaderId: this.leaderId,
      votedFor: this.votedFor,
      highWatermark: this.highWatermark,
      appliedOffset: this.applied,
      logStartOffset: this.log.logStartOffset,
      logEndOffset: this.log.endOffset,
      durableEndOffset: this.durableEnd,
      voters,
      replicas,
    };
  }

  // ---- roles ----

  /**
   * A member of the voter set in force, or of the set before it while the change that removes this
   * node is uncommitted (as far as it knows): until then the old set may still decide, and this
   * node may be the only one holding the removal, so it campaigns and votes as the Raft thesis
   * (§4.2.2) has a server outside its own latest configuration do.
   */
  private isVoter(): boolean {
    if (this.log.hasVoter(this.id)) return true;
    const at = this.log.lastVotersOffset;
    return at >= this.highWatermark && this.log.votersAt(at).includes(this.id);
  }

  private isSoleVoter(): boolean {
    const voters = this.log.voters;
    return voters.length === 1 && voters[0] === this.id;
  }

  /** The roles whose election timer runs: no leader is followed or held. */
  private awaitsElection(): boolean {
    return this.role === 'unattached' || this.role === 'prospective' || this.role === 'candidate' || this.role === 'resigned';
  }

  private isFollowing(): boolean {
    return this.role === 'follower' || this.role === 'observer';
  }

  private hardState(): HardState {
    return { epoch: this.epoch, votedFor: this.votedFor, leaderId: this.leaderId };
  }

  private resetElectionTimer(ticks?: number): void {
    const base = this.config.electionTimeoutTicks;
    this.electionElapsed = 0;
    this.electionTimeout = ticks ?? base + Math.floor(this.config.random() * base);
  }

  private unsafe(mutation: Mutation): boolean {
    return this.config.unsafe?.has(mutation) ?? false;
  }

  /** A message from a later epoch moves this node into it, following the leader the message names. */
  private stepUp(m: Message): void {
    let leader = NO_NODE;
    if (m.type === 'beginQuorumEpoch') leader = m.from;
    else if (m.type === 'fetchResponse' || m.type === 'fetchSnapshotResponse' || m.type === 'voteResponse') leader = m.leaderId;
    if (leader >= 0 && leader !== this.id) this.becomeFollower(m.epoch, leader);
    else this.becomeUnattached(m.epoch);
  }

  private enterEpoch(epoch: number): void {
    if (epoch > this.epoch) {
      this.epoch = epoch;
      this.votedFor = NO_NODE;
    }
    this.leadership = null;
    this.outstanding = null;
    this.download = null;
    this.clearRound();
  }

  private clearRound(): void {
    this.grants.clear();
    this.refusals.clear();
    this.roundLost = false;
  }

  private becomeUnattached(epoch: number): void {
    this.enterEpoch(epoch);
    this.leaderId = NO_NODE;
    this.role = this.isVoter() ? 'unattached' : 'observer';
    this.fetchElapsed = 0;
    this.resetElectionTimer();
  }

  private becomeFollower(epoch: number, leader: NodeId): void {
    if (leader === this.id || (this.role === 'leader' && epoch === this.epoch)) return;
    this.enterEpoch(epoch);
    this.leaderId = leader;
    this.role = this.isVoter() ? 'follower' : 'observer';
    this.fetchElapsed = 0;
    this.fetchedFromLeader = false;
    this.lostRounds = 0;
  }

  /**
   * Ticks until a follower that lost its leader's connection pre-votes: one slot (1/20 of the
   * election timeout, at least 2 ticks) per rank among the other voters by id, plus a random
   * offset in the first half of the slot. Survivors that saw the same reset then canvass one after
   * another, a slot apart, rather than at once: two prospective nodes whose pre-votes cross both
   * win them, split the real vote and wait a whole election timeout. The rank-0 node goes first;
   * if its log is behind, it grants the next one's pre-vote a slot later.
   */
  private suspicionDelay(leader: NodeId): number {
    const slot = this.slotTicks();
    const rank = Math.max(0, this.log.voters.filter((voter) => voter !== leader).sort((a, b) => a - b).indexOf(this.id));
    return 1 + rank * slot + Math.floor((this.config.random() * slot) / 2);
  }

  /** The unit of the short election delays: 1/20 of the election timeout, at least 2 ticks. */
  private slotTicks(): number {
    return Math.max(2, Math.ceil(this.config.electionTimeoutTicks / 20));
  }

  /**
   * Campaigns again within `ticks` if the election timer would fire later; never postpones it. The
   * timer keeps the role: a grant arriving meanwhile still wins the round.
   */
  private campaignWithin(ticks: number): void {
    if (this.electionTimeout - this.electionElapsed <= ticks) return;
    this.electionElapsed = 0;
    this.electionTimeout = ticks;
  }

  /**
   * A round that can no longer win (refusals and unreachable voters leave fewer than a majority)
   * is retried after a binary exponential backoff, as KRaft's election.backoff: 1 to slot x 2^n
   * ticks for the n-th loss in a row, capped at the election timeout, instead of the whole
   * election timeout. Two survivors whose pre-votes crossed (both won them, then split the vote),
   * or a candidate a voter refused, try again in tens of ms, at different random times.
   */
  private checkElectionLost(): void {
    if ((this.role !== 'prospective' && this.role !== 'candidate') || this.roundLost) return;
    const voters = this.log.voters;
    let against = 0;
    for (const id of voters) {
      if (id !== this.id && !this.grants.has(id) && (this.refusals.has(id) || this.unreachable.has(id))) against++;
    }
    if (voters.length - against >= majorityOf(voters)) return;
    this.roundLost = true;
    const cap = Math.min(this.config.electionTimeoutTicks, this.slotTicks() * 2 ** Math.min(this.lostRounds, 10));
    this.lostRounds++;
    this.campaignWithin(1 + Math.floor(this.config.random() * cap));
  }

  private onFetchTimeout(): void {
    if (this.role === 'observer') {
      // Observers never campaign: forget the silent leader and ask the voters who leads now.
      this.leaderId = NO_NODE;
      this.fetchElapsed = 0;
      this.outstanding = null;
    } else this.campaign();
  }

  private campaign(): void {
    if (!this.isVoter()) return;
    if (this.unsafe('skipPreVote')) this.becomeCandidate();
    else this.becomeProspective();
  }

  /** KIP-996: canvass for epoch+1 without persisting anything; a known leader is still fetched from. */
  private becomeProspective(): void {
    // A resigned leader no longer names itself: its answers would send fetchers back to it forever.
    if (this.leaderId === this.id) this.leaderId = NO_NODE;
    this.role = 'prospective';
    this.clearRound();
    this.grants.add(this.id);
    this.resetElectionTimer();
    this.requestVotes(true);
    this.checkElectionWon();
    this.checkElectionLost();
  }

  private becomeCandidate(): void {
    this.enterEpoch(this.epoch + 1);
    this.votedFor = this.id;
    this.leaderId = NO_NODE;
    this.role = 'candidate';
    this.grants.add(this.id);
    this.resetElectionTimer();
    this.requestVotes(false);
    this.checkElectionWon();
    this.checkElectionLost();
  }

  private requestVotes(preVote: boolean): void {
    for (const voter of this.log.voters) {
      if (voter === this.id) continue;
      this.send({
        type: 'vote',
        from: this.id,
        to: voter,
        epoch: preVote ? this.epoch + 1 : this.epoch,
        preVote,
        lastEpoch: this.log.lastEpoch,
        lastOffset: this.log.endOffset,
      });
    }
  }

  private checkElectionWon(): void {
    const voters = this.log.voters;
    let granted = 0;
    for (const id of this.grants) if (this.log.hasVoter(id)) granted++;
    if (granted < majorityOf(voters)) return;
    if (this.role === 'prospective') this.becomeCandidate();
    else if (this.role === 'candidate') this.becomeLeader();
  }

  private becomeLeader(): void {
    this.role = 'leader';
    this.leaderId = this.id;
    this.clearRound();
    this.lostRounds = 0;
    this.leadership = {
      progress: new ProgressTracker(this.log.voters, this.id, this.now),
      epochStartOffset: this.log.endOffset,
      parked: new Map(),
      lastBeginQuorumTick: this.now,
      transfer: null,
    };
    for (const voter of this.log.voters) {
      if (voter !== this.id) this.send({ type: 'beginQuorumEpoch', from: this.id, to: voter, epoch: this.epoch });
    }
    // The leaderChange entry is the epoch's start offset: nothing commits until it does (Figure 8).
    this.appendAsLeader({ offset: this.log.endOffset, epoch: this.epoch, kind: 'leaderChange', data: new Uint8Array(0) });
  }

  /** Stops leading: hands off to `successors` (best first) with EndQuorumEpoch. */
  private resign(successors: readonly NodeId[]): void {
    const leadership = this.leadership;
    if (leadership === null) return;
    for (const parked of leadership.parked.values()) this.send(this.fetchResponse(parked.request, { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }));
    this.leadership = null;
    for (const voter of this.log.voters) {
      if (voter !== this.id) this.send({ type: 'endQuorumEpoch', from: this.id, to: voter, epoch: this.epoch, preferredSuccessors: successors });
    }
    if (this.isVoter()) this.role = 'resigned';
    else {
      this.role = 'observer';
      this.leaderId = NO_NODE;
    }
    this.resetElectionTimer();
  }

  /** Voters other than this node, most replicated first: the successors a resigning leader names. */
  private successorsByProgress(): NodeId[] {
    const progress = this.leadership!.progress;
    const end = (id: NodeId): number => progress.get(id)?.logEndOffset ?? -1;
    return this.log.voters.filter((id) => id !== this.id).sort((a, b) => end(b) - end(a) || a - b);
  }

  /** Members join and leave by `voters` entries, in force from append: the role follows the set. */
  private refreshMembershipRole(): void {
    const voter = this.isVoter();
    if (!voter && this.role !== 'leader' && this.role !== 'observer') {
      if (this.role !== 'follower') this.leaderId = NO_NODE;
      this.role = 'observer';
      this.clearRound();
    } else if (voter && this.role === 'observer') {
      this.role = this.leaderId >= 0 ? 'follower' : 'unattached';
      this.resetElectionTimer();
    }
  }

  // ---- votes ----

  /** With a live leader, a vote from a later epoch is a partitioned node's disruption: refuse without moving. */
  private refusesDisruptiveVote(): boolean {
    if (this.unsafe('skipPreVote')) return false;
    if (this.role === 'leader') return true;
    return this.role === 'follower' && this.fetchedFromLeader && this.fetchElapsed < this.config.fetchTimeoutTicks;
  }

  private onVote(m: VoteRequest): void {
    const logOk = m.lastEpoch > this.log.lastEpoch || (m.lastEpoch === this.log.lastEpoch && m.lastOffset >= this.log.endOffset);
    // Leaderless, this node holds a longer log than a node that canvasses: it is the one that can
    // win, so it campaigns within a slot rather than leave the election to its timer (seconds).
    // Only on a pre-vote: a real vote may still win without this node, whose campaign would then
    // disrupt the new leader's followers before their first fetch.
    if (m.preVote && !logOk && this.awaitsElection()) this.campaignWithin(1 + Math.floor(this.config.random() * this.slotTicks()));
    // A node outside its own voter set answers like a voter (Raft thesis §4.2.2: votes are handled
    // without consulting the configuration): only a candidate whose newer set names it asks, and
    // only that candidate's voters count, so a stale set here must not withhold a needed vote.
    if (m.preVote) {
      // KIP-996: pre-votes change nothing; a leader, or a replica that has fetched from its leader, refuses.
      const willing = this.role !== 'leader' && !(this.isFollowing() && this.leaderId >= 0 && this.fetchedFromLeader);
      this.send(this.voteResponse(m, m.epoch > this.epoch && willing && logOk));
    } else {
      const free = this.votedFor === NO_NODE || this.votedFor === m.from || this.unsafe('voteTwice');
      const leaderless = this.role === 'unattached' || (this.role === 'observer' && this.leaderId === NO_NODE);
      const granted = m.epoch === this.epoch && leaderless && free && logOk;
      if (granted) {
        this.votedFor = m.from;
        this.resetElectionTimer();
      }
      this.send(this.voteResponse(m, granted));
    }
  }

  private voteResponse(m: VoteRequest, granted: boolean): VoteResponse {
    const leaderId = this.role === 'resigned' ? NO_NODE : this.leaderId;
    return { type: 'voteResponse', from: this.id, to: m.from, epoch: this.epoch, preVote: m.preVote, granted, leaderId };
  }

  private onVoteResponse(m: VoteResponse): void {
    if (m.epoch > this.epoch) return;
    const round = m.preVote ? 'prospective' : 'candidate';
    if (this.role !== round) return;
    if (!m.preVote && m.epoch !== this.epoch) {
      // A voter that trusts its leader refuses without moving to this epoch (refusesDisruptiveVote).
      if (!m.granted) {
        this.refusals.add(m.from);
        this.checkElectionLost();
      }
      return;
    }
    if (m.granted) {
      this.grants.add(m.from);
      this.checkElectionWon();
    } else if (m.epoch === this.epoch && m.leaderId >= 0 && (this.role === 'candidate' || this.leaderId < 0)) {
      // The refuser names this epoch's leader: follow it rather than keep campaigning.
      this.becomeFollower(this.epoch, m.leaderId);
    } else {
      this.refusals.add(m.from);
      this.checkElectionLost();
    }
  }

  private onEndQuorumEpoch(epoch: number, from: NodeId, successors: readonly NodeId[]): void {
    if (epoch !== this.epoch || !this.isVoter() || this.role === 'leader') return;
    if (this.leaderId !== from && this.leaderId !== NO_NODE) return;
    // The leader is gone: drop it, so pre-votes are granted again, and campaign by rank.
    this.enterEpoch(epoch);
    this.leaderId = NO_NODE;
    this.role = 'unattached';
    const rank = successors.indexOf(this.id);
    if (rank === 0) {
      this.campaign();
      return;
    }
    if (rank > 0) this.resetElectionTimer(rank * Math.ceil(this.config.electionTimeoutTicks / successors.length));
    else this.resetElectionTimer();
  }

  // ---- leader: replication, commit, flow control ----

  private tickLeader(): void {
    const leadership = this.leadership!;
    const voters = this.log.voters;
    for (const parked of leadership.parked.values()) {
      if (this.now - parked.parkedAt >= this.config.fetchWaitTicks) this.answerFetch(parked.request);
    }
    // BeginQuorumEpoch again to voters that have not fetched lately: a voter stuck in a later epoch
    // answers with that epoch, which moves this leader into it instead of leaving the voter out.
    if (this.now - leadership.lastBeginQuorumTick >= Math.max(1, Math.floor(this.config.fetchTimeoutTicks / 2))) {
      leadership.lastBeginQuorumTick = this.now;
      for (const voter of voters) {
        const p = leadership.progress.get(voter);
        if (voter === this.id || (p !== undefined && p.fetchedThisEpoch && this.now - p.lastFetchTick < this.config.fetchTimeoutTicks)) continue;
        this.send({ type: 'beginQuorumEpoch', from: this.id, to: voter, epoch: this.epoch });
      }
    }
    if (leadership.transfer !== null && this.now - leadership.transfer.startedAt >= this.config.electionTimeoutTicks) leadership.transfer = null;
    // Check-quorum: a leader a majority has not fetched from within 1.5x the fetch timeout resigns.
    const window = Math.floor(this.config.fetchTimeoutTicks * 1.5);
    const live = voters.filter((voter) => {
      if (voter === this.id) return true;
      const p = leadership.progress.get(voter);
      return p !== undefined && this.now - p.lastFetchTick < window;
    }).length;
    if (live < majorityOf(voters)) this.resign(this.successorsByProgress());
  }

  private leaderRefusal(): ProposeResult | null {
    const leadership = this.leadership;
    if (leadership === null) {
      return { ok: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: this.role === 'resigned' ? NO_NODE : this.leaderId };
    }
    if (leadership.transfer !== null) return { ok: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: leadership.transfer.to };
    return null;
  }

  private votersChangeRefusal(): ProposeResult | null {
    const refusal = this.leaderRefusal();
    if (refusal !== null) return refusal;
    // KIP-853: the high watermark must be known in this epoch, and one voter change at a time.
    if (this.highWatermark <= this.leadership!.epochStartOffset || this.log.lastVotersOffset >= this.highWatermark) {
      return { ok: false, errorCode: ErrorCode.REQUEST_TIMED_OUT, leaderId: this.id };
    }
    return null;
  }

  private appendVoters(voters: readonly NodeId[], endpoints: ReadonlyMap<NodeId, readonly VoterEndpoint[]>): ProposeResult {
    const entry: Entry = { offset: this.log.endOffset, epoch: this.epoch, kind: 'voters', data: encodeVoters(voters, endpoints) };
    this.appendAsLeader(entry);
    return { ok: true, offset: entry.offset, epoch: entry.epoch };
  }

  /** The endpoints the voters in force carry (from the last `voters` entry, or the snapshot's record), which the next entry keeps. */
  private voterEndpoints(): Map<NodeId, VoterEndpoint[]> {
    return decodeVoterEndpoints(this.log.votersRecordAt(this.log.endOffset));
  }

  private appendAsLeader(entry: Entry): void {
    this.log.append(entry);
    for (const parked of [...this.leadership!.parked.values()]) this.answerFetch(parked.request);
    if (entry.kind === 'voters') this.maybeAdvanceHighWatermark();
  }

  private uncommittedBytes(): number {
    let bytes = 0;
    for (const entry of this.log.range(Math.max(this.highWatermark, this.log.logStartOffset), this.log.endOffset)) bytes += entryBytes(entry);
    return bytes;
  }

  private maybeAdvanceHighWatermark(): void {
    const leadership = this.leadership;
    if (leadership === null) return;
    const ends = this.log.voters.map((voter) =>
      voter === this.id ? this.durableEnd : Math.max(0, leadership.progress.get(voter)?.logEndOffset ?? 0),
    );
    const candidate = majorityEnd(ends);
    const pastEpochStart = candidate > leadership.epochStartOffset || this.unsafe('countOldTermReplicas');
    if (candidate <= this.highWatermark || !pastEpochStart) return;
    this.highWatermark = candidate;
    for (const parked of [...leadership.parked.values()]) this.answerFetch(parked.request);
    // KIP-853: a leader that removed itself leads until the removal commits, then hands off.
    if (!this.isVoter()) this.resign(this.successorsByProgress());
  }

  private maybeCompleteTransfer(): void {
    const transfer = this.leadership?.transfer;
    if (transfer === null || transfer === undefined) return;
    const progress = this.leadership!.progress.get(transfer.to);
    if (progress === undefined || progress.logEndOffset < this.log.endOffset) return;
    this.resign([transfer.to, ...this.successorsByProgress().filter((id) => id !== transfer.to)]);
  }

  private onFetch(m: FetchRequest): void {
    const leadership = this.leadership;
    if (leadership === null || m.epoch !== this.epoch) {
      const errorCode = m.epoch < this.epoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER;
      this.send(this.fetchResponse(m, { errorCode }));
      return;
    }
    if (m.fetchOffset < 0 || m.lastFetchedEpoch < 0 || m.lastFetchedEpoch > m.epoch) {
      this.send(this.fetchResponse(m, { errorCode: ErrorCode.INVALID_REQUEST }));
      return;
    }
    const voters = this.log.voters;
    const progress = leadership.progress.track(m.from, this.now, voters);
    progress.lastFetchTick = this.now;
    const snapshot = this.log.snapshot;
    const known = this.log.endOfEpoch(m.lastFetchedEpoch);
    const matches = known !== null && known.epoch === m.lastFetchedEpoch && known.endOffset >= m.fetchOffset;
    if (snapshot !== null && (m.fetchOffset < this.log.logStartOffset || m.fetchOffset === 0 || (!matches && (known === null || known.endOffset <= this.log.logStartOffset)))) {
      this.send(this.fetchResponse(m, { snapshotId: snapshot.meta.id }));
      return;
    }
    if (!matches) {
      // One round trip: the fetcher truncates to where its log and this one last agree.
      const diverging = known ?? { epoch: 0, endOffset: 0 };
      this.send(this.fetchResponse(m, { divergingEpoch: { epoch: diverging.epoch, endOffset: Math.min(diverging.endOffset, this.log.endOffset) } }));
      return;
    }
    leadership.progress.recordFetch(progress, m.fetchOffset, this.log.endOffset, this.now);
    if (this.log.hasVoter(m.from)) this.maybeAdvanceHighWatermark();
    if (this.leadership === null) {
      this.send(this.fetchResponse(m, { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }));
      return;
    }
    // Parked fetches are keyed by fetcher, and fetchers are bounded like the tracked observers.
    const room = leadership.parked.has(m.from) || leadership.parked.size < MAX_TRACKED_OBSERVERS + voters.length;
    if (m.fetchOffset < this.log.endOffset || this.highWatermark > progress.sentHighWatermark || !room) this.answerFetch(m);
    else leadership.parked.set(m.from, { request: m, parkedAt: this.now });
    this.maybeCompleteTransfer();
  }

  /** Answers a valid fetch with whatever it can have now (possibly nothing) and un-parks it. */
  private answerFetch(m: FetchRequest): void {
    const leadership = this.leadership!;
    leadership.parked.delete(m.from);
    const entries = this.log.slice(m.fetchOffset, Math.min(m.maxBytes, this.config.maxFetchBytes));
    const progress = leadership.progress.get(m.from);
    if (progress !== undefined) progress.sentHighWatermark = this.highWatermark;
    this.send(this.fetchResponse(m, { entries }));
  }

  private fetchResponse(
    m: FetchRequest,
    parts: { errorCode?: number; entries?: readonly Entry[]; divergingEpoch?: OffsetAndEpoch; snapshotId?: OffsetAndEpoch },
  ): FetchResponse {
    return {
      type: 'fetchResponse',
      from: this.id,
      to: m.from,
      epoch: this.epoch,
      errorCode: parts.errorCode ?? ErrorCode.NONE,
      leaderId: this.role === 'resigned' ? NO_NODE : this.leaderId,
      fetchOffset: m.fetchOffset,
      lastFetchedEpoch: m.lastFetchedEpoch,
      entries: parts.entries ?? [],
      highWatermark: this.highWatermark,
      divergingEpoch: parts.divergingEpoch ?? null,
      snapshotId: parts.snapshotId ?? null,
    };
  }

  private onFetchSnapshot(m: FetchSnapshotRequest): void {
    const leadership = this.leadership;
    const snapshot = this.log.snapshot;
    const reply = (errorCode: number, bytes: Uint8Array, meta: SnapshotMeta | null): void =>
      this.send({
        type: 'fetchSnapshotResponse',
        from: this.id,
        to: m.from,
        epoch: this.epoch,
        errorCode,
        leaderId: this.role === 'resigned' ? NO_NODE : this.leaderId,
        snapshot: meta,
        position: m.position,
        bytes,
      });
    if (leadership === null || m.epoch !== this.epoch) {
      reply(m.epoch < this.epoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER, new Uint8Array(0), null);
      return;
    }
    const progress = leadership.progress.track(m.from, this.now, this.log.voters);
    progress.lastFetchTick = this.now;
    if (snapshot === null || !sameId(snapshot.meta.id, m.snapshotId)) {
      reply(ErrorCode.SNAPSHOT_NOT_FOUND, new Uint8Array(0), null);
    } else if (m.position < 0 || m.position > snapshot.meta.size) {
      reply(ErrorCode.POSITION_OUT_OF_RANGE, new Uint8Array(0), snapshot.meta);
    } else {
      const chunk = Math.max(1, Math.min(m.maxBytes, this.config.maxFetchBytes));
      reply(ErrorCode.NONE, snapshot.data.subarray(m.position, m.position + chunk), snapshot.meta);
    }
  }

  // ---- follower and observer: fetching ----

  /** Sends the next fetch (or snapshot chunk request) once everything fetched so far is durable. */
  private maybeFetch(): void {
    const fetching = this.isFollowing() || (this.role === 'prospective' && this.leaderId >= 0);
    if (!fetching || this.outstanding !== null || this.now < this.fetchBackoffUntil) return;
    if (this.stableEnd < this.log.endOffset || this.durableEnd < this.log.endOffset || this.pendingSnapshot !== null) return;
    const to = this.leaderId >= 0 ? this.leaderId : this.role === 'observer' ? this.randomVoter() : NO_NODE;
    if (to < 0) return;
    const download = this.download;
    if (download !== null) {
      this.outstanding = { kind: 'snapshot', to, position: download.received, sentAt: this.now };
      this.send({
        type: 'fetchSnapshot',
        from: this.id,
        to,
        epoch: this.epoch,
        snapshotId: download.id,
        position: download.received,
        maxBytes: this.config.maxFetchBytes,
      });
      return;
    }
    const fetchOffset = this.durableEnd;
    const lastFetchedEpoch = this.log.epochBefore(fetchOffset);
    this.outstanding = { kind: 'fetch', to, fetchOffset, lastFetchedEpoch, sentAt: this.now };
    this.send({
      type: 'fetch',
      from: this.id,
      to,
      epoch: this.epoch,
      fetchOffset,
      lastFetchedEpoch,
      maxBytes: this.config.maxFetchBytes,
      observer: !this.isVoter(),
    });
  }

  private randomVoter(): NodeId {
    const others = this.log.voters.filter((id) => id !== this.id);
    return others.length === 0 ? NO_NODE : others[Math.floor(this.config.random() * others.length)]!;
  }

  /** An error answer: follow a leader it names, else retry after a short backoff. */
  private onFetchRefused(epoch: number, leaderId: NodeId): void {
    if (epoch === this.epoch && leaderId >= 0 && leaderId !== this.leaderId && this.role !== 'leader' && this.role !== 'candidate') {
      this.becomeFollower(epoch, leaderId);
    } else this.backOffFetching();
  }

  /** After a refusal, the next fetch waits a little (KRaft's retry backoff) instead of spinning. */
  private backOffFetching(): void {
    this.fetchBackoffUntil = this.now + Math.max(1, Math.ceil(this.config.electionTimeoutTicks / 20));
  }

  /** A successful answer from `from` proves it leads this epoch. */
  private acceptLeader(from: NodeId, leaderId: NodeId): boolean {
    if (leaderId !== from) return false;
    if (this.leaderId !== from || !this.isFollowing()) this.becomeFollower(this.epoch, from);
    if (this.leaderId !== from) return false;
    this.fetchElapsed = 0;
    this.fetchedFromLeader = true;
    return true;
  }

  private onFetchResponse(m: FetchResponse): void {
    const outstanding = this.outstanding;
    if (m.epoch < this.epoch || outstanding?.kind !== 'fetch' || outstanding.to !== m.from) return;
    if (m.fetchOffset !== outstanding.fetchOffset || m.lastFetchedEpoch !== outstanding.lastFetchedEpoch) return;
    this.outstanding = null;
    if (m.errorCode !== ErrorCode.NONE) {
      this.onFetchRefused(m.epoch, m.leaderId);
      return;
    }
    if (this.durableEnd !== m.fetchOffset || this.log.endOffset !== m.fetchOffset || !this.acceptLeader(m.from, m.leaderId)) return;
    if (m.snapshotId !== null) {
      this.download = { id: m.snapshotId, meta: null, chunks: [], received: 0 };
      return;
    }
    if (m.divergingEpoch !== null) {
      const local = this.log.endOfEpoch(m.divergingEpoch.epoch);
      const to = local === null ? this.log.logStartOffset : Math.min(local.endOffset, m.divergingEpoch.endOffset);
      // Never below the high watermark: that would drop a committed entry (KRaft stops the node here;
      // a peer's bad answer must not crash this one, so it is ignored and the fetch retried).
      if (to >= this.highWatermark) this.truncate(to);
      else this.backOffFetching();
      return;
    }
    for (const entry of m.entries) {
      if (entry.offset !== this.log.endOffset || entry.epoch > m.epoch || entry.epoch < this.log.lastEpoch) break;
      this.log.append(entry);
    }
    this.highWatermark = Math.max(this.highWatermark, Math.min(m.highWatermark, this.log.endOffset));
    this.refreshMembershipRole();
  }

  private truncate(offset: number): void {
    this.log.truncate(offset);
    this.pendingTruncate = Math.min(this.pendingTruncate ?? offset, offset);
    this.stableEnd = Math.min(this.stableEnd, offset);
    this.durableEnd = Math.min(this.durableEnd, offset);
    for (const inflight of this.inflight) inflight.limit = Math.min(inflight.limit, offset);
    this.refreshMembershipRole();
  }

  private onFetchSnapshotResponse(m: FetchSnapshotResponse): void {
    const outstanding = this.outstanding;
    const download = this.download;
    if (m.epoch < this.epoch || outstanding?.kind !== 'snapshot' || outstanding.to !== m.from || m.position !== outstanding.position) return;
    this.outstanding = null;
    if (m.errorCode !== ErrorCode.NONE) {
      // The snapshot moved on or the position is off: start over from a fetch.
      this.download = null;
      this.onFetchRefused(m.epoch, m.leaderId);
      return;
    }
    if (download === null || m.snapshot === null || !sameId(m.snapshot.id, download.id) || m.position !== download.received) return;
    if (!this.acceptLeader(m.from, m.leaderId)) return;
    if (download.meta !== null && download.meta.size !== m.snapshot.size) {
      this.download = null;
      return;
    }
    download.meta = m.snapshot;
    download.chunks.push(m.bytes);
    download.received += m.bytes.byteLength;
    if (download.received > m.snapshot.size || (m.bytes.byteLength === 0 && download.received < m.snapshot.size)) {
      this.download = null;
      return;
    }
    if (download.received === m.snapshot.size) this.installSnapshot({ meta: m.snapshot, data: concat(download.chunks, m.snapshot.size) });
  }

  /** A leader's snapshot replaces the whole log; the state machine jumps to its end. */
  private installSnapshot(snapshot: Snapshot): void {
    const end = snapshot.meta.id.endOffset;
    this.download = null;
    this.log.install(snapshot);
    this.pendingSnapshot = snapshot;
    this.pendingTruncate = null;
    this.stableEnd = end;
    this.durableEnd = Math.min(this.durableEnd, end);
    for (const inflight of this.inflight) inflight.limit = Math.min(inflight.limit, this.durableEnd);
    this.highWatermark = Math.max(this.highWatermark, end);
    this.applied = Math.max(this.applied, end);
    this.refreshMembershipRole();
  }

  // ---- commit ----

  /** Committed entries go out only once durable here (unless the applyBeforeDurable mutation is on). */
  private commitLimit(): number {
    const local = this.unsafe('applyBeforeDurable') ? this.log.endOffset : this.durableEnd;
    return Math.max(this.applied, Math.min(this.highWatermark, local));
  }

  private send(m: Message): void {
    this.messages.push(m);
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.epoch === b.epoch && a.votedFor === b.votedFor && a.leaderId === b.leaderId;
}

function sameId(a: OffsetAndEpoch, b: OffsetAndEpoch): boolean {
  return a.endOffset === b.endOffset && a.epoch === b.epoch;
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
