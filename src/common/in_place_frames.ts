// Frames (4-byte big-endian length, then that many bytes) read straight into buffers of their own
// through a plaintext socket's `onread`: the broker's placed connections (net/connection.ts) and
// the replica fetchers' links (actors/kafka_link.ts), both of which know when a frame is dead and
// give its buffer back to the pool. Lives on the thread of its socket. A frame of at least the
// pool's minimum size comes from the FramePool and, once its length is known, the socket reads the
// rest of it in place; smaller ones, and the start of every frame, are read into the thread's
// staging buffer and copied straight into their own buffer. Reading 64 KiB chunks instead (the
// 'data' path) costs a fresh chunk per read and a fresh copy per frame that spans two: at 180 MB/s
// of produce, ~4 GB of external allocation in 10 s, and a mark-compact on the shard every ~40 ms.
// `admit` may also ask the reader to wait (the broker's held-bytes bound has no room now): the
// bytes of that read past the length are kept aside, the caller stops the socket, and retry()
// admits the length again once there may be room, going on with the kept bytes.
// Invariants: frames reach onFrame whole and in stream order; no buffer is made for a frame before
// `admit` accepted its length, and after a refusal nothing more is read; the staging buffer never
// escapes (its bytes are copied before received() returns), so one serves every reader of a thread.
import type { OnReadOpts } from 'node:net';
import type { FramePool } from './frame_pool.js';
import { ProtocolError } from '../protocol/reader.js';

/** Bytes a read lands in while no large frame is being filled: the start of each frame, and small frames. */
export const STAGING_BYTES = 64 * 1024;
let staging: Buffer | null = null;

/**
 * This thread's staging buffer, shared by every reader on it (the placed connections' and the
 * replica links'): libuv reads one socket at a time, and each reader copies its bytes out before
 * the next read.
 */
export function threadStaging(): Buffer {
  return (staging ??= Buffer.allocUnsafeSlow(STAGING_BYTES));
}

/** What `admit` says of an announced frame length: read it, refuse it (the reader stops), or wait for retry(). */
export type FrameAdmission = 'read' | 'refuse' | 'wait';

export class InPlaceFrameReader {
  /** Where each complete frame goes; null: none is expected (one arriving throws). */
  onFrame: ((frame: Buffer) => void) | null = null;
  /** The length prefix of the next frame, `lengthFilled` bytes of it so far. */
  private readonly length = Buffer.alloc(4);
  private lengthFilled = 0;
  /** The frame being filled, `filled` bytes of it so far; null between frames. */
  private frame: Buffer | null = null;
  private filled = 0;
  private refused = false;
  /** The length `admit` asked to wait with, -1 if none; `kept` holds the bytes read after it. */
  private waitingSize = -1;
  private kept: Buffer | null = null;
  private readonly staging = threadStaging();

  /**
   * `admit(size)` judges each announced length before a buffer is made for it: 'refuse' stops the
   * reader (the caller closes the connection), 'wait' holds it until retry(), and it may throw,
   * which received() passes on.
   */
  constructor(private readonly pool: FramePool, private readonly admit: (size: number) => FrameAdmission) {}

  /** A length waits for admission (retry()): the caller must not read the socket meanwhile. */
  get waiting(): boolean {
    return this.waitingSize >= 0;
  }

  /** `onread` options for a socket read by this reader; `read` wraps each received() (counting, catching). */
  socketOptions(read: (n: number, buf: Buffer) => void): OnReadOpts {
    return {
      buffer: () => this.target(),
      callback: (n, buf) => {
        read(n, buf as Buffer);
        return true;
      },
    };
  }

  /** Where the socket's next read lands: the rest of a large frame being filled, else the staging buffer. */
  target(): Buffer {
    const f = this.frame;
    return f !== null && f.length >= this.pool.minBytes ? f.subarray(this.filled) : this.staging;
  }

  /**
   * `n` bytes were read into `buf`, the last buffer target() gave. Hands on every frame they
   * complete; throws what admit or onFrame throws, and ProtocolError for a frame nobody expects
   * (the caller then drops the connection and this reader).
   */
  received(n: number, buf: Buffer): void {
    if (this.refused) return;
    if (buf.buffer !== this.staging.buffer) {
      this.filled += n;
      this.completeFrame();
      return;
    }
    if (this.waiting) {
      // Read before the caller stopped the socket: kept with the rest, in order.
      this.kept = Buffer.concat([this.kept!, buf.subarray(0, n)]);
      return;
    }
    this.consume(buf, 0, n);
  }

  /**
   * Asks `admit` again for the length that waits, if any, and goes on with the bytes kept after it;
   * the reader may wait again (`waiting`). Throws what received() throws.
   */
  retry(): void {
    if (!this.waiting || this.refused) return;
    const size = this.waitingSize;
    const kept = this.kept!;
    const admission = this.admit(size);
    if (admission === 'wait') return;
    this.waitingSize = -1;
    this.kept = null;
    if (admission === 'refuse') {
      this.refused = true;
      return;
    }
    this.startFrame(size);
    this.completeFrame(); // an empty frame is whole already
    this.consume(kept, 0, kept.length);
  }

  /** Frames the bytes src[at, end): from the staging buffer, or those kept while a length waited. */
  private consume(src: Buffer, at: number, end: number): void {
    while (at < end) {
      let f = this.frame;
      if (f === null) {
        const k = Math.min(4 - this.lengthFilled, end - at);
        src.copy(this.length, this.lengthFilled, at, at + k);
        this.lengthFilled += k;
        at += k;
        if (this.lengthFilled < 4) return;
        this.lengthFilled = 0;
        const size = this.length.readInt32BE(0);
        const admission = this.admit(size);
        if (admission === 'refuse') {
          this.refused = true;
          return;
        }
        if (admission === 'wait') {
          this.waitingSize = size;
          this.kept = Buffer.from(src.subarray(at, end));
          return;
        }
        f = this.startFrame(size);
      }
      const k = Math.min(f.length - this.filled, end - at);
      src.copy(f, this.filled, at, at + k);
      this.filled += k;
      at += k;
      this.completeFrame();
    }
  }

  private startFrame(size: number): Buffer {
    this.filled = 0;
    return (this.frame = size >= this.pool.minBytes ? this.pool.take(size) : Buffer.allocUnsafe(size));
  }

  /** Drops the frame being read, if any: its admitted size, or -1 when none was in progress. */
  abandon(): number {
    const f = this.frame;
    this.frame = null;
    this.filled = 0;
    this.lengthFilled = 0;
    this.waitingSize = -1;
    this.kept = null;
    return f === null ? -1 : f.length;
  }

  private completeFrame(): void {
    const f = this.frame;
    if (f === null || this.filled < f.length) return;
    this.frame = null;
    this.filled = 0;
    const onFrame = this.onFrame;
    if (onFrame === null) throw new ProtocolError('a frame nobody asked for');
    onFrame(f);
  }
}
