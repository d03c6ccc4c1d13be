// Backpressure for the parallel consumer's in-memory buffer: counts messages and bytes fetched
// but not yet finished, per partition and in total, and turns them into pause/resume decisions.
// Runs on the consumer's thread; a pure state machine (no I/O, no timers).
// Two hysteresis loops, each pausing at its high watermark (messages or bytes) and resuming at
// its low one (messages and bytes): the total, which gates fetching altogether (`canFetch`), and
// each partition's own, so one partition's backlog cannot take the whole buffer. A partition is
// reported paused while either loop holds and it has something buffered.
// Why the fetch gate: the fetch loop sends one fetch at a time and only while `canFetch()`, so
// the total never exceeds the high watermark plus one fetch's size. Why never pause an empty
// partition: nothing of it is in memory to protect, and once the total is back under the high
// watermark its next fetch must not wait for other partitions' backlogs.
// Invariants: totals equal the sums over partitions; counts never go negative (remove throws).

export interface BackpressureLimits {
  readonly highMessages: number;
  readonly lowMessages: number;
  readonly highBytes: number;
  readonly lowBytes: number;
  /** Per-partition limits; default to the total's (so off). */
  readonly partitionHighMessages?: number;
  readonly partitionLowMessages?: number;
  readonly partitionHighBytes?: number;
  readonly partitionLowBytes?: number;
}

interface Load {
  messages: number;
  bytes: number;
  over: boolean;
}

interface Watermarks {
  readonly highMessages: number;
  readonly lowMessages: number;
  readonly highBytes: number;
  readonly lowBytes: number;
}

function checked(w: Watermarks, what: string): Watermarks {
  const ok = (low: number, high: number): boolean => Number.isFinite(high) && high >= 1 && low >= 0 && low < high;
  if (!ok(w.lowMessages, w.highMessages) || !ok(w.lowBytes, w.highBytes)) {
    throw new RangeError(`${what} watermarks need 0 ≤ low < high`);
  }
  return w;
}

/** Hysteresis step: over from the high watermark on, until back at the low one. */
function isOver(load: Load, w: Watermarks): boolean {
  if (load.messages >= w.highMessages || load.bytes >= w.highBytes) return true;
  if (load.messages <= w.lowMessages && load.bytes <= w.lowBytes) return false;
  return load.over;
}

export class BackpressureController {
  private readonly total: Load = { messages: 0, bytes: 0, over: false };
  private readonly partitions = new Map<number, Load>();
  private readonly totalLimits: Watermarks;
  private readonly partitionLimits: Watermarks;

  constructor(limits: BackpressureLimits) {
    this.totalLimits = checked(limits, 'total');
    this.partitionLimits = checked(
      {
        highMessages: limits.partitionHighMessages ?? limits.highMessages,
        lowMessages: limits.partitionLowMessages ?? limits.lowMessages,
        highBytes: limits.partitionHighBytes ?? limits.highBytes,
        lowBytes: limits.partitionLowBytes ?? limits.lowBytes,
      },
      'partition',
    );
  }

  get totalMessages(): number {
    return this.total.messages;
  }

  get totalBytes(): number {
    return this.total.bytes;
  }

  /** Whether the fetch loop may send its next fetch. */
  canFetch(): boolean {
    return !this.total.over;
  }

  /** Whether `partition` should be left out of fetches. */
  isPaused(partition: number): boolean {
    const load = this.partitions.get(partition);
    return load !== undefined && load.messages > 0 && (load.over || this.total.over);
  }

  /** Partitions currently paused, ascending (allocates; for metrics and fetch building). */
  pausedPartitions(): number[] {
    const out: number[] = [];
    for (const partition of this.partitions.keys()) if (this.isPaused(partition)) out.push(partition);
    return out.sort((a, b) => a - b);
  }

  /** Messages and bytes buffered for `partition`. */
  buffered(partition: number): { readonly messages: number; readonly bytes: number } {
    const load = this.partitions.get(partition);
    return { messages: load?.messages ?? 0, bytes: load?.bytes ?? 0 };
  }

  /** Fetched messages entered the buffer. */
  add(partition: number, messages: number, bytes: number): void {
    if (messages < 0 || bytes < 0) throw new RangeError('add needs non-negative counts');
    let load = this.partitions.get(partition);
    if (load === undefined) {
      load = { messages: 0, bytes: 0, over: false };
      this.partitions.set(partition, load);
    }
    this.apply(load, messages, bytes);
  }

  /** Messages left the buffer (finished, skipped or dropped). */
  remove(partition: number, messages: number, bytes: number): void {
    const load = this.partitions.get(partition);
    if (load === undefined || messages < 0 || bytes < 0 || messages > load.messages || bytes > load.bytes) {
      throw new RangeError(`partition ${partition} removes more than it buffered`);
    }
    this.apply(load, -messages, -bytes);
    if (load.messages === 0 && load.bytes === 0) this.partitions.delete(partition);
  }

  /** Drops a revoked partition's accounting (its buffered messages are being discarded). */
  forget(partition: number): void {
    const load = this.partitions.get(partition);
    if (load !== undefined) this.remove(partition, load.messages, load.bytes);
  }

  private apply(load: Load, messages: number, bytes: number): void {
    load.messages += messages;
    load.bytes += bytes;
    load.over = isOver(load, this.partitionLimits);
    this.total.messages += messages;
    this.total.bytes += bytes;
    this.total.over = isOver(this.total, this.totalLimits);
  }
}
