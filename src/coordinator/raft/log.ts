// The Raft core's in-memory view of its log: the latest snapshot (id, voters with endpoints), the entries after
// it, the epoch history (KRaft's leader-epoch cache) that answers "where does epoch E end", and the
// voter set in force at the log end. Pure; lives wherever its RaftNode lives. Durability is the
// node's business: this class only holds what the node has appended, truncated or installed.
import type { Entry, NodeId, OffsetAndEpoch, Snapshot, SnapshotMeta } from './types.js';
import { decodeVoters, encodeVoters } from './entry_batches.js';

/** What one entry costs against fetch and flow-control byte limits: its data plus a fixed header. */
export const ENTRY_OVERHEAD_BYTES = 24;

export function entryBytes(entry: Entry): number {
  return entry.data.byteLength + ENTRY_OVERHEAD_BYTES;
}

interface EpochStart {
  readonly epoch: number;
  readonly startOffset: number;
}

interface VotersChange {
  readonly offset: number;
  readonly voters: readonly NodeId[];
  /** The entry's bytes: what a snapshot ending after it records (endpoints included). */
  readonly record: Uint8Array;
}

export class RaftLog {
  private entries: Entry[] = [];
  private startOffset: number;
  private snapshotValue: Snapshot | null;
  /** Ascending; the first element is the base (the snapshot's epoch at its end, or epoch 0 at 0). */
  private epochs: EpochStart[];
  /** `voters` entries still in the log, ascending; the base voters apply below the first. */
  private votersChanges: VotersChange[] = [];
  private baseVoters: readonly NodeId[];
  /** The snapshot's votersRecord; null for the bootstrap set, encoded only if a snapshot records it. */
  private baseRecord: Uint8Array | null;
  /**
   * The voter set in force at the log end and its members, recomputed only when a `voters` entry,
   * truncation, compaction or install can change it: the core asks on every event and every fetch.
   */
  private inForce: readonly NodeId[] = [];
  private inForceSet: ReadonlySet<NodeId> = new Set();

  constructor(snapshot: Snapshot | null, entries: readonly Entry[], bootstrapVoters: readonly NodeId[]) {
    this.snapshotValue = snapshot;
    this.startOffset = snapshot?.meta.id.endOffset ?? 0;
    this.epochs = [{ epoch: snapshot?.meta.id.epoch ?? 0, startOffset: this.startOffset }];
    this.baseRecord = snapshot?.meta.votersRecord ?? null;
    this.baseVoters = this.baseRecord === null ? bootstrapVoters : decodeVoters(this.baseRecord);
    this.refreshInForce();
    for (const entry of entries) this.append(entry);
  }

  get logStartOffset(): number {
    return this.startOffset;
  }

  get endOffset(): number {
    return this.startOffset + this.entries.length;
  }

  get lastEpoch(): number {
    return this.epochs[this.epochs.length - 1]!.epoch;
  }

  get snapshot(): Snapshot | null {
    return this.snapshotValue;
  }

  /** The voters in force at the log end: the last `voters` entry, else the snapshot's, else the bootstrap set. */
  get voters(): readonly NodeId[] {
    return this.inForce;
  }

  /** Whether `id` is in the voter set in force at the log end. */
  hasVoter(id: NodeId): boolean {
    return this.inForceSet.has(id);
  }

  /** Offset of the last `voters` entry still in the log, or -1. */
  get lastVotersOffset(): number {
    return this.votersChanges[this.votersChanges.length - 1]?.offset ?? -1;
  }

  /** The entry at `offset`, if the log holds it (not compacted, not past the end). */
  entryAt(offset: number): Entry | undefined {
    return offset >= this.startOffset ? this.entries[offset - this.startOffset] : undefined;
  }

  /** Epoch of the entry before `offset` (the snapshot's epoch at the log start, 0 at offset 0). */
  epochBefore(offset: number): number {
    if (offset === this.startOffset) return this.epochs[0]!.epoch;
    return this.entryAt(offset - 1)?.epoch ?? 0;
  }

  append(entry: Entry): void {
    if (entry.offset !== this.endOffset) throw new RangeError(`append at ${entry.offset}, log ends at ${this.endOffset}`);
    if (entry.epoch < this.lastEpoch) throw new RangeError(`append of epoch ${entry.epoch} after epoch ${this.lastEpoch}`);
    this.entries.push(entry);
    if (entry.epoch > this.lastEpoch) this.epochs.push({ epoch: entry.epoch, startOffset: entry.offset });
    if (entry.kind === 'voters') {
      this.votersChanges.push({ offset: entry.offset, voters: decodeVoters(entry.data), record: entry.data });
      this.refreshInForce();
    }
  }

  /** Drops every entry at or above `offset` (never below the log start). */
  truncate(offset: number): void {
    if (offset < this.startOffset) throw new RangeError(`truncate to ${offset} below the log start ${this.startOffset}`);
    if (offset >= this.endOffset) return;
    this.entries.length = offset - this.startOffset;
    while (this.epochs.length > 1 && this.epochs[this.epochs.length - 1]!.startOffset >= offset) this.epochs.pop();
    while (this.votersChanges.length > 0 && this.votersChanges[this.votersChanges.length - 1]!.offset >= offset) this.votersChanges.pop();
    this.refreshInForce();
  }

  /**
   * KRaft's endOffsetForEpoch: the largest epoch this log knows that is ≤ `epoch`, and the offset
   * where it ends. Null when `epoch` is older than the snapshot: that history is compacted away.
   */
  endOfEpoch(epoch: number): OffsetAndEpoch | null {
    if (epoch < this.epochs[0]!.epoch) return null;
    let i = this.epochs.length - 1;
    while (this.epochs[i]!.epoch > epoch) i--;
    const next = this.epochs[i + 1];
    return { epoch: this.epochs[i]!.epoch, endOffset: next === undefined ? this.endOffset : next.startOffset };
  }

  /** Entries from `offset` up to `maxBytes` of entryBytes, but always at least one if any exists. */
  slice(offset: number, maxBytes: number): Entry[] {
    const out: Entry[] = [];
    let bytes = 0;
    for (let at = offset; at < this.endOffset; at++) {
      const entry = this.entryAt(at)!;
      bytes += entryBytes(entry);
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(entry);
    }
    return out;
  }

  /** Entries in [from, to). */
  range(from: number, to: number): Entry[] {
    return this.entries.slice(from - this.startOffset, to - this.startOffset);
  }

  /** The voters in force just below `offset`. */
  votersAt(offset: number): readonly NodeId[] {
    return this.lastChangeBelow(offset)?.voters ?? this.baseVoters;
  }

  /** The `voters` entry bytes in force just below `offset` (what a snapshot ending there records). */
  votersRecordAt(offset: number): Uint8Array {
    return this.lastChangeBelow(offset)?.record ?? this.baseRecord ?? encodeVoters(this.baseVoters);
  }

  private lastChangeBelow(offset: number): VotersChange | undefined {
    let last: VotersChange | undefined;
    for (const change of this.votersChanges) if (change.offset < offset) last = change;
    return last;
  }

  /** The state machine snapshotted everything below `endOffset`: drop those entries. */
  compact(endOffset: number, data: Uint8Array): Snapshot {
    if (endOffset <= this.startOffset || endOffset > this.endOffset) {
      throw new RangeError(`snapshot at ${endOffset} outside the log [${this.startOffset}, ${this.endOffset}]`);
    }
    const meta: SnapshotMeta = {
      id: { endOffset, epoch: this.epochBefore(endOffset) },
      votersRecord: this.votersRecordAt(endOffset),
      size: data.byteLength,
    };
    this.baseVoters = this.votersAt(endOffset);
    this.baseRecord = meta.votersRecord;
    this.votersChanges = this.votersChanges.filter((change) => change.offset >= endOffset);
    this.entries = this.entries.slice(endOffset - this.startOffset);
    const later = this.epochs.filter((start) => start.startOffset >= endOffset && start.epoch > meta.id.epoch);
    this.epochs = [{ epoch: meta.id.epoch, startOffset: endOffset }, ...later];
    this.startOffset = endOffset;
    this.snapshotValue = { meta, data };
    this.refreshInForce();
    return this.snapshotValue;
  }

  /** A snapshot fetched from the leader replaces the whole log. */
  install(snapshot: Snapshot): void {
    this.snapshotValue = snapshot;
    this.startOffset = snapshot.meta.id.endOffset;
    this.entries = [];
    this.epochs = [{ epoch: snapshot.meta.id.epoch, startOffset: this.startOffset }];
    this.baseRecord = snapshot.meta.votersRecord;
    this.baseVoters = decodeVoters(snapshot.meta.votersRecord);
    this.votersChanges = [];
    this.refreshInForce();
  }

  private refreshInForce(): void {
    const voters = this.votersChanges[this.votersChanges.length - 1]?.voters ?? this.baseVoters;
    if (voters === this.inForce) return;
    this.inForce = voters;
    this.inForceSet = new Set(voters);
  }
}
