// One segment of a partition log: the `<20-digit base offset>.log` file, its sparse offset and
// time indexes (in memory; persisted as `.index` / `.timeindex` when the segment is sealed or the
// log closes), and the sizes that separate staged, committed and synced bytes. Owned by its
// PartitionLog on the shard worker. A log truncation cuts the last surviving segment at a batch
// boundary and walks its remaining batches again to rebuild what it knows.
// Invariants: syncedSize <= committedSize <= size; every index entry points at a batch start;
// bytes below committedSize are whole, CRC-valid batches with contiguous offsets starting at
// baseOffset; only committed bytes are ever read back. A header kept by RecentHeaders is the one
// its position holds (written, or staged to be written, from the same bytes).
import { closeSync, fdatasyncSync, ftruncateSync, openSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BatchScanner, type ScanResult } from './batch_scanner.js';
import { StorageError } from './io_backend.js';
import { sealedHandles, type HandleHolder } from './segment_handles.js';
import { StagedFiles } from './log_checkpoint.js';
import { BATCH_HEADER_BYTES, BatchField, LOG_OVERHEAD, readInt64 } from '../protocol/record_batch.js';
import { KEY, OFFSET_INDEX, SparseIndex, TIME_INDEX, VALUE, type IndexFormat } from './sparse_index.js';

export const LOG_SUFFIX = '.log';
export const SNAPSHOT_SUFFIX = '.snapshot';

export function offsetFileName(offset: number, suffix: string): string {
  return String(offset).padStart(20, '0') + suffix;
}

// Header reads go through one scratch buffer: a worker thread runs one lookup at a time.
const HDR = Buffer.allocUnsafe(BATCH_HEADER_BYTES);

/** Headers the active segment keeps of its latest batches. */
const RECENT_HEADERS = 32;

/**
 * The headers of the last RECENT_HEADERS batches staged in a segment, by position. Nearly every
 * header lookup of a busy partition falls among them: locating the high watermark after each
 * commit, and a tailing consumer's fetch cutting its answer at a batch boundary. Read from the
 * file, each is a pread (1.6 per small produce on the partition's shard at 20k msg/s, linger 0),
 * and a system call costs ~1 us on this kind of VM before it does anything.
 */
class RecentHeaders {
  private readonly positions = new Float64Array(RECENT_HEADERS).fill(-1);
  private readonly bytes = Buffer.alloc(RECENT_HEADERS * BATCH_HEADER_BYTES);
  private next = 0;

  /** Keeps the header at the start of `batch`, staged at `pos`. */
  note(pos: number, batch: Buffer): void {
    const i = this.next;
    this.positions[i] = pos;
    batch.copy(this.bytes, i * BATCH_HEADER_BYTES, 0, BATCH_HEADER_BYTES);
    this.next = (i + 1) % RECENT_HEADERS;
  }

  /** Copies the header of the batch at `pos` into `into`; false when it is not kept. */
  load(pos: number, into: Buffer): boolean {
    for (let i = 0; i < RECENT_HEADERS; i++) {
      if (this.positions[i] !== pos) continue;
      this.bytes.copy(into, 0, i * BATCH_HEADER_BYTES, (i + 1) * BATCH_HEADER_BYTES);
      return true;
    }
    return false;
  }

  /** Forgets the headers at or past `pos` (staged bytes rolled back). */
  forgetFrom(pos: number): void {
    for (let i = 0; i < RECENT_HEADERS; i++) if (this.positions[i] >= pos) this.positions[i] = -1;
  }
}

/** Fields of the header last loaded by Segment.loadHeader. */
export const lastHeader = {
  baseOffset: (): number => readInt64(HDR, BatchField.baseOffset),
  size: (): number => HDR.readInt32BE(BatchField.batchLength) + LOG_OVERHEAD,
  lastOffset: (): number => readInt64(HDR, BatchField.baseOffset) + HDR.readInt32BE(BatchField.lastOffsetDelta),
  maxTimestamp: (): number => readInt64(HDR, BatchField.maxTimestamp),
  attributes: (): number => HDR.readInt16BE(BatchField.attributes),
  leaderEpoch: (): number => HDR.readInt32BE(BatchField.partitionLeaderEpoch),
};

export class Segment implements HandleHolder {
  readonly path: string;
  /** Write position: end of staged data. */
  size: number;
  committedSize: number;
  syncedSize: number;
  /** Bytes below which writeback was started (commit_port.ts WRITEBACK_BYTES), or synced. */
  writebackFrom = 0;
  /** Offset after the last staged / committed batch. */
  nextOffset: number;
  committedNextOffset: number;
  readonly offsetIndex = new SparseIndex(OFFSET_INDEX);
  readonly timeIndex = new SparseIndex(TIME_INDEX);
  /** Max timestamp over staged batches, and the base offset of the batch that holds it. */
  maxTimestamp = -1;
  offsetOfMaxTimestamp = -1;
  committedMaxTimestamp = -1;
  committedOffsetOfMaxTimestamp = -1;
  private bytesSinceIndexEntry = 0;
  /** Kept while the segment takes appends (noteBatch with the batch), dropped when it stops. */
  private recent: RecentHeaders | null = null;
  /** Immutable, fdatasync'ed, indexes persisted: below the recovery point. */
  private isSealed = false;
  /** The open descriptor, -1 while a sealed segment's handle is released (reopened on use) or once closed. */
  private handle: number;
  private closed = false;
  sealing = false;
  /** An asynchronous seal failed; only close() retries it. */
  sealFailed = false;
  /** Bumped when a seal starts and when a truncation cuts the segment: a seal that finishes under an older value is void. */
  sealAttempt = 0;
  /** Size an in-flight fdatasync will make durable; -1 when none is in flight. */
  syncCapture = -1;
  /** Producer state as of nextOffset, written when the segment is sealed. */
  snapshotAtEnd: Buffer | null = null;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    fd: number,
    size: number,
    readonly createdAt: number,
  ) {
    this.handle = fd;
    this.path = join(dir, offsetFileName(baseOffset, LOG_SUFFIX));
    this.size = this.committedSize = this.syncedSize = size;
    this.nextOffset = this.committedNextOffset = baseOffset;
  }

  static create(dir: string, baseOffset: number, now: number): Segment {
    const fd = openSync(join(dir, offsetFileName(baseOffset, LOG_SUFFIX)), 'w+');
    return new Segment(dir, baseOffset, fd, 0, now);
  }

  /**
   * An existing file, its descriptor opened on first use (a partition with many segments does not
   * hold them all open at once); its bytes count as committed and synced until recovery says otherwise.
   */
  static open(dir: string, baseOffset: number, now: number): Segment {
    const path = join(dir, offsetFileName(baseOffset, LOG_SUFFIX));
    return new Segment(dir, baseOffset, -1, statSync(path).size, now);
  }

  /**
   * The segment's descriptor, reopened when released; -1 once closed. A sealed segment's use
   * refreshes its place in the thread's handle cache, which may release other sealed segments'
   * descriptors (never this one's) to stay within its bound.
   */
  get fd(): number {
    if (this.closed) return -1;
    if (this.handle < 0) this.handle = openSync(this.path, 'r+');
    if (this.isSealed) sealedHandles.touch(this);
    return this.handle;
  }

  /** Whether the descriptor is open now (a sealed segment's may be released until next use). */
  get holdsDescriptor(): boolean {
    return this.handle >= 0;
  }

  get sealed(): boolean {
    return this.isSealed;
  }

  /** A sealed segment is only read, so its descriptor may be released while idle; an unsealed one keeps it. */
  set sealed(value: boolean) {
    this.isSealed = value;
    if (!value) sealedHandles.forget(this);
    else if (this.handle >= 0) sealedHandles.touch(this);
  }

  /** Called by the handle cache on eviction: the next use reopens. No asynchronous operation holds a sealed segment's descriptor. */
  releaseHandle(): void {
    if (this.handle < 0) return;
    closeSync(this.handle);
    this.handle = -1;
  }

  indexPath(format: IndexFormat): string {
    return join(this.dir, offsetFileName(this.baseOffset, format.suffix));
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /**
   * True while staged, in-flight or sync-captured bytes make the file unsafe to close or delete.
   * A seal in progress does not count: it works on descriptors of its own.
   */
  get busy(): boolean {
    return this.size !== this.committedSize || this.syncCapture >= 0;
  }

  /**
   * Accounts for a batch written at `pos` (staged on append, or found by a recovery scan):
   * offsets, max timestamp, and an index entry once indexIntervalBytes have passed since the last.
   */
  noteBatch(pos: number, size: number, baseOffset: number, lastOffset: number, maxTimestamp: number, indexIntervalBytes: number, batch?: Buffer): void {
    if (batch !== undefined) (this.recent ??= new RecentHeaders()).note(pos, batch);
    if (maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = maxTimestamp;
      this.offsetOfMaxTimestamp = baseOffset;
    }
    if (this.bytesSinceIndexEntry > indexIntervalBytes) {
      this.offsetIndex.append(baseOffset - this.baseOffset, pos);
      this.appendTimeEntry();
      this.bytesSinceIndexEntry = 0;
    }
    this.bytesSinceIndexEntry += size;
    this.size = pos + size;
    this.nextOffset = lastOffset + 1;
  }

  /** Records the segment's max timestamp in the time index (done at each index point and on roll). */
  appendTimeEntry(): void {
    if (this.maxTimestamp > this.timeIndex.lastKey()) {
      this.timeIndex.append(this.maxTimestamp, this.offsetOfMaxTimestamp - this.baseOffset);
    }
  }

  /** Marks everything staged so far as committed (a recovered or fully written segment). */
  commitAll(): void {
    this.committedSize = this.size;
    this.committedNextOffset = this.nextOffset;
    this.committedMaxTimestamp = this.maxTimestamp;
    this.committedOffsetOfMaxTimestamp = this.offsetOfMaxTimestamp;
  }

  /** Restores the committed state: staged bytes, index entries and timestamps past it are forgotten. */
  rollbackToCommitted(): void {
    this.size = this.committedSize;
    this.nextOffset = this.committedNextOffset;
    this.maxTimestamp = this.committedMaxTimestamp;
    this.offsetOfMaxTimestamp = this.committedOffsetOfMaxTimestamp;
    const rel = this.committedNextOffset - this.baseOffset;
    this.offsetIndex.truncateFrom(KEY, rel);
    this.timeIndex.truncateFrom(VALUE, rel);
    this.bytesSinceIndexEntry = 0;
    this.recent?.forgetFrom(this.committedSize);
    ftruncateSync(this.fd, this.committedSize);
  }

  /** Resets indexes and sizes before a recovery scan rebuilds them. */
  resetForScan(): void {
    this.recent = null;
    this.offsetIndex.clear();
    this.timeIndex.clear();
    this.maxTimestamp = this.offsetOfMaxTimestamp = -1;
    this.bytesSinceIndexEntry = 0;
    this.size = 0;
    this.nextOffset = this.baseOffset;
  }

  /**
   * Rebuilds offsets, timestamps and indexes from the batches in [0, endPos) (a recovery scan, or
   * what survives a truncation), stopping at the first batch that is torn, out of sequence or, with
   * verifyCrc, corrupt. Everything walked counts as committed.
   */
  reindex(endPos: number, verifyCrc: boolean, indexIntervalBytes: number): ScanResult & { batches: number } {
    this.resetForScan();
    let batches = 0;
    const result = new BatchScanner(this.fd, endPos).scan(0, verifyCrc, (h, pos, size) => {
      const base = readInt64(h, BatchField.baseOffset);
      if (base !== this.nextOffset) return false;
      const last = base + h.readInt32BE(BatchField.lastOffsetDelta);
      if (last < base) return false;
      this.noteBatch(pos, size, base, last, readInt64(h, BatchField.maxTimestamp), indexIntervalBytes);
      batches++;
      return true;
    });
    this.appendTimeEntry();
    this.commitAll();
    return { ...result, batches };
  }

  /** Makes a segment the active one again after a truncation: appendable, unsealed, any seal in progress voided. */
  reopenAsActive(): void {
    this.sealAttempt++;
    this.sealed = this.sealing = this.sealFailed = false;
    this.snapshotAtEnd = null;
  }

  /**
   * Cuts the file at the batch boundary `pos` (a log truncation) and rebuilds from the batches
   * left. Its persisted indexes are removed (they describe the old contents). The caller makes the new size durable.
   */
  truncateTo(pos: number, indexIntervalBytes: number): void {
    this.reopenAsActive();
    ftruncateSync(this.fd, pos);
    this.removeFiles([this.indexPath(OFFSET_INDEX), this.indexPath(TIME_INDEX)]);
    const walked = this.reindex(pos, false, indexIntervalBytes).endPos;
    if (walked !== pos) throw new StorageError(`segment ${this.path}: batches end at ${walked}, not at the truncation point ${pos}`);
    this.syncedSize = Math.min(this.syncedSize, pos);
    this.writebackFrom = Math.min(this.writebackFrom, pos);
  }

  /** Adopts indexes loaded from disk (the segment's own bytes were not rescanned). */
  adoptIndexes(offsets: SparseIndex, times: SparseIndex, size: number, nextOffset: number): void {
    this.offsetIndex.clear();
    for (let i = 0; i < offsets.count; i++) this.offsetIndex.append(offsets.key(i), offsets.value(i));
    this.timeIndex.clear();
    for (let i = 0; i < times.count; i++) this.timeIndex.append(times.key(i), times.value(i));
    this.maxTimestamp = times.lastKey();
    this.offsetOfMaxTimestamp = times.count > 0 ? this.baseOffset + times.lastValue() : -1;
    this.bytesSinceIndexEntry = offsets.count > 0 ? size - offsets.lastValue() : size;
    this.size = size;
    this.nextOffset = nextOffset;
    this.commitAll();
  }

  /** Reads the header of the batch at `pos` into the scratch (see lastHeader); false when short. */
  loadHeader(pos: number): boolean {
    if (this.recent !== null && this.recent.load(pos, HDR)) return true;
    return readSync(this.fd, HDR, 0, BATCH_HEADER_BYTES, pos) === BATCH_HEADER_BYTES;
  }

  /** The segment takes no more appends (rolled, sealed or closed): its recent headers go. */
  dropRecentHeaders(): void {
    this.recent = null;
  }

  /** Position of the committed batch containing `offset`, searching from `fromPos`; -1 if none. */
  locate(offset: number, fromPos = this.indexedPositionAtOrBefore(offset)): number {
    let pos = fromPos;
    while (pos < this.committedSize) {
      if (!this.loadHeader(pos)) return -1;
      if (lastHeader.lastOffset() >= offset) return pos;
      pos += lastHeader.size();
    }
    return -1;
  }

  indexedPositionAtOrBefore(offset: number): number {
    const i = this.offsetIndex.floor(KEY, offset - this.baseOffset);
    return i >= 0 ? this.offsetIndex.value(i) : 0;
  }

  /**
   * The last batch boundary in (from, limit], limit <= committedSize; `from` when the first batch
   * alone exceeds the limit. Jumps with the index, then walks headers.
   */
  boundaryAtOrBefore(from: number, limit: number): number {
    if (limit >= this.committedSize) return this.committedSize;
    const i = this.offsetIndex.floor(VALUE, limit);
    let pos = i >= 0 && this.offsetIndex.value(i) > from ? this.offsetIndex.value(i) : from;
    while (this.loadHeader(pos) && pos + lastHeader.size() <= limit) pos += lastHeader.size();
    return pos;
  }

  /** Seals synchronously (at open): data synced, index files synced; the caller fsyncs the directory. */
  sealSync(): void {
    const files = new StagedFiles();
    try {
      this.stageSeal(files);
      for (const fd of [this.fd, ...files.fds]) fdatasyncSync(fd);
      files.publish();
    } finally {
      files.discard();
    }
    this.markSealed();
  }

  /** Writes the index files of a seal whose syncs the caller batches: this.fd and `files` are synced, then published. */
  stageSeal(files: StagedFiles): void {
    files.write(this.indexPath(OFFSET_INDEX), this.offsetIndex.encode());
    files.write(this.indexPath(TIME_INDEX), this.timeIndex.encode());
  }

  /** The data and the index files staged by stageSeal are durable. */
  markSealed(): void {
    this.syncedSize = this.committedSize;
    this.sealed = true;
    this.recent = null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.recent = null;
    sealedHandles.forget(this);
    this.releaseHandle();
  }

  /** Closes and removes the segment's files. */
  delete(): void {
    this.close();
    this.sealAttempt++;
    this.removeFiles([this.path, this.indexPath(OFFSET_INDEX), this.indexPath(TIME_INDEX)]);
  }

  private removeFiles(paths: readonly string[]): void {
    for (const path of paths) {
      try {
        unlinkSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
}
