// The partition directory's small state files: `log.checkpoint` (log start offset, recovery point
// and whether the log was closed cleanly), `high-watermark-checkpoint` and `truncation-target` (an
// interrupted truncateTo, finished by the next open), plus the atomic small-file write used for
// them, the leader-epoch checkpoint and producer-state snapshots. Synchronous; runs on the shard
// worker at open, seal, truncation and close.
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
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done, data.length - done);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
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
