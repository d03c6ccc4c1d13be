// The native (io_uring) IoBackend and the choice between it and NodeIoBackend. Opens one ring of
// the addon (src/native/addon.ts) per backend; completions arrive on the calling thread's event loop, which
// watches the ring's eventfd, so nothing polls and no other thread is woken. Runs on whichever thread creates the backend
// (each shard worker loads its own addon instance and ring). A commit of at most
// INLINE_WRITE_BYTES writes on the calling thread and sends only its fdatasyncs to the ring
// (`commitInline` says why), INLINE_SLICE_BYTES per turn of the event loop. Writeback ranges
// (`startWriteback`) go to the ring in a submission of their own that nothing awaits, so an
// append's acknowledgement never waits for them.
// Invariants: every Buffer of a commit stays referenced here until its completion callback ran
// (the addon keeps only raw pointers; its writes-landed report does not release them); a commit
// copying slices counts as in flight, so close() waits for it; 'native' mode never falls back
// silently.
import { readFileSync, writevSync } from 'node:fs';
import { loadAddon, type Completion, type IoMode, type NativeAddon, type NativeRing } from '../native/addon.js';
import { NodeIoBackend, StorageError, remainder, totalLength, type IoBackend, type WritebackRange, type WriteOp } from './io_backend.js';

const bytesOf = (writes: readonly WriteOp[]): number => {
  let n = 0;
  for (const w of writes) n += totalLength(w.chunks);
  return n;
};

/** SQ entries per ring: bounds the operations (writes + syncs) in flight at once. */
const RING_ENTRIES = 4096;
/**
 * Bytes in flight per ring; a shard's staged produce data is bounded far below this by
 * --max-uncommitted-produce-bytes (at most half of it, plus the requests under way when reached).
 */
const MAX_INFLIGHT_BYTES = 1 << 30;
/**
 * A commit writing at most this many bytes writes them on the calling thread (see `commitInline`).
 * Under load commits grow to 0.5-16 MiB (librdkafka 1M x 1 KiB: 3 MiB on average), and the copy
 * costs less here than in io-wq's workers, which read the frames from another core's cache and,
 * as the frames stay held until the completion, make the frame pool fault in fresh buffers:
 * broker CPU per message 0.96 -> 0.87 us warm and 1.81 -> 1.21 us cold against a 256 KiB bound
 * (medians of 3, alternating), the same rate, and 19 % less CPU per byte for durable acks=all.
 * Kafka, too, copies on the request thread. Past this bound (a backlog landing at once) the copy,
 * ~3 ms warm and ~30 ms cold at 16 MiB, goes to the ring, whose workers do it on another core.
 */
export const INLINE_WRITE_BYTES = 16 * 1024 * 1024;

/**
 * An inline commit copies at most this many bytes per turn of the calling thread's event loop, and
 * lets the loop run between them. In one piece, the multi-MB commits of librdkafka 1M x 1 KiB at
 * acks=all (71 of ~14.6 MB in one run) held a shard's loop in pwritev for 20-41 ms each at this
 * VM's cold-page copy cost (47 calls over 5 ms in one such run, by strace), stalling every other
 * connection and partition of the shard; sliced, no write of that run took over 5 ms. When the
 * commit is to be synced, each slice that more slices follow is started to disk at once, while the
 * next one is copied, rather than left to the fdatasync.
 */
export const INLINE_SLICE_BYTES = 512 << 10;

/** writev(2) takes at most this many chunks at once (Linux's UIO_MAXIOV). */
const IOV_MAX = 1024;

/** The first `bytes` of `chunks`, cut inside a chunk if need be, and at most IOV_MAX chunks. */
function headOf(chunks: readonly Buffer[], bytes: number): Buffer[] {
  const head: Buffer[] = [];
  for (let left = bytes, i = 0; left > 0 && i < chunks.length && head.length < IOV_MAX; i++) {
    const c = chunks[i]!;
    head.push(c.length > left ? c.subarray(0, left) : c);
    left -= c.length;
  }
  return head;
}

/**
 * Writes the first `maxBytes` of `w` (all of it, when shorter) at its position on this thread; a
 * short write on a regular file is resumed, an error throws. What is left of `w`, or null.
 */
function writeUpTo(w: WriteOp, maxBytes: number): WriteOp | null {
  let chunks = w.chunks;
  let position = w.position;
  let left = totalLength(chunks);
  for (let budget = maxBytes; left > 0 && budget > 0;) {
    const batch = left <= budget && chunks.length <= IOV_MAX ? chunks : headOf(chunks, budget);
    const wrote = writevSync(w.fd, batch, position);
    position += wrote;
    left -= wrote;
    budget -= wrote;
    if (left > 0) chunks = remainder(chunks, wrote);
  }
  return left === 0 ? null : { fd: w.fd, position, chunks };
}

const nextLoopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function uringDisabledNote(): string {
  try {
    const v = readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim();
    return v === '0' ? '' : ` (kernel.io_uring_disabled=${v})`;
  } catch {
    return '';
  }
}

export class NativeIoBackend implements IoBackend {
  readonly name = 'native';
  readonly reportsWritten: boolean;
  private readonly startsWriteback: boolean;
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly native: NativeAddon,
    private readonly ring: NativeRing,
    private readonly inlineWriteBytes = INLINE_WRITE_BYTES,
    private readonly sliceBytes = INLINE_SLICE_BYTES,
  ) {
    this.reportsWritten = native.reportsWritten === true;
    this.startsWriteback = native.startsWriteback === true;
  }

  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void, syncFollows = syncFds.length > 0): Promise<void> {
    if (this.closed) return Promise.reject(new StorageError('native I/O backend is closed'));
    if (onWritten && !this.reportsWritten) return Promise.reject(new StorageError('this native addon cannot report landed writes (rebuild it)'));
    if (writes.length > 0 && bytesOf(writes) <= this.inlineWriteBytes) return this.commitInline(writes, syncFds, syncFollows, onWritten);
    return this.submit(writes, syncFds, onWritten);
  }

  /**
   * A small commit's writes go straight into the page cache on this thread, and only its
   * fdatasyncs (if any) go to the ring. On ext4 io_uring cannot write to the page cache without
   * blocking (no IOCB_NOWAIT for buffered writes), so every write is punted to an io-wq worker:
   * measured here, a 4 KiB write-only commit costs 43 us of CPU and 35 us of wall time through the
   * ring against 5 and 5 by writev on the calling thread (64 KiB: 54-82 us against 13), and large
   * commits cost less inline too (INLINE_WRITE_BYTES). The price is that the caller's thread
   * does the copy (and would be throttled past the dirty limits, which the writeback ranges keep it
   * from reaching): INLINE_SLICE_BYTES at a time, with its event loop running in between, so that a
   * large commit does not hold everything else on the thread.
   */
  private commitInline(writes: readonly WriteOp[], syncFds: readonly number[], synced: boolean, onWritten?: () => void): Promise<void> {
    const left = writes.slice();
    const failed = this.writeSlice(left, synced, null);
    if (left.length === 0) return this.afterInlineWrites(failed, syncFds, onWritten);
    this.inFlight++; // close() waits for the slices still to copy, and for the syncs after them
    return this.writeSlices(left, synced, failed)
      .then((err) => this.afterInlineWrites(err, syncFds, onWritten))
      .finally(() => this.settled());
  }

  /** The rest of an inline commit, one slice per turn of the event loop; its first write error, or null. */
  private async writeSlices(left: WriteOp[], synced: boolean, failed: unknown): Promise<unknown> {
    while (left.length > 0) {
      await nextLoopTurn();
      failed = this.writeSlice(left, synced, failed);
    }
    return failed;
  }

  /**
   * Copies up to sliceBytes of `left` (a write done leaves it, a part-written one is replaced by its
   * rest) and, if more is left of a commit to be synced, starts the slice to disk. As through the
   * ring, a failed write does not stop the others (the commit then fails without syncing): returns
   * the first write error, `failed` if there was one already.
   */
  private writeSlice(left: WriteOp[], synced: boolean, failed: unknown): unknown {
    const landed: WritebackRange[] | null = synced ? [] : null; // only a synced commit starts its slices to disk
    for (let budget = this.sliceBytes; left.length > 0 && budget > 0;) {
      const w = left[0]!;
      let rest: WriteOp | null = null;
      try {
        rest = writeUpTo(w, budget);
      } catch (err) {
        failed ??= err;
      }
      const wrote = rest === null ? totalLength(w.chunks) : rest.position - w.position;
      budget -= wrote;
      landed?.push({ fd: w.fd, offset: w.position, length: wrote });
      if (rest === null) left.shift();
      else left[0] = rest;
    }
    if (landed !== null && failed === null && left.length > 0) this.startWriteback(landed);
    return failed;
  }

  /** An inline commit's writes are done: it fails on a write error, else its landed report and syncs follow. */
  private afterInlineWrites(failed: unknown, syncFds: readonly number[], onWritten?: () => void): Promise<void> {
    if (failed !== null) return Promise.reject(StorageError.from(failed, 'write'));
    onWritten?.();
    return syncFds.length === 0 ? Promise.resolve() : this.submit([], syncFds);
  }

  /** One submission of writeback ops alone, followed (close() waits for it) but awaited by nobody. */
  startWriteback(ranges: readonly WritebackRange[]): void {
    if (!this.startsWriteback || ranges.length === 0 || this.closed) return;
    const spec = new Float64Array(ranges.length * 3);
    ranges.forEach((r, i) => spec.set([r.fd, r.offset, r.length], 3 * i));
    // Advisory: whatever the kernel answers, the next fdatasync writes what is left.
    this.submit([], [], undefined, spec).catch(() => undefined);
  }

  private submit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void, writeback?: Float64Array): Promise<void> {
    const meta = new Float64Array(writes.length * 3);
    const chunks: Buffer[] = [];
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      meta[3 * i] = w.fd;
      meta[3 * i + 1] = w.position;
      meta[3 * i + 2] = w.chunks.length;
      for (const c of w.chunks) chunks.push(c);
    }
    return new Promise<void>((resolve, reject) => {
      const done: Completion = (errno, message) => {
        chunks.length = 0; // the kernel is done with them; until now this closure kept them alive
        this.settled();
        if (errno === null) resolve();
        else reject(new StorageError(`native ${message ?? errno}`, errno));
      };
      try {
        if (!this.native.commit(this.ring, meta, chunks, Int32Array.from(syncFds), done, onWritten, writeback)) {
          onWritten?.(); // nothing to write: every (empty) write landed
          return resolve();
        }
      } catch (err) {
        return reject(StorageError.from(err, 'native commit'));
      }
      this.inFlight++;
    });
  }

  /** Waits for in-flight commits, then tears the ring down. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    this.native.close(this.ring);
  }

  private settled(): void {
    if (--this.inFlight > 0) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}

/** A native backend with its own ring (`inlineWriteBytes` 0: every write through the ring), or why there cannot be one on this machine/build. */
export function loadNativeIo(inlineWriteBytes = INLINE_WRITE_BYTES): { backend: NativeIoBackend } | { unavailable: string } {
  const native = loadAddon();
  if (typeof native === 'string') return { unavailable: native };
  try {
    return { backend: new NativeIoBackend(native, native.openRing(RING_ENTRIES, MAX_INFLIGHT_BYTES), inlineWriteBytes) };
  } catch (err) {
    return { unavailable: `${(err as Error).message}${uringDisabledNote()}` };
  }
}

/** The backend for `mode`; 'native' throws when it is unavailable, 'auto' falls back to node and says why in `note`. */
export function selectIoBackend(mode: IoMode): { backend: IoBackend; note: string } {
  if (mode === 'node') return { backend: new NodeIoBackend(), note: 'io=node' };
  const loaded = loadNativeIo();
  if ('backend' in loaded) return { backend: loaded.backend, note: '' };
  if (mode === 'native') throw new Error(`io=native but the native I/O backend is unavailable: ${loaded.unavailable}`);
  return { backend: new NodeIoBackend(), note: loaded.unavailable };
}
