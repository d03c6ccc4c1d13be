// A partition's leader-epoch cache (KIP-101/KIP-279): for each leader epoch seen in the log, the
// offset of its first batch. Answers OffsetsForLeaderEpoch (where a follower's history diverges
// from the leader's) and is cut back with the log on truncation and retention. Pure state; its
// PartitionLog (on the shard worker) persists it as the `leader-epoch-checkpoint` file in Kafka's
// text layout: version line, entry count line, then one "epoch startOffset" line per entry.
// Invariants: epochs strictly increase, start offsets never decrease, every epoch is >= 0;
// truncations keep a prefix (from the end) or a suffix whose first entry moves up (from the start).
import { decodeTextCheckpoint, encodeTextCheckpoint } from './text_checkpoint.js';

export const LEADER_EPOCH_FILE = 'leader-epoch-checkpoint';

/** No epoch / no offset, as OffsetsForLeaderEpoch answers when the requested epoch is unknown. */
export const UNDEFINED_EPOCH = -1;

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

export interface EpochEndOffset {
  /** The largest known epoch <= the requested one, or UNDEFINED_EPOCH. */
  epoch: number;
  /** Where that history ends: the next epoch's start offset, or the log end for the latest epoch; -1 when unknown. */
  endOffset: number;
}

const UNDEFINED: EpochEndOffset = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH };

export class LeaderEpochCache {
  private readonly list: EpochEntry[] = [];

  /** A cache holding `entries`, or null when they break the invariants (a damaged checkpoint). */
  static of(entries: readonly EpochEntry[]): LeaderEpochCache | null {
    const cache = new LeaderEpochCache();
    for (const e of entries) {
      const last = cache.list[cache.list.length - 1];
      if (!Number.isSafeInteger(e.epoch) || !Number.isSafeInteger(e.startOffset) || e.epoch < 0 || e.startOffset < 0) return null;
      if (last && (e.epoch <= last.epoch || e.startOffset < last.startOffset)) return null;
      cache.list.push({ epoch: e.epoch, startOffset: e.startOffset });
    }
    return cache;
  }

  static decode(buf: Buffer): LeaderEpochCache | null {
    const rows = decodeTextCheckpoint(buf, 2);
    return rows && LeaderEpochCache.of(rows.map(([epoch, startOffset]) => ({ epoch: epoch!, startOffset: startOffset! })));
  }

  encode(): Buffer {
    return encodeTextCheckpoint(this.list.map((e) => [e.epoch, e.startOffset]));
  }

  get entries(): readonly EpochEntry[] {
    return this.list;
  }

  get latestEpoch(): number {
    return this.list[this.list.length - 1]?.epoch ?? UNDEFINED_EPOCH;
  }

  /**
   * Notes that batches of `epoch` start at `startOffset`; false (nothing changes) when the epoch is
   * the latest already. A lower epoch or start offset than the latest entry's is a caller bug.
   */
  assign(epoch: number, startOffset: number): boolean {
    const last = this.list[this.list.length - 1];
    if (last?.epoch === epoch) return false;
    if (epoch < 0 || (last && (epoch < last.epoch || startOffset < last.startOffset))) {
      throw new RangeError(`leader epoch ${epoch} at ${startOffset} does not follow epoch ${last?.epoch} at ${last?.startOffset}`);
    }
    this.list.push({ epoch, startOffset });
    return true;
  }

  /**
   * OffsetsForLeaderEpoch for `epoch`: the latest epoch ends at the log end; an older one ends where
   * the first greater epoch starts, reported with the largest known epoch <= the requested one (the
   * requested epoch itself when it precedes every entry). Unknown when the request is undefined or
   * greater than every known epoch.
   */
  endOffsetFor(epoch: number, logEndOffset: number): EpochEndOffset {
    if (epoch === UNDEFINED_EPOCH) return { ...UNDEFINED };
    const higher = this.firstAbove(epoch);
    if (higher === this.list.length) {
      return this.latestEpoch === epoch ? { epoch, endOffset: logEndOffset } : { ...UNDEFINED };
    }
    const floor = this.list[higher - 1];
    return { epoch: floor ? floor.epoch : epoch, endOffset: this.list[higher]!.startOffset };
  }

  /** Index of the first entry whose epoch is > epoch (binary search; list.length when none). */
  private firstAbove(epoch: number): number {
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.list[mid]!.epoch > epoch) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The log was truncated to `offset`: epochs that start at or past it are forgotten. True when any went. */
  truncateFromEnd(offset: number): boolean {
    const before = this.list.length;
    while (this.list.length > 0 && this.list[this.list.length - 1]!.startOffset >= offset) this.list.pop();
    return this.list.length !== before;
  }

  /**
   * The log start moved to `offset`: entries wholly below it go, and the epoch that covers it now
   * starts there (its earlier offsets no longer exist). True when anything changed.
   */
  truncateFromStart(offset: number): boolean {
    let covering = -1;
    while (covering + 1 < this.list.length && this.list[covering + 1]!.startOffset <= offset) covering++;
    if (covering < 0 || (covering === 0 && this.list[0]!.startOffset === offset)) return false;
    const epoch = this.list[covering]!.epoch;
    this.list.splice(0, covering + 1, { epoch, startOffset: offset });
    return true;
  }

  clear(): void {
    this.list.length = 0;
  }
}
