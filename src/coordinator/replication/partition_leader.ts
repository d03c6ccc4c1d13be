// The leader side of one partition's replication (Kafka's Partition/Replica bookkeeping) as a pure
// state machine: follower positions, the ISR and its changes, the high watermark, and the acks=all
// verdicts that follow from them. No I/O and no clock of its own: every input carries `now` in ms.
// It will live in the partition actor on the shard worker, beside PendingAcks; the replica fetch
// handler feeds it follower fetches and the AlterPartition channel carries its proposals.
//
// API (every input returns a LeaderOutput; `onFollowerFetch` also the answer to send):
//   new PartitionLeader(identity, settings, assignment, localLog, highWatermark, epochEnd, now)
//                                 became leader: assignment from the metadata image, own log, own HW
//   onFollowerFetch(position, now) a follower fetched: its answer (error, diverging epoch, HW, log start);
//                                 fetches from non-replicas, stale broker incarnations and other
//                                 leader epochs are refused here, whatever the handler checked
//   onLocalLog(localLog, now)      the own log's start, end or durable end moved (append, commit, retention)
//   onAlterPartitionResult(sent, result, now)  the controller answered `sent` (a transport failure
//                                 is reported as a result with REQUEST_TIMED_OUT)
//   onMetadata(assignment, now)    the image changed the partition (ISR, replicas, epochs, broker states);
//                                 when the image names another leader the driver drops this state
//                                 and fails its waiting produces with NOT_LEADER_OR_FOLLOWER
//   tick(now)                      time passed: lagging followers leave the ISR
//   timeDriven                     whether tick() can change anything (false: a lone leader, nothing to resend)
//   admit(acks), acksAllOutcome(endOffset)   produce admission and a waiting acks=all produce's fate
// LeaderOutput: the high watermark (never lower than before), whether waiting acks=all produces
// should be looked at again, and at most one AlterPartition proposal to send.
//
// Rules (cluster.md §3.2-3.5):
// - Caught up: a follower whose last fetch reached the leader's log end, or whose lastCaughtUp
//   (caught_up.ts) is at most `replicaLagTimeMaxMs` old. ISR members other than the leader that
//   are not caught up are proposed for removal on the next input (tick or any other); a follower
//   that stops fetching leaves within the lag time plus one tick.
// - Joining: a replica outside the ISR whose fetch reaches the high watermark and the leader's
//   epoch start offset, whose broker is registered, unfenced and not shutting down, and whose
//   fetch carried its registered broker epoch (or none), is proposed for the ISR on that fetch
//   (KIP-841, KIP-903); as in Kafka only its own fetch adds it, so a silent replica never rejoins.
//   Removals go first; an addition blocked by another proposal is retried at the next fetch.
// - One AlterPartition at a time. While it is in flight the "maximal ISR" (committed ISR plus the
//   members it adds) counts for the high watermark and acks=all. A stale rejection
//   (INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, NEW_LEADER_ELECTED, unknown partition) keeps it
//   counted and blocks proposals until the image brings a newer partition epoch. A refusal that
//   applied nothing (INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED, INVALID_REQUEST) drops it, and
//   proposals resume after `alterPartitionRetryMs`. Any other failure (no answer, NOT_CONTROLLER)
//   leaves open whether the controller applied it: it stays counted and the same proposal is sent
//   again after `alterPartitionRetryMs` (if it had applied, the resend meets INVALID_UPDATE_VERSION
//   and the image settles it). Dropping it instead would let the high watermark pass a member the
//   controller may just have added.
// - High watermark: the minimum acknowledged offset over the maximal ISR and over followers that
//   are caught up and could join (so a joining replica is not outrun), the leader's own being its
//   durable end under flush-always and its log end otherwise; it never decreases and does not move
//   while the committed ISR is below min ISR (KIP-966's strict rule). A follower's acknowledged
//   offset is its fetch offset; under flush-always the follower fetches only from its durable end,
//   which may pass the leader's durable end (followers read what the leader wrote before it synced).
//   A new leadership knows no follower's offset, so its high watermark waits for their fetches.
// - A partition epoch or leader epoch older than the state's never overwrites it.
// - Truncation on fetch (KIP-320): a fetch whose last fetched epoch ends earlier here than its
//   fetch offset gets that epoch's end instead of records, from the leader-epoch cache, with the
//   current epoch taken to start at the leadership's start as in Kafka (historyEnd), so a deposed
//   leader's tail in an epoch no other replica had is cut before the new leader's first append.
import { UNDEFINED_EPOCH, type EpochEndOffset } from '../../log/leader_epoch_cache.js';
import { ErrorCode } from '../../protocol/errors.js';
import { caughtUpAfterFetch } from './caught_up.js';
import { acksAllOutcome, admitProduce, effectiveMinIsr } from './min_isr.js';
import {
  LeaderRecoveryState,
  type AlterPartitionItem,
  type AlterPartitionResult,
  type BrokerId,
  type ReplicaFetchAnswer,
  type ReplicaFetchPosition,
} from './types.js';

export interface ReplicationSettings {
  /** Kafka's replica.lag.time.max.ms (types.ts: DEFAULT_REPLICA_LAG_TIME_MAX_MS). */
  readonly replicaLagTimeMaxMs: number;
  readonly alterPartitionRetryMs: number;
  /** --flush always: a replica's records count as acknowledged only once durable. */
  readonly flushAlways: boolean;
}

export interface LeaderIdentity {
  readonly topicId: string;
  readonly partitionIndex: number;
  readonly localBrokerId: BrokerId;
}

/** A replica's broker as the metadata image registers it. */
export interface ReplicaBroker {
  readonly brokerEpoch: number;
  /** Unfenced and not in controlled shutdown: it may join the ISR. */
  readonly isrEligible: boolean;
}

/** The partition as the metadata image has it, with what the leader needs of its brokers and config. */
export interface LeaderAssignment {
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly replicas: readonly BrokerId[];
  readonly isr: readonly BrokerId[];
  readonly leaderRecoveryState: LeaderRecoveryState;
  /** The topic's min.insync.replicas. */
  readonly minInsyncReplicas: number;
  /** Registered replicas' brokers; a replica absent here is not registered. */
  readonly brokers: ReadonlyMap<BrokerId, ReplicaBroker>;
}

export interface LocalLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly durableEndOffset: number;
  /** The epoch of the log's last batch (its leader-epoch cache's latest), -1 when none. */
  readonly latestEpoch: number;
}

/** The leader's leader-epoch cache: LeaderEpochCache.endOffsetFor. */
export type EpochEndLookup = (epoch: number, logEndOffset: number) => EpochEndOffset;

export interface LeaderOutput {
  readonly highWatermark: number;
  /** The high watermark moved or the maximal ISR crossed min ISR: waiting acks=all produces may be settled now (acksAllOutcome). */
  readonly acksChanged: boolean;
  /** A proposal to send now; it stays in flight until onAlterPartitionResult. */
  readonly alterPartition: AlterPartitionItem | null;
}

/** The leader's bookkeeping of one follower (Kafka's Replica state). */
export interface FollowerProgress {
  /** Its last fetch offset in this leadership, -1 until it fetches. */
  logEndOffset: number;
  logStartOffset: number;
  /** -Infinity when never (an ISR member of a new leadership counts as caught up when it began). */
  lastCaughtUp: number;
  lastFetch: number;
  leaderEndAtLastFetch: number;
  /** The broker epoch its last fetch carried, -1 when none. */
  fetchBrokerEpoch: number;
}

/** A time before any: a follower that never caught up or never fetched. */
const NEVER = -Infinity;

/** Rejections after which only a newer image helps: the proposal was based on stale state. */
const STALE_PROPOSAL_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.INVALID_UPDATE_VERSION,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.NEW_LEADER_ELECTED,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
]);

/** Rejections the controller answers without applying anything: the proposal may be made afresh. */
const REFUSED_PROPOSAL_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.INELIGIBLE_REPLICA,
  ErrorCode.OPERATION_NOT_ATTEMPTED,
  ErrorCode.INVALID_REQUEST,
]);

/**
 * A proposal the leader stands behind. 'inFlight': sent, unanswered. 'resend': the controller may
 * or may not have applied it (no answer, NOT_CONTROLLER, ...), so the same proposal goes again at
 * `retryAt`. 'rejected': stale; waits for a newer image. In every state it counts in the maximal ISR.
 */
type Pending =
  | { readonly item: AlterPartitionItem; readonly state: 'inFlight' | 'rejected' }
  | { readonly item: AlterPartitionItem; readonly state: 'resend'; readonly retryAt: number };

export class PartitionLeader {
  private assignment: LeaderAssignment;
  private log: LocalLog;
  private hw: number;
  /** The log end when this leadership began: a joining follower must have reached it. */
  private epochStartOffset: number;
  private readonly followers = new Map<BrokerId, FollowerProgress>();
  private pending: Pending | null = null;
  private retryAt = -Infinity;
  /** A proposal made (or due again) during the current input, handed out in its output. */
  private toSend: AlterPartitionItem | null = null;

  constructor(
    private readonly identity: LeaderIdentity,
    private readonly settings: ReplicationSettings,
    assignment: LeaderAssignment,
    log: LocalLog,
    highWatermark: number,
    private readonly epochEnd: EpochEndLookup,
    now: number,
  ) {
    this.assignment = assignment;
    this.log = log;
    this.hw = highWatermark;
    this.epochStartOffset = log.logEndOffset;
    this.resetFollowers(now);
  }

  get highWatermark(): number {
    return this.hw;
  }

  get leaderEpoch(): number {
    return this.assignment.leaderEpoch;
  }

  get partitionEpoch(): number {
    return this.assignment.partitionEpoch;
  }

  /** The ISR the image last committed. */
  get isr(): readonly BrokerId[] {
    return this.assignment.isr;
  }

  /** The committed ISR plus the members a pending proposal adds. */
  get maximalIsr(): readonly BrokerId[] {
    // Asked on every acks=all commit: no arrays unless a proposal is in flight.
    if (this.pending === null) return this.assignment.isr;
    const extra = this.pending.item.newIsrWithEpochs.map((m) => m.brokerId).filter((id) => !this.assignment.isr.includes(id));
    return extra.length === 0 ? this.assignment.isr : [...this.assignment.isr, ...extra];
  }

  /** The proposal sent and not yet answered (or rejected as stale), if any. */
  get inFlight(): AlterPartitionItem | null {
    return this.pending?.item ?? null;
  }

  follower(id: BrokerId): Readonly<FollowerProgress> | undefined {
    return this.followers.get(id);
  }

  /** NONE, or NOT_ENOUGH_REPLICAS for an acks=all produce while the committed ISR is below min ISR. */
  admit(acks: number): ErrorCode {
    return admitProduce(acks, this.assignment.isr.length, this.minIsr());
  }

  /** A waiting acks=all produce whose records end before `endOffset`: still waiting, or its answer. */
  acksAllOutcome(endOffset: number): 'waiting' | ErrorCode {
    return acksAllOutcome(endOffset, this.hw, this.maximalIsr.length, this.minIsr());
  }

  onFollowerFetch(position: ReplicaFetchPosition, now: number): { answer: ReplicaFetchAnswer; output: LeaderOutput } {
    const before = this.snapshot();
    const answer = this.answerFetch(position, now);
    const output = this.settle(before, now, answer.errorCode === ErrorCode.NONE && answer.divergingEpoch === null ? position.replicaId : null);
    return { answer: { ...answer, highWatermark: output.highWatermark }, output };
  }

  onLocalLog(log: LocalLog, now: number): LeaderOutput {
    const before = this.snapshot();
    this.log = log;
    return this.settle(before, now);
  }

  tick(now: number): LeaderOutput {
    return this.settle(this.snapshot(), now);
  }

  /**
   * Whether tick() can change anything as time passes. Time enters only through followers (lag
   * takes them out of the ISR and out of the high watermark's count), an ISR member other than
   * this broker (without progress it counts as lagging) and a proposal waiting to be resent. A
   * leader alone in its replicas and ISR with nothing to resend is moved by its inputs only, so
   * the shard need not wake to tick it.
   */
  get timeDriven(): boolean {
    const self = this.identity.localBrokerId;
    return this.followers.size > 0 || this.pending?.state === 'resend' || this.assignment.isr.some((id) => id !== self);
  }

  onAlterPartitionResult(sent: AlterPartitionItem, result: AlterPartitionResult, now: number): LeaderOutput {
    const before = this.snapshot();
    if (this.pending?.item === sent && this.pending.state === 'inFlight') {
      if (result.errorCode === ErrorCode.NONE) {
        this.pending = null;
        const current = this.assignment;
        if (result.leaderEpoch === current.leaderEpoch && result.partitionEpoch > current.partitionEpoch) {
          this.assignment = { ...current, isr: [...result.isr], partitionEpoch: result.partitionEpoch, leaderRecoveryState: result.leaderRecoveryState };
        }
      } else if (STALE_PROPOSAL_ERRORS.has(result.errorCode)) {
        this.pending = { item: sent, state: 'rejected' };
      } else if (REFUSED_PROPOSAL_ERRORS.has(result.errorCode)) {
        this.pending = null;
        this.retryAt = now + this.settings.alterPartitionRetryMs;
      } else {
        this.pending = { item: sent, state: 'resend', retryAt: now + this.settings.alterPartitionRetryMs };
      }
    }
    return this.settle(before, now);
  }

  onMetadata(assignment: LeaderAssignment, now: number): LeaderOutput {
    const before = this.snapshot();
    const current = this.assignment;
    const newer = assignment.leaderEpoch > current.leaderEpoch;
    if (newer || (assignment.leaderEpoch === current.leaderEpoch && assignment.partitionEpoch >= current.partitionEpoch)) {
      if (newer || assignment.partitionEpoch > current.partitionEpoch) {
        this.pending = null;
        this.retryAt = -Infinity;
      }
      this.assignment = assignment;
      if (newer) {
        this.epochStartOffset = this.log.logEndOffset;
        this.resetFollowers(now);
      } else {
        this.syncFollowers(now);
      }
    }
    return this.settle(before, now);
  }

  private minIsr(): number {
    return effectiveMinIsr(this.assignment.minInsyncReplicas, this.assignment.replicas.length);
  }

  /** Fresh bookkeeping for a new leadership: ISR members count as caught up now, offsets unknown. */
  private resetFollowers(now: number): void {
    this.followers.clear();
    this.syncFollowers(now);
  }

  /** Tracks exactly the assignment's replicas other than the leader, keeping what is known of the remaining ones. */
  private syncFollowers(now: number): void {
    const self = this.identity.localBrokerId;
    for (const id of [...this.followers.keys()]) if (!this.assignment.replicas.includes(id)) this.followers.delete(id);
    for (const id of this.assignment.replicas) {
      if (id === self || this.followers.has(id)) continue;
      const inSync = this.assignment.isr.includes(id);
      this.followers.set(id, {
        logEndOffset: -1,
        logStartOffset: -1,
        lastCaughtUp: inSync ? now : NEVER,
        lastFetch: inSync ? now : NEVER,
        leaderEndAtLastFetch: inSync ? this.log.logEndOffset : -1,
        fetchBrokerEpoch: -1,
      });
    }
  }

  private answerFetch(p: ReplicaFetchPosition, now: number): Omit<ReplicaFetchAnswer, 'highWatermark'> {
    const logStartOffset = this.log.logStartOffset;
    const fail = (errorCode: ErrorCode) => ({ errorCode, logStartOffset, divergingEpoch: null });
    const progress = this.followers.get(p.replicaId);
    if (progress === undefined) return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < this.leaderEpoch) return fail(ErrorCode.FENCED_LEADER_EPOCH);
    if (p.currentLeaderEpoch > this.leaderEpoch) return fail(ErrorCode.UNKNOWN_LEADER_EPOCH);
    const registered = this.assignment.brokers.get(p.replicaId);
    if (registered !== undefined && p.replicaEpoch >= 0 && p.replicaEpoch < registered.brokerEpoch) {
      return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    }
    if (p.lastFetchedEpoch >= 0) {
      const end = this.historyEnd(p.lastFetchedEpoch);
      if (end.epoch < p.lastFetchedEpoch || end.endOffset < p.fetchOffset) {
        return { errorCode: ErrorCode.NONE, logStartOffset, divergingEpoch: { epoch: end.epoch, endOffset: end.endOffset } };
      }
    }
    if (p.fetchOffset < logStartOffset || p.fetchOffset > this.log.logEndOffset) return fail(ErrorCode.OFFSET_OUT_OF_RANGE);
    const leaderEnd = this.log.logEndOffset;
    progress.lastCaughtUp = caughtUpAfterFetch(progress, p.fetchOffset, leaderEnd, now);
    progress.logEndOffset = p.fetchOffset;
    progress.logStartOffset = p.logStartOffset;
    progress.leaderEndAtLastFetch = leaderEnd;
    progress.lastFetch = now;
    progress.fetchBrokerEpoch = p.replicaEpoch;
    return { errorCode: ErrorCode.NONE, logStartOffset, divergingEpoch: null };
  }

  /**
   * Where `epoch` ends in this leader's history, as Kafka's leader answers it. Kafka's epoch cache
   * holds the current epoch from the leadership's start (at epochStartOffset); this log's gains it
   * only with the epoch's first batch. Until then, an epoch above every cached one and below the
   * current ends where the leadership began, reported with the latest cached epoch (the follower
   * cuts back to its own end of that one), and the current epoch ends at the log end. Left to the
   * cache, both were unknown, answered as a diverging epoch of -1/-1, which on the wire means none:
   * a deposed leader whose last epoch no other replica had was neither truncated nor counted until
   * the new leader's first append, and stayed out of the ISR while the partition was idle.
   */
  private historyEnd(epoch: number): EpochEndOffset {
    const cached = this.epochEnd(epoch, this.log.logEndOffset);
    if (cached.epoch !== UNDEFINED_EPOCH || epoch > this.leaderEpoch) return cached;
    if (epoch === this.leaderEpoch) return { epoch, endOffset: this.log.logEndOffset };
    return { epoch: this.log.latestEpoch >= 0 ? this.log.latestEpoch : epoch, endOffset: this.epochStartOffset };
  }

  private snapshot(): { hw: number; belowMin: boolean } {
    return { hw: this.hw, belowMin: this.maximalIsr.length < this.minIsr() };
  }

  /**
   * After every input: propose an ISR change if one is due, move the high watermark, report.
   * `fetcher` is the follower whose fetch this input was: only a fetch can add its follower.
   */
  private settle(before: { hw: number; belowMin: boolean }, now: number, fetcher: BrokerId | null = null): LeaderOutput {
    this.maybePropose(now, fetcher);
    this.advanceHighWatermark(now);
    const alterPartition = this.toSend;
    this.toSend = null;
    const after = this.snapshot();
    return { highWatermark: this.hw, acksChanged: after.hw !== before.hw || after.belowMin !== before.belowMin, alterPartition };
  }

  private caughtUp(progress: FollowerProgress, now: number): boolean {
    return progress.logEndOffset >= this.log.logEndOffset || now - progress.lastCaughtUp <= this.settings.replicaLagTimeMaxMs;
  }

  /** Whether the follower could join the ISR by what the image says of its broker and what its fetch carried. */
  private brokerEligible(id: BrokerId, progress: FollowerProgress): boolean {
    const broker = this.assignment.brokers.get(id);
    return broker !== undefined && broker.isrEligible && (progress.fetchBrokerEpoch < 0 || progress.fetchBrokerEpoch === broker.brokerEpoch);
  }

  private maybePropose(now: number, fetcher: BrokerId | null): void {
    if (this.pending?.state === 'resend' && now >= this.pending.retryAt) {
      this.pending = { item: this.pending.item, state: 'inFlight' };
      this.toSend = this.pending.item;
    }
    if (this.pending !== null || now < this.retryAt) return;
    const isr = this.assignment.isr;
    const self = this.identity.localBrokerId;
    const lagging = isr.filter((id) => {
      const progress = this.followers.get(id);
      return id !== self && (progress === undefined || !this.caughtUp(progress, now));
    });
    if (lagging.length > 0) {
      this.propose(isr.filter((id) => !lagging.includes(id)), this.assignment.leaderRecoveryState);
      return;
    }
    const progress = fetcher === null ? undefined : this.followers.get(fetcher);
    if (fetcher === null || progress === undefined || isr.includes(fetcher)) return;
    if (progress.logEndOffset >= this.hw && progress.logEndOffset >= this.epochStartOffset && this.brokerEligible(fetcher, progress)) {
      this.propose([...isr, fetcher], LeaderRecoveryState.RECOVERED);
    }
  }

  private propose(isr: readonly BrokerId[], leaderRecoveryState: LeaderRecoveryState): void {
    const self = this.identity.localBrokerId;
    const members = isr.includes(self) ? isr : [self, ...isr];
    const epochOf = (id: BrokerId): number => {
      const fetched = this.followers.get(id)?.fetchBrokerEpoch ?? -1;
      return fetched >= 0 ? fetched : (this.assignment.brokers.get(id)?.brokerEpoch ?? -1);
    };
    const item: AlterPartitionItem = {
      topicId: this.identity.topicId,
      partitionIndex: this.identity.partitionIndex,
      leaderEpoch: this.assignment.leaderEpoch,
      newIsrWithEpochs: members.map((brokerId) => ({ brokerId, brokerEpoch: epochOf(brokerId) })),
      leaderRecoveryState,
      partitionEpoch: this.assignment.partitionEpoch,
    };
    this.pending = { item, state: 'inFlight' };
    this.toSend = item;
  }

  private advanceHighWatermark(now: number): void {
    if (this.assignment.isr.length < this.minIsr()) return;
    const maximal = this.maximalIsr;
    let candidate = this.settings.flushAlways ? this.log.durableEndOffset : this.log.logEndOffset;
    for (const [id, p] of this.followers) {
      const counted = maximal.includes(id) || (this.caughtUp(p, now) && this.brokerEligible(id, p));
      if (counted && p.logEndOffset < candidate) candidate = p.logEndOffset;
    }
    if (candidate > this.hw) this.hw = candidate;
  }
}
