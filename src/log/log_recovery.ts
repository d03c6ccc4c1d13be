// Startup recovery of one partition directory, run synchronously on the shard worker when the
// partition opens. Segments below the recovery point keep their persisted indexes after a cheap
// verification (entries point at real batch starts, the batch chain from the last entry reaches
// the end of the file); from the first segment at or past the recovery point (or the first whose
// indexes fail) every batch is CRC-checked, the first torn or corrupt batch and everything after
// it is cut off, and the indexes are rebuilt. A truncation interrupted by the crash (its target
// file is still there) is then finished. Producer state comes from the newest usable snapshot
// plus a replay of the batch headers after it. The leader-epoch cache comes from its checkpoint,
// cut to the recovered log; it is rebuilt from the batch headers when the checkpoint is missing,
// damaged or stale (its latest epoch is not the last batch's). The high watermark comes from its
// checkpoint, clamped into [log start, log end]. A partition listed in a clean-shutdown record
// (clean_shutdown.ts) whose active segment still has the recorded base and size is opened from
// that entry instead: no rescan, and the state it carries inline stands in for the files.
import { fdatasyncSync, ftruncateSync, mkdirSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BatchScanner } from './batch_scanner.js';
import { LEADER_EPOCH_FILE, LeaderEpochCache } from './leader_epoch_cache.js';
import type { LogConfig } from './log_config.js';
import {
  fsyncDirSync,
  HIGH_WATERMARK_FILE,
  readCheckpoint,
  readOffsetFile,
  TMP_SUFFIX,
  TRUNCATION_FILE,
  writeFileAtomicSync,
  type LogCheckpoint,
} from './log_checkpoint.js';
import { truncateSegments } from './log_truncation.js';
import { readFileIfPresent } from './text_checkpoint.js';
import type { CleanCloseEntry } from './clean_shutdown.js';
import { ProducerStateTable } from './producer_state.js';
import { BATCH_HEADER_BYTES, BatchField, readBatchHeader, readInt64 } from '../protocol/record_batch.js';
import { lastHeader, offsetFileName, Segment, SNAPSHOT_SUFFIX } from './segment.js';
import { OFFSET_INDEX, SparseIndex, TIME_INDEX, type IndexFormat } from './sparse_index.js';

export interface RecoveryStats {
  /** Opened from a clean-shutdown checkpoint. */
  clean: boolean;
  /** Segments whose persisted indexes were verified and used without a rescan. */
  loadedSegments: number;
  /** Segments whose batches were CRC-validated (rescanned). */
  scannedSegments: number;
  scannedBatches: number;
  scannedBytes: number;
  /** Rescanned segments that had persisted indexes which were missing or rejected. */
  rebuiltIndexes: number;
  truncatedBytes: number;
  deletedSegments: number;
  /** Offset of the producer-state snapshot loaded, -1 when none was usable. */
  snapshotOffset: number;
  replayedBatches: number;
  /** Log end after finishing an interrupted truncation; -1 when none was pending. */
  finishedTruncationAt: number;
  /** The leader-epoch cache was rebuilt from batch headers (checkpoint missing, damaged or stale). */
  rebuiltEpochCache: boolean;
}

export interface RecoveredLog {
  /** Ascending; never empty; the last is the active segment. The first's base is the log start. */
  segments: Segment[];
  producers: ProducerStateTable;
  epochs: LeaderEpochCache;
  /** The checkpointed high watermark clamped into [log start, log end]; the log start when none was usable. */
  highWatermark: number;
  stats: RecoveryStats;
  /** The partition's own log.checkpoint as found (null when missing or damaged). */
  checkpoint: LogCheckpoint | null;
  /** Names of the state files whose content came from the clean-shutdown entry, not from the directory. */
  inlined: Set<string>;
}

const NAME = /^(\d{20})\.(log|index|timeindex|snapshot)$/;

interface DirListing {
  segmentBases: number[];
  snapshotOffsets: number[];
}

/** Lists segments and snapshots (ascending); removes temporaries and indexes without a segment. */
function listDir(dir: string): DirListing {
  const names = readdirSync(dir);
  const bases = new Set<number>();
  for (const name of names) {
    const m = NAME.exec(name);
    if (m && m[2] === 'log') bases.add(Number(m[1]));
  }
  const snapshotOffsets: number[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (name.endsWith(TMP_SUFFIX)) unlinkSync(join(dir, name));
    else if (m && m[2] === 'snapshot') snapshotOffsets.push(Number(m[1]));
    else if (m && m[2] !== 'log' && !bases.has(Number(m[1]))) unlinkSync(join(dir, name));
  }
  const asc = (a: number, b: number): number => a - b;
  return { segmentBases: [...bases].sort(asc), snapshotOffsets: snapshotOffsets.sort(asc) };
}

function openSegments(dir: string, bases: readonly number[], now: number): Segment[] {
  return bases.map((base) => Segment.open(dir, base, now));
}

function readIndex(seg: Segment, format: IndexFormat, inline: Buffer | null): SparseIndex | null {
  try {
    return SparseIndex.decode(format, inline ?? readFileSync(seg.indexPath(format)));
  } catch {
    return null;
  }
}

/** Walks headers from an index entry to the end of the file; the max timestamp seen, or null if broken. */
function walkTail(seg: Segment, fileSize: number, endOffset: number): number | null {
  const oi = seg.offsetIndex;
  let pos = oi.count > 0 ? oi.lastValue() : 0;
  let expected = oi.count > 0 ? seg.baseOffset + oi.lastKey() : seg.baseOffset;
  let maxTs = -1;
  while (pos < fileSize) {
    if (!seg.loadHeader(pos) || lastHeader.baseOffset() !== expected) return null;
    const size = lastHeader.size();
    if (size < BATCH_HEADER_BYTES || pos + size > fileSize) return null;
    maxTs = Math.max(maxTs, lastHeader.maxTimestamp());
    expected = lastHeader.lastOffset() + 1;
    pos += size;
  }
  return expected === endOffset ? maxTs : null;
}

/** Adopts the persisted (or `inline`) indexes of a segment that is not rescanned, if they prove consistent. */
function loadIndexes(seg: Segment, endOffset: number, inline: InlineIndexes | null): boolean {
  const offsets = readIndex(seg, OFFSET_INDEX, inline?.offsetIndex ?? null);
  const times = readIndex(seg, TIME_INDEX, inline?.timeIndex ?? null);
  if (!offsets || !times) return false;
  const fileSize = seg.size;
  const span = endOffset - seg.baseOffset;
  if (offsets.count > 0 && (offsets.lastKey() >= span || offsets.lastValue() >= fileSize)) return false;
  if (times.count > 0 && times.lastValue() >= span) return false;
  if ((times.count === 0) !== (fileSize === 0)) return false;
  seg.adoptIndexes(offsets, times, fileSize, endOffset);
  for (const i of offsets.count > 0 ? [0, offsets.count - 1] : []) {
    if (!seg.loadHeader(offsets.value(i)) || lastHeader.baseOffset() !== seg.baseOffset + offsets.key(i)) return false;
  }
  const tailMax = walkTail(seg, fileSize, endOffset);
  if (tailMax === null || (times.count > 0 && tailMax > times.lastKey())) return false;
  if (times.count === 0) return true;
  const maxAt = seg.baseOffset + times.lastValue();
  const pos = seg.locate(maxAt);
  return pos >= 0 && lastHeader.baseOffset() === maxAt && lastHeader.maxTimestamp() === times.lastKey();
}

/** CRC-validates a segment from its start, rebuilding its indexes; false when it had to be cut. */
function scanSegment(seg: Segment, config: LogConfig, stats: RecoveryStats): boolean {
  const fileSize = seg.size;
  const result = seg.reindex(fileSize, true, config.indexIntervalBytes);
  stats.scannedBatches += result.batches;
  stats.scannedSegments++;
  stats.scannedBytes += result.bytesRead;
  seg.syncedSize = seg.size;
  if (result.endPos === fileSize) return true;
  ftruncateSync(seg.fd, result.endPos);
  stats.truncatedBytes += fileSize - result.endPos;
  return false;
}

function dropSegments(segments: Segment[], from: number, stats: RecoveryStats): void {
  for (const seg of segments.splice(from)) {
    stats.truncatedBytes += seg.size;
    stats.deletedSegments++;
    seg.delete();
  }
}

type InlineIndexes = Pick<CleanCloseEntry, 'offsetIndex' | 'timeIndex'>;

/** Index of the first segment that must be rescanned (segments.length when none). `active`: the last segment's indexes from a clean-shutdown entry. */
function verifyPrefix(segments: Segment[], cp: LogCheckpoint | null, active: InlineIndexes | null, stats: RecoveryStats): number {
  let scanFrom = 0;
  if (cp?.clean) scanFrom = segments.length;
  else if (cp) while (scanFrom + 1 < segments.length && segments[scanFrom + 1]!.baseOffset <= cp.recoveryPoint) scanFrom++;
  for (let i = 0; i < scanFrom; i++) {
    const seg = segments[i]!;
    const end = i + 1 < segments.length ? segments[i + 1]!.baseOffset : cp!.recoveryPoint;
    if (!loadIndexes(seg, end, i === segments.length - 1 ? active : null)) {
      stats.rebuiltIndexes++;
      return i;
    }
    seg.sealed = true;
    stats.loadedSegments++;
  }
  return scanFrom;
}

function recoverSegments(segments: Segment[], cp: LogCheckpoint | null, active: InlineIndexes | null, config: LogConfig, stats: RecoveryStats): void {
  const scanFrom = verifyPrefix(segments, cp, active, stats);
  for (let i = scanFrom; i < segments.length; i++) {
    const seg = segments[i]!;
    const expected = i > 0 ? segments[i - 1]!.nextOffset : seg.baseOffset;
    if (seg.baseOffset !== expected || !scanSegment(seg, config, stats)) {
      dropSegments(segments, seg.baseOffset !== expected ? i : i + 1, stats);
      break;
    }
  }
  // Rescanned segments other than the active one become sealed now, so they are not rescanned again.
  for (let i = scanFrom; i < segments.length - 1; i++) segments[i]!.sealSync();
  if (scanFrom < segments.length - 1) fsyncDirSync(segments[0]!.dir);
  segments[segments.length - 1]!.sealed = false;
}

/**
 * Loads the newest snapshot at or below the log end (`atEnd`, a clean-shutdown entry's, first)
 * and replays the batch headers after it; snapshots past the log end or damaged are deleted.
 */
function recoverProducers(
  dir: string,
  segments: Segment[],
  snapshots: number[],
  config: LogConfig,
  now: () => number,
  stats: RecoveryStats,
  atEnd: Buffer | null = null,
): ProducerStateTable {
  const table = new ProducerStateTable({ expirationMs: config.producerIdExpirationMs, now });
  const logEnd = segments[segments.length - 1]!.nextOffset;
  let from = atEnd !== null && table.load(atEnd) ? logEnd : -1;
  for (const offset of from >= 0 ? [] : [...snapshots].reverse()) {
    const path = join(dir, offsetFileName(offset, SNAPSHOT_SUFFIX));
    if (offset <= logEnd && offset >= segments[0]!.baseOffset && table.load(readFileSync(path))) {
      from = offset;
      break;
    }
    unlinkSync(path);
  }
  stats.snapshotOffset = from;
  // Without a snapshot only the last two segments are replayed: producers idle longer than that
  // are treated as unknown (any sequence accepted), as Kafka does.
  if (from < 0) from = segments[Math.max(0, segments.length - 2)]!.baseOffset;
  for (const seg of segments) {
    if (seg.nextOffset <= from || seg.size === 0) continue;
    const start = seg.baseOffset >= from ? 0 : seg.locate(from);
    if (start < 0) continue;
    new BatchScanner(seg.fd, seg.committedSize).scan(start, false, (h) => {
      const header = readBatchHeader(h, 0);
      if (header.baseOffset >= from && header.producerId >= 0) {
        table.record(header, header.baseOffset, header.baseOffset + header.lastOffsetDelta);
        stats.replayedBatches++;
      }
      return true;
    });
  }
  return table;
}

/** Producer state as of the current log end, after a truncation moved the end down. */
export function rebuildProducers(dir: string, segments: Segment[], config: LogConfig, now: () => number): ProducerStateTable {
  const snapshots = readdirSync(dir)
    .map((name) => NAME.exec(name))
    .filter((m) => m !== null && m[2] === 'snapshot')
    .map((m) => Number(m![1]))
    .sort((a, b) => a - b);
  return recoverProducers(dir, segments, snapshots, config, now, newStats(false));
}

/** Applies a truncation target left by a crash, then forgets it durably. */
function finishTruncation(dir: string, segments: Segment[], config: LogConfig, stats: RecoveryStats): void {
  const target = readOffsetFile(dir, TRUNCATION_FILE);
  if (target === null) return;
  stats.finishedTruncationAt = truncateSegments(segments, Math.max(target, segments[0]!.baseOffset), config.indexIntervalBytes);
  fdatasyncSync(segments[segments.length - 1]!.fd);
  fsyncDirSync(dir);
  unlinkSync(join(dir, TRUNCATION_FILE));
  fsyncDirSync(dir);
}

/** partitionLeaderEpoch of the log's last batch; -1 for an empty log. */
function lastBatchEpoch(segments: readonly Segment[]): number {
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i]!;
    if (seg.nextOffset === seg.baseOffset) continue;
    const pos = seg.locate(seg.nextOffset - 1);
    if (pos < 0 || !seg.loadHeader(pos)) throw new Error(`segment ${seg.path}: last batch unreadable after recovery`);
    return lastHeader.leaderEpoch();
  }
  return -1;
}

function epochsFromHeaders(segments: readonly Segment[]): LeaderEpochCache {
  const cache = new LeaderEpochCache();
  for (const seg of segments) {
    new BatchScanner(seg.fd, seg.committedSize).scan(0, false, (h) => {
      const epoch = h.readInt32BE(BatchField.partitionLeaderEpoch);
      if (epoch > cache.latestEpoch) cache.assign(epoch, readInt64(h, BatchField.baseOffset));
      return true;
    });
  }
  return cache;
}

/**
 * The checkpointed cache cut to the recovered log. Epochs only grow along the log and a stale
 * checkpoint is an older prefix of the cache, so it is right exactly when its latest epoch is the
 * last batch's; otherwise (or when it is unusable and the log has epochs) the headers are walked.
 */
function recoverEpochs(dir: string, segments: readonly Segment[], stats: RecoveryStats, inline: Buffer | null): LeaderEpochCache {
  const path = join(dir, LEADER_EPOCH_FILE);
  const file = inline ?? readFileIfPresent(path);
  const saved = file && LeaderEpochCache.decode(file);
  const cutStart = saved?.truncateFromStart(segments[0]!.baseOffset) ?? false;
  const cutEnd = saved?.truncateFromEnd(segments[segments.length - 1]!.nextOffset) ?? false;
  const cut = cutStart || cutEnd;
  const lastEpoch = lastBatchEpoch(segments);
  if (saved === null ? lastEpoch < 0 : saved.latestEpoch === lastEpoch) {
    const cache = saved ?? new LeaderEpochCache();
    if (cut) writeFileAtomicSync(path, cache.encode(), true);
    return cache;
  }
  stats.rebuiltEpochCache = true;
  const rebuilt = epochsFromHeaders(segments);
  writeFileAtomicSync(path, rebuilt.encode(), true);
  return rebuilt;
}

function newStats(clean: boolean): RecoveryStats {
  return {
    clean,
    loadedSegments: 0,
    scannedSegments: 0,
    scannedBatches: 0,
    scannedBytes: 0,
    rebuiltIndexes: 0,
    truncatedBytes: 0,
    deletedSegments: 0,
    snapshotOffset: -1,
    replayedBatches: 0,
    finishedTruncationAt: -1,
    rebuiltEpochCache: false,
  };
}

/** mkdir -p that also makes the new directory entries durable (each new directory's parent is fsynced). */
export function makeDirDurably(dir: string): void {
  const created = mkdirSync(dir, { recursive: true });
  if (created === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    fsyncDirSync(dirname(d));
    if (d === created || d === dirname(d)) break;
  }
}

/**
 * `initialStart`: the log start of a directory with neither segments nor checkpoint. `entry`: the
 * partition's clean-shutdown entry, trusted when the active segment is still as it recorded.
 */
export function recoverLog(dir: string, config: LogConfig, now: () => number, initialStart = 0, entry: CleanCloseEntry | null = null): RecoveredLog {
  makeDirDurably(dir);
  const listing = listDir(dir);
  const own = readCheckpoint(dir);
  const t = now();
  const segments = openSegments(dir, listing.segmentBases, t);
  const last = segments[segments.length - 1];
  const trusted = entry !== null && last?.baseOffset === entry.activeBase && last.size === entry.activeSize && segments[0]!.baseOffset <= entry.logStartOffset ? entry : null;
  const cp = trusted ? { clean: true, logStartOffset: trusted.logStartOffset, recoveryPoint: trusted.logEndOffset } : own;
  const stats = newStats(cp?.clean === true);
  const checkpointStart = cp?.logStartOffset ?? (listing.segmentBases.length === 0 ? initialStart : 0);
  // Segments wholly below the checkpointed log start were being deleted by retention at a crash.
  let below = 0;
  while (below + 1 < segments.length && segments[below + 1]!.baseOffset <= checkpointStart) below++;
  for (const seg of segments.splice(0, below)) seg.delete();
  if (segments.length === 0) {
    segments.push(Segment.create(dir, checkpointStart, t));
    fsyncDirSync(dir);
  }
  if (cp?.clean && cp.recoveryPoint < segments[segments.length - 1]!.baseOffset) stats.clean = false;
  recoverSegments(segments, stats.clean ? cp : cp && { ...cp, clean: false }, stats.clean ? trusted : null, config, stats);
  finishTruncation(dir, segments, config, stats);
  const inline = stats.clean && trusted ? trusted : null;
  const producers = recoverProducers(dir, segments, listing.snapshotOffsets, config, now, stats, inline?.snapshot ?? null);
  const epochs = recoverEpochs(dir, segments, stats, inline?.epochs ?? null);
  const start = segments[0]!.baseOffset;
  const end = segments[segments.length - 1]!.nextOffset;
  const savedHw = inline ? inline.highWatermark : readOffsetFile(dir, HIGH_WATERMARK_FILE);
  const highWatermark = Math.min(Math.max(savedHw ?? start, start), end);
  return { segments, producers, epochs, highWatermark, stats, checkpoint: own, inlined: inlinedNames(inline, segments[segments.length - 1]!.baseOffset, end) };
}

function inlinedNames(entry: CleanCloseEntry | null, activeBase: number, end: number): Set<string> {
  const names = new Set<string>();
  if (entry === null) return names;
  if (entry.offsetIndex) names.add(offsetFileName(activeBase, OFFSET_INDEX.suffix));
  if (entry.timeIndex) names.add(offsetFileName(activeBase, TIME_INDEX.suffix));
  if (entry.snapshot) names.add(offsetFileName(end, SNAPSHOT_SUFFIX));
  if (entry.epochs) names.add(LEADER_EPOCH_FILE);
  names.add(HIGH_WATERMARK_FILE);
  return names;
}
