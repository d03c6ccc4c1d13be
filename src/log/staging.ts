// Appends staged in memory between group commits: per segment, the batch buffers to write at the
// segment's next position, plus what the segment and the log learn once they are on disk.
// Owned by a PartitionLog on the shard worker; a log has one area collecting new appends and at
// most two in flight. Invariant: runs are in offset order and each run's chunks are contiguous
// in its segment from `position` to `end`; after an absorb, consecutive runs may share a segment
// (the later continuing the earlier).
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

  /** Moves `other`'s runs after this area's, `other` left empty (a commit cycle adding later data to the area it took). */
  absorb(other: StagingArea): void {
    if (other.isEmpty) return;
    for (const r of other.runs) this.runs.push(r);
    this.bytes += other.bytes;
    this.endOffset = other.endOffset;
    other.reset();
  }

  writes(): WriteOp[] {
    return this.runs.map((r) => ({ fd: r.seg.fd, chunks: r.chunks, position: r.position }));
  }

  /** End of this area's writes in `seg`, or -1 when it has none there. */
  endIn(seg: Segment): number {
    let end = -1;
    for (const r of this.runs) if (r.seg === seg) end = r.end;
    return end;
  }

  reset(): void {
    this.runs.length = 0;
    this.bytes = 0;
    this.endOffset = -1;
  }
}
