// One partition's actor, on the shard worker that hosts it: the only owner of its log. It runs
// the partition's produce path (validate, stamp the leader epoch, append, hand the log to the
// shard's group commit, and acknowledge through its PendingAcks once the acknowledgement condition
// covers the records), its reads, its offset lookups (ListOffsets, OffsetsForLeaderEpoch), and
// decides when the fetches parked on it should look again.
// It never blocks and never calls up to main: results leave through the shard's outbound ring.
// Acknowledgement condition: a produce completes when ackOffset >= its last offset + 1, where
// ackOffset is the log's high watermark, which today advances exactly when a group commit lands
// (so it is the durable end). Replication narrows ackOffset to the in-sync replicas' high
// watermark; nothing else in the produce path changes.
import type { GroupCommitter } from '../log/group_commit.js';
import { StorageError } from '../log/io_backend.js';
import type { AppendResult, LogConfig, PartitionLog } from '../log/partition_log.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { validateProducedBatch } from '../protocol/record_batch.js';
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
  lastError: string | null;
}

/** Something a shard's deadline wheel expires. */
export interface Expirable {
  expire(now: number): void;
}

/** What the hosting shard lends its actors: the shared commit, clock, and outbound paths. */
export interface ActorPorts {
  readonly committer: GroupCommitter;
  readonly deadlines: DeadlineWheel<Expirable>;
  sendProduceResult(result: ProduceResult): void;
  /** The parked fetch `reqId` includes a partition that has new readable data. */
  fetchMayProceed(reqId: number): void;
}

/**
 * Produces waiting for their acknowledgement, per partition. Main bounds requests in flight
 * (connections x in-flight requests each); this is the actor's own guard behind that.
 */
export const MAX_PENDING_ACKS = 65_536;

/** Offsets a ListOffsets timestamp of -1 / -2 / -3 asks for (Kafka's sentinel values). */
const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;


export class PartitionActor implements Expirable {
  /** Request ids of parked fetches that include this partition. */
  readonly waiters = new Set<number>();
  private readonly acks: PendingAcks<ProduceResult>;
  /** The high watermark parked fetches were last told about. */
  private wokeAt: number;
  /** When this actor's deadline-wheel entry fires (Infinity: none scheduled). */
  private expiresAt = Infinity;
  private batchesIn = 0;
  private bytesIn = 0;
  private fetches = 0;
  lastError: string | null = null;

  constructor(
    readonly handle: number,
    readonly topic: string,
    readonly partition: number,
    readonly log: PartitionLog,
    private config: LogConfig,
    private readonly ports: ActorPorts,
  ) {
    this.acks = new PendingAcks<ProduceResult>(MAX_PENDING_ACKS, (result, code) => this.acknowledge(result, code));
    this.wokeAt = log.highWatermark;
  }

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
   * A produced batch: appended, committed with the shard's next group commit, and answered once
   * its acknowledgement condition holds (or failed). `released` runs once the log no longer
   * needs `records` (its commit settled, or it was never staged).
   */
  produce(ask: ProduceAsk, records: Buffer, released: () => void): void {
    const result: ProduceResult = { reqId: ask.reqId, slot: ask.slot, errorCode: 0, baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
    // Refused before appending: an append whose acknowledgement could not be tracked would be
    // written without anyone learning its offset.
    const fenced = this.leadIn(ask.leaderEpoch);
    const appended: AppendResult =
      fenced !== ErrorCode.NONE ? { kind: 'error', code: fenced }
      : this.acks.full ? { kind: 'error', code: ErrorCode.REQUEST_TIMED_OUT }
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
    this.acks.add(appended.lastOffset + 1, deadline, result);
    if (deadline < this.expiresAt) this.scheduleExpiry(deadline);
    const heldThrough = this.acks.lastSeq;
    this.ports.committer.commit(this.log).then(
      () => {
        released();
        this.readableAdvanced();
      },
      (err: unknown) => {
        released();
        this.lastError = String(err);
        this.acks.failThrough(heldThrough, ErrorCode.KAFKA_STORAGE_ERROR);
      },
    );
  }

  /**
   * As Kafka's leader does, batches carry the leader epoch they were appended under: the epoch main
   * checked leadership against. A newer one starts a leader-epoch cache entry with the next batch;
   * one older than the log already has comes from a stale view and is FENCED_LEADER_EPOCH.
   */
  private leadIn(epoch: number): ErrorCode {
    if (epoch === this.log.currentLeaderEpoch) return ErrorCode.NONE;
    try {
      this.log.setLeaderEpoch(epoch);
      return ErrorCode.NONE;
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      this.lastError = err.message;
      return err.code;
    }
  }

  /** Wheel deadline: times out overdue acknowledgements, then waits for the next one. */
  expire(now: number): void {
    this.expiresAt = Infinity;
    this.acks.expire(now);
    const next = this.acks.nextDeadline();
    if (next !== Infinity) this.scheduleExpiry(next);
  }

  private scheduleExpiry(deadline: number): void {
    this.expiresAt = deadline;
    this.ports.deadlines.add(this, deadline);
  }

  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean): ReturnType<PartitionLog['read']> {
    this.fetches++;
    return this.log.read(fetchOffset, maxBytes, minOneBatch);
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
      pendingAcks: this.acks.size,
      lastError: this.lastError,
    };
  }

  /** A commit landed: new data may be readable, and acknowledgements it covers complete. */
  private readableAdvanced(): void {
    const hw = this.log.highWatermark;
    const grew = hw > this.wokeAt;
    this.wokeAt = hw;
    if (grew) for (const reqId of [...this.waiters]) this.ports.fetchMayProceed(reqId);
    this.acks.advance(this.ackOffset());
  }

  /** The offset below which produced records are acknowledged (see the header). */
  private ackOffset(): number {
    return this.log.highWatermark;
  }

  private acknowledge(result: ProduceResult, errorCode: number): void {
    if (errorCode !== ErrorCode.NONE) {
      result.errorCode = errorCode;
      result.baseOffset = -1;
    }
    if (this.acks.size === 0 && this.expiresAt !== Infinity) {
      this.expiresAt = Infinity;
      this.ports.deadlines.delete(this);
    }
    this.ports.sendProduceResult(result);
  }
}
