// The process's file-descriptor budget (main thread). Worker threads and libuv's pool share one
// descriptor table, so the accounting is process-wide: a fixed reserve covers what is bounded
// elsewhere (the process's own handles, the admin HTTP listener and its connections, each shard's
// sealed-segment cache and transient seals, the main thread's segment-reader cache, with placed
// connections each shard's own segment reader, recovery and deletes), and the rest is shared by
// partitions (their active segments) and client connections, each acquired before use and
// released after. Work that would cross it is refused by its caller with a Kafka error, so the
// reserve stays free for admin work and the broker never meets EMFILE.

/** An open partition holds its active segment; its directory and sealed segments are opened on demand. */
export const PARTITION_FDS = 1;
/** A client connection holds its socket and the native sender's dup of it. */
export const CONNECTION_FDS = 2;

/** Segment fds each shard's reader for its placed connections keeps open (net/placed_serving.ts). */
export const SHARD_READER_FDS = 64;

/** stdio, epoll and event fds, libuv's pool, the metadata files, the logger. */
const PROCESS_BASE_FDS = 64;
/** Per shard beyond its sealed-segment cache: its event loop, io_uring ring, seals and index writes in flight. */
const SHARD_BASE_FDS = 16;

export interface ReserveShape {
  readonly shards: number;
  /** Open sealed-segment descriptors each shard may keep. */
  readonly sealedPerShard: number;
  /** The main thread's segment-reader cache. */
  readonly readerCache: number;
  /** The admin HTTP listener's connection bound. */
  readonly adminConnections: number;
  /** Connections are placed on the shards (--connection-placement shards): each shard reads segments for them itself. */
  readonly placedConnections: boolean;
}

/** Descriptors set aside from partitions and connections. */
export function reservedDescriptors(s: ReserveShape): number {
  const perShard = SHARD_BASE_FDS + s.sealedPerShard + (s.placedConnections ? SHARD_READER_FDS : 0);
  return PROCESS_BASE_FDS + s.adminConnections + 1 + s.shards * perShard + s.readerCache;
}

export type DescriptorUse = 'partitions' | 'connections';

export class DescriptorBudget {
  private readonly held: Record<DescriptorUse, number> = { partitions: 0, connections: 0 };

  /** `limit` is RLIMIT_NOFILE's soft value; `reserved` descriptors are never handed out. */
  constructor(
    readonly limit: number,
    readonly reserved: number,
  ) {}

  /** What partitions and connections may hold together. */
  get capacity(): number {
    return Math.max(0, this.limit - this.reserved);
  }

  get used(): number {
    return this.held.partitions + this.held.connections;
  }

  /** Negative only after forced acquisitions (partitions found on disk at start). */
  get free(): number {
    return this.capacity - this.used;
  }

  holding(use: DescriptorUse): number {
    return this.held[use];
  }

  /** Takes `n` descriptors for `use` if they fit within the capacity; false (nothing taken) otherwise. */
  tryAcquire(use: DescriptorUse, n: number): boolean {
    if (n > this.free) return false;
    this.held[use] += n;
    return true;
  }

  /** Takes `n` whether or not they fit: what already exists (a data dir's partitions) must open. */
  acquire(use: DescriptorUse, n: number): void {
    this.held[use] += n;
  }

  release(use: DescriptorUse, n: number): void {
    if (n > this.held[use]) throw new Error(`descriptor budget: releasing ${n} ${use} descriptors, ${this.held[use]} held`);
    this.held[use] -= n;
  }
}
