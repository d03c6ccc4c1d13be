// Reused buffers for large frames read in place. A pool is used on one thread: the broker's
// connections keep one per thread for request frames (net/connection.ts), a shard's replica links
// one for response frames (actors/kafka_link.ts). A fresh buffer per large frame
// (librdkafka sends ~1 MB produce frames; a replica fetch answer is up to a few MB) cost, per
// 1 KiB message, page faults on first touch (~10 us each on this VM, 76-95k a 1M-message run) and
// V8 collections driven by external memory on four helper threads (0.6-1.0 us of the 3.5 us
// broker CPU measured): a frame whose bytes nobody reads any more serves the next one instead.
// Invariants: a buffer is lent to one frame at a time (give() takes back only what take() lent and
// has not been given back); at most `maxPooledBytes` wait idle; sizes are powers of two from
// `minBytes`, and a frame over a quarter of the bound gets a buffer of its own, never pooled.
// Memory: a lent buffer is under twice its frame (its power of two); the reader bounds the frames
// it holds, so frames read in place take at most twice that bound, plus the idle bytes.
// `FrameHolds` lends one frame to several readers at once (a produce frame whose batches a shard
// stages by reference until their commit settles); the pool gets it back from the last of them.

export class FramePool {
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;
  /** Backing stores lent and not given back: give() ignores anything else. */
  private readonly lent = new WeakSet<ArrayBufferLike>();

  constructor(readonly maxPooledBytes: number, readonly minBytes: number) {}

  /** A buffer of exactly `n` bytes (uninitialised), lent until give(). */
  take(n: number): Buffer {
    const size = this.sizeFor(n);
    if (size > this.maxPooledBytes >> 2) return Buffer.allocUnsafeSlow(n);
    let buf = this.idle.get(size)?.pop();
    if (buf === undefined) buf = Buffer.allocUnsafeSlow(size);
    else this.idleBytes -= size;
    this.lent.add(buf.buffer);
    return buf.subarray(0, n);
  }

  /**
   * `frame` (a view of a buffer take() lent) is read by nobody any more: its buffer may be lent
   * again. Anything else, or a buffer already given back, is ignored.
   */
  give(frame: Buffer): void {
    const store = frame.buffer;
    if (!this.lent.delete(store)) return;
    const size = store.byteLength;
    if (this.idleBytes + size > this.maxPooledBytes) return;
    let list = this.idle.get(size);
    if (list === undefined) this.idle.set(size, (list = []));
    list.push(Buffer.from(store));
    this.idleBytes += size;
  }

  /** Bytes waiting to be lent again (tests and introspection). */
  get pooledBytes(): number {
    return this.idleBytes;
  }

  private sizeFor(n: number): number {
    let size = this.minBytes;
    while (size < n) size *= 2;
    return size;
  }
}

/** Lets a reader keep views of a request's frame past the call that handed them over. */
export interface FrameKeeper {
  /** One more reader keeps views of the frame; the function returned lets go of them, and is called once. */
  hold(): () => void;
}

/**
 * A frame lent from `pool` to its first reader, who made this, and to each reader `hold()` adds:
 * the pool gets it back once all of them let go. The first reader lets go through `letGo` too.
 */
export class FrameHolds implements FrameKeeper {
  private holders = 1;

  constructor(private readonly pool: FramePool, private readonly frame: Buffer) {}

  hold(): () => void {
    this.holders++;
    return this.letGo;
  }

  readonly letGo = (): void => {
    if (--this.holders === 0) this.pool.give(this.frame);
  };
}
