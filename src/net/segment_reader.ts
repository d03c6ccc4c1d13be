// Reads the file ranges a shard answered a fetch with, on the main thread, into buffers that
// go to the socket by reference. Segment files are append-only and removed only by unlink,
// so an open descriptor stays valid; descriptors are cached (bounded LRU) per path and
// dropped when their partition directory is deleted, so a re-created topic with the same
// name never reads the old files. The native addon's zero-copy send replaces this path.
import { close, open, read } from 'node:fs';
import { sep } from 'node:path';
import type { FileRange } from '../log/partition_log.js';

export const SEGMENT_FDS_MAX = 512;

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

// Reads already holding a descriptor may still be running: close it only after a grace period,
// so its number cannot be reused under them.
const RETIRE_DELAY_MS = 5_000;

function retire(fd: Promise<number>): void {
  setTimeout(() => void fd.then((n) => close(n, () => undefined), () => undefined), RETIRE_DELAY_MS).unref();
}

export class SegmentReader {
  // Map iteration order is insertion order: re-inserting on use makes the first key the LRU.
  private readonly fds = new Map<string, Promise<number>>();

  /** Reads each range; a range whose file vanished (retention) is dropped, ending the answer there. */
  async readRanges(ranges: readonly FileRange[]): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (const r of ranges) {
      let fd: number;
      try {
        fd = await this.fd(r.path);
      } catch {
        break;
      }
      const buf = Buffer.allocUnsafe(r.length);
      const n = await readFully(fd, buf, r.position);
      out.push(n === r.length ? buf : buf.subarray(0, n));
      if (n < r.length) break;
    }
    return out;
  }

  /** Forgets every descriptor under `dir` (its files were deleted). */
  dropDir(dir: string): void {
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    for (const [path, fd] of this.fds) {
      if (path.startsWith(prefix)) {
        this.fds.delete(path);
        retire(fd);
      }
    }
  }

  closeAll(): void {
    for (const fd of this.fds.values()) void fd.then((n) => close(n, () => undefined), () => undefined);
    this.fds.clear();
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
    if (this.fds.size > SEGMENT_FDS_MAX) {
      const [oldest, fd] = this.fds.entries().next().value as [string, Promise<number>];
      this.fds.delete(oldest);
      retire(fd);
    }
    return opening;
  }
}
