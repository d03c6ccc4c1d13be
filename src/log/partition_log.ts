// A partition's durable log: a directory of segments that hold record batches exactly as
// validated, appended by the partition actor on its shard worker (the only thread that touches it).
// Appends are staged in memory and handed to the shard's GroupCommitter through `commitPort`;
// they become durable (written, and fdatasync'ed under flush=always) when the commit holding them
// lands, and are rolled back if it fails. Segments roll by size and age; once a rolled segment is
// wholly committed it is sealed in the background (fdatasync, indexes persisted, producer snapshot)
// and the recovery point moves past it, so a crash rescans only the unsealed tail.
// Four offsets: logEndOffset (next offset to assign, staged data included), writtenOffset
// (everything below is in the files; followers read below it), durableOffset (everything below is
// in the files and, under flush=always, fdatasync'ed) and highWatermark (clients read below it).
// They differ in written and durable only while a replicated leader's commit is between its write
// and its sync (see `earlyReads`): a follower may then fetch bytes the leader has not synced, and
// make them durable in parallel with the leader's own sync. The high watermark
// follows the durable offset on each commit by default (a single-node broker); under the 'owner'
// policy only updateHighWatermark moves it (a replicated leader or follower), and it is restored
// from `high-watermark-checkpoint` on open. The high watermark never passes the durable offset,
// unlike a Kafka follower's, which may pass its own flush: here readers can only be served bytes
// that are in the files, so a leader's high watermark ahead of this log is clamped to it.
// A leader-epoch cache records where each leader epoch starts (OffsetsForLeaderEpoch) and is
// persisted as `leader-epoch-checkpoint`. truncateTo cuts the log back to a batch boundary for a
// follower whose tail diverged; it refuses while appends are staged or in flight, and is
// crash-safe: its target is persisted first and an interrupted truncation is finished on open.
// resetTo empties the log and starts it again at any offset, for a follower whose log lies wholly
// outside its leader's.
// Invariants (asserted where they change): logStartOffset <= highWatermark <= durableOffset <=
// writtenOffset <= logEndOffset; all only grow except through truncateTo and resetTo (and a failed
// commit's rollback, which moves writtenOffset and logEndOffset back to durableOffset); bytes below
// the durable offset never change except by truncateTo and resetTo; at most two commits are in
// flight, the second (`queued`) taken while the first syncs and settled after it. A sync that
// fails after its bytes were written, and so may have been read by followers, takes the log
// offline: it cannot roll back what others hold.
import { closeSync, fdatasyncSync, openSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { INLINE_BUDGET, type CleanCloseEntry, type InlineState } from './clean_shutdown.js';
import { WRITEBACK_BYTES, type CommitPort } from './commit_port.js';
import { StorageError, type IoBackend, type WritebackRange, type WriteOp } from './io_backend.js';
import { LEADER_EPOCH_FILE, UNDEFINED_EPOCH, type EpochEndOffset, type EpochEntry, type LeaderEpochCache } from './leader_epoch_cache.js';
import { assertLogConfig, type LogConfig } from './log_config.js';
import {
  CHECKPOINT_FILE,
  fsyncDirSync,
  encodeCheckpoint,
  HIGH_WATERMARK_FILE,
  StagedFiles,
  TRUNCATION_FILE,
  writeCheckpoint,
  writeFileAtomicSync,
  writeOffsetFile,
} from './log_checkpoint.js';
import { encodeTextCheckpoint } from './text_checkpoint.js';
import { findMaxTimestamp, findOffsetForTimestamp, type OffsetAndTimestamp } from './log_timestamps.js';
import { rebuildProducers, recoverLog, type RecoveryStats } from './log_recovery.js';
import { truncateSegments } from './log_truncation.js';
import type { ProducerStateTable } from './producer_state.js';
import { setLogAppendTime, stampBatch, type BatchHeader } from '../protocol/record_batch.js';
import { lastHeader, offsetFileName, Segment, SNAPSHOT_SUFFIX } from './segment.js';
import { OFFSET_INDEX, TIME_INDEX } from './sparse_index.js';
import { StagingArea } from './staging.js';

export type { LogConfig } from './log_config.js';
export type { RecoveryStats } from './log_recovery.js';
export type { EpochEndOffset, EpochEntry } from './leader_epoch_cache.js';

export interface PartitionLogOptions {
  /**
   * Who moves the high watermark: 'durable' (the default) makes the log set it to the durable
   * offset whenever a commit lands; under 'owner' only updateHighWatermark moves it.
   */
  highWatermark?: 'durable' | 'owner';
  /**
   * Where a log with neither segments nor checkpoint starts (default 0): a replica restarting its
   * log past a snapshot it installed.
   */
  initialStartOffset?: number;
  /** Told of each storage failure the log absorbs (retried later, or costing a longer recovery). */
  onWarning?: (what: string, err: StorageError) => void;
  /** The partition's entry in the clean-shutdown record its log directory was opened with. */
  cleanShutdown?: CleanCloseEntry | null;
}

/** Where reads stop: the high watermark (clients) or the written log end (followers). */
export type ReadIsolation = 'high-watermark' | 'log-end';

/**
 * A clean close whose syncs the caller batches with other logs' (closeLogsTogether): fdatasync
 * every descriptor in `fds`, then call next() for the following step; null means closed (and
 * PartitionLog.cleanCloseEntry says whether cleanly).
 */
export interface StagedClose {
  readonly fds: readonly number[];
  next(): StagedClose | null;
  /** A sync or step failed: the log closes without its clean-shutdown marker (the next open rescans). */
  abandon(): void;
}

export interface FileRange {
  path: string;
  position: number;
  length: number;
}

export type AppendResult =
  | { kind: 'appended'; baseOffset: number; lastOffset: number; logAppendTime: number /* -1 for CreateTime */ }
  | { kind: 'duplicate'; baseOffset: number; lastOffset: number }
  | { kind: 'error'; code: ErrorCode };

export interface ReadResult {
  error: ErrorCode;
  ranges: FileRange[];
  bytes: number;
}

const STORAGE_FAILURE: AppendResult = { kind: 'error', code: ErrorCode.KAFKA_STORAGE_ERROR };
const BATCH_TOO_LARGE: AppendResult = { kind: 'error', code: ErrorCode.RECORD_LIST_TOO_LARGE };
const OFFSET_MISMATCH: AppendResult = { kind: 'error', code: ErrorCode.OFFSET_OUT_OF_RANGE };
const EPOCH_BEHIND: AppendResult = { kind: 'error', code: ErrorCode.FENCED_LEADER_EPOCH };

/** How a fetcher's last fetched epoch stands to this log (PartitionLog.fetchHistory). */
export type FetchHistory =
  | { readonly kind: 'agrees' }
  | { readonly kind: 'diverges'; readonly epoch: number; readonly endOffset: number }
  | { readonly kind: 'outOfRange' };

const HISTORY_AGREES: FetchHistory = { kind: 'agrees' };
const HISTORY_OUT_OF_RANGE: FetchHistory = { kind: 'outOfRange' };
/** Offsets are stored relative to the segment base as u32. */
const MAX_RELATIVE_OFFSET = 0xffffffff;
/** Producer snapshots kept on disk (the newest is used; the previous covers a damaged newest). */
const SNAPSHOTS_KEPT = 2;

type LogState = 'open' | 'closing' | 'deleting' | 'closed';

/** A state file a clean close writes, and the clean-shutdown entry field that can carry it instead (null: none). */
interface StateFile {
  readonly name: string;
  readonly field: keyof InlineState | null;
  readonly content: Buffer;
}

/** A read limit inside the written data: the batch boundary `pos` in `seg`, where offset `offset` starts. */
interface ReadBound {
  readonly seg: Segment;
  readonly pos: number;
  readonly offset: number;
  /** The high watermark it was computed for (a mid-batch one bounds at that batch's start). */
  readonly forOffset: number;
}

function readError(error: ErrorCode): ReadResult {
  return { error, ranges: [], bytes: 0 };
}

export class PartitionLog {
  readonly recovery: RecoveryStats;
  /** For GroupCommitter only: hands staged appends over and reports commit outcomes. */
  readonly commitPort: CommitPort;
  /** Record batch bytes staged since the log opened (clients' and followers' appends). */
  private appended = 0;
  private config: LogConfig;
  private readonly segments: Segment[];
  private producers: ProducerStateTable;
  private readonly epochs: LeaderEpochCache;
  private readonly hwFollowsDurable: boolean;
  private readonly onWarning: ((what: string, err: StorageError) => void) | undefined;
  private warning: StorageError | null = null;
  private leo: number;
  private written: number;
  private durable: number;
  private hw: number;
  /** Where high-watermark reads stop while the high watermark is below the written offset; null when they are equal. */
  private hwBound: ReadBound | null = null;
  private committedBytes = 0;
  private checkpointedRecoveryPoint = -1;
  private leaderEpoch = -1;
  private pending = new StagingArea();
  private inFlight: StagingArea | null = null;
  /** The in-flight commit's writes landed (readable up to writtenOffset) and its sync is still to come. */
  private inFlightWritten = false;
  /**
   * Taken by the next commit cycle while `inFlight` syncs (GroupCommitter's cycle behind the
   * head), and grown by takeMore until that one settles: its writes may land in the files before
   * then, but the log learns of them (written(), completed() or failed()) only after inFlight's
   * outcome, when it becomes inFlight itself.
   */
  private queued: StagingArea | null = null;
  private spare: StagingArea | null = new StagingArea();
  private dirDirty = false;
  /**
   * The directory's descriptor while a group-commit sync of it is in flight, else -1. Opened per
   * sync rather than held: an idle partition then costs only its active segment's descriptor.
   */
  private dirSyncFd = -1;
  private offline = false;
  /**
   * A split commit's sync failed after its writes landed: the files hold bytes past the log end
   * that followers may have read and that the segments' read limits still cover, so the (offline)
   * log serves no reads at all, as Kafka serves none from an offline log directory.
   */
  private strandedWrites = false;
  /**
   * By file name, the encodings of the state this log opened with from a clean close, whose files
   * are durable (vouched for by the marker it opened with); null once a commit started or a state
   * file was rewritten. A clean close skips the segments and the files whose state did not change
   * (sparing their syncs).
   */
  private cleanOpenState: Map<string, Buffer> | null = null;
  private closedEntry: CleanCloseEntry | null = null;
  private state: LogState = 'open';
  // Where the last read ended: a consumer at the tail asks for exactly that offset next.
  private hintSeg: Segment | null = null;
  private hintOffset = -1;
  private hintPos = 0;
  /**
   * Set by a replicated leader under flush=always and called each time a commit's writes land:
   * the shard's GroupCommitter then reports this log's landed writes before their sync finishes
   * (commitPort.written()), so that followers can fetch (and sync) the bytes while the leader's
   * fdatasync runs. The high watermark still waits for the sync. Null: a commit's writes become
   * readable only with its sync.
   */
  earlyReads: (() => void) | null = null;

  private constructor(
    readonly dir: string,
    config: LogConfig,
    private readonly io: IoBackend,
    private readonly now: () => number,
    options: PartitionLogOptions,
  ) {
    this.config = config;
    this.hwFollowsDurable = (options.highWatermark ?? 'durable') === 'durable';
    this.onWarning = options.onWarning;
    const rec = recoverLog(dir, config, now, options.initialStartOffset ?? 0, options.cleanShutdown ?? null);
    this.segments = rec.segments;
    this.producers = rec.producers;
    this.epochs = rec.epochs;
    this.recovery = rec.stats;
    this.leo = this.written = this.durable = this.active.nextOffset;
    this.hw = this.hwFollowsDurable ? this.durable : rec.highWatermark;
    this.refreshHwBound();
    this.checkOffsets();
    for (const seg of this.segments) this.committedBytes += seg.committedSize;
    const log = this;
    this.commitPort = {
      get isOpen() {
        return log.state === 'open' && !log.offline;
      },
      get splitsSync() {
        return log.earlyReads !== null;
      },
      take: () => this.take(),
      takeMore: () => this.takeMore(),
      syncTargets: () => this.syncTargets(),
      written: () => {
        if (this.landWrites()) this.earlyReads?.();
      },
      completed: (synced, took) => this.completed(synced, took),
      failed: () => this.failed(),
      writeback: (into) => this.writeback(into),
    };
    if (rec.stats.clean) {
      // State carried by the clean-shutdown entry is in memory only: a close must still write it.
      const files = this.stateFiles(rec.stats.snapshotOffset === this.leo, true).filter((f) => !rec.inlined.has(f.name));
      this.cleanOpenState = new Map(files.map((f) => [f.name, f.content]));
    }
    const own = rec.checkpoint;
    if (own?.clean) {
      // A marker of a close by this log alone: from here on the files change, so it must say
      // unclean durably before anything else is written (a clean stop vouches through a record).
      const rp = this.currentRecoveryPoint();
      writeCheckpoint(dir, { clean: false, logStartOffset: this.logStartOffset, recoveryPoint: rp }, true);
      fsyncDirSync(dir);
      this.checkpointedRecoveryPoint = rp;
    } else if (own?.logStartOffset === this.logStartOffset) {
      this.checkpointedRecoveryPoint = own.recoveryPoint;
    }
    this.updateRecoveryPoint();
  }

  /** Opens (creating if needed) and recovers the log in `dir`; synchronous. */
  static open(dir: string, config: LogConfig, io: IoBackend, now: () => number, options: PartitionLogOptions = {}): PartitionLog {
    assertLogConfig(config);
    return new PartitionLog(dir, config, io, now, options);
  }

  get logStartOffset(): number {
    return this.segments[0]!.baseOffset;
  }

  get logEndOffset(): number {
    return this.leo;
  }

  /** Everything below is written to the segment files (and fdatasync'ed under flush=always). */
  get durableOffset(): number {
    return this.durable;
  }

  /** Everything below is written to the segment files, synced or not: followers read below it. */
  get writtenOffset(): number {
    return this.written;
  }

  get highWatermark(): number {
    return this.hw;
  }

  /**
   * Moves the high watermark up to `offset`, clamped to the durable offset; a lower value than the
   * current one is ignored (as a follower ignores a stale leader high watermark). Returns the new
   * high watermark. Reads stop at the batch boundary at or below it.
   */
  updateHighWatermark(offset: number): number {
    const next = Math.min(offset, this.durable);
    if (next <= this.hw) return this.hw;
    this.hw = next;
    this.refreshHwBound();
    this.checkOffsets();
    return this.hw;
  }

  /** Persists the high watermark (the owner calls this periodically; close and seals do too). */
  checkpointHighWatermark(): void {
    if (this.state === 'closed') throw new StorageError(`log ${this.dir} is closed`);
    this.cleanOpenState = null;
    try {
      writeOffsetFile(this.dir, HIGH_WATERMARK_FILE, this.hw, false);
    } catch (err) {
      throw StorageError.from(err, `checkpoint high watermark of ${this.dir}`);
    }
  }

  /** The last storage failure the log absorbed itself (see PartitionLogOptions.onWarning), with its cause. */
  get lastWarning(): StorageError | null {
    return this.warning;
  }

  /** Committed bytes across all segments. */
  get sizeBytes(): number {
    return this.committedBytes;
  }

  /** Bytes appended but not yet committed: the actor bounds this with backpressure. */
  get stagedBytes(): number {
    return this.pending.bytes + (this.inFlight?.bytes ?? 0) + (this.queued?.bytes ?? 0);
  }

  /** Set after a storage failure the log could not roll back from; appends then fail. */
  get isOffline(): boolean {
    return this.offline;
  }

  /** Segments wholly below this offset are sealed and are not rescanned after a crash. */
  get recoveryPoint(): number {
    return this.checkpointedRecoveryPoint;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /**
   * Stamped into every appended batch's partitionLeaderEpoch (-1 until a leader epoch is known);
   * the first batch of a new epoch starts its leader-epoch cache entry. Epochs never go back:
   * one below the current or the cache's latest is FENCED_LEADER_EPOCH.
   */
  setLeaderEpoch(epoch: number): void {
    const current = Math.max(this.leaderEpoch, this.epochs.latestEpoch);
    if (!Number.isSafeInteger(epoch) || epoch < current || epoch > 0x7fffffff) {
      throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${epoch} for ${this.dir} is below ${current} or invalid`);
    }
    this.leaderEpoch = epoch;
  }

  /** The epoch setLeaderEpoch last set (-1 since open until it is called). */
  get currentLeaderEpoch(): number {
    return this.leaderEpoch;
  }

  /** The leader-epoch cache: (epoch, start offset) for each epoch in the log, ascending. */
  get epochEntries(): readonly EpochEntry[] {
    return this.epochs.entries;
  }

  /** OffsetsForLeaderEpoch: where `epoch`'s history ends in this log (the log end for the latest epoch). */
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    return this.epochs.endOffsetFor(epoch, this.leo);
  }

  /**
   * A fetch at `fetchOffset` from a fetcher whose last batch has `lastFetchedEpoch` (Fetch v12+,
   * Kafka's truncation on fetch): its history diverges from this log when this log ends that epoch
   * earlier, or does not have it and ends the closest lower one before fetchOffset; the answer then
   * names that epoch and its end here, where the fetcher truncates to. An epoch this log cannot place
   * (newer than its latest, or none known) or a fetch below the log start is OFFSET_OUT_OF_RANGE.
   */
  fetchHistory(fetchOffset: number, lastFetchedEpoch: number): FetchHistory {
    const end = this.epochs.endOffsetFor(lastFetchedEpoch, this.leo);
    if (end.epoch === UNDEFINED_EPOCH || end.endOffset === UNDEFINED_EPOCH || fetchOffset < this.logStartOffset) return HISTORY_OUT_OF_RANGE;
    if (end.epoch < lastFetchedEpoch || end.endOffset < fetchOffset) return { kind: 'diverges', epoch: end.epoch, endOffset: end.endOffset };
    return HISTORY_AGREES;
  }

  /** Record batch bytes staged since the log opened, for the broker's metrics. */
  get appendedBytes(): number {
    return this.appended;
  }

  private get active(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  /**
   * Stages a validated batch (the buffer becomes the log's: its base offset and leader epoch are
   * rewritten in place, and under LogAppendTime its timestamp and CRC). Not readable until the
   * GroupCommitter commits it. A 'duplicate' names a batch that may itself still be in flight, so
   * the caller awaits GroupCommitter.commit(log) for duplicates too before acknowledging.
   */
  appendBatch(batch: Buffer, header: BatchHeader): AppendResult {
    return this.stage(batch, header, this.leaderEpoch, 'client');
  }

  /**
   * Stages a batch as a replica receives it (Kafka's appendAsFollower): it must start at the log
   * end (else OFFSET_OUT_OF_RANGE) and keeps its own partitionLeaderEpoch, so a follower that cut a
   * diverged tail appends the leader's older epochs again. Epochs still never go back along the
   * log: one below the epoch cache's latest is FENCED_LEADER_EPOCH.
   * As in Kafka, the leader already judged the batch: its producer sequence is recorded, never
   * refused (a follower that cut its tail rebuilt its producer state from an older point), and its
   * timestamp is kept under LogAppendTime (the leader stamped it).
   */
  appendAsFollower(batch: Buffer, header: BatchHeader): AppendResult {
    if (header.baseOffset !== this.leo) return OFFSET_MISMATCH;
    if (header.partitionLeaderEpoch < this.epochs.latestEpoch) return EPOCH_BEHIND;
    return this.stage(batch, header, header.partitionLeaderEpoch, 'replication');
  }

  private stage(batch: Buffer, header: BatchHeader, epoch: number, origin: 'client' | 'replication'): AppendResult {
    if (this.state !== 'open' || this.offline) return STORAGE_FAILURE;
    if (batch.length > this.config.segmentBytes) return BATCH_TOO_LARGE;
    if (origin === 'client') {
      const check = this.producers.check(header);
      if (check.kind !== 'append') return check;
    }
    const now = this.now();
    let seg = this.active;
    if (this.shouldRoll(seg, batch.length, header.lastOffsetDelta, now)) {
      try {
        seg = this.roll(now);
      } catch (err) {
        this.warn('roll', err);
        return STORAGE_FAILURE;
      }
    }
    const baseOffset = this.leo;
    const lastOffset = baseOffset + header.lastOffsetDelta;
    stampBatch(batch, baseOffset, epoch);
    if (epoch >= 0 && this.epochs.assign(epoch, baseOffset)) this.saveEpochs();
    let maxTimestamp = header.maxTimestamp;
    let logAppendTime = -1;
    if (this.config.timestampType === 'LogAppendTime' && origin === 'client') {
      setLogAppendTime(batch, now);
      maxTimestamp = logAppendTime = now;
    }
    const position = seg.size;
    seg.noteBatch(position, batch.length, baseOffset, lastOffset, maxTimestamp, this.config.indexIntervalBytes, batch);
    this.pending.add(seg, position, batch, baseOffset, lastOffset + 1, maxTimestamp);
    this.leo = lastOffset + 1;
    this.appended += batch.length;
    this.producers.record(header, baseOffset, lastOffset);
    return { kind: 'appended', baseOffset, lastOffset, logAppendTime };
  }

  private shouldRoll(seg: Segment, size: number, lastOffsetDelta: number, now: number): boolean {
    if (seg.isEmpty) return false;
    return (
      seg.size + size > this.config.segmentBytes ||
      now - seg.createdAt >= this.config.segmentMs ||
      this.leo + lastOffsetDelta - seg.baseOffset > MAX_RELATIVE_OFFSET
    );
  }

  private roll(now: number): Segment {
    const old = this.active;
    const seg = this.createActiveSegment(now);
    old.dropRecentHeaders();
    old.appendTimeEntry();
    old.snapshotAtEnd = this.producers.encode();
    this.maybeSeal();
    return seg;
  }

  private createActiveSegment(now: number): Segment {
    const seg = Segment.create(this.dir, this.leo, now);
    this.segments.push(seg);
    this.dirDirty = true;
    return seg;
  }

  /**
   * Whole durable batches from the one containing fetchOffset, up to maxBytes (at least one batch
   * when minOneBatch, KIP-74); empty at or past the bound: the high watermark for clients (a batch
   * the high watermark falls inside is not returned), the written log end for followers. An
   * offline log still serves what it acknowledged (below the high watermark) but no follower,
   * unless its files hold bytes past its log end (stranded writes): then it serves nobody.
   */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, isolation: ReadIsolation = 'high-watermark'): ReadResult {
    if (this.state === 'closed' || this.strandedWrites || (this.offline && isolation === 'log-end')) return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    if (fetchOffset < this.logStartOffset || fetchOffset > this.leo) return readError(ErrorCode.OFFSET_OUT_OF_RANGE);
    const bound = isolation === 'high-watermark' ? this.hwBound : null;
    if (fetchOffset >= (bound ? bound.offset : this.written)) return readError(ErrorCode.NONE);
    try {
      return this.readDurable(fetchOffset, maxBytes, minOneBatch, bound);
    } catch (err) {
      this.warn('read', err);
      return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    }
  }

  /** Reads below `bound` (a position in the written data), or up to the written end when null. */
  private readDurable(fetchOffset: number, maxBytes: number, minOneBatch: boolean, bound: ReadBound | null): ReadResult {
    let i = this.segmentIndexFor(fetchOffset);
    let seg = this.segments[i]!;
    let atBound = seg === bound?.seg;
    let limit = atBound ? bound!.pos : seg.committedSize;
    const hinted = seg === this.hintSeg && fetchOffset === this.hintOffset && this.hintPos < limit;
    let pos = hinted ? this.hintPos : seg.locate(fetchOffset);
    if (pos < 0) return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    const ranges: FileRange[] = [];
    let bytes = 0;
    let needOne = minOneBatch;
    for (;;) {
      let end = seg.boundaryAtOrBefore(pos, Math.min(limit, pos + Math.max(0, maxBytes - bytes)));
      let endOffset = end >= limit ? (atBound ? bound!.offset : seg.committedNextOffset) : lastHeader.baseOffset();
      if (end === pos && needOne && seg.loadHeader(pos)) {
        end = pos + lastHeader.size();
        endOffset = lastHeader.lastOffset() + 1;
      }
      if (end > pos) {
        ranges.push({ path: seg.path, position: pos, length: end - pos });
        bytes += end - pos;
        needOne = false;
      }
      this.hintSeg = seg;
      this.hintPos = end;
      this.hintOffset = endOffset;
      if (end < limit || atBound || bytes >= maxBytes || ++i >= this.segments.length) break;
      seg = this.segments[i]!;
      pos = 0;
      atBound = seg === bound?.seg;
      limit = atBound ? bound!.pos : seg.committedSize;
      if (limit === 0) break;
    }
    return { error: ErrorCode.NONE, ranges, bytes };
  }

  /** Recomputes where high-watermark reads stop, after the high watermark or the written offset moved. */
  private refreshHwBound(): void {
    if (this.hw === this.written) {
      this.hwBound = null;
      return;
    }
    if (this.hwBound?.forOffset === this.hw) return;
    const seg = this.segments[this.segmentIndexFor(this.hw)]!;
    const pos = seg.locate(this.hw);
    if (pos < 0) throw new StorageError(`log ${this.dir}: no batch holds the high watermark ${this.hw}`);
    this.hwBound = { seg, pos, offset: lastHeader.baseOffset(), forOffset: this.hw };
  }

  /** Index of the last segment whose base offset is <= offset. */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** ListOffsets by timestamp: the first committed record whose timestamp is >= timestampMs. */
  offsetForTimestamp(timestampMs: number): OffsetAndTimestamp | null {
    return this.storageCall(() => findOffsetForTimestamp(this.segments, timestampMs));
  }

  /** ListOffsets -3: the committed record with the largest timestamp. */
  maxTimestamp(): OffsetAndTimestamp | null {
    return this.storageCall(() => findMaxTimestamp(this.segments));
  }

  private storageCall<T>(fn: () => T): T {
    if (this.state === 'closed') throw new StorageError(`log ${this.dir} is closed`);
    try {
      return fn();
    } catch (err) {
      throw StorageError.from(err, `read ${this.dir}`);
    }
  }

  /** Deletes whole old segments by retentionMs and retentionBytes; advances the log start offset. */
  enforceRetention(): void {
    if (this.state !== 'open' || this.offline) return;
    // Compared by log start, not segment count: replacing an expired active segment keeps the count.
    const startBefore = this.logStartOffset;
    const now = this.now();
    try {
      if (this.config.retentionMs >= 0) this.retainByTime(now);
      if (this.config.retentionBytes >= 0) this.retainBySize();
    } catch (err) {
      // A segment that could not be replaced or unlinked is retried on the next call; files left
      // below the checkpointed log start are removed at the next open.
      this.warn('retention', err);
    }
    this.producers.expire();
    if (this.logStartOffset !== startBefore) this.startMoved();
  }

  /**
   * Deletes whole segments holding only offsets below `offset` (never the active one): how an
   * owner that rewrote its keyed state past them drops the history. Returns how many went.
   */
  deleteSegmentsBefore(offset: number): number {
    if (this.state !== 'open' || this.offline) return 0;
    let deleted = 0;
    try {
      while (this.oldestDeletable() && this.segments[1]!.baseOffset <= offset) {
        this.deleteOldest();
        deleted++;
      }
    } catch (err) {
      // As for retention: what could not be unlinked is retried next time or removed at open.
      this.warn('delete segments', err);
    }
    if (deleted > 0) this.startMoved();
    return deleted;
  }

  /**
   * The oldest segment may go: it is not the active one, nothing of it is staged, and it lies
   * wholly below the high watermark (so the log start never passes it).
   */
  private oldestDeletable(): boolean {
    return this.segments.length > 1 && !this.segments[0]!.busy && this.segments[1]!.baseOffset <= this.hw;
  }

  /** The log start moved: producer state and the epoch cache forget what lay below it. */
  private startMoved(): void {
    this.producers.removeBefore(this.logStartOffset);
    const moved = this.epochs.truncateFromStart(this.logStartOffset);
    // Retention that empties the log leaves no batch of any epoch: no entry either, as recovery finds it.
    const emptied = this.epochs.truncateFromEnd(this.leo);
    if (moved || emptied) this.saveEpochs();
    this.updateRecoveryPoint(true);
  }

  private retainByTime(now: number): void {
    for (;;) {
      const seg = this.segments[0]!;
      if (seg.busy || seg.committedSize === 0) return;
      const newest = seg.committedMaxTimestamp >= 0 ? seg.committedMaxTimestamp : seg.createdAt;
      if (now - newest <= this.config.retentionMs) return;
      // An expired active segment (nothing staged: it is not busy) is replaced by an empty one
      // first, once everything in it is below the high watermark.
      if (this.segments.length === 1) {
        if (this.hw < this.leo) return;
        this.createActiveSegment(now);
      } else if (!this.oldestDeletable()) {
        return;
      }
      this.deleteOldest();
    }
  }

  private retainBySize(): void {
    while (this.oldestDeletable()) {
      if (this.committedBytes - this.segments[0]!.committedSize < this.config.retentionBytes) return;
      this.deleteOldest();
    }
  }

  private deleteOldest(): void {
    const seg = this.segments.shift()!;
    this.committedBytes -= seg.committedSize;
    seg.delete();
  }

  /**
   * Cuts the log back to `offset` (a follower whose tail diverged from the leader's, KIP-101): every
   * batch at or past it goes, and one that `offset` falls inside goes whole, so the log ends at the
   * batch boundary at or below `offset`. The durable offset and high watermark come down with it,
   * the epoch cache and producer state are as they were at that point. Returns the new log end.
   * Throws KafkaError OFFSET_OUT_OF_RANGE below the log start, StorageError when the log is not
   * open or the files could not be cut (the log is then offline; the next open finishes the cut),
   * and a plain Error while appends are staged or in flight: the owner commits them first.
   * Crash-safe: the target is persisted before anything is cut and removed after the cut is durable.
   */
  truncateTo(offset: number): number {
    if (this.state !== 'open' || this.offline) throw new StorageError(`log ${this.dir} is not open`);
    if (!Number.isSafeInteger(offset) || offset < this.logStartOffset) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `truncation to ${offset} below the log start ${this.logStartOffset} of ${this.dir}`);
    }
    if (this.inFlight || !this.pending.isEmpty) throw new Error(`log ${this.dir}: truncation while appends are staged`);
    if (offset >= this.leo) return this.leo;
    this.changeFiles(`truncate ${this.dir} to ${offset}`, () => this.cutTo(offset));
    return this.leo;
  }

  /** Runs a change of the log's files; one that fails part-way leaves the log offline. */
  private changeFiles(what: string, change: () => void): void {
    try {
      change();
    } catch (err) {
      this.offline = true;
      throw StorageError.from(err, what);
    }
    this.checkOffsets();
  }

  /**
   * Empties the log and starts it again at `offset` (Kafka's truncateFullyAndStartAt): a follower
   * whose log lies wholly outside the leader's (its end below the leader's log start, or a cut below
   * its own log start) starts over there. Every segment, producer snapshot and epoch-cache entry
   * goes; log start, end, durable offset and high watermark all become `offset`, which may be
   * below the old log start. Throws like truncateTo: StorageError when the log is not open or the
   * files could not be replaced (the log is then offline), a plain Error while appends are staged
   * or in flight. Crash-safe: the new log start is checkpointed first, so a crash leaves a suffix
   * of the old segments (a valid log, which the follower resets again) or none, in which case the
   * next open starts an empty segment at the checkpointed start.
   */
  resetTo(offset: number): void {
    if (this.state !== 'open' || this.offline) throw new StorageError(`log ${this.dir} is not open`);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `reset of ${this.dir} to ${offset}`);
    if (this.inFlight || !this.pending.isEmpty) throw new Error(`log ${this.dir}: reset while appends are staged`);
    this.changeFiles(`reset ${this.dir} to ${offset}`, () => this.restartAt(offset));
  }

  private restartAt(offset: number): void {
    this.cleanOpenState = null;
    const rp = Math.min(this.checkpointedRecoveryPoint, offset);
    writeCheckpoint(this.dir, { clean: false, logStartOffset: offset, recoveryPoint: rp }, true);
    fsyncDirSync(this.dir);
    this.checkpointedRecoveryPoint = rp;
    for (const seg of this.segments.splice(0)) seg.delete();
    for (const name of readdirSync(this.dir)) if (name.endsWith(SNAPSHOT_SUFFIX)) unlinkSync(join(this.dir, name));
    this.epochs.clear();
    writeFileAtomicSync(join(this.dir, LEADER_EPOCH_FILE), this.epochs.encode(), true);
    this.segments.push(Segment.create(this.dir, offset, this.now()));
    fsyncDirSync(this.dir);
    this.leo = this.written = this.durable = this.hw = offset;
    this.refreshHwBound();
    this.hintSeg = null;
    this.committedBytes = 0;
    this.producers = rebuildProducers(this.dir, this.segments, this.config, this.now);
    this.updateRecoveryPoint(true);
  }

  private cutTo(offset: number): void {
    this.cleanOpenState = null;
    writeOffsetFile(this.dir, TRUNCATION_FILE, offset, true);
    // The segment being cut must be rescanned after a crash: move the recovery point below it first.
    const rp = Math.min(this.checkpointedRecoveryPoint, this.segments[this.segmentIndexFor(offset)]!.baseOffset);
    writeCheckpoint(this.dir, { clean: false, logStartOffset: this.logStartOffset, recoveryPoint: rp }, true);
    fsyncDirSync(this.dir);
    this.checkpointedRecoveryPoint = rp;
    const end = truncateSegments(this.segments, offset, this.config.indexIntervalBytes);
    fdatasyncSync(this.active.fd);
    fsyncDirSync(this.dir);
    this.leo = this.written = this.durable = end;
    this.hw = Math.min(this.hw, end);
    this.refreshHwBound();
    this.hintSeg = null;
    this.committedBytes = this.segments.reduce((n, seg) => n + seg.committedSize, 0);
    this.epochs.truncateFromEnd(end);
    writeFileAtomicSync(join(this.dir, LEADER_EPOCH_FILE), this.epochs.encode(), true);
    this.producers = rebuildProducers(this.dir, this.segments, this.config, this.now);
    // Gone before later appends can be durable: a leftover target would cut them at the next open.
    unlinkSync(join(this.dir, TRUNCATION_FILE));
    fsyncDirSync(this.dir);
    this.updateRecoveryPoint();
  }

  updateConfig(config: LogConfig): void {
    assertLogConfig(config);
    this.config = config;
    this.producers.setExpiration(config.producerIdExpirationMs);
  }

  /**
   * Discards uncommitted appends and writes clean-shutdown checkpoints (every segment sealed,
   * producer snapshot at the log end), so the next open does not rescan. With a commit in flight
   * the shutdown completes when that commit settles.
   */
  close(): void {
    if (this.state !== 'open') return;
    this.state = 'closing';
    if (!this.inFlight) this.finish();
  }

  /** Closes and removes the directory at once; an in-flight commit finishes on unlinked files. */
  deleteAll(): void {
    if (this.state === 'closed') return;
    this.state = 'deleting';
    rmSync(this.dir, { recursive: true, force: true });
    if (!this.inFlight) this.finish();
  }

  /**
   * A clean close for a stop of many logs: the syncs are left to the caller, who batches them with
   * other logs', and instead of a marker of its own the log yields its entry for the shard's
   * clean-shutdown record (cleanCloseEntry, once the steps are done), carrying its small state
   * inline. Null when nothing is left to sync (then the log is closed: cleanly if
   * cleanCloseEntry is set; a log not open, with a commit in flight or offline closes without).
   */
  stageClose(): StagedClose | null {
    if (this.state !== 'open' || this.inFlight) {
      this.close();
      return null;
    }
    this.state = 'closing';
    return this.stageCleanShutdown(true);
  }

  /** Set once a stageClose() finished cleanly: what the shard's clean-shutdown record lists for this log. */
  get cleanCloseEntry(): CleanCloseEntry | null {
    return this.closedEntry;
  }

  private finish(): void {
    if (this.state !== 'closing') return this.release();
    for (let step = this.stageCleanShutdown(false); step !== null; ) {
      const current = step;
      try {
        for (const fd of current.fds) fdatasyncSync(fd);
        step = current.next();
      } catch (err) {
        current.abandon();
        throw StorageError.from(err, `close ${this.dir}`);
      }
    }
  }

  /**
   * The state files a clean close writes, in the order a record's inline budget takes them, each
   * with the entry field that can carry it instead: the leader-epoch checkpoint, the active
   * segment's indexes, the producer snapshot at the log end (when `withSnapshot`), and the
   * high-watermark checkpoint (when `withHighWatermark`: a record holds it as a number).
   */
  private stateFiles(withSnapshot: boolean, withHighWatermark: boolean): StateFile[] {
    const base = this.active.baseOffset;
    const files: StateFile[] = [
      { name: LEADER_EPOCH_FILE, field: 'epochs', content: this.epochs.encode() },
      { name: offsetFileName(base, TIME_INDEX.suffix), field: 'timeIndex', content: this.active.timeIndex.encode() },
      { name: offsetFileName(base, OFFSET_INDEX.suffix), field: 'offsetIndex', content: this.active.offsetIndex.encode() },
    ];
    if (withSnapshot) files.push({ name: offsetFileName(this.leo, SNAPSHOT_SUFFIX), field: 'snapshot', content: this.producers.encode() });
    if (withHighWatermark) files.push({ name: HIGH_WATERMARK_FILE, field: null, content: encodeTextCheckpoint([[this.hw]]) });
    return files;
  }

  private release(): void {
    if (this.state === 'closed') return;
    for (const seg of this.segments) seg.close();
    this.state = 'closed';
  }

  /**
   * Discards uncommitted appends and makes the log durable in steps, each one's syncs batched by
   * the caller: (1) unsynced segment data, rolled segments' indexes and the state files (see
   * stateFiles) are written under temporary names and synced; (2) they are renamed into place and
   * the directory synced; (3) alone (`record` false), the clean marker is renamed into place the
   * same way, so it becomes visible only once everything it vouches for is durable. For a record
   * (`record` true) there is no marker: state within the inline budget goes into the entry rather
   * than into files, and the entry is handed out once the rest is durable; a log whose data is
   * synced and whose state fits costs no file and no sync. A state file still durable with the
   * same content since a clean open is not rewritten.
   */
  private stageCleanShutdown(record: boolean): StagedClose | null {
    this.pending.reset();
    this.rollbackToCommitted();
    if (this.offline) {
      this.release();
      return null;
    }
    const files = new StagedFiles();
    const marker = new StagedFiles();
    // The directory is held open only while its renames are synced.
    let dirFd = -1;
    const end = (): null => {
      files.discard();
      marker.discard();
      if (dirFd >= 0) closeSync(dirFd);
      dirFd = -1;
      this.release();
      return null;
    };
    const active = this.active;
    const rolled = this.segments.slice(0, -1).filter((seg) => !seg.sealed);
    const inline: InlineState = { offsetIndex: null, timeIndex: null, snapshot: null, epochs: null };
    let snapshotFile = false;
    const data: number[] = [];
    try {
      active.appendTimeEntry();
      for (const seg of rolled) seg.stageSeal(files);
      let budget = INLINE_BUDGET;
      for (const { name, field, content } of this.stateFiles(true, !record)) {
        if (record && field !== null && content.length <= budget) {
          inline[field] = content;
          budget -= content.length;
        } else if (!this.cleanOpenState?.get(name)?.equals(content)) {
          files.write(join(this.dir, name), content);
          snapshotFile ||= field === 'snapshot';
        }
      }
      if (!record) marker.write(join(this.dir, CHECKPOINT_FILE), encodeCheckpoint({ clean: true, logStartOffset: this.logStartOffset, recoveryPoint: this.leo }));
      for (const seg of [...rolled, active]) if (seg.syncedSize < seg.committedSize) data.push(seg.fd);
    } catch (err) {
      end();
      throw StorageError.from(err, `close ${this.dir}`);
    }
    const entry: CleanCloseEntry = {
      dir: this.dir,
      logStartOffset: this.logStartOffset,
      logEndOffset: this.leo,
      highWatermark: this.hw,
      activeBase: active.baseOffset,
      activeSize: active.committedSize,
      ...inline,
    };
    const dir = (): number => (dirFd = dirFd >= 0 ? dirFd : openSync(this.dir, 'r'));
    const closed = (): null => {
      if (record) this.closedEntry = entry;
      return end();
    };
    const publishMarker = (): StagedClose | null => {
      if (record) return closed();
      marker.publish();
      return { fds: [dir()], next: closed, abandon: end };
    };
    const afterSync = (): StagedClose | null => {
      for (const seg of rolled) seg.markSealed();
      if (files.fds.length === 0) return publishMarker();
      files.publish();
      if (snapshotFile) this.pruneSnapshots();
      return { fds: [dir()], next: publishMarker, abandon: end };
    };
    const fds = [...data, ...files.fds, ...marker.fds];
    if (fds.length === 0) return afterSync();
    return { fds, next: afterSync, abandon: end };
  }

  // ---- group commit (via commitPort) ----

  private take(): WriteOp[] | null {
    if (this.state !== 'open' || this.pending.isEmpty) return null;
    if (this.queued) throw new Error(`log ${this.dir}: two commits are already in flight`);
    this.cleanOpenState = null;
    const area = this.pending;
    if (this.inFlight) this.queued = area;
    else this.inFlight = area;
    this.pending = this.spare ?? new StagingArea();
    this.spare = null;
    return area.writes();
  }

  private takeMore(): WriteOp[] | null {
    if (this.state !== 'open' || this.pending.isEmpty) return null;
    const area = this.queued ?? this.inFlight;
    if (area === null) throw new Error(`log ${this.dir}: no commit in flight to add to`);
    const writes = this.pending.writes();
    area.absorb(this.pending);
    return writes;
  }

  private syncTargets(): number[] {
    const fds: number[] = [];
    if (this.state === 'closed') return fds;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const seg = this.segments[i]!;
      if (seg.sealed) break;
      const target = Math.max(seg.committedSize, this.inFlight?.endIn(seg) ?? -1);
      if (target > seg.syncedSize && seg.fd >= 0) {
        seg.syncCapture = target;
        fds.push(seg.fd);
      }
    }
    if (this.dirDirty && this.dirSyncFd < 0) {
      try {
        this.dirSyncFd = openSync(this.dir, 'r');
        this.dirDirty = false;
        fds.push(this.dirSyncFd);
      } catch (err) {
        // Out of descriptors: the directory stays dirty and the next synced commit retries it.
        this.warn('directory sync', err);
      }
    }
    return fds;
  }

  /** The in-flight commit's writes landed, its sync (if any) still to come: followers may read them. False when there was nothing new. */
  private landWrites(): boolean {
    const area = this.inFlight;
    if (area === null || this.inFlightWritten) return false;
    for (const run of area.runs) {
      const seg = run.seg;
      seg.committedSize = run.end;
      seg.committedNextOffset = run.nextOffset;
      if (run.maxTimestamp > seg.committedMaxTimestamp) {
        seg.committedMaxTimestamp = run.maxTimestamp;
        seg.committedOffsetOfMaxTimestamp = run.offsetOfMaxTimestamp;
      }
    }
    if (area.endOffset <= this.written) throw new Error(`log ${this.dir}: commit ending at ${area.endOffset} does not pass ${this.written}`);
    this.written = area.endOffset;
    this.committedBytes += area.bytes;
    this.inFlightWritten = true;
    this.refreshHwBound();
    this.checkOffsets();
    return true;
  }

  private completed(synced: boolean, took: boolean): void {
    const area = took ? this.inFlight : null;
    if (area) {
      this.landWrites();
      this.durable = this.written;
      if (this.hwFollowsDurable) this.hw = this.durable;
      this.refreshHwBound();
      this.checkOffsets();
      area.reset();
      this.spare = area;
      this.inFlight = this.queued;
      this.queued = null;
      this.inFlightWritten = false;
    }
    if (synced) this.endSync(true);
    this.afterCommit();
  }

  private writeback(into: WritebackRange[]): void {
    const seg = this.active;
    if (this.state !== 'open' || seg.fd < 0) return;
    const from = Math.max(seg.syncedSize, seg.writebackFrom);
    if (seg.committedSize - from < WRITEBACK_BYTES) return;
    into.push({ fd: seg.fd, offset: from, length: seg.committedSize - from });
    seg.writebackFrom = seg.committedSize;
  }

  /** Rolls back in-flight and pending appends; false when this log had nothing at stake. */
  private failed(): boolean {
    // Bytes already acknowledged whose fdatasync failed may be lost: the log cannot vouch for itself.
    for (const seg of this.segments) if (seg.syncCapture >= 0 && seg.committedSize > seg.syncedSize) this.offline = true;
    if (this.inFlightWritten) this.strandedWrites = this.offline = true;
    this.endSync(false);
    const discard = this.inFlight !== null || this.offline;
    if (discard) {
      if (this.inFlight) {
        this.inFlight.reset();
        this.spare = this.inFlight;
        this.inFlight = this.queued = null;
        this.inFlightWritten = false;
      }
      this.pending.reset();
      this.rollbackToCommitted();
    }
    this.afterCommit();
    return discard;
  }

  private endSync(ok: boolean): void {
    for (const seg of this.segments) {
      if (seg.syncCapture < 0) continue;
      if (ok) seg.syncedSize = Math.max(seg.syncedSize, seg.syncCapture);
      seg.syncCapture = -1;
    }
    if (this.dirSyncFd >= 0) {
      if (!ok) this.dirDirty = true;
      closeSync(this.dirSyncFd);
      this.dirSyncFd = -1;
    }
  }

  private afterCommit(): void {
    if (this.state === 'open') this.maybeSeal();
    else if (this.state !== 'closed' && !this.inFlight) this.finish();
  }

  /** Forgets everything past the durable offset: staged segments go, the rest are truncated. */
  private rollbackToCommitted(): void {
    try {
      while (this.segments.length > 1 && this.active.baseOffset > this.durable) {
        this.segments.pop()!.delete();
      }
      for (let i = this.segments.length - 1; i >= 0 && !this.segments[i]!.sealed; i--) {
        const seg = this.segments[i]!;
        if (seg.size !== seg.committedSize) seg.rollbackToCommitted();
      }
    } catch (err) {
      this.offline = true;
      this.warn('roll back staged appends', err);
    }
    this.active.snapshotAtEnd = null;
    this.leo = this.written = this.durable;
    this.producers.truncateFrom(this.durable);
    if (this.epochs.truncateFromEnd(this.durable)) this.saveEpochs();
  }

  // ---- sealing: rolled segments become durable and leave the recovery range ----

  private maybeSeal(): void {
    for (let i = this.segments.length - 2; i >= 0; i--) {
      const seg = this.segments[i]!;
      if (seg.sealed) break;
      if (!seg.sealing && !seg.sealFailed && seg.size > 0 && seg.committedSize === seg.size) this.startSeal(seg);
    }
  }

  /** fdatasyncs the segment and writes its indexes with their own descriptors (close() may run meanwhile). */
  private startSeal(seg: Segment): void {
    seg.sealing = true;
    const attempt = ++seg.sealAttempt;
    const fds: number[] = [];
    try {
      fds.push(openSync(seg.path, 'r'), openSync(this.dir, 'r'));
      const index = openSync(seg.indexPath(OFFSET_INDEX), 'w');
      fds.push(index);
      const timeIndex = openSync(seg.indexPath(TIME_INDEX), 'w');
      fds.push(timeIndex);
      const writes: WriteOp[] = [
        { fd: index, chunks: [seg.offsetIndex.encode()], position: 0 },
        { fd: timeIndex, chunks: [seg.timeIndex.encode()], position: 0 },
      ];
      this.io.commit(writes, fds).then(
        () => this.sealDone(seg, attempt, fds, null),
        (err: unknown) => this.sealDone(seg, attempt, fds, err ?? new Error('seal failed')),
      );
    } catch (err) {
      this.sealDone(seg, attempt, fds, err);
    }
  }

  /** `error` is null on success. A seal voided meanwhile (by truncation or deletion) changes nothing. */
  private sealDone(seg: Segment, attempt: number, fds: readonly number[], error: unknown): void {
    for (const fd of fds) closeSync(fd);
    if (attempt !== seg.sealAttempt) return;
    seg.sealing = false;
    if (this.state !== 'open') return;
    if (error !== null) {
      seg.sealFailed = true;
      this.warn(`seal ${seg.path}`, error);
      return;
    }
    seg.sealed = true;
    seg.syncedSize = seg.committedSize;
    try {
      if (seg.snapshotAtEnd) this.writeSnapshot(seg.nextOffset, seg.snapshotAtEnd);
      writeOffsetFile(this.dir, HIGH_WATERMARK_FILE, this.hw, false);
    } catch (err) {
      // Without this snapshot recovery replays producer state from an older one; an older high
      // watermark checkpoint only makes the owner's next start more conservative.
      this.warn('seal checkpoints', err);
    }
    seg.snapshotAtEnd = null;
    this.updateRecoveryPoint();
  }

  /** Unsynced: the next seal or the clean close makes a newer one durable. */
  private writeSnapshot(offset: number, data: Buffer): void {
    writeFileAtomicSync(join(this.dir, offsetFileName(offset, SNAPSHOT_SUFFIX)), data, false);
    this.pruneSnapshots();
  }

  private pruneSnapshots(): void {
    const snapshots = readdirSync(this.dir)
      .filter((n) => n.endsWith(SNAPSHOT_SUFFIX))
      .sort()
      .reverse();
    for (const name of snapshots.slice(SNAPSHOTS_KEPT)) unlinkSync(join(this.dir, name));
  }

  private currentRecoveryPoint(): number {
    return this.segments.find((seg) => !seg.sealed)?.baseOffset ?? this.leo;
  }

  /** Recovery point = base of the first unsealed segment; checkpointed when it (or the log start) moves. */
  private updateRecoveryPoint(force = false): void {
    const rp = this.currentRecoveryPoint();
    if (rp === this.checkpointedRecoveryPoint && !force) return;
    this.checkpointedRecoveryPoint = rp;
    try {
      writeCheckpoint(this.dir, { clean: false, logStartOffset: this.logStartOffset, recoveryPoint: rp }, false);
    } catch (err) {
      // A stale checkpoint only makes the next recovery scan more.
      this.warn('checkpoint', err);
    }
  }

  /**
   * Persists the leader-epoch cache after an append started an epoch or the cache was cut. Not
   * fsynced here: the next synced commit makes the rename durable with the data, and recovery
   * rebuilds the cache from batch headers whenever the file it finds disagrees with the log.
   */
  private saveEpochs(): void {
    this.cleanOpenState = null;
    try {
      writeFileAtomicSync(join(this.dir, LEADER_EPOCH_FILE), this.epochs.encode(), false);
      this.dirDirty = true;
    } catch (err) {
      this.warn('leader-epoch checkpoint', err);
    }
  }

  /** Keeps the cause of a storage failure the log absorbed, and reports it. */
  private warn(what: string, err: unknown): void {
    this.warning = StorageError.from(err, `${what} (${this.dir})`);
    this.onWarning?.(what, this.warning);
  }

  /** Cheap invariant check where offsets move; a failure is a bug in the log. */
  private checkOffsets(): void {
    if (this.logStartOffset <= this.hw && this.hw <= this.durable && this.durable <= this.written && this.written <= this.leo) return;
    throw new Error(`log ${this.dir}: offsets out of order: start ${this.logStartOffset}, hw ${this.hw}, durable ${this.durable}, written ${this.written}, end ${this.leo}`);
  }
}
