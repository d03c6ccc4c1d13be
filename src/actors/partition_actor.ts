// One partition's actor, on the shard worker that hosts it: the only owner of its log and of its
// replica state. It runs the partition's produce path (validate, stamp the leader epoch, append,
// hand the log to the shard's group commit, and acknowledge through PendingAcks once the
// acknowledgement condition covers the records), its reads, its offset lookups (ListOffsets,
// OffsetsForLeaderEpoch), and decides when the fetches parked on it should look again.
// It never blocks and never calls up to main: results go back through the shard to the lane the
// request came from (lanes.ts; lane 0 is main's outbound ring), ISR changes through the shard's
// event port. A produce carries its lane in its answer (`LanedProduceResult`), which is also what
// PendingAcks holds, so the lane costs no object of its own; parked fetches are known here by
// their lane-qualified keys.
//
// Replication: main tells the actor its role from each metadata image (setRole). As leader it
// keeps a PartitionLeader (coordinator/replication): follower fetches feed it, it moves the high
// watermark and proposes ISR changes. As follower it keeps a PartitionFollower and is a
// FollowedPartition of the shard's replica fetcher for its leader: it appends the leader's batches
// unchanged, truncates a diverged tail, starts its log over where it lies outside the leader's, and
// deletes what lies below the leader's log start. The log's high watermark is moved only here.
// Acknowledgement: acks=0/1 produces complete once their records are in the log's files (durable
// under flush=always); acks=all ones once the high watermark covers them, which the in-sync
// replicas' fetch offsets bound, or fail with NOT_ENOUGH_REPLICAS(_AFTER_APPEND) below min ISR.
import type { GroupCommitter } from '../log/group_commit.js';
import { StorageError } from '../log/io_backend.js';
import type { AppendResult, LogConfig, PartitionLog, ReadResult } from '../log/partition_log.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { BATCH_HEADER_BYTES, BatchField, LOG_OVERHEAD, batchCrcMatches, readBatchHeader, validateProducedBatch } from '../protocol/record_batch.js';
import { ACKS_ALL } from '../coordinator/replication/min_isr.js';
import { PartitionFollower, type FollowerAction, type FollowerSettings } from '../coordinator/replication/partition_follower.js';
import { PartitionLeader, type LeaderAssignment, type LeaderOutput, type LocalLog, type ReplicationSettings } from '../coordinator/replication/partition_leader.js';
import type {
  AlterPartitionItem, AlterPartitionResult, BrokerId, PartitionRole, ReplicaBrokerInfo, ReplicaFetchAnswer, ReplicaFetchPosition,
} from '../coordinator/replication/types.js';
import type { DeadlineWheel } from './deadline_wheel.js';
import { PendingAcks } from './pending_acks.js';
import type { ListOffsetsPartitionResult, ProduceAsk, ProduceResult } from './ring_messages.js';

export interface ActorStats {
  topic: string;
  partition: number;
  handle: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  sizeBytes: number;
  batchesIn: number;
  bytesIn: number;
  fetches: number;
  parkedFetches: number;
  pendingAcks: number;
  /** 'leader', 'follower', 'leaderless', or 'none' before main told it. */
  role: string;
  leaderEpoch: number;
  /** The leader's ISR as it counts it (committed plus a pending addition), [] off the leader. */
  isr: readonly number[];
  lastError: string | null;
}

/** Something a shard's deadline wheel expires. */
export interface Expirable {
  expire(now: number): void;
}

/** A produce's answer and the lane it goes back to (lanes.ts). */
export interface LanedProduceResult extends ProduceResult {
  readonly lane: number;
}

/** What the hosting shard lends its actors: the shared commit, clock, and outbound paths. */
export interface ActorPorts {
  readonly committer: GroupCommitter;
  readonly deadlines: DeadlineWheel<Expirable>;
  /** Sends `result` to its lane. */
  sendProduceResult(result: LanedProduceResult): void;
  /** The parked fetch `key` (lane-qualified, lanes.ts) includes a partition that has new readable data. */
  fetchMayProceed(key: number): void;
  /** An ISR change for the controller; its answer comes back through onAlterPartitionResult. */
  sendAlterPartition(handle: number, item: AlterPartitionItem): void;
  /** The actor started or stopped following a leader, or the leader it follows changed. */
  followingChanged(actor: PartitionActor): void;
}

/** What every replica of a shard shares: this broker, the registered brokers, the replication settings. */
export interface ReplicaContext {
  readonly localBrokerId: BrokerId;
  readonly brokers: ReadonlyMap<BrokerId, ReplicaBrokerInfo>;
  readonly settings: ReplicationSettings & FollowerSettings;
  now(): number;
}

/**
 * Produces waiting for their acknowledgement, per partition. Main bounds requests in flight
 * (connections x in-flight requests each); this is the actor's own guard behind that.
 */
export const MAX_PENDING_ACKS = 65_536;

/**
 * Produces main routed here under a leadership the actor has not been told of yet (the image
 * reaches main's view before the reconciler's setRoles reaches the shard): held until the role
 * arrives rather than refused, so a new leader's first produces do not bounce. Bounded in count
 * and in time.
 */
const MAX_HELD_PRODUCES = 1024;
const MAX_HOLD_MS = 2000;

interface HeldProduce {
  readonly lane: number;
  readonly ask: ProduceAsk;
  readonly records: Buffer;
  readonly released: () => void;
  readonly deadline: number;
}

/** Offsets a ListOffsets timestamp of -1 / -2 / -3 asks for (Kafka's sentinel values). */
const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;


export class PartitionActor implements Expirable {
  /** Lane-qualified keys (lanes.ts) of the parked fetches that include this partition. */
  readonly waiters = new Set<number>();
  /** acks=0/1 produces: complete once their records are in the log's files. */
  private readonly acks: PendingAcks<LanedProduceResult>;
  /** acks=all produces: complete once the high watermark covers them. */
  private readonly replicated: PendingAcks<LanedProduceResult>;
  /** The group coordinator's appends, waiting like acks=all produces (awaitReplicated). */
  private readonly internal: PendingAcks<(errorCode: number) => void>;
  /** The high watermark and written end parked fetches were last told about. */
  private wokeAt: number;
  private wokeWritten: number;
  /** When this actor's deadline-wheel entry fires (Infinity: none scheduled). */
  private expiresAt = Infinity;
  private batchesIn = 0;
  private bytesIn = 0;
  private fetches = 0;
  private role: PartitionRole | null = null;
  private leader: PartitionLeader | null = null;
  private follower: PartitionFollower | null = null;
  private held: HeldProduce[] = [];
  /** The broker epoch the follower state fetches with (a re-registered broker starts it afresh). */
  private followerEpoch = -1;
  /** The high watermark last written to the checkpoint file. */
  private checkpointedHw: number;
  lastError: string | null = null;

  constructor(
    readonly handle: number,
    readonly topic: string,
    readonly partition: number,
    readonly log: PartitionLog,
    private config: LogConfig,
    private readonly ports: ActorPorts,
    private readonly replicas: ReplicaContext,
  ) {
    const settle = (result: LanedProduceResult, code: number): void => this.acknowledge(result, code);
    this.acks = new PendingAcks<LanedProduceResult>(MAX_PENDING_ACKS, settle);
    this.replicated = new PendingAcks<LanedProduceResult>(MAX_PENDING_ACKS, settle);
    this.internal = new PendingAcks<(errorCode: number) => void>(MAX_PENDING_ACKS, (done, code) => done(code));
    this.wokeAt = log.highWatermark;
    this.wokeWritten = log.writtenOffset;
    this.checkpointedHw = log.highWatermark;
  }

  // ---- produce (leader) ----

  /** Validates and stages one batch (not yet readable). `records` must be owned by the caller (not a ring view). */
  append(records: Buffer): AppendResult {
    const v = validateProducedBatch(records, this.config.maxMessageBytes);
    if (!v.ok) {
      this.lastError = v.message;
      return { kind: 'error', code: v.error };
    }
    const result = this.log.appendBatch(records, v.header);
    if (result.kind === 'appended') {
      this.batchesIn++;
      this.bytesIn += records.length;
    }
    return result;
  }

  /**
   * A produced batch from `lane`: appended, committed with the shard's next group commit, and
   * answered on that lane once its acknowledgement condition holds (or failed). `released` runs
   * once the log no longer needs `records` (its commit settled, or it was never staged).
   */
  produce(lane: number, ask: ProduceAsk, records: Buffer, released: () => void): void {
    if (ask.leaderEpoch > (this.role?.leaderEpoch ?? -1) && this.held.length < MAX_HELD_PRODUCES) {
      const deadline = this.ports.deadlines.now() + Math.min(ask.timeoutMs, MAX_HOLD_MS);
      this.held.push({ lane, ask, records, released, deadline });
      if (deadline < this.expiresAt) this.scheduleExpiry(deadline);
      return;
    }
    const result: LanedProduceResult = { reqId: ask.reqId, slot: ask.slot, errorCode: 0, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, lane };
    const queue = ask.acks === ACKS_ALL ? this.replicated : this.acks;
    // Refused before appending: an append whose acknowledgement could not be tracked would be
    // written without anyone learning its offset.
    const refused = this.admit(ask);
    const appended: AppendResult =
      refused !== ErrorCode.NONE ? { kind: 'error', code: refused }
      : queue.full ? { kind: 'error', code: ErrorCode.REQUEST_TIMED_OUT }
      : this.append(records);
    result.logStartOffset = this.log.logStartOffset;
    if (appended.kind === 'error') {
      released();
      result.errorCode = appended.code;
      this.ports.sendProduceResult(result);
      return;
    }
    result.baseOffset = appended.baseOffset;
    if (appended.kind === 'appended') result.logAppendTime = appended.logAppendTime;
    const deadline = this.ports.deadlines.now() + ask.timeoutMs;
    queue.add(appended.lastOffset + 1, deadline, result);
    if (deadline < this.expiresAt) this.scheduleExpiry(deadline);
    const heldThrough = queue.lastSeq;
    this.ports.committer.commit(this.log).then(
      () => {
        released();
        this.committed();
      },
      (err: unknown) => {
        released();
        this.lastError = String(err);
        queue.failThrough(heldThrough, ErrorCode.KAFKA_STORAGE_ERROR);
      },
    );
  }

  /**
   * Only the leader appends. Main checked leadership against its image; an epoch newer than the
   * actor's means main saw a leadership the actor has not been told of yet (retriable). An acks=all
   * produce meets min.insync.replicas here.
   */
  private admit(ask: ProduceAsk): ErrorCode {
    const leader = this.leader;
    if (leader === null || ask.leaderEpoch > leader.leaderEpoch) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return leader.admit(ask.acks);
  }

  /**
   * Resolves once the high watermark covers `endOffset` (what this actor appended itself, e.g.
   * the group coordinator's records): NONE, or the error an acks=all produce would get (not the
   * leader any more, below min ISR, REQUEST_TIMED_OUT after `timeoutMs`).
   */
  awaitReplicated(endOffset: number, timeoutMs: number): Promise<number> {
    if (this.leader === null) return Promise.resolve(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (this.internal.full) return Promise.resolve(ErrorCode.REQUEST_TIMED_OUT);
    // The caller's append has just been committed: the leader learns its log's new (durable) end
    // now, as committed() makes it for produces. It used to learn it at the next replica tick, up
    // to 250 ms later, and a lone leader is no longer ticked at all.
    this.leaderSeesLog(this.replicas.now());
    return new Promise((resolve) => {
      const deadline = this.ports.deadlines.now() + timeoutMs;
      this.internal.add(endOffset, deadline, resolve);
      if (deadline < this.expiresAt) this.scheduleExpiry(deadline);
      this.settleReplicated();
    });
  }

  /** Wheel deadline: times out overdue acknowledgements, then waits for the next one. */
  expire(now: number): void {
    this.expiresAt = Infinity;
    if (this.held.some((h) => h.deadline <= now)) {
      const overdue = this.held.filter((h) => h.deadline <= now);
      this.held = this.held.filter((h) => h.deadline > now);
      for (const h of overdue) this.refuse(h, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    }
    this.acks.expire(now);
    this.replicated.expire(now);
    this.internal.expire(now);
    const next = Math.min(this.acks.nextDeadline(), this.replicated.nextDeadline(), this.internal.nextDeadline(), ...this.held.map((h) => h.deadline));
    if (next !== Infinity) this.scheduleExpiry(next);
  }

  private scheduleExpiry(deadline: number): void {
    this.expiresAt = deadline;
    this.ports.deadlines.add(this, deadline);
  }

  // ---- reads ----

  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean): ReadResult {
    this.fetches++;
    return this.log.read(fetchOffset, maxBytes, minOneBatch);
  }

  /**
   * A follower's fetch reaching this replica: the leader counts its position (ISR, high watermark)
   * and answers with an error, a diverging epoch, or nothing in the way of reading the records
   * (`readForReplica`). Not the leader: NOT_LEADER_OR_FOLLOWER.
   */
  replicaFetch(position: ReplicaFetchPosition): ReplicaFetchAnswer {
    this.fetches++;
    const leader = this.leader;
    if (leader === null) {
      return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, logStartOffset: -1, divergingEpoch: null };
    }
    const { answer, output } = leader.onFollowerFetch(position, this.replicas.now());
    this.applyLeader(output);
    return { ...answer, highWatermark: this.log.highWatermark };
  }

  /** A follower's records from `fetchOffset`: to the log end, while this replica still leads at `leaderEpoch` (-1: any). */
  readForReplica(fetchOffset: number, maxBytes: number, minOneBatch: boolean, leaderEpoch: number): ReadResult {
    const leader = this.leader;
    if (leader === null) return { error: ErrorCode.NOT_LEADER_OR_FOLLOWER, ranges: [], bytes: 0 };
    if (leaderEpoch >= 0 && leaderEpoch !== leader.leaderEpoch) return { error: ErrorCode.FENCED_LEADER_EPOCH, ranges: [], bytes: 0 };
    return this.log.read(fetchOffset, maxBytes, minOneBatch, 'log-end');
  }

  /** OffsetsForLeaderEpoch: the largest epoch <= `epoch` this log knows and where it ends (-1/-1 when unknown). */
  epochEndOffset(slot: number, epoch: number): ListOffsetsPartitionResult {
    const end = this.log.endOffsetForEpoch(epoch);
    return { slot, errorCode: ErrorCode.NONE, offset: end.endOffset, timestamp: -1, leaderEpoch: end.epoch };
  }

  /** The offset for a ListOffsets timestamp: latest (-1), earliest (-2), max timestamp (-3) or the first at/after it. */
  listOffset(slot: number, timestamp: number): ListOffsetsPartitionResult {
    // The handler answers with the cluster view's leader epoch, so none is looked up here.
    const found = (offset: number, ts = -1): ListOffsetsPartitionResult => ({ slot, errorCode: 0, offset, timestamp: ts, leaderEpoch: -1 });
    if (timestamp === LATEST) return found(this.log.highWatermark);
    if (timestamp === EARLIEST) return found(this.log.logStartOffset);
    try {
      const hit = timestamp === MAX_TIMESTAMP ? this.log.maxTimestamp() : this.log.offsetForTimestamp(timestamp);
      return hit ? found(hit.offset, hit.timestamp) : found(-1);
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      this.lastError = err.message;
      return { slot, errorCode: ErrorCode.KAFKA_STORAGE_ERROR, offset: -1, timestamp: -1, leaderEpoch: -1 };
    }
  }

  // ---- roles ----

  get isLeader(): boolean {
    return this.leader !== null;
  }

  /** The broker this replica follows, or -1 when it is not a follower. */
  get followedLeader(): BrokerId {
    return this.follower?.leaderId ?? -1;
  }

  /** The partition's topic id, '' until main told the actor its role. */
  get topicId(): string {
    return this.role?.topicId ?? '';
  }

  /**
   * The metadata image's word on this replica. Becoming leader starts a new leader epoch in the
   * log (the next batch opens its epoch-cache entry) and a fresh PartitionLeader; leaving the
   * leadership fails the acks=all produces still waiting with NOT_LEADER_OR_FOLLOWER (their
   * records may yet be committed by the new leader: idempotent retries find them there).
   */
  setRole(role: PartitionRole): void {
    this.applyRole(role);
    const held = this.held;
    this.held = [];
    for (const h of held) this.produce(h.lane, h.ask, h.records, h.released);
  }

  private refuse(h: HeldProduce, errorCode: ErrorCode): void {
    h.released();
    this.ports.sendProduceResult({ reqId: h.ask.reqId, slot: h.ask.slot, errorCode, baseOffset: -1, logAppendTime: -1, logStartOffset: this.log.logStartOffset, lane: h.lane });
  }

  private applyRole(role: PartitionRole): void {
    const now = this.replicas.now();
    this.role = role;
    if (role.kind === 'leader') {
      this.dropFollower();
      if (role.leaderEpoch > this.log.currentLeaderEpoch) {
        try {
          this.log.setLeaderEpoch(role.leaderEpoch);
        } catch (err) {
          if (!(err instanceof KafkaError)) throw err;
          this.lastError = err.message;
        }
      }
      const assignment = this.assignmentOf(role);
      // Followers may read what is written before it is synced; alone, a split commit buys nothing.
      this.log.earlyReads = role.replicas.length > 1 ? this.written : null;
      if (this.leader !== null && role.leaderEpoch >= this.leader.leaderEpoch) {
        this.applyLeader(this.leader.onMetadata(assignment, now));
        return;
      }
      const identity = { topicId: role.topicId, partitionIndex: this.partition, localBrokerId: this.replicas.localBrokerId };
      const epochEnd = (epoch: number) => this.log.endOffsetForEpoch(epoch);
      this.leader = new PartitionLeader(identity, this.replicas.settings, assignment, this.localLog(), this.log.highWatermark, epochEnd, now);
      this.applyLeader(this.leader.onLocalLog(this.localLog(), now));
      return;
    }
    this.dropLeadership();
    if (role.kind === 'follower') this.follow(role.leaderId, role.leaderEpoch, now);
    else this.dropFollower();
  }

  /** The registered brokers changed (epochs, fencing, shutdown): the leader re-reads who may join its ISR. */
  brokersChanged(): void {
    const role = this.role;
    if (role?.kind === 'leader' && this.leader !== null) this.applyLeader(this.leader.onMetadata(this.assignmentOf(role), this.replicas.now()));
    else if (role?.kind === 'follower' && this.follower !== null && this.localBrokerEpoch() !== this.followerEpoch) {
      this.dropFollower();
      this.follow(role.leaderId, role.leaderEpoch, this.replicas.now());
    }
  }

  /** Time passed: a leader drops followers that stopped catching up, and resends proposals due again. */
  tick(now: number): void {
    this.leaderSeesLog(now);
  }

  /** A leader re-reads its own log (start, end, durable end): the high watermark and ISR may move. */
  private leaderSeesLog(now: number): void {
    if (this.leader !== null) this.applyLeader(this.leader.onLocalLog(this.localLog(), now));
  }

  /** Whether tick() can still change anything here (a follower's timing lives in its fetcher). */
  get needsTicks(): boolean {
    return this.leader !== null && this.leader.timeDriven;
  }

  onAlterPartitionResult(sent: AlterPartitionItem, result: AlterPartitionResult): void {
    if (this.leader !== null) this.applyLeader(this.leader.onAlterPartitionResult(sent, result, this.replicas.now()));
  }

  /** Writes the high watermark's checkpoint when it moved since the last one (a restart reads it back). */
  checkpointHighWatermark(): void {
    const hw = this.log.highWatermark;
    if (hw === this.checkpointedHw) return;
    try {
      this.log.checkpointHighWatermark();
      this.checkpointedHw = hw;
    } catch (err) {
      this.lastError = String(err);
    }
  }

  private assignmentOf(role: Extract<PartitionRole, { kind: 'leader' }>): LeaderAssignment {
    const brokers = new Map<BrokerId, { brokerEpoch: number; isrEligible: boolean }>();
    for (const id of role.replicas) {
      const b = this.replicas.brokers.get(id);
      if (b !== undefined) brokers.set(id, { brokerEpoch: b.epoch, isrEligible: b.isrEligible });
    }
    return {
      leaderEpoch: role.leaderEpoch,
      partitionEpoch: role.partitionEpoch,
      replicas: role.replicas,
      isr: role.isr,
      leaderRecoveryState: 0,
      minInsyncReplicas: role.minInsyncReplicas,
      brokers,
    };
  }

  private dropLeadership(): void {
    if (this.leader === null) return;
    this.leader = null;
    this.log.earlyReads = null;
    this.replicated.failThrough(this.replicated.lastSeq, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    this.internal.failThrough(this.internal.lastSeq, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  }

  /** The log as the replication state machines see it (leader and follower alike). */
  private localLog(): LocalLog {
    const entries = this.log.epochEntries;
    return {
      logStartOffset: this.log.logStartOffset,
      logEndOffset: this.log.logEndOffset,
      durableEndOffset: this.log.durableOffset,
      latestEpoch: entries.length === 0 ? -1 : entries[entries.length - 1]!.epoch,
    };
  }

  /** A leader's output: the proposal goes out, the high watermark moves, waiting acks=all produces settle. */
  private applyLeader(out: LeaderOutput): void {
    if (out.alterPartition !== null) this.ports.sendAlterPartition(this.handle, out.alterPartition);
    this.log.updateHighWatermark(out.highWatermark);
    if (out.acksChanged || this.replicated.size > 0 || this.internal.size > 0) this.settleReplicated();
    this.wakeFetches();
  }

  private settleReplicated(): void {
    const leader = this.leader;
    if (leader === null) return;
    const verdict = leader.acksAllOutcome(Number.MAX_SAFE_INTEGER);
    this.settleQueue(this.replicated, verdict);
    this.settleQueue(this.internal, verdict);
  }

  /** Runs once per commit: no per-call allocation. */
  private settleQueue<T>(queue: PendingAcks<T>, verdict: 'waiting' | ErrorCode): void {
    if (queue.size === 0) return;
    if (verdict !== 'waiting' && verdict !== ErrorCode.NONE) queue.failThrough(queue.lastSeq, verdict);
    else queue.advance(this.log.highWatermark);
  }

  /**
   * A commit of this log landed: the leader learns its new durable end; acks=0/1 produces it
   * covers complete. A commit begun while leading may land after the partition turned follower,
   * whose log end was then ahead of its durable end: under flush=always it fetches nothing until
   * it learns the two met (else never again, keeping its old-epoch tail out of every ISR).
   */
  committed(): void {
    if (this.leader !== null) this.applyLeader(this.leader.onLocalLog(this.localLog(), this.replicas.now()));
    else {
      this.follower?.onLocalLog(this.localLog());
      this.wakeFetches();
    }
    this.acks.advance(this.log.durableOffset);
  }

  /**
   * The log's earlyReads listener while leading others: a commit's writes landed before its sync.
   * The leader learns the new log end (a follower may fetch from past the durable end once it has
   * the bytes), and followers' parked fetches need not wait for the leader's fdatasync.
   */
  private readonly written = (): void => this.leaderSeesLog(this.replicas.now());

  /** Parked fetches look again when consumers' (high watermark) or followers' (written end) readable end moved. */
  private wakeFetches(): void {
    const hw = this.log.highWatermark;
    const written = this.log.writtenOffset;
    const grew = hw > this.wokeAt || (written > this.wokeWritten && this.leader !== null);
    this.wokeAt = hw;
    this.wokeWritten = written;
    if (grew) for (const key of [...this.waiters]) this.ports.fetchMayProceed(key);
  }

  // ---- follower (the shard's replica fetcher drives it: FollowedPartition) ----

  get partitionIndex(): number {
    return this.partition;
  }

  /** FollowedPartition: whether this follower's catch-up counts against the follower replication throttle. */
  get throttled(): boolean {
    return this.role?.kind === 'follower' && this.role.throttled;
  }

  fetchPosition(now: number): ReplicaFetchPosition | null {
    return this.follower?.fetchPosition(now) ?? null;
  }

  /**
   * The leader answered `sent`: truncate as told, or append its batches unchanged and commit them
   * (durable under flush=always before the next fetch offset claims them), then take the leader's
   * high watermark as far as this log holds it. True once the log holds no view of `records` (it
   * staged none, or the commit carrying them landed: staged batches are views of the fetch
   * answer's frame, which the fetcher then reuses); false when a failed commit leaves that unsure.
   */
  async onFetchAnswer(sent: ReplicaFetchPosition, answer: ReplicaFetchAnswer, records: Buffer | null, now: number): Promise<boolean> {
    const f = this.follower;
    if (f === null) return true;
    const current = f.state.kind === 'fetching' && sent.currentLeaderEpoch === f.leaderEpoch && sent.fetchOffset === this.log.logEndOffset;
    const action = f.onFetchAnswer(sent, answer, now);
    if (action !== null) {
      await this.truncateAsFollower(f, action);
      return true;
    }
    let released = true;
    if (current && records !== null && answer.errorCode === ErrorCode.NONE && answer.divergingEpoch === null && this.appendReplicated(records)) {
      try {
        await this.ports.committer.commit(this.log);
      } catch (err) {
        this.lastError = String(err);
        released = false;
      }
    }
    if (this.follower !== f) return released;
    f.onLocalLog(this.localLog());
    this.log.updateHighWatermark(f.highWatermark);
    this.followLogStart(f);
    return released;
  }

  /**
   * The leader's log start (retention, DeleteRecords) moved past this replica's: the segments
   * wholly below it go, so retention on the leader applies here too. Whole segments only, so this
   * log may start a little below the leader's.
   */
  private followLogStart(f: PartitionFollower): void {
    const target = f.logStartTarget;
    if (target > this.log.logStartOffset && this.log.deleteSegmentsBefore(target) > 0) f.onLocalLog(this.localLog());
  }

  private follow(leaderId: BrokerId, leaderEpoch: number, now: number): void {
    const f = this.follower;
    if (f !== null) {
      const before = f.leaderId;
      f.onMetadata({ leaderId, leaderEpoch }, now);
      if (f.leaderId !== before) this.ports.followingChanged(this);
      return;
    }
    this.followerEpoch = this.localBrokerEpoch();
    const epochEnd = (epoch: number) => this.log.endOffsetForEpoch(epoch);
    this.follower = new PartitionFollower(this.replicas.settings, this.replicas.localBrokerId, this.followerEpoch, { leaderId, leaderEpoch }, this.localLog(), this.log.highWatermark, epochEnd);
    this.ports.followingChanged(this);
  }

  private dropFollower(): void {
    if (this.follower === null) return;
    this.follower = null;
    this.ports.followingChanged(this);
  }

  private localBrokerEpoch(): number {
    return this.replicas.brokers.get(this.replicas.localBrokerId)?.epoch ?? -1;
  }

  /**
   * Appends the whole batches of a replica fetch answer as they are (offsets and epochs the
   * leader's), after checking each one's framing and CRC; stops at the first one the log refuses.
   * True when anything was staged.
   */
  private appendReplicated(records: Buffer): boolean {
    let pos = 0;
    let staged = false;
    while (pos + LOG_OVERHEAD <= records.length) {
      const size = records.readInt32BE(pos + LOG_OVERHEAD - 4) + LOG_OVERHEAD;
      if (size < BATCH_HEADER_BYTES || pos + size > records.length) break;
      const batch = records.subarray(pos, pos + size);
      if (batch[BatchField.magic] !== 2 || !batchCrcMatches(batch, 0, size)) {
        this.lastError = `replicated batch at ${this.log.logEndOffset} is corrupt`;
        break;
      }
      const r = this.log.appendAsFollower(batch, readBatchHeader(batch, 0));
      if (r.kind === 'error') {
        this.lastError = `replicated batch at ${this.log.logEndOffset} refused: ${errorName(r.code)}`;
        break;
      }
      staged = true;
      this.batchesIn++;
      this.bytesIn += size;
      pos += size;
    }
    return staged;
  }

  /** Carries out a follower's truncation or reset once the log has nothing staged, then lets it fetch again. */
  private async truncateAsFollower(f: PartitionFollower, action: FollowerAction): Promise<void> {
    try {
      await this.ports.committer.commit(this.log);
    } catch (err) {
      this.lastError = String(err);
    }
    if (this.follower !== f) return;
    try {
      if (action.kind === 'truncate') this.log.truncateTo(action.offset);
      else this.log.resetTo(action.offset);
    } catch (err) {
      this.lastError = String(err);
    }
    f.onTruncated(this.localLog());
  }

  // ---- the rest ----

  updateConfig(config: LogConfig): void {
    this.config = config;
    this.log.updateConfig(config);
  }

  stats(): ActorStats {
    return {
      topic: this.topic,
      partition: this.partition,
      handle: this.handle,
      logStartOffset: this.log.logStartOffset,
      logEndOffset: this.log.logEndOffset,
      highWatermark: this.log.highWatermark,
      sizeBytes: this.log.sizeBytes,
      batchesIn: this.batchesIn,
      bytesIn: this.bytesIn,
      fetches: this.fetches,
      parkedFetches: this.waiters.size,
      pendingAcks: this.acks.size + this.replicated.size,
      role: this.role?.kind ?? 'none',
      leaderEpoch: this.leader?.leaderEpoch ?? this.follower?.leaderEpoch ?? -1,
      isr: this.leader?.maximalIsr ?? [],
      lastError: this.lastError,
    };
  }

  private acknowledge(result: LanedProduceResult, errorCode: number): void {
    if (errorCode !== ErrorCode.NONE) {
      result.errorCode = errorCode;
      result.baseOffset = -1;
    }
    if (this.acks.size === 0 && this.replicated.size === 0 && this.internal.size === 0 && this.held.length === 0 && this.expiresAt !== Infinity) {
      this.expiresAt = Infinity;
      this.ports.deadlines.delete(this);
    }
    this.ports.sendProduceResult(result);
  }
}
