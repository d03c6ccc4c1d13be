// The storage I/O seam: one commit = one batched submission of positioned writes followed by
// fdatasync of the files named. NodeIoBackend implements it with libuv's thread pool
// (fs.writev / fs.fdatasync callbacks), so the calling shard's event loop never waits on the
// disk; a native io_uring backend can replace it behind the same interface.
// Invariants: a commit settles only after every operation it started has finished (so callers may
// truncate or close the files afterwards); an fd is synced only after all of its writes in the
// same commit succeeded. A commit's onWritten, when given, runs exactly once if and only if every
// write op of the commit succeeded (short writes resumed to their end; at once when it has none),
// after those bytes are in the files and before the commit's promise settles; the syncs may still
// be running, and may still fail (the promise then rejects after onWritten ran).
import { fdatasync, writev } from 'node:fs';

export interface WriteOp {
  fd: number;
  chunks: Buffer[];
  position: number;
}

/** Bytes of a file already written whose dirty pages should start going to disk. */
export interface WritebackRange {
  readonly fd: number;
  readonly offset: number;
  readonly length: number;
}

export interface IoBackend {
  readonly name: string;
  /**
   * Whether commit() takes onWritten (the writes-landed report, see the invariants above). A
   * caller of a backend that cannot must submit writes and syncs separately to act between them.
   */
  readonly reportsWritten: boolean;
  /**
   * Writes every op (short writes resumed), then fdatasyncs each fd in syncFds. Rejects with
   * StorageError. onWritten (only where reportsWritten; it must not throw) learns that every write
   * landed while the syncs go on. `syncFollows` (default: syncFds is not empty) says a sync of
   * these bytes is to come, in this commit or a later one: a backend may start them to disk as
   * they land.
   */
  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void, syncFollows?: boolean): Promise<void>;
  /**
   * Starts writing the ranges' dirty pages to disk (sync_file_range's SYNC_FILE_RANGE_WRITE) and
   * waits for nothing: advisory, a range that fails is left to the next fdatasync. A backend that
   * cannot leaves them to the kernel's own flusher. close() still waits for what it started.
   * `ranges` is read during the call only.
   */
  startWriteback(ranges: readonly WritebackRange[]): void;
  /** Releases what the backend holds (e.g. an io_uring ring and its thread) once in-flight commits settle. */
  close(): Promise<void>;
}

/** A failed storage operation; maps to KAFKA_STORAGE_ERROR at the wire. */
export class StorageError extends Error {
  readonly errno?: string;
  constructor(message: string, errno?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StorageError';
    if (errno !== undefined) this.errno = errno;
  }

  static from(err: unknown, what: string): StorageError {
    if (err instanceof StorageError) return err;
    const e = err as NodeJS.ErrnoException;
    return new StorageError(`${what}: ${e?.message ?? String(err)}`, typeof e?.code === 'string' ? e.code : undefined, err);
  }
}

export function totalLength(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}

/** The chunks left after the first `written` bytes (short-write resumption; rare). */
export function remainder(chunks: readonly Buffer[], written: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = written;
  for (const c of chunks) {
    if (skip >= c.length) {
      skip -= c.length;
      continue;
    }
    out.push(skip > 0 ? c.subarray(skip) : c);
    skip = 0;
  }
  return out;
}

/**
 * One commit's bookkeeping: per-fd pending write counts gate that fd's fdatasync; the count of
 * writes left over all fds gates onWritten.
 */
class NodeCommit {
  private readonly pendingWrites = new Map<number, number>();
  private readonly failedFds = new Set<number>();
  private readonly syncFds: ReadonlySet<number>;
  private outstanding = 0;
  private writesLeft = 0;
  private error: StorageError | null = null;

  constructor(
    syncFds: readonly number[],
    private readonly onWritten: (() => void) | undefined,
    private readonly resolve: () => void,
    private readonly reject: (err: StorageError) => void,
  ) {
    this.syncFds = new Set(syncFds);
  }

  start(writes: readonly WriteOp[]): void {
    for (const w of writes) this.pendingWrites.set(w.fd, (this.pendingWrites.get(w.fd) ?? 0) + 1);
    this.writesLeft = writes.length;
    this.outstanding = writes.length + this.syncFds.size;
    if (writes.length === 0) this.onWritten?.();
    if (this.outstanding === 0) return this.resolve();
    for (const fd of this.syncFds) if (!this.pendingWrites.has(fd)) this.sync(fd);
    for (const w of writes) this.write(w.fd, w.chunks, w.position, totalLength(w.chunks));
  }

  private write(fd: number, chunks: Buffer[], position: number, length: number): void {
    if (length === 0) return this.writeDone(fd, null);
    writev(fd, chunks, position, (err, written) => {
      if (err) return this.writeDone(fd, StorageError.from(err, `write fd ${fd}`));
      if (written >= length) return this.writeDone(fd, null);
      if (written <= 0) return this.writeDone(fd, new StorageError(`write fd ${fd}: no progress`, 'EIO'));
      this.write(fd, remainder(chunks, written), position + written, length - written);
    });
  }

  private writeDone(fd: number, err: StorageError | null): void {
    if (err) {
      this.failedFds.add(fd);
      this.error ??= err;
    }
    const left = this.pendingWrites.get(fd)! - 1;
    this.pendingWrites.set(fd, left);
    if (left === 0 && this.syncFds.has(fd)) {
      if (this.failedFds.has(fd)) this.done(); // the data is already lost; its sync counts as finished
      else this.sync(fd);
    }
    if (--this.writesLeft === 0 && this.failedFds.size === 0) this.onWritten?.();
    this.done();
  }

  private sync(fd: number): void {
    fdatasync(fd, (err) => {
      if (err) this.error ??= StorageError.from(err, `fdatasync fd ${fd}`);
      this.done();
    });
  }

  private done(): void {
    if (--this.outstanding > 0) return;
    if (this.error) this.reject(this.error);
    else this.resolve();
  }
}

export class NodeIoBackend implements IoBackend {
  readonly name = 'node';
  readonly reportsWritten = true;

  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void): Promise<void> {
    return new Promise((resolve, reject) => new NodeCommit(syncFds, onWritten, resolve, reject).start(writes));
  }

  /** Node has no sync_file_range: the kernel's flusher writes the pages back when it gets to them. */
  startWriteback(): void {}

  /** Nothing to release: libuv's thread pool belongs to the process. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
