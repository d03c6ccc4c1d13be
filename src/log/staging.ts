// Appends staged in memory between group commits: per segment, the batch buffers to write at the
// segment's next position, plus what the segment and the log learn once they are on disk.
// Owned by a PartitionLog on the shard worker; a log has one area collecting new appends and at
// most one in flight. Invariant: runs are in offset order and each run's chunks are contiguous
// in its segment from `position` to `end`.
import type { WriteOp } from './io_backend.js';
import type { Segment } from './segment.js';

export interface StagedRun {
  readonly seg: Segment;
  readonly position: number;
  end: number;
  nextOffset: number;
  readonly chunks: Buffer[];
  maxTimestamp: number;
  offsetOfMaxTimestamp: number;
}

export class StagingArea {
  readonly runs: StagedRun[] = [];
  bytes = 0;
  /** Offset after the last staged batch; -1 when empty. */
  endOffset = -1;

  get isEmpty(): boolean {
    return this.runs.length === 0;
  }

  add(seg: Segment, position: number, batch: Buffer, baseOffset: number, nextOffset: number, maxTimestamp: number): void {
    let run = this.runs[this.runs.length - 1];
    if (!run || run.seg !== seg) {
      run = { seg, position, end: position, nextOffset, chunks: [], maxTimestamp: -1, offsetOfMaxTimestamp: -1 };
      this.runs.push(run);
    }
    run.chunks.push(batch);
    run.end += batch.length;
    run.nextOffset = nextOffset;
    if (maxTimestamp > run.maxTimestamp) {
      run.maxTimestamp = maxTimestamp;
      run.offsetOfMaxTimestamp = baseOffset;
    }
    this.bytes += batch.length;
    this.endOffset = nextOffset;
  }

  /**
   * Moves `other`'s runs after this area's, `other` left empty: a run that continues this area's
   * last in the same segment extends it (in a new run object, as this area's writes may still be
   * in flight holding the last one's chunk list).
   */
  absorb(other: StagingArea): void {
    if (other.isEmpty) return;
    for (const r of other.runs) {
      const i = this.runs.length - 1;
      const last = this.runs[i];
      if (last === undefined || last.seg !== r.seg || last.end !== r.position) {
        this.runs.push(r);
        continue;
      }
      const later = r.maxTimestamp > last.maxTimestamp;
      this.runs[i] = {
        seg: last.seg, position: last.position, end: r.end, nextOffset: r.nextOffset, chunks: last.chunks.concat(r.chunks),
        maxTimestamp: later ? r.maxTimestamp : last.maxTimestamp, offsetOfMaxTimestamp: later ? r.offsetOfMaxTimestamp : last.offsetOfMaxTimestamp,
      };
    }
    this.bytes += other.bytes;
    this.endOffset = other.endOffset;
    other.reset();
  }

  writes(): WriteOp[] {
    return this.runs.map((r) => ({ fd: r.seg.fd, chunks: r.chunks, position: r.position }));
  }

  /** End of this area's writes in `seg`, or -1 when it has none there. */
  endIn(seg: Segment): number {
    for (const r of this.runs) if (r.seg === seg) return r.end;
    return -1;
  }

  reset(): void {
    this.runs.length = 0;
    this.bytes = 0;
    this.endOffset = -1;
  }
}
