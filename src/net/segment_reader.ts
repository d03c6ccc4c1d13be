// Reads the file ranges a shard answered a fetch with, on the main thread, into buffers that
// go to the socket by reference. Segment files are append-only and removed only by unlink,
// so an open descriptor stays valid; descriptors are cached (bounded LRU) per path and
// dropped when their partition directory is deleted, so a re-created topic with the same
// name never reads the old files. For natively served connections fileRanges() hands out the
// cached descriptors themselves (no read): each use is a lease, pushed to the caller's list and
// given back with release() once the sender dup()ed the fd. Reads into buffers lease their
// descriptors too, for as long as they read. A leased descriptor is never closed, so its number
// cannot name another file while a read or a response still refers to it; an unleased one is
// closed the moment it leaves the cache, so a deleted partition's space is freed at once.
import { close, open, read } from 'node:fs';
import { sep } from 'node:path';
import type { FileRange } from '../log/partition_log.js';
import type { FileChunk } from '../protocol/writer.js';

export const MAX_SEGMENT_FDS = 512;

function openAsync(path: string): Promise<number> {
  return new Promise((resolve, reject) => open(path, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
}

function readFully(fd: number, buf: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = 0;
    const step = (): void => {
      read(fd, buf, done, buf.length - done, position + done, (err, n) => {
        if (err) return reject(err);
        done += n;
        if (n === 0 || done === buf.length) resolve(done);
        else step();
      });
    };
    step();
  });
}

export class SegmentReader {
  /** `maxOpen` bounds the cache (the descriptor budget reserves that many); leased retirees may briefly add to it. */
  constructor(private readonly maxOpen = MAX_SEGMENT_FDS) {}

  // Map iteration order is insertion order: re-inserting on use makes the first key the LRU.
  private readonly fds = new Map<string, Promise<number>>();
  /** Leases per descriptor (cached or retired); retired ones close when theirs reach zero. */
  private readonly leases = new Map<number, number>();
  private readonly retiredLeased = new Set<number>();

  /**
   * The ranges as file chunks over cached descriptors, each fd pushed to `leases` (give them
   * back with release()). A range whose file vanished ends the answer there, as in readRanges.
   */
  async fileRanges(ranges: readonly FileRange[], leases: number[]): Promise<FileChunk[]> {
    const out: FileChunk[] = [];
    for await (const { r, fd } of this.opened(ranges, leases)) out.push({ fd, position: r.position, length: r.length });
    return out;
  }

  /**
   * Each range with its cached descriptor, in order, ending at the first whose file vanished
   * (retention). Each descriptor is leased into `leases` as soon as its open settles, in the same
   * microtask, so a retirement queued behind it finds it leased and leaves it open.
   */
  private async *opened(ranges: readonly FileRange[], leases: number[]): AsyncGenerator<{ r: FileRange; fd: number }> {
    for (const r of ranges) {
      let fd: number;
      try {
        fd = await this.fd(r.path);
      } catch {
        return;
      }
      this.leases.set(fd, (this.leases.get(fd) ?? 0) + 1);
      leases.push(fd);
      yield { r, fd };
    }
  }

  /** Gives back every lease in `leases` and empties it. */
  release(leases: number[]): void {
    for (const fd of leases) {
      const n = (this.leases.get(fd) ?? 1) - 1;
      if (n > 0) {
        this.leases.set(fd, n);
        continue;
      }
      this.leases.delete(fd);
      if (this.retiredLeased.delete(fd)) close(fd, () => undefined);
    }
    leases.length = 0;
  }

  /** Reads each range; a range whose file vanished (retention) is dropped, ending the answer there. */
  async readRanges(ranges: readonly FileRange[]): Promise<Buffer[]> {
    const out: Buffer[] = [];
    const leases: number[] = [];
    try {
      for await (const { r, fd } of this.opened(ranges, leases)) {
        const buf = Buffer.allocUnsafe(r.length);
        const n = await readFully(fd, buf, r.position);
        out.push(n === r.length ? buf : buf.subarray(0, n));
        if (n < r.length) break;
      }
    } finally {
      this.release(leases);
    }
    return out;
  }

  /** Forgets every descriptor under `dir` (its files were deleted). */
  dropDir(dir: string): void {
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    for (const [path, fd] of this.fds) {
      if (path.startsWith(prefix)) {
        this.fds.delete(path);
        this.retire(fd);
      }
    }
  }

  closeAll(): void {
    for (const fd of this.fds.values()) void fd.then((n) => close(n, () => undefined), () => undefined);
    for (const n of this.retiredLeased) close(n, () => undefined);
    this.fds.clear();
    this.retiredLeased.clear();
    this.leases.clear();
  }

  private retire(fd: Promise<number>): void {
    const closeUnleased = (n: number): void => {
      if (this.leases.has(n)) this.retiredLeased.add(n);
      else close(n, () => undefined);
    };
    void fd.then(closeUnleased, () => undefined);
  }

  private fd(path: string): Promise<number> {
    const cached = this.fds.get(path);
    if (cached) {
      this.fds.delete(path);
      this.fds.set(path, cached);
      return cached;
    }
    const opening = openAsync(path);
    opening.catch(() => this.fds.delete(path));
    this.fds.set(path, opening);
    if (this.fds.size > this.maxOpen) {
      const [oldest, fd] = this.fds.entries().next().value as [string, Promise<number>];
      this.fds.delete(oldest);
      this.retire(fd);
    }
    return opening;
  }
}
