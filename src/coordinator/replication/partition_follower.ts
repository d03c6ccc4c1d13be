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
// - OFFSET_OUT_OF_RANGE resets the log to start empty at the leader's log start.
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
  | { readonly kind: 'reset'; readonly offset: number };

export class PartitionFollower {
  private leader: LeaderRef;
  private log: FollowerLog;
  private hw: number;
  /** The high watermark the current leader last sent, -1 before its first answer. */
  private leaderHw = -1;
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
    if (answer.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      this.current = { kind: 'truncating' };
      return { kind: 'reset', offset: Math.max(0, answer.logStartOffset) };
    }
    if (answer.errorCode !== ErrorCode.NONE) {
      this.current = { kind: 'awaitingMetadata', retryAt: now + this.settings.fetchBackoffMs, errorCode: answer.errorCode };
      return null;
    }
    if (answer.divergingEpoch !== null) {
      const offset = this.truncationOffset(answer.divergingEpoch);
      this.current = { kind: 'truncating' };
      return { kind: 'truncate', offset, belowHighWatermark: offset < this.hw };
    }
    this.leaderHw = answer.highWatermark;
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
    if (changed) this.leaderHw = -1;
    if (this.current.kind === 'awaitingMetadata' && (changed || now >= this.current.retryAt)) this.current = { kind: 'fetching' };
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
