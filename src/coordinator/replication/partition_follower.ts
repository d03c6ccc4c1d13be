// The follower side of one partition's replication (Kafka's fetcher partition state) as a pure
// state machine: where the next replica fetch starts, how the follower reconciles its log with
// the leader's (truncation on fetch, KIP-320/KIP-595), and its high watermark. No I/O and no clock
// of its own. It will live with the partition on the shard worker; a replica fetcher (one per
// leader broker) asks it for fetch positions, sends them, and reports the answers.
//
// API:
//   new PartitionFollower(settings, localBrokerId, brokerEpoch, leader, localLog, highWatermark, epochEnd)
//   fetchPosition(now)            what to fetch from, or null while there is nothing to ask for
//   onFetchAnswer(sent, answer, now)  the leader answered `sent`: a FollowerAction for the driver, or
//                                 null (records, if any, are appended by the driver, which then
//                                 reports the log through onLocalLog)
//   logStartTarget                where the log start may advance to now (the leader's log start
//                                 bounded by this replica's high watermark); the driver deletes below
//   onTruncated(localLog)         the driver carried out a truncate or reset
//   onLocalLog(localLog)          the own log moved (an append landed, became durable)
//   onMetadata(leader, now)       the image names a leader for the partition (older epochs are ignored)
//
// States: `fetching` (truncation on fetch: the fetch carries lastFetchedEpoch and the leader
// answers a diverging epoch instead of records when the histories part), `truncating` (the driver
// is cutting the log back or resetting it; no fetch until onTruncated), `awaitingMetadata` (the
// leader refused: wait for the image to name a newer leader epoch, or retry after the backoff in
// case the leader merely learnt of its leadership later than this follower did).
//
// Rules:
// - The fetch offset is the log end. Under flush-always no fetch leaves while the log end is ahead
//   of the durable end, so a fetch offset (what the leader counts as acknowledged) is always durable.
// - A diverging epoch (E, end) truncates the log, with the follower's own end of epoch E, to
//   min(end, own end of E, log end) when the follower knows E; to the own end of the largest
//   epoch below E when it does not (the next fetch asks again with that epoch); to min(end, log
//   end) when its log has no epochs; to its high watermark when the leader knows no such epoch.
//   An E below all of the follower's epochs ends where its first epoch starts (LeaderEpochCache),
//   so the whole log goes.
//   A truncation below the high watermark is flagged: only an unclean election explains it.
// - OFFSET_OUT_OF_RANGE (the fetch offset is outside the leader's log, KIP-101's fallback): below
//   the leader's log start, the log starts over empty there (Kafka's truncateFullyAndStartAt; the
//   follower fell behind retention or restarted with an old log); otherwise the fetch is past the
//   leader's end (it lost records in an unclean election) and the log is cut to the leader's high
//   watermark. Kafka asks the leader's log end with ListOffsets; a Fetch answer carries no log end,
//   and the high watermark is the highest offset known to be below it, so the follower at most
//   fetches again what lies between them. An answer without the leader's offsets backs off.
// - A cut outside [log start, log end] is a reset: the log starts over empty at that offset, its
//   epoch cache empty (Kafka's truncateTo falls back to truncateFullyAndStartAt the same way).
// - Log start: every answer carries the leader's log start (retention, DeleteRecords); the log
//   start may advance to it, bounded by the high watermark (Kafka's maybeIncrementLogStartOffset
//   refuses past it), so retention on the leader applies on every replica.
// - The high watermark is min(leader's high watermark, own log end; own durable end under
//   flush-always); it only moves back when the log is truncated below it.
import { ErrorCode } from '../../protocol/errors.js';
import type { EpochEndLookup, LocalLog } from './partition_leader.js';
import type { BrokerId, DivergingEpoch, ReplicaFetchAnswer, ReplicaFetchPosition } from './types.js';

export interface FollowerSettings {
  readonly flushAlways: boolean;
  /** types.ts: DEFAULT_REPLICA_FETCH_BACKOFF_MS. */
  readonly fetchBackoffMs: number;
}

/** Who leads the partition, per the metadata image. */
export interface LeaderRef {
  readonly leaderId: BrokerId;
  readonly leaderEpoch: number;
}

/** The follower's own log: the same view of a log as the leader's. */
export type FollowerLog = LocalLog;

export type FollowerState =
  | { readonly kind: 'fetching' }
  | { readonly kind: 'truncating' }
  | { readonly kind: 'awaitingMetadata'; readonly retryAt: number; readonly errorCode: ErrorCode };

/** What the driver must do to the log before fetching again; it reports back with onTruncated. */
export type FollowerAction =
  | { readonly kind: 'truncate'; readonly offset: number; readonly belowHighWatermark: boolean }
  | { readonly kind: 'reset'; readonly offset: number; readonly belowHighWatermark: boolean };

export class PartitionFollower {
  private leader: LeaderRef;
  private log: FollowerLog;
  private hw: number;
  /** The high watermark the current leader last sent, -1 before its first answer. */
  private leaderHw = -1;
  /** The log start the current leader last sent with records, -1 before its first answer. */
  private leaderLogStart = -1;
  private current: FollowerState = { kind: 'fetching' };

  constructor(
    private readonly settings: FollowerSettings,
    private readonly localBrokerId: BrokerId,
    private readonly brokerEpoch: number,
    leader: LeaderRef,
    log: FollowerLog,
    highWatermark: number,
    private readonly epochEnd: EpochEndLookup,
  ) {
    this.leader = leader;
    this.log = log;
    this.hw = Math.min(highWatermark, log.logEndOffset);
  }

  get state(): FollowerState {
    return this.current;
  }

  get highWatermark(): number {
    return this.hw;
  }

  get leaderId(): BrokerId {
    return this.leader.leaderId;
  }

  get leaderEpoch(): number {
    return this.leader.leaderEpoch;
  }

  /** Where the log start may advance to: the leader's log start, at most the high watermark; -1 before any answer. */
  get logStartTarget(): number {
    return Math.min(this.leaderLogStart, this.hw);
  }

  fetchPosition(now: number): ReplicaFetchPosition | null {
    if (this.current.kind === 'awaitingMetadata' && now >= this.current.retryAt) this.current = { kind: 'fetching' };
    if (this.current.kind !== 'fetching') return null;
    if (this.settings.flushAlways && this.log.durableEndOffset < this.log.logEndOffset) return null;
    return {
      replicaId: this.localBrokerId,
      replicaEpoch: this.brokerEpoch,
      currentLeaderEpoch: this.leader.leaderEpoch,
      fetchOffset: this.log.logEndOffset,
      lastFetchedEpoch: this.log.latestEpoch,
      logStartOffset: this.log.logStartOffset,
    };
  }

  onFetchAnswer(sent: ReplicaFetchPosition, answer: ReplicaFetchAnswer, now: number): FollowerAction | null {
    const stale = this.current.kind !== 'fetching' || sent.currentLeaderEpoch !== this.leader.leaderEpoch || sent.fetchOffset !== this.log.logEndOffset;
    if (stale) return null;
    const outOfRange = answer.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE ? outOfRangeCut(sent.fetchOffset, answer) : null;
    if (outOfRange !== null) return this.cutTo(outOfRange);
    if (answer.errorCode !== ErrorCode.NONE) {
      this.current = { kind: 'awaitingMetadata', retryAt: now + this.settings.fetchBackoffMs, errorCode: answer.errorCode };
      return null;
    }
    if (answer.divergingEpoch !== null) return this.cutTo(this.truncationOffset(answer.divergingEpoch));
    this.leaderHw = answer.highWatermark;
    this.leaderLogStart = answer.logStartOffset;
    this.raiseHighWatermark();
    return null;
  }

  onTruncated(log: FollowerLog): void {
    this.log = log;
    this.hw = Math.min(Math.max(this.hw, log.logStartOffset), log.logEndOffset);
    if (this.current.kind === 'truncating') this.current = { kind: 'fetching' };
  }

  onLocalLog(log: FollowerLog): void {
    this.log = log;
    this.raiseHighWatermark();
  }

  onMetadata(leader: LeaderRef, now: number): void {
    if (leader.leaderEpoch < this.leader.leaderEpoch) return;
    const changed = leader.leaderEpoch > this.leader.leaderEpoch || leader.leaderId !== this.leader.leaderId;
    this.leader = leader;
    if (changed) this.leaderHw = this.leaderLogStart = -1;
    if (this.current.kind === 'awaitingMetadata' && (changed || now >= this.current.retryAt)) this.current = { kind: 'fetching' };
  }

  /** Truncates to `offset` within the log, or starts the log over there outside it. */
  private cutTo(offset: number): FollowerAction {
    this.current = { kind: 'truncating' };
    const belowHighWatermark = offset < this.hw;
    if (offset < this.log.logStartOffset || offset > this.log.logEndOffset) return { kind: 'reset', offset, belowHighWatermark };
    return { kind: 'truncate', offset, belowHighWatermark };
  }

  private raiseHighWatermark(): void {
    const end = this.settings.flushAlways ? this.log.durableEndOffset : this.log.logEndOffset;
    const candidate = Math.min(this.leaderHw, end);
    if (candidate > this.hw) this.hw = candidate;
  }

  private truncationOffset(diverging: DivergingEpoch): number {
    const end = this.log.logEndOffset;
    if (diverging.epoch < 0 || diverging.endOffset < 0) return Math.min(this.hw, end);
    const own = this.epochEnd(diverging.epoch, end);
    if (own.epoch === diverging.epoch) return Math.min(diverging.endOffset, own.endOffset, end);
    if (own.epoch >= 0) return Math.min(own.endOffset, end);
    return Math.min(diverging.endOffset, end);
  }
}

/**
 * Where an OFFSET_OUT_OF_RANGE answer to a fetch at `fetchOffset` puts the log: the leader's log
 * start when the fetch was below it, else the leader's high watermark (the fetch was past its end,
 * so past that too); null when the answer does not say which (no offsets, or inconsistent ones).
 */
function outOfRangeCut(fetchOffset: number, answer: ReplicaFetchAnswer): number | null {
  if (answer.logStartOffset < 0) return null;
  if (fetchOffset < answer.logStartOffset) return answer.logStartOffset;
  return answer.highWatermark >= answer.logStartOffset && answer.highWatermark < fetchOffset ? answer.highWatermark : null;
}
