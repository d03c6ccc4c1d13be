// Response frames (4-byte big-endian length, then that many bytes) read straight into buffers of
// their own through a plaintext socket's `onread`, for a reader that knows when a frame is dead and
// gives it back (the replica fetcher's link, actors/kafka_link.ts). Lives on the thread of its
// socket. A frame of at least the pool's minimum size comes from the FramePool and, once its length
// is known, the socket reads the rest of it in place; smaller ones, and the start of every frame,
// are read into a staging buffer and copied out. The 'data' path (protocol/framing.ts FrameReader)
// instead reads 64 KiB chunks and concatenates them: for a 1 MiB answer that is sixteen fresh
// chunks and one fresh copy, whose external memory drove a follower shard into a mark-compact every
// 20-65 ms during catch-up (one fifth of it).
// Invariants: frames reach onFrame whole and in stream order; a frame is never longer than
// `maxFrame` (a longer announced length throws ProtocolError before anything is allocated for it);
// the staging buffer never escapes (its bytes are copied before received() returns).
import type { OnReadOpts } from 'node:net';
import type { FramePool } from './frame_pool.js';
import { ProtocolError } from '../protocol/reader.js';

/** Bytes a read lands in while no large frame is being filled: the start of each frame, and small frames. */
const STAGING_BYTES = 64 * 1024;

export class InPlaceFrameReader {
  /** Where each complete frame goes; null: none is expected (one arriving throws). */
  onFrame: ((frame: Buffer) => void) | null = null;
  private readonly staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
  /** The length prefix of the next frame, `lengthFilled` bytes of it so far. */
  private readonly length = Buffer.alloc(4);
  private lengthFilled = 0;
  /** The frame being filled, `filled` bytes of it so far; null between frames. */
  private frame: Buffer | null = null;
  private filled = 0;

  constructor(private readonly maxFrame: number, private readonly pool: FramePool) {}

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
   * complete; throws ProtocolError for a frame length outside [0, maxFrame], or whatever onFrame
   * throws (the caller then drops the connection and this reader).
   */
  received(n: number, buf: Buffer): void {
    if (buf.buffer !== this.staging.buffer) {
      this.filled += n;
      this.completeFrame();
      return;
    }
    let at = 0;
    while (at < n) {
      if (this.frame === null) {
        const k = Math.min(4 - this.lengthFilled, n - at);
        this.staging.copy(this.length, this.lengthFilled, at, at + k);
        this.lengthFilled += k;
        at += k;
        if (this.lengthFilled < 4) return;
        this.lengthFilled = 0;
        this.startFrame(this.length.readInt32BE(0));
      }
      const f = this.frame!;
      const k = Math.min(f.length - this.filled, n - at);
      this.staging.copy(f, this.filled, at, at + k);
      this.filled += k;
      at += k;
      this.completeFrame();
    }
  }

  private startFrame(size: number): void {
    if (size < 0 || size > this.maxFrame) throw new ProtocolError(`response frame of ${size} bytes (limit ${this.maxFrame})`);
    this.frame = size >= this.pool.minBytes ? this.pool.take(size) : Buffer.allocUnsafe(size);
    this.filled = 0;
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
