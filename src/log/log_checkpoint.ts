// The partition directory's small state files: `log.checkpoint` (log start offset, recovery point
// and whether the log was closed cleanly), `high-watermark-checkpoint` and `truncation-target` (an
// interrupted truncateTo, finished by the next open), plus the atomic small-file write used for
// them, the leader-epoch checkpoint and producer-state snapshots; StagedFiles is the same write
// split in two so that a clean close can sync many partitions' files in one batch. Synchronous;
// runs on the shard worker at open, seal, truncation and close.
// Invariant: files are replaced by rename, so a reader sees the old or the new content, and a
// damaged file reads as absent: for log.checkpoint that costs a full rescan, for the high
// watermark a restart from the log start, never data.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c, readInt64, writeInt64 } from '../protocol/record_batch.js';
import { encodeTextCheckpoint, readFileIfPresent, readTextCheckpoint } from './text_checkpoint.js';

export const CHECKPOINT_FILE = 'log.checkpoint';
export const HIGH_WATERMARK_FILE = 'high-watermark-checkpoint';
export const TRUNCATION_FILE = 'truncation-target';
export const TMP_SUFFIX = '.tmp';

export interface LogCheckpoint {
  /** Closed cleanly: every segment is sealed and recoveryPoint is the log end offset. */
  clean: boolean;
  logStartOffset: number;
  /** Segments wholly below it are sealed: fdatasync'ed, indexes persisted, never rescanned. */
  recoveryPoint: number;
}

// Layout: magic u32 "SLCP", version u8, flags u8 (bit 0 clean), logStartOffset i64,
// recoveryPoint i64, CRC-32C u32 of the preceding bytes.
const MAGIC = 0x534c4350;
const VERSION = 1;
const SIZE = 26;

export function encodeCheckpoint(cp: LogCheckpoint): Buffer {
  const buf = Buffer.alloc(SIZE);
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeUInt8(VERSION, 4);
  buf.writeUInt8(cp.clean ? 1 : 0, 5);
  writeInt64(buf, 6, cp.logStartOffset);
  writeInt64(buf, 14, cp.recoveryPoint);
  buf.writeUInt32BE(crc32c(buf.subarray(0, SIZE - 4)), SIZE - 4);
  return buf;
}

export function decodeCheckpoint(buf: Buffer): LogCheckpoint | null {
  if (buf.length !== SIZE || buf.readUInt32BE(0) !== MAGIC || buf.readUInt8(4) !== VERSION) return null;
  if (crc32c(buf.subarray(0, SIZE - 4)) !== buf.readUInt32BE(SIZE - 4)) return null;
  return { clean: (buf.readUInt8(5) & 1) === 1, logStartOffset: readInt64(buf, 6), recoveryPoint: readInt64(buf, 14) };
}

export function readCheckpoint(dir: string): LogCheckpoint | null {
  const buf = readFileIfPresent(join(dir, CHECKPOINT_FILE));
  return buf && decodeCheckpoint(buf);
}

/**
 * Writes `data` to a temporary file and renames it over `path`. `durable` fsyncs the file before
 * the rename; the caller fsyncs the directory (once for several files) to make the rename durable.
 */
export function writeFileAtomicSync(path: string, data: Buffer, durable: boolean): void {
  const tmp = path + TMP_SUFFIX;
  const fd = openSync(tmp, 'w');
  try {
    writeAllSync(fd, data);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function writeAllSync(fd: number, data: Buffer): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done);
}

/**
 * Atomic small-file writes whose fsync the caller does, so that many files (of many partitions)
 * can be synced in one batch: write() fills a temporary and keeps it open, the caller syncs `fds`,
 * publish() renames each temporary over its target in the order written, discard() closes them
 * (an unpublished temporary stays behind and is removed by the next recovery).
 */
export class StagedFiles {
  private readonly files: { tmp: string; path: string; fd: number }[] = [];
  private published = 0;

  write(path: string, data: Buffer): void {
    const tmp = path + TMP_SUFFIX;
    const fd = openSync(tmp, 'w');
    this.files.push({ tmp, path, fd });
    writeAllSync(fd, data);
  }

  get fds(): number[] {
    return this.files.map((f) => f.fd);
  }

  publish(): void {
    for (; this.published < this.files.length; this.published++) {
      const f = this.files[this.published]!;
      renameSync(f.tmp, f.path);
    }
  }

  discard(): void {
    for (const f of this.files.splice(0)) closeSync(f.fd);
  }
}

export function fsyncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeCheckpoint(dir: string, cp: LogCheckpoint, durable: boolean): void {
  writeFileAtomicSync(join(dir, CHECKPOINT_FILE), encodeCheckpoint(cp), durable);
}

/** Writes a one-offset text checkpoint (the high watermark, a truncation target). */
export function writeOffsetFile(dir: string, name: string, offset: number, durable: boolean): void {
  writeFileAtomicSync(join(dir, name), encodeTextCheckpoint([[offset]]), durable);
}

/** The offset in a one-offset checkpoint; null when the file is missing or damaged. */
export function readOffsetFile(dir: string, name: string): number | null {
  const rows = readTextCheckpoint(join(dir, name), 1);
  return rows?.length === 1 ? rows[0]![0]! : null;
}
