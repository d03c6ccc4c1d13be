// Per-partition watermark of contiguous completed offsets for the parallel consumer.
// Runs on the consumer's thread; a pure state machine (no I/O, no timers).
// Messages are `started` in fetch order (strictly increasing offsets; gaps are allowed, as
// compaction and transaction markers leave holes) and `completed` in any order. The window holds
// every started offset from the lowest incomplete one to the last started one, in a ring; a
// completion at the ring's head retires it and every completed entry behind it, so memory is
// proportional to the in-flight window, never to the partition's history.
// After a restart the tracker carries the completed offsets decoded from the last commit's
// metadata (`resumed`): `started` answers false for those (the caller skips them and they take
// no window slot), and both `committable` and `completionRuns` keep reporting them until the
// watermark passes them, so a commit made soon after a restart does not forget work that an
// earlier commit recorded as done.
// Invariants: the window's first entry is always incomplete (or the window is empty), so
// `committable()` (Kafka's commit semantics: the next offset to consume) is that entry, or the
// last started offset + 1 when nothing is incomplete; it is ≤ every incomplete offset and every
// started offset below it has completed. Cost: started/retire O(1) amortized; completed O(1)
// when the window has no gaps, O(log window) otherwise (a binary search over the ring).

import type { CompletedOffsets } from './offset_codec.js';

const INITIAL_CAPACITY = 64;

export class WatermarkTracker {
  private offsets = new Float64Array(INITIAL_CAPACITY);
  private done = new Uint8Array(INITIAL_CAPACITY);
  private head = 0;
  private count = 0;
  private completeInWindow = 0;
  private nextOffset: number;
  private resumed: CompletedOffsets | null;

  /**
   * @param startOffset where consumption (re)starts: the committed offset, or the reset position.
   * @param maxWindow bound on started offsets held (from the lowest incomplete to the last started).
   * @param resumed offsets the last commit's metadata marks complete (base = startOffset).
   */
  constructor(startOffset: number, readonly maxWindow = 1 << 16, resumed: CompletedOffsets | null = null) {
    if (!Number.isSafeInteger(startOffset) || startOffset < 0) throw new RangeError(`bad start offset ${startOffset}`);
    if (!Number.isSafeInteger(maxWindow) || maxWindow < 1) throw new RangeError(`bad maxWindow ${maxWindow}`);
    if (resumed !== null && resumed.base !== startOffset) throw new RangeError('resumed offsets belong to another commit');
    this.nextOffset = startOffset;
    this.resumed = resumed !== null && resumed.count > 0 ? resumed : null;
  }

  /**
   * The offset to commit: the lowest incomplete started offset; else the last started + 1,
   * moved past offsets the resumed metadata marks complete.
   */
  committable(): number {
    if (this.count > 0) return this.offsets[this.head] as number;
    return this.resumed === null ? this.nextOffset : this.resumed.nextIncomplete(this.nextOffset);
  }

  /** Whether the resumed metadata marks `offset` complete (`started` would skip it). */
  alreadyComplete(offset: number): boolean {
    return this.resumed !== null && this.resumed.has(offset);
  }

  /** End of the span the resumed metadata still covers (0 when none is carried). */
  get resumedEnd(): number {
    return this.resumed === null ? 0 : this.resumed.end;
  }

  /** Offsets held in the window (incomplete ones plus completed ones above the watermark). */
  get windowSize(): number {
    return this.count;
  }

  /** Started offsets not yet completed. */
  get inFlight(): number {
    return this.count - this.completeInWindow;
  }

  /**
   * Records the fetched message at `offset`, in fetch order. Returns true when it must be
   * processed (call `completed` when done), false when the resumed metadata marks it complete
   * (skip it). Throws on order or window violations.
   */
  started(offset: number): boolean {
    if (!Number.isSafeInteger(offset) || offset < this.nextOffset) {
      throw new RangeError(`offset ${offset} started out of order (expected ≥ ${this.nextOffset})`);
    }
    if (this.alreadyComplete(offset)) {
      this.nextOffset = offset + 1;
      this.dropPassedResume();
      return false;
    }
    if (this.count >= this.maxWindow) throw new RangeError(`watermark window full (${this.maxWindow} offsets)`);
    if (this.count === this.offsets.length) this.grow();
    const slot = (this.head + this.count) & (this.offsets.length - 1);
    this.offsets[slot] = offset;
    this.done[slot] = 0;
    this.count++;
    this.nextOffset = offset + 1;
    return true;
  }

  /**
   * Records that `offset` finished. Returns false when it was already accounted for (completed
   * before, or below the watermark); throws for an offset that was never started.
   */
  completed(offset: number): boolean {
    if (this.count === 0 || offset < (this.offsets[this.head] as number)) {
      if (offset < this.nextOffset) return false;
      throw new RangeError(`offset ${offset} completed but never started`);
    }
    const position = this.find(offset);
    if (position < 0) throw new RangeError(`offset ${offset} completed but never started`);
    const slot = (this.head + position) & (this.offsets.length - 1);
    if (this.done[slot] === 1) return false;
    this.done[slot] = 1;
    this.completeInWindow++;
    if (position === 0) this.retire();
    return true;
  }

  /** Started offsets not yet complete, ascending (allocates; for inspection and revoke). */
  incomplete(): number[] {
    return this.collect(0);
  }

  /** Completed offsets above the watermark, ascending (allocates). */
  completedAbove(): number[] {
    return this.collect(1);
  }

  /**
   * Run lengths from `committable()` to the highest completed offset: incomplete, complete,
   * incomplete, … ending with a complete run (empty when nothing above the watermark is
   * complete). Offsets inside the window that hold no message to process (gaps, and offsets the
   * resumed metadata marks complete) are free to take either status: resumed-complete ones are
   * complete, gaps continue the run before them, which adds no run. Offsets not fetched yet
   * take their status from the resumed metadata.
   */
  completionRuns(): number[] {
    const runs = new RunBuilder();
    const mask = this.offsets.length - 1;
    let at = this.committable();
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) & mask;
      const offset = this.offsets[slot] as number;
      this.fillFromResumed(runs, at, offset, true);
      runs.push(this.done[slot] as number, 1);
      at = offset + 1;
    }
    this.fillFromResumed(runs, at, this.nextOffset, true);
    this.fillFromResumed(runs, Math.max(at, this.nextOffset), this.resumedEnd, false);
    return runs.finish();
  }

  /**
   * Statuses of [from, to) from the resumed metadata; offsets it does not mark complete are
   * gaps (`gapsFree`: continue the current run) or unfetched messages (incomplete).
   */
  private fillFromResumed(runs: RunBuilder, from: number, to: number, gapsFree: boolean): void {
    const resumed = this.resumed;
    let at = from;
    if (resumed !== null) {
      let runStart = resumed.base;
      for (let i = 0; i < resumed.runs.length && at < to; i++) {
        const runEnd = runStart + (resumed.runs[i] as number);
        if (runEnd > at) {
          const length = Math.min(runEnd, to) - at;
          runs.push(i % 2 === 1 ? 1 : gapsFree ? runs.status : 0, length);
          at += length;
        }
        runStart = runEnd;
      }
    }
    if (at < to) runs.push(gapsFree ? runs.status : 0, to - at);
  }

  /** Forgets the resumed metadata once the watermark and the fetch position are both past it. */
  private dropPassedResume(): void {
    const resumed = this.resumed;
    if (resumed === null || this.nextOffset < resumed.end) return;
    if (this.count === 0 || (this.offsets[this.head] as number) >= resumed.end) this.resumed = null;
  }

  /** Position in the window of `offset` (≥ the head's offset), or -1. */
  private find(offset: number): number {
    const mask = this.offsets.length - 1;
    const guess = offset - (this.offsets[this.head] as number);
    if (guess < this.count && this.offsets[(this.head + guess) & mask] === offset) return guess;
    // Gaps put the entry below its distance from the head: binary search the ring.
    let low = 0;
    let high = Math.min(guess, this.count - 1);
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const value = this.offsets[(this.head + mid) & mask] as number;
      if (value === offset) return mid;
      if (value < offset) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }

  private retire(): void {
    const mask = this.offsets.length - 1;
    while (this.count > 0 && this.done[this.head] === 1) {
      this.head = (this.head + 1) & mask;
      this.count--;
      this.completeInWindow--;
    }
    this.dropPassedResume();
  }

  private collect(status: number): number[] {
    const out: number[] = [];
    const mask = this.offsets.length - 1;
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) & mask;
      if (this.done[slot] === status) out.push(this.offsets[slot] as number);
    }
    return out;
  }

  private grow(): void {
    const capacity = this.offsets.length * 2;
    const offsets = new Float64Array(capacity);
    const done = new Uint8Array(capacity);
    const mask = this.offsets.length - 1;
    for (let i = 0; i < this.count; i++) {
      offsets[i] = this.offsets[(this.head + i) & mask] as number;
      done[i] = this.done[(this.head + i) & mask] as number;
    }
    this.offsets = offsets;
    this.done = done;
    this.head = 0;
  }
}

/** Accumulates alternating runs, merging equal neighbours; the first run is incomplete. */
class RunBuilder {
  private readonly runs: number[] = [];
  /** Status of the last run (0 before any: the base is incomplete). */
  status = 0;

  push(status: number, length: number): void {
    if (length <= 0) return;
    if (this.runs.length > 0 && status === this.status) this.runs[this.runs.length - 1] += length;
    else if (this.runs.length === 0 && status === 1) throw new Error('completion runs must start incomplete');
    else this.runs.push(length);
    this.status = status;
  }

  /** The runs without a trailing incomplete run. */
  finish(): number[] {
    if (this.status === 0) this.runs.pop();
    return this.runs;
  }
}
