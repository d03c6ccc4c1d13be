// Recycled memory for produce batches copied out of a shard's inbound ring. A batch lives from its
// copy until its commit settles (the log stages it by reference and the I/O backend writes from
// it, so it must leave the ring before release()). One fresh Buffer per batch made V8 see a steady
// stream of external memory and run a mark-compact about twice a second per shard, pausing the
// shard's event loop for up to ~20 ms; carving batches from a few reused slabs removes that.
// Owned by one shard (its thread only).
// Invariants: a slab is handed out again only once every batch carved from it was released;
// the slab being carved is never on the free list; live batches never share bytes; at most
// `maxFree` idle slabs are kept (the rest go to the GC), so idle memory is bounded. A batch starts at
// its source's address modulo 8 (up to 7 bytes skipped before it), so its copy out of a ring's
// shared memory runs a word at a time (co_align.ts).
import { coAlignPad } from '../common/co_align.js';

/** One slab: `live` batches carved from it not yet released. */
export interface Slab {
  readonly buf: Buffer;
  used: number;
  live: number;
}

/** A batch's bytes and the slab to release it to (null: allocated on its own, nothing to release). */
export interface BatchLease {
  readonly buf: Buffer;
  readonly slab: Slab | null;
}

export class BatchSlabs {
  private current: Slab;
  private readonly free: Slab[] = [];

  constructor(private readonly slabBytes = 4 << 20, private readonly maxFree = 8) {
    this.current = this.newSlab();
  }

  /**
   * `n` bytes for one batch to be copied from byte offset `srcByteOffset` of its source's buffer;
   * batches above a quarter slab get their own buffer.
   */
  take(n: number, srcByteOffset = 0): BatchLease {
    if (n > this.slabBytes >> 2) return { buf: Buffer.allocUnsafeSlow(n), slab: null };
    let slab = this.current;
    let start = slab.used + coAlignPad(srcByteOffset, slab.buf.byteOffset + slab.used);
    if (start + n > this.slabBytes) {
      this.retire(slab);
      slab = this.current = this.free.pop() ?? this.newSlab();
      start = coAlignPad(srcByteOffset, slab.buf.byteOffset);
    }
    const buf = slab.buf.subarray(start, start + n);
    slab.used = start + n;
    slab.live++;
    return { buf, slab };
  }

  /** The batch's commit settled: its bytes may be reused. */
  release(slab: Slab | null): void {
    if (slab === null) return;
    slab.live--;
    if (slab.live === 0 && slab !== this.current) this.retire(slab);
  }

  /** Idle slabs kept for reuse (tests and introspection). */
  get idleSlabs(): number {
    return this.free.length;
  }

  private retire(slab: Slab): void {
    if (slab.live > 0 || this.free.length >= this.maxFree) return;
    slab.used = 0;
    this.free.push(slab);
  }

  private newSlab(): Slab {
    return { buf: Buffer.allocUnsafeSlow(this.slabBytes), used: 0, live: 0 };
  }
}
