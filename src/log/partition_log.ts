// A partition's durable log: a directory of segments that hold record batches exactly as
// validated, appended by the partition actor on its shard worker (the only thread that touches it).
// Appends are staged in memory and handed to the shard's GroupCommitter through `commitPort`;
// they become readable (the high watermark advances) only when the commit holding them lands,
// and are rolled back if it fails. Segments roll by size and age; once a rolled segment is wholly
// committed it is sealed in the background (fdatasync, indexes persisted, producer snapshot) and the
// recovery point moves past it, so a crash rescans only the unsealed tail.
// Invariants: logStartOffset <= highWatermark <= logEndOffset; bytes and offsets below the high
// watermark never change; at most one commit is in flight.
import { closeSync, fsyncSync, openSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode } from '../protocol/errors.js';
import type { CommitPort } from './commit_port.js';
import { StorageError, type IoBackend, type WriteOp } from './io_backend.js';
import { assertLogConfig, type LogConfig } from './log_config.js';
import { writeCheckpoint, writeFileAtomicSync } from './log_checkpoint.js';
import { findMaxTimestamp, findOffsetForTimestamp, type OffsetAndTimestamp } from './log_timestamps.js';
import { recoverLog, type RecoveryStats } from './log_recovery.js';
import type { ProducerStateTable } from './producer_state.js';
import { setLogAppendTime, stampBatch, type BatchHeader } from '../protocol/record_batch.js';
import { lastHeader, offsetFileName, Segment, SNAPSHOT_SUFFIX } from './segment.js';
import { OFFSET_INDEX, TIME_INDEX } from './sparse_index.js';
import { StagingArea } from './staging.js';

export type { LogConfig } from './log_config.js';
export type { RecoveryStats } from './log_recovery.js';

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
/** Offsets are stored relative to the segment base as u32. */
const MAX_RELATIVE_OFFSET = 0xffffffff;
/** Producer snapshots kept on disk (the newest is used; the previous covers a damaged newest). */
const SNAPSHOTS_KEPT = 2;

type LogState = 'open' | 'closing' | 'deleting' | 'closed';

function readError(error: ErrorCode): ReadResult {
  return { error, ranges: [], bytes: 0 };
}

export class PartitionLog {
  readonly recovery: RecoveryStats;
  /** For GroupCommitter only: hands staged appends over and reports commit outcomes. */
  readonly commitPort: CommitPort;
  private config: LogConfig;
  private readonly segments: Segment[];
  private readonly producers: ProducerStateTable;
  private leo: number;
  private hw: number;
  private committedBytes = 0;
  private checkpointedRecoveryPoint = -1;
  private leaderEpoch = -1;
  private pending = new StagingArea();
  private inFlight: StagingArea | null = null;
  private spare = new StagingArea();
  private readonly dirFd: number;
  private dirDirty = false;
  private dirSyncInFlight = false;
  private offline = false;
  private state: LogState = 'open';
  // Where the last read ended: a consumer at the tail asks for exactly that offset next.
  private hintSeg: Segment | null = null;
  private hintOffset = -1;
  private hintPos = 0;

  private constructor(
    readonly dir: string,
    config: LogConfig,
    private readonly io: IoBackend,
    private readonly now: () => number,
  ) {
    this.config = config;
    const rec = recoverLog(dir, config, now);
    this.segments = rec.segments;
    this.producers = rec.producers;
    this.recovery = rec.stats;
    this.leo = this.hw = this.active.nextOffset;
    for (const seg of this.segments) this.committedBytes += seg.committedSize;
    this.dirFd = openSync(dir, 'r');
    const log = this;
    this.commitPort = {
      get isOpen() {
        return log.state === 'open' && !log.offline;
      },
      take: () => this.take(),
      syncTargets: () => this.syncTargets(),
      completed: (synced) => this.completed(synced),
      failed: () => this.failed(),
    };
    this.updateRecoveryPoint();
  }

  /** Opens (creating if needed) and recovers the log in `dir`; synchronous. */
  static open(dir: string, config: LogConfig, io: IoBackend, now: () => number): PartitionLog {
    assertLogConfig(config);
    return new PartitionLog(dir, config, io, now);
  }

  get logStartOffset(): number {
    return this.segments[0]!.baseOffset;
  }

  get logEndOffset(): number {
    return this.leo;
  }

  get highWatermark(): number {
    return this.hw;
  }

  /** Committed bytes across all segments. */
  get sizeBytes(): number {
    return this.committedBytes;
  }

  /** Bytes appended but not yet committed: the actor bounds this with backpressure. */
  get stagedBytes(): number {
    return this.pending.bytes + (this.inFlight?.bytes ?? 0);
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

  /** Stamped into every appended batch's partitionLeaderEpoch (-1 until a leader epoch is known). */
  setLeaderEpoch(epoch: number): void {
    this.leaderEpoch = epoch;
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
    if (this.state !== 'open' || this.offline) return STORAGE_FAILURE;
    if (batch.length > this.config.segmentBytes) return BATCH_TOO_LARGE;
    const check = this.producers.check(header);
    if (check.kind !== 'append') return check;
    const now = this.now();
    let seg = this.active;
    if (this.shouldRoll(seg, batch.length, header.lastOffsetDelta, now)) {
      try {
        seg = this.roll(now);
      } catch {
        return STORAGE_FAILURE;
      }
    }
    const baseOffset = this.leo;
    const lastOffset = baseOffset + header.lastOffsetDelta;
    stampBatch(batch, baseOffset, this.leaderEpoch);
    let maxTimestamp = header.maxTimestamp;
    let logAppendTime = -1;
    if (this.config.timestampType === 'LogAppendTime') {
      setLogAppendTime(batch, now);
      maxTimestamp = logAppendTime = now;
    }
    const position = seg.size;
    seg.noteBatch(position, batch.length, baseOffset, lastOffset, maxTimestamp, this.config.indexIntervalBytes);
    this.pending.add(seg, position, batch, baseOffset, lastOffset + 1, maxTimestamp);
    this.leo = lastOffset + 1;
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
   * Whole committed batches from the one containing fetchOffset, up to maxBytes (at least one batch
   * when minOneBatch, KIP-74); empty at or past the high watermark.
   */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean): ReadResult {
    if (this.state === 'closed') return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    if (fetchOffset < this.logStartOffset || fetchOffset > this.leo) return readError(ErrorCode.OFFSET_OUT_OF_RANGE);
    if (fetchOffset >= this.hw) return readError(ErrorCode.NONE);
    try {
      return this.readCommitted(fetchOffset, maxBytes, minOneBatch);
    } catch {
      return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    }
  }

  private readCommitted(fetchOffset: number, maxBytes: number, minOneBatch: boolean): ReadResult {
    let i = this.segmentIndexFor(fetchOffset);
    let seg = this.segments[i]!;
    const hinted = seg === this.hintSeg && fetchOffset === this.hintOffset && this.hintPos < seg.committedSize;
    let pos = hinted ? this.hintPos : seg.locate(fetchOffset);
    if (pos < 0) return readError(ErrorCode.KAFKA_STORAGE_ERROR);
    const ranges: FileRange[] = [];
    let bytes = 0;
    let needOne = minOneBatch;
    for (;;) {
      let end = seg.boundaryAtOrBefore(pos, Math.min(seg.committedSize, pos + Math.max(0, maxBytes - bytes)));
      let endOffset = end >= seg.committedSize ? seg.committedNextOffset : lastHeader.baseOffset();
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
      if (end < seg.committedSize || bytes >= maxBytes || ++i >= this.segments.length) break;
      seg = this.segments[i]!;
      pos = 0;
      if (seg.committedSize === 0) break;
    }
    return { error: ErrorCode.NONE, ranges, bytes };
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
    const before = this.segments.length;
    const now = this.now();
    try {
      if (this.config.retentionMs >= 0) this.retainByTime(now);
      if (this.config.retentionBytes >= 0) this.retainBySize();
    } catch {
      // A segment that could not be replaced or unlinked is retried on the next call; files left
      // below the checkpointed log start are removed at the next open.
    }
    this.producers.expire();
    if (this.segments.length === before) return;
    this.producers.removeBefore(this.logStartOffset);
    this.updateRecoveryPoint(true);
  }

  /**
   * Deletes whole segments holding only offsets below `offset` (never the active one): how an
   * owner that rewrote its keyed state past them drops the history. Returns how many went.
   */
  deleteSegmentsBefore(offset: number): number {
    if (this.state !== 'open' || this.offline) return 0;
    let deleted = 0;
    try {
      while (this.segments.length > 1 && !this.segments[0]!.busy && this.segments[1]!.baseOffset <= offset) {
        this.deleteOldest();
        deleted++;
      }
    } catch {
      // As for retention: what could not be unlinked is retried next time or removed at open.
    }
    if (deleted > 0) {
      this.producers.removeBefore(this.logStartOffset);
      this.updateRecoveryPoint(true);
    }
    return deleted;
  }

  private retainByTime(now: number): void {
    for (;;) {
      const seg = this.segments[0]!;
      if (seg.busy || seg.committedSize === 0) return;
      const newest = seg.committedMaxTimestamp >= 0 ? seg.committedMaxTimestamp : seg.createdAt;
      if (now - newest <= this.config.retentionMs) return;
      // An expired active segment (nothing staged: it is not busy) is replaced by an empty one first.
      if (this.segments.length === 1) this.createActiveSegment(now);
      this.deleteOldest();
    }
  }

  private retainBySize(): void {
    while (this.segments.length > 1) {
      const seg = this.segments[0]!;
      if (seg.busy || this.committedBytes - seg.committedSize < this.config.retentionBytes) return;
      this.deleteOldest();
    }
  }

  private deleteOldest(): void {
    const seg = this.segments.shift()!;
    this.committedBytes -= seg.committedSize;
    seg.delete();
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

  private finish(): void {
    let error: unknown = null;
    if (this.state === 'closing') {
      try {
        this.writeCleanShutdown();
      } catch (err) {
        error = err;
      }
    }
    for (const seg of this.segments) seg.close();
    closeSync(this.dirFd);
    this.state = 'closed';
    if (error) throw StorageError.from(error, `close ${this.dir}`);
  }

  private writeCleanShutdown(): void {
    this.pending.reset();
    this.rollbackToCommitted();
    if (this.offline) return;
    this.active.appendTimeEntry();
    for (const seg of this.segments) if (!seg.sealed) seg.sealSync();
    this.writeSnapshot(this.leo, this.producers.encode(), true);
    writeCheckpoint(this.dir, { clean: true, logStartOffset: this.logStartOffset, recoveryPoint: this.leo }, true);
    fsyncSync(this.dirFd);
  }

  // ---- group commit (via commitPort) ----

  private take(): WriteOp[] | null {
    if (this.state !== 'open' || this.pending.isEmpty) return null;
    if (this.inFlight) throw new Error(`log ${this.dir}: a commit is already in flight`);
    this.inFlight = this.pending;
    this.pending = this.spare;
    return this.inFlight.writes();
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
    if (this.dirDirty) {
      this.dirDirty = false;
      this.dirSyncInFlight = true;
      fds.push(this.dirFd);
    }
    return fds;
  }

  private completed(synced: boolean): void {
    const area = this.inFlight;
    if (area) {
      for (const run of area.runs) {
        const seg = run.seg;
        seg.committedSize = run.end;
        seg.committedNextOffset = run.nextOffset;
        if (run.maxTimestamp > seg.committedMaxTimestamp) {
          seg.committedMaxTimestamp = run.maxTimestamp;
          seg.committedOffsetOfMaxTimestamp = run.offsetOfMaxTimestamp;
        }
      }
      this.hw = area.endOffset;
      this.committedBytes += area.bytes;
      area.reset();
      this.spare = area;
      this.inFlight = null;
    }
    if (synced) this.endSync(true);
    this.afterCommit();
  }

  /** Rolls back in-flight and pending appends; false when this log had nothing at stake. */
  private failed(): boolean {
    // Bytes already acknowledged whose fdatasync failed may be lost: the log cannot vouch for itself.
    for (const seg of this.segments) if (seg.syncCapture >= 0 && seg.committedSize > seg.syncedSize) this.offline = true;
    this.endSync(false);
    const discard = this.inFlight !== null || this.offline;
    if (discard) {
      if (this.inFlight) {
        this.inFlight.reset();
        this.spare = this.inFlight;
        this.inFlight = null;
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
    if (this.dirSyncInFlight && !ok) this.dirDirty = true;
    this.dirSyncInFlight = false;
  }

  private afterCommit(): void {
    if (this.state === 'open') this.maybeSeal();
    else if (this.state !== 'closed') this.finish();
  }

  /** Forgets everything past the high watermark: staged segments go, the rest are truncated. */
  private rollbackToCommitted(): void {
    try {
      while (this.segments.length > 1 && this.active.baseOffset > this.hw) {
        this.segments.pop()!.delete();
      }
      for (let i = this.segments.length - 1; i >= 0 && !this.segments[i]!.sealed; i--) {
        const seg = this.segments[i]!;
        if (seg.size !== seg.committedSize) seg.rollbackToCommitted();
      }
    } catch {
      this.offline = true;
    }
    this.active.snapshotAtEnd = null;
    this.leo = this.hw;
    this.producers.truncateFrom(this.hw);
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
        () => this.sealDone(seg, fds, true),
        () => this.sealDone(seg, fds, false),
      );
    } catch {
      this.sealDone(seg, fds, false);
    }
  }

  private sealDone(seg: Segment, fds: readonly number[], ok: boolean): void {
    for (const fd of fds) closeSync(fd);
    seg.sealing = false;
    if (this.state !== 'open') return;
    if (!ok) {
      seg.sealFailed = true;
      return;
    }
    seg.sealed = true;
    seg.syncedSize = seg.committedSize;
    try {
      if (seg.snapshotAtEnd) this.writeSnapshot(seg.nextOffset, seg.snapshotAtEnd, false);
    } catch {
      // Without this snapshot recovery replays producer state from an older one.
    }
    seg.snapshotAtEnd = null;
    this.updateRecoveryPoint();
  }

  private writeSnapshot(offset: number, data: Buffer, durable: boolean): void {
    writeFileAtomicSync(join(this.dir, offsetFileName(offset, SNAPSHOT_SUFFIX)), data, durable);
    const snapshots = readdirSync(this.dir)
      .filter((n) => n.endsWith(SNAPSHOT_SUFFIX))
      .sort()
      .reverse();
    for (const name of snapshots.slice(SNAPSHOTS_KEPT)) unlinkSync(join(this.dir, name));
  }

  /** Recovery point = base of the first unsealed segment; checkpointed when it (or the log start) moves. */
  private updateRecoveryPoint(force = false): void {
    let rp = this.leo;
    for (const seg of this.segments) {
      if (!seg.sealed) {
        rp = seg.baseOffset;
        break;
      }
    }
    if (rp === this.checkpointedRecoveryPoint && !force) return;
    this.checkpointedRecoveryPoint = rp;
    try {
      writeCheckpoint(this.dir, { clean: false, logStartOffset: this.logStartOffset, recoveryPoint: rp }, false);
    } catch {
      // A stale checkpoint only makes the next recovery scan more.
    }
  }
}
