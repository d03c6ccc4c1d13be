// Shared helpers for the log tests: temporary directories, a settable clock, an IoBackend that
// records (and can hold or fail) submissions, and readers that decode what a fetch returned.
// The real backend under it follows SLUICE_IO as the broker does (auto: native when the addon is
// built), so CI runs these suites on both backends by running them twice.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommitter, type FlushPolicy } from '../../../src/log/group_commit.js';
import { StorageError, type IoBackend, type WritebackRange, type WriteOp } from '../../../src/log/io_backend.js';
import { IO_MODES } from '../../../src/native/addon.js';
import { selectIoBackend } from '../../../src/log/native_io.js';
import { PartitionLog, type FileRange, type LogConfig, type PartitionLogOptions } from '../../../src/log/partition_log.js';
import { validateProducedBatch } from '../../../src/protocol/record_batch.js';
import { buildBatch, makeRecords, type BatchOptions } from './batch_builder.js';

let shared: IoBackend | undefined;

/** The storage backend the log suites run on: SLUICE_IO (native|node|auto, default auto), one per test process. */
export function testIoBackend(): IoBackend {
  const mode = IO_MODES.find((m) => m === (process.env['SLUICE_IO'] ?? 'auto'));
  if (mode === undefined) throw new Error(`SLUICE_IO=${process.env['SLUICE_IO']} is not one of ${IO_MODES.join(', ')}`);
  shared ??= selectIoBackend(mode).backend;
  return shared;
}

/** Polls `cond` every few ms; fails after `ms` (timer-driven behaviour, robust to a loaded machine). */
export async function waitFor(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sluice-log-test-'));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return {
    segmentBytes: 1 << 20,
    segmentMs: 7 * 24 * 3600 * 1000,
    retentionMs: -1,
    retentionBytes: -1,
    maxMessageBytes: 1 << 20,
    indexIntervalBytes: 256,
    timestampType: 'CreateTime',
    producerIdExpirationMs: 24 * 3600 * 1000,
    ...overrides,
  };
}

export class Clock {
  t = 1_700_000_000_000;
  readonly now = (): number => this.t;
}

export interface IoCall {
  writes: Array<{ fd: number; position: number; bytes: number }>;
  syncFds: number[];
}

/**
 * Records every submission, then performs it with the real backend. `hold()` parks the next
 * submissions until `release()`; `failNext(afterWrite)` rejects the next one to run, optionally after
 * really writing its data (a failed fdatasync, after the writes-landed report).
 */
export class RecordingIo implements IoBackend {
  readonly name = 'recording';
  readonly calls: IoCall[] = [];
  private readonly real = testIoBackend();
  readonly reportsWritten = this.real.reportsWritten;
  private held: Array<() => void> | null = null;
  private failure: { afterWrite: boolean } | null = null;

  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void, syncFollows?: boolean): Promise<void> {
    this.calls.push({
      writes: writes.map((w) => ({ fd: w.fd, position: w.position, bytes: w.chunks.reduce((n, c) => n + c.length, 0) })),
      syncFds: [...syncFds],
    });
    const run = async (): Promise<void> => {
      const failure = this.failure;
      this.failure = null;
      if (failure && !failure.afterWrite) throw new StorageError('injected write failure', 'EIO');
      await this.real.commit(writes, syncFds, onWritten, syncFollows);
      if (failure) throw new StorageError('injected fdatasync failure', 'EIO');
    };
    if (!this.held) return run();
    return new Promise<void>((resolve) => this.held!.push(resolve)).then(run);
  }

  hold(): void {
    this.held ??= [];
  }

  /** Every range startWriteback was given, in order. */
  readonly writebacks: WritebackRange[] = [];

  startWriteback(ranges: readonly WritebackRange[]): void {
    this.writebacks.push(...ranges);
  }

  /** The real backend is the fixture's, shared by other tests: left open. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const go of held) go();
  }

  failNext(afterWrite: boolean): void {
    this.failure = { afterWrite };
  }
}

export function batchOf(n: number, valueBytes: number, extra: Partial<BatchOptions> = {}): Buffer {
  return buildBatch({ records: makeRecords(n, valueBytes), ...extra });
}

/** Validates and appends; throws unless the log accepted it. */
export function append(log: PartitionLog, batch: Buffer): { baseOffset: number; lastOffset: number } {
  const v = validateProducedBatch(batch, 1 << 30);
  if (!v.ok) throw new Error(`invalid test batch: ${v.message}`);
  const r = log.appendBatch(batch, v.header);
  if (r.kind !== 'appended') throw new Error(`append refused: ${JSON.stringify(r)}`);
  return r;
}

export interface LogHarness {
  dir: string;
  io: RecordingIo;
  clock: Clock;
  committer: GroupCommitter;
  log: PartitionLog;
  errors: StorageError[];
  reopen(config?: LogConfig): PartitionLog;
  dispose(): Promise<void>;
}

export function openHarness(config = logConfig(), policy: FlushPolicy = { kind: 'always' }, dir = tempDir(), options: PartitionLogOptions = {}): LogHarness {
  const io = new RecordingIo();
  const clock = new Clock();
  const errors: StorageError[] = [];
  const committer = new GroupCommitter(io, policy, (e) => errors.push(e));
  const h: LogHarness = {
    dir,
    io,
    clock,
    committer,
    errors,
    log: PartitionLog.open(dir, config, io, clock.now, options),
    reopen(cfg = config) {
      h.log = PartitionLog.open(dir, cfg, io, clock.now, options);
      return h.log;
    },
    async dispose() {
      await committer.close();
      try {
        h.log.close();
      } finally {
        removeDir(dir);
      }
    },
  };
  return h;
}

export interface StoredBatch {
  baseOffset: number;
  lastOffset: number;
  bytes: Buffer;
}

/** Splits concatenated whole batches. */
export function splitBatches(buf: Buffer): StoredBatch[] {
  const out: StoredBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const size = buf.readInt32BE(pos + 8) + 12;
    const bytes = buf.subarray(pos, pos + size);
    const baseOffset = Number(bytes.readBigInt64BE(0));
    out.push({ baseOffset, lastOffset: baseOffset + bytes.readInt32BE(23), bytes });
    pos += size;
  }
  return out;
}

export function readRanges(ranges: readonly FileRange[]): Buffer {
  return Buffer.concat(ranges.map((r) => readFileSync(r.path).subarray(r.position, r.position + r.length)));
}

/** Every committed batch, read with unbounded fetches from the log start. */
export function readAll(log: PartitionLog): StoredBatch[] {
  const out: StoredBatch[] = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const r = log.read(offset, 1 << 30, true);
    if (r.error !== 0 || r.ranges.length === 0) throw new Error(`read at ${offset} failed: ${r.error}`);
    const batches = splitBatches(readRanges(r.ranges));
    out.push(...batches);
    offset = batches[batches.length - 1]!.lastOffset + 1;
  }
  return out;
}

/** A copy of a directory's files, to replay a crash state several times. */
export function snapshotDir(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n))]));
}

export function restoreDir(files: ReadonlyMap<string, Buffer>): string {
  const dir = tempDir();
  for (const [name, data] of files) writeFileSync(join(dir, name), data);
  return dir;
}

export interface Submission {
  writes: number;
  syncFds: number[];
  /** The submission asked for the writes-landed report. */
  reportsWritten: boolean;
}

/**
 * The real backend behind a record of submissions, run in two phases: the writes, then (after
 * the writes-landed report, when asked for) the syncs. The sync phases can be held, the next one
 * failed, and the next write phase failed; `reportsWritten` false stands for a backend without the
 * report.
 */
export class SyncGateIo implements IoBackend {
  readonly name = 'sync-gate';
  readonly submissions: Submission[] = [];
  private readonly real = testIoBackend();
  private heldSyncs: Array<() => void> | null = null;
  private failNextSync = false;
  private failNextWrite = false;

  /** Runs after each writes-landed report the committer asked for, once the committer's own callback ran. */
  onLanded: (() => void) | null = null;

  constructor(readonly reportsWritten = true) {}

  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void): Promise<void> {
    this.submissions.push({ writes: writes.length, syncFds: [...syncFds], reportsWritten: onWritten !== undefined });
    const failWrite = writes.length > 0 && this.failNextWrite;
    if (writes.length > 0) this.failNextWrite = false;
    const failSync = syncFds.length > 0 && this.failNextSync;
    if (syncFds.length > 0) this.failNextSync = false;
    const sync = async (): Promise<void> => {
      await this.real.commit([], syncFds);
      if (failSync) throw new StorageError('injected fdatasync failure', 'EIO');
    };
    return (async () => {
      if (failWrite) throw new StorageError('injected write failure', 'EIO');
      await this.real.commit(writes, []);
      if (onWritten) {
        onWritten();
        this.onLanded?.();
      }
      if (syncFds.length === 0) return;
      if (this.heldSyncs !== null) await new Promise<void>((resolve) => this.heldSyncs!.push(resolve));
      await sync();
    })();
  }

  startWriteback(): void {}

  holdSyncs(): void {
    this.heldSyncs ??= [];
  }

  releaseSyncs(): void {
    const held = this.heldSyncs ?? [];
    this.heldSyncs = null;
    for (const go of held) go();
  }

  get heldSyncCount(): number {
    return this.heldSyncs?.length ?? 0;
  }

  failSync(): void {
    this.failNextSync = true;
  }

  failWrite(): void {
    this.failNextWrite = true;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface GatedShard {
  readonly io: SyncGateIo;
  readonly committer: GroupCommitter;
  readonly logs: PartitionLog[];
  readonly errors: StorageError[];
  dispose(): Promise<void>;
}

/** `count` logs in fresh directories behind one flush=always GroupCommitter on a SyncGateIo. */
export function gatedShard(count: number, options: PartitionLogOptions = {}, reportsWritten = true): GatedShard {
  const io = new SyncGateIo(reportsWritten);
  const errors: StorageError[] = [];
  const committer = new GroupCommitter(io, { kind: 'always' }, (e) => errors.push(e));
  const clock = new Clock();
  const dirs = Array.from({ length: count }, () => tempDir());
  const logs = dirs.map((d) => PartitionLog.open(d, logConfig(), io, clock.now, options));
  return {
    io, committer, logs, errors,
    async dispose() {
      io.releaseSyncs(); // a failed test may leave one held
      await committer.close();
      for (const log of logs) log.close();
      for (const d of dirs) removeDir(d);
    },
  };
}
