// The bound on sealed segments' open descriptors, one cache per thread (each shard worker's logs
// share their thread's): a sealed segment is only read, so its descriptor is released when it
// falls out of the least recently used set and reopened on its next use, as Kafka's file handle
// cache does. A partition then costs its active segment and its directory, however many
// segments it keeps. Active segments are never here: their descriptors carry writes and syncs.
// Safe to release because every use of a sealed segment's descriptor is synchronous on this
// thread (seals and main-thread reads open descriptors of their own).

/** Per-thread bound on open sealed-segment descriptors; the descriptor budget reserves it per shard. */
export const MAX_SEALED_HANDLES = 64;

export interface HandleHolder {
  releaseHandle(): void;
}

export class HandleCache {
  // Set iteration order is insertion order: re-inserting on use makes the first entry the LRU.
  private readonly open = new Set<HandleHolder>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.open.size;
  }

  /** Marks `h` most recently used, releasing the least recently used others beyond the bound. */
  touch(h: HandleHolder): void {
    this.open.delete(h);
    this.open.add(h);
    while (this.open.size > this.max) {
      const oldest = this.open.values().next().value as HandleHolder;
      this.open.delete(oldest);
      oldest.releaseHandle();
    }
  }

  /** Stops tracking `h` (closed, or active again); its descriptor is its owner's business. */
  forget(h: HandleHolder): void {
    this.open.delete(h);
  }
}

export const sealedHandles = new HandleCache(MAX_SEALED_HANDLES);
