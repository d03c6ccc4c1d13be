// ListOffsets by timestamp over a log's committed segments: the first record whose timestamp is
// >= a target (via each segment's time index), and the record holding the maximum timestamp.
// Runs on the shard worker with synchronous header reads. Answers name the exact record for
// uncompressed CreateTime batches and the batch's base offset otherwise (compressed batches are
// never inflated; under LogAppendTime every record carries the batch's maxTimestamp).
import { readSync } from 'node:fs';
import { BatchAttr } from '../protocol/record_batch.js';
import { firstRecordAtOrAfter } from './record_scan.js';
import { lastHeader, type Segment } from './segment.js';
import { KEY, VALUE } from './sparse_index.js';

export interface OffsetAndTimestamp {
  offset: number;
  timestamp: number;
}

/** The record at or after `target` in the batch whose header was just loaded from `seg` at `pos`. */
function refine(seg: Segment, pos: number, target: number): OffsetAndTimestamp {
  const baseOffset = lastHeader.baseOffset();
  const batchTs = { offset: baseOffset, timestamp: lastHeader.maxTimestamp() };
  if ((lastHeader.attributes() & (BatchAttr.compressionMask | BatchAttr.logAppendTime)) !== 0) return batchTs;
  const batch = Buffer.allocUnsafe(lastHeader.size());
  if (readSync(seg.fd, batch, 0, batch.length, pos) !== batch.length) return batchTs;
  const rec = firstRecordAtOrAfter(batch, target);
  return rec ? { offset: baseOffset + rec.offsetDelta, timestamp: rec.timestamp } : batchTs;
}

/** First committed batch of `seg` whose max timestamp is >= target (seg's max is known to be). */
function findInSegment(seg: Segment, target: number): OffsetAndTimestamp | null {
  const committedEntries = seg.timeIndex.floor(VALUE, seg.committedNextOffset - seg.baseOffset - 1) + 1;
  const ti = seg.timeIndex.floor(KEY, target, committedEntries);
  // Batches before a time-index entry's offset all have smaller timestamps than the entry's.
  const start = ti >= 0 ? seg.baseOffset + seg.timeIndex.value(ti) : seg.baseOffset;
  let pos = seg.locate(start);
  while (pos >= 0 && pos < seg.committedSize && seg.loadHeader(pos)) {
    if (lastHeader.maxTimestamp() >= target) return refine(seg, pos, target);
    pos += lastHeader.size();
  }
  return null;
}

export function findOffsetForTimestamp(segments: readonly Segment[], target: number): OffsetAndTimestamp | null {
  for (const seg of segments) {
    if (seg.committedMaxTimestamp >= target && seg.committedMaxTimestamp >= 0) return findInSegment(seg, target);
  }
  return null;
}

export function findMaxTimestamp(segments: readonly Segment[]): OffsetAndTimestamp | null {
  let best: Segment | null = null;
  for (const seg of segments) if (seg.committedMaxTimestamp > (best?.committedMaxTimestamp ?? -1)) best = seg;
  if (!best) return null;
  const pos = best.locate(best.committedOffsetOfMaxTimestamp);
  if (pos < 0 || !best.loadHeader(pos)) return null;
  return refine(best, pos, best.committedMaxTimestamp);
}
