// The metadata quorum's log, `__cluster_metadata-0`: the Raft core's entries as Kafka record
// batches (entry_batches.ts) in a PartitionLog. Each entry is its own batch, so every entry
// boundary is a batch boundary and truncation to any offset is exact (a voter must never lose an
// entry below the point it was told to cut: its fetches already vouched for it). Appends are
// written and fdatasync'd through the log's own GroupCommitter on an IoBackend (libuv's pool or
// io_uring), so the quorum driver's event loop never waits on the disk. Lives on the driver's
// thread; the caller serialises operations (QuorumStorage does).
// Invariants: the log holds contiguous entries from its start offset; an append resolves only once
// its entries are durable; a reset (snapshot install) is atomic: the old directory is renamed
// aside before the new empty log is created, and a leftover aside directory is removed at open.
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { encodeEntryBatches, decodeEntryBatches } from '../../coordinator/raft/entry_batches.js';
import type { Entry } from '../../coordinator/raft/types.js';
import { GroupCommitter } from '../../log/group_commit.js';
import { StorageError, type IoBackend } from '../../log/io_backend.js';
import { fsyncDirSync } from '../../log/log_checkpoint.js';
import type { LogConfig } from '../../log/log_config.js';
import { PartitionLog, type FileRange } from '../../log/partition_log.js';
import { readBatchHeader } from '../../protocol/record_batch.js';
import { QuorumStorageError } from './quorum_errors.js';

/** Suffix of a log directory being removed by a reset; removed at the next open if a crash left it. */
const ASIDE_SUFFIX = '.deleting';
/** Bytes read per step when entries are loaded at start. */
const READ_CHUNK_BYTES = 8 << 20;

export interface RaftLogOptions {
  readonly io: IoBackend;
  readonly now: () => number;
  /** Segment size; also bounds one entry's batch. */
  readonly segmentBytes: number;
  /** Where an empty log starts (the end of the snapshot in force). */
  readonly initialStartOffset: number;
  /** Told of each storage failure: one the log absorbs (a failed seal or checkpoint) and each failed commit (its append rejects too). */
  readonly onWarning?: (what: string, err: StorageError) => void;
}

function metadataLogConfig(segmentBytes: number): LogConfig {
  return {
    segmentBytes,
    // Only snapshots shorten this log (deleteBefore); it never rolls or expires by time.
    segmentMs: Number.MAX_SAFE_INTEGER,
    retentionMs: -1,
    retentionBytes: -1,
    maxMessageBytes: segmentBytes,
    indexIntervalBytes: 4096,
    timestampType: 'CreateTime',
    producerIdExpirationMs: 24 * 3600 * 1000,
  };
}

function readRange(range: FileRange): Buffer {
  const buf = Buffer.alloc(range.length);
  const fd = openSync(range.path, 'r');
  try {
    for (let done = 0; done < range.length; ) {
      const n = readSync(fd, buf, done, range.length - done, range.position + done);
      if (n === 0) throw new StorageError(`${range.path} ends before ${range.position + range.length}`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return buf;
}

export class RaftLogStore {
  private log: PartitionLog;
  private readonly committer: GroupCommitter;

  private constructor(
    readonly dir: string,
    private readonly options: RaftLogOptions,
  ) {
    const aside = dir + ASIDE_SUFFIX;
    if (existsSync(aside)) rmSync(aside, { recursive: true, force: true });
    this.log = this.openLog(options.initialStartOffset);
    // Every append is fdatasync'd before it resolves: a voter's fetch offset vouches for durability.
    this.committer = new GroupCommitter(options.io, { kind: 'always' }, (err) => options.onWarning?.('commit', err));
  }

  /** Opens (creating if needed) and recovers the log in `dir`; synchronous. */
  static open(dir: string, options: RaftLogOptions): RaftLogStore {
    return new RaftLogStore(dir, options);
  }

  private openLog(initialStartOffset: number): PartitionLog {
    const { io, now, onWarning, segmentBytes } = this.options;
    return PartitionLog.open(this.dir, metadataLogConfig(segmentBytes), io, now, { initialStartOffset, ...(onWarning ? { onWarning } : {}) });
  }

  get startOffset(): number {
    return this.log.logStartOffset;
  }

  /** Everything below it is durable. */
  get endOffset(): number {
    return this.log.durableOffset;
  }

  /**
   * Appends entries that continue the log (the first one's offset is endOffset) and resolves once
   * they are durable. Entries refused before anything is staged: QuorumStorageError 'log-mismatch'
   * for a gap or overlap, RangeError for an entry larger than a segment. A failed write or sync
   * rejects with StorageError and leaves the log at its previous end.
   */
  async append(entries: readonly Entry[]): Promise<void> {
    if (entries.length === 0) return;
    if (entries[0]!.offset !== this.log.logEndOffset) {
      throw new QuorumStorageError('log-mismatch', `entries from offset ${entries[0]!.offset} do not continue the log ending at ${this.log.logEndOffset}`);
    }
    const timestamp = this.options.now();
    const batches = entries.map((entry) => {
      const [batch] = encodeEntryBatches([entry], { timestamp });
      if (batch!.length > this.options.segmentBytes) throw new RangeError(`entry at ${entry.offset} takes ${batch!.length} bytes, more than a segment (${this.options.segmentBytes})`);
      return batch!;
    });
    for (const batch of batches) {
      const r = this.log.appendAsFollower(batch, readBatchHeader(batch, 0));
      if (r.kind !== 'appended') throw new StorageError(`append to ${this.dir} refused with code ${r.kind === 'error' ? r.code : 'duplicate'}`);
    }
    await this.committer.commit(this.log);
  }

  /** Drops every entry at or past `offset` (crash-safe: PartitionLog.truncateTo); no appends may be pending. */
  truncateTo(offset: number): void {
    const expected = Math.min(offset, this.log.logEndOffset);
    const end = this.log.truncateTo(offset);
    if (end !== expected) throw new QuorumStorageError('log-mismatch', `truncation of ${this.dir} to ${offset} ended at ${end}`);
  }

  /** The durable entries from `offset` (at least the start offset) to the end; synchronous (start-up). */
  readFrom(offset: number): Entry[] {
    const entries: Entry[] = [];
    let next = Math.max(offset, this.log.logStartOffset);
    while (next < this.log.durableOffset) {
      const r = this.log.read(next, READ_CHUNK_BYTES, true, 'log-end');
      if (r.error !== 0 || r.ranges.length === 0) throw new StorageError(`read of ${this.dir} at ${next} failed with code ${r.error}`);
      const found = decodeEntryBatches(Buffer.concat(r.ranges.map(readRange)));
      for (const e of found) if (e.offset >= next) entries.push(e);
      next = found[found.length - 1]!.offset + 1;
    }
    return entries;
  }

  /** Deletes whole segments below `offset` (a snapshot covers them); the log start moves to a segment base at or below it. */
  deleteBefore(offset: number): void {
    this.log.deleteSegmentsBefore(offset);
  }

  /**
   * Empties the log and restarts it at `offset` (a snapshot replaced it). The directory is renamed
   * aside (durably) first, so a crash leaves either the old log or none, never a mix; no appends
   * may be pending.
   */
  reset(offset: number): void {
    this.log.close();
    const aside = this.dir + ASIDE_SUFFIX;
    renameSync(this.dir, aside);
    fsyncDirSync(dirname(this.dir));
    rmSync(aside, { recursive: true, force: true });
    this.log = this.openLog(offset);
  }

  /** Waits for the commit in flight, then closes the log cleanly. */
  async close(): Promise<void> {
    await this.committer.close();
    this.log.close();
  }
}
