// The clean-shutdown record of a log directory (the role of Kafka's per-log-dir
// recovery-point and log-start-offset checkpoints plus its clean-shutdown file): one file per
// shard, `clean-shutdown-<shard>.record`, listing each partition that shard closed cleanly with what its
// next open trusts (log start, log end, high watermark, the active segment's base and size) and
// the small state a close would otherwise write as files of their own (the active segment's
// indexes, the producer snapshot at the log end, the leader-epoch checkpoint). A stop thus creates
// O(shards) files rather than several per partition. Written by the shard worker at shutdown;
// read and removed by the main thread at start, before any partition opens.
// Invariants: a record is written (temporary, fsync, rename, directory fsync) only after every
// file of every partition it lists is durable, and the whole file is covered by one CRC, so a
// partition is trusted only on a complete record; the records are removed durably before any
// partition opens, so no record outlives the files it vouches for once they start to change.
import { readdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32c, readInt64, writeInt64 } from '../protocol/record_batch.js';
import { fsyncDirSync, TMP_SUFFIX, writeFileAtomicSync } from './log_checkpoint.js';
import { readFileIfPresent } from './text_checkpoint.js';

/**
 * Shard `shard`'s record in a log directory. The suffix keeps it apart from partition
 * directories, which always end in `-<partition>`: topic `clean-shutdown` has one named
 * `clean-shutdown-0`.
 */
export const cleanShutdownFile = (shard: number): string => `clean-shutdown-${shard}.record`;
/** A record, or one a stop left half written (under the temporary suffix). */
const RECORD_NAME = /^clean-shutdown-\d+\.record(\.tmp)?$/;

/** State a clean close carries in the record instead of in the partition's directory. */
export interface InlineState {
  /** The active segment's offset and time indexes. */
  offsetIndex: Buffer | null;
  timeIndex: Buffer | null;
  /** The producer-state snapshot at the log end. */
  snapshot: Buffer | null;
  /** The leader-epoch checkpoint. */
  epochs: Buffer | null;
}

/** One cleanly closed partition. A null inline field is durable as a file in `dir` instead. */
export interface CleanCloseEntry extends InlineState {
  /** The partition directory (the record stores its name within the log directory). */
  dir: string;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  activeBase: number;
  activeSize: number;
}

/** Inline bytes one entry may carry; state beyond it goes to files (a busy producer table, a long active index). */
export const INLINE_BUDGET = 1024;
/** Entries in one record, at most (a larger count marks a damaged file). */
const MAX_ENTRIES = 10_000_000;
const MAX_NAME_BYTES = 1024;
// Layout: magic u32 "SLCS", version u8, count u32, entries, CRC-32C u32 of all preceding bytes.
// Entry: name length u16 and UTF-8 name, logStart, logEnd, highWatermark, activeBase, activeSize
// (i64 each), then offsetIndex, timeIndex, snapshot, epochs, each as length i32 (-1: absent) and bytes.
const MAGIC = 0x534c4353;
const VERSION = 1;
const HEADER = 9;
const INLINE_FIELDS = ['offsetIndex', 'timeIndex', 'snapshot', 'epochs'] as const;

export function encodeCleanShutdown(entries: readonly CleanCloseEntry[]): Buffer {
  const names = entries.map((e) => basename(e.dir));
  let size = HEADER + 4;
  for (let i = 0; i < entries.length; i++) {
    size += 2 + Buffer.byteLength(names[i]!, 'utf8') + 40 + 4 * INLINE_FIELDS.length;
    for (const field of INLINE_FIELDS) size += entries[i]![field]?.length ?? 0;
  }
  const buf = Buffer.alloc(size);
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeUInt8(VERSION, 4);
  buf.writeUInt32BE(entries.length, 5);
  let at = HEADER;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const nameLen = buf.write(names[i]!, at + 2, 'utf8');
    buf.writeUInt16BE(nameLen, at);
    at += 2 + nameLen;
    for (const v of [e.logStartOffset, e.logEndOffset, e.highWatermark, e.activeBase, e.activeSize]) {
      writeInt64(buf, at, v);
      at += 8;
    }
    for (const field of INLINE_FIELDS) {
      const blob = e[field];
      buf.writeInt32BE(blob === null ? -1 : blob.length, at);
      at += 4;
      if (blob !== null) at += blob.copy(buf, at);
    }
  }
  buf.writeUInt32BE(crc32c(buf.subarray(0, at)), at);
  return buf;
}

/** The entries of a record in `logDir`; null when the buffer is not a whole, undamaged record. */
export function decodeCleanShutdown(buf: Buffer, logDir: string): CleanCloseEntry[] | null {
  if (buf.length < HEADER + 4 || buf.readUInt32BE(0) !== MAGIC || buf.readUInt8(4) !== VERSION) return null;
  const end = buf.length - 4;
  if (crc32c(buf.subarray(0, end)) !== buf.readUInt32BE(end)) return null;
  const count = buf.readUInt32BE(5);
  if (count > MAX_ENTRIES) return null;
  const entries: CleanCloseEntry[] = [];
  let at = HEADER;
  const need = (n: number): boolean => n >= 0 && at + n <= end;
  for (let i = 0; i < count; i++) {
    if (!need(2)) return null;
    const nameLen = buf.readUInt16BE(at);
    at += 2;
    if (nameLen === 0 || nameLen > MAX_NAME_BYTES || !need(nameLen + 40)) return null;
    const name = buf.toString('utf8', at, at + nameLen);
    at += nameLen;
    if (name === '.' || name === '..' || name.includes('/') || name.includes('\0')) return null;
    const fixed: number[] = [];
    for (let f = 0; f < 5; f++, at += 8) fixed.push(readInt64(buf, at));
    const [logStartOffset, logEndOffset, highWatermark, activeBase, activeSize] = fixed as [number, number, number, number, number];
    if (!fixed.every((v) => Number.isSafeInteger(v) && v >= 0)) return null;
    if (logStartOffset > logEndOffset || highWatermark > logEndOffset || activeBase > logEndOffset) return null;
    const inline: InlineState = { offsetIndex: null, timeIndex: null, snapshot: null, epochs: null };
    for (const field of INLINE_FIELDS) {
      if (!need(4)) return null;
      const len = buf.readInt32BE(at);
      at += 4;
      if (len === -1) continue;
      if (!need(len)) return null;
      inline[field] = Buffer.from(buf.subarray(at, at + len));
      at += len;
    }
    entries.push({ dir: join(logDir, name), logStartOffset, logEndOffset, highWatermark, activeBase, activeSize, ...inline });
  }
  return at === end ? entries : null;
}

/** `entry` as it arrives from another thread (structured cloning turns each Buffer into a plain Uint8Array). */
export function reviveEntry(entry: CleanCloseEntry): CleanCloseEntry {
  const buf = (b: Uint8Array | null): Buffer | null => b && Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return { ...entry, offsetIndex: buf(entry.offsetIndex), timeIndex: buf(entry.timeIndex), snapshot: buf(entry.snapshot), epochs: buf(entry.epochs) };
}

/**
 * Writes shard `shard`'s record for `entries` into each log directory they live in (a directory
 * of partition directories), durably. Synchronous: once per shard at shutdown.
 */
export function writeCleanShutdown(shard: number, entries: readonly CleanCloseEntry[]): void {
  const byLogDir = new Map<string, CleanCloseEntry[]>();
  for (const e of entries) {
    const logDir = dirname(e.dir);
    const list = byLogDir.get(logDir) ?? [];
    list.push(e);
    byLogDir.set(logDir, list);
  }
  for (const [logDir, list] of byLogDir) {
    writeFileAtomicSync(join(logDir, cleanShutdownFile(shard)), encodeCleanShutdown(list), true);
    fsyncDirSync(logDir);
  }
}

/**
 * The clean-shutdown entries found in `logDir`, by partition directory, each handed out once.
 * Opening a partition with its entry skips the rescan; one without an entry recovers from its
 * own checkpoint.
 */
export class CleanShutdownEntries {
  private constructor(private readonly byDir: Map<string, CleanCloseEntry>) {}

  static none(): CleanShutdownEntries {
    return new CleanShutdownEntries(new Map());
  }

  /**
   * Reads every record in `logDir` and removes them durably before returning, so that a crash once
   * partitions start changing their files never finds a record vouching for them. A damaged
   * record (a torn write is impossible, but a disk may rot) only costs its partitions a rescan.
   */
  static take(logDir: string): CleanShutdownEntries {
    const byDir = new Map<string, CleanCloseEntry>();
    let names: string[];
    try {
      names = readdirSync(logDir).filter((n) => RECORD_NAME.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new CleanShutdownEntries(byDir);
      throw err;
    }
    for (const name of names) {
      const path = join(logDir, name);
      const buf = name.endsWith(TMP_SUFFIX) ? null : readFileIfPresent(path);
      for (const e of (buf && decodeCleanShutdown(buf, logDir)) ?? []) byDir.set(e.dir, e);
      unlinkSync(path);
    }
    if (names.length > 0) fsyncDirSync(logDir);
    return new CleanShutdownEntries(byDir);
  }

  /** The entry of partition directory `dir`, removed from the set (an entry is trusted at most once). */
  claim(dir: string): CleanCloseEntry | null {
    const entry = this.byDir.get(dir) ?? null;
    this.byDir.delete(dir);
    return entry;
  }

  /** Forgets the unclaimed entries (partitions no longer placed here must never trust them later). */
  clear(): void {
    this.byDir.clear();
  }

  get size(): number {
    return this.byDir.size;
  }
}
