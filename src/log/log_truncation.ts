// Cutting a partition's segments back to an offset, shared by PartitionLog.truncateTo and by
// recovery finishing a truncation that a crash interrupted. Synchronous, on the shard worker that
// owns the log. Truncation targets are batch boundaries, as in Kafka: an offset inside a batch
// cuts the whole batch, so the log ends at that batch's base offset.
// Invariants: segments stay non-empty as a list and ascending; only committed bytes exist (the
// caller refuses while anything is staged); the last segment afterwards is the unsealed active one.
import type { Segment } from './segment.js';
import { lastHeader } from './segment.js';
import { StorageError } from './io_backend.js';

/**
 * Deletes the segments that start at or past `target` (never the first), cuts the one containing it
 * at the boundary at or below `target`, and returns the new log end offset. `target` must be at or
 * above the first segment's base; at or past the log end nothing is cut.
 */
export function truncateSegments(segments: Segment[], target: number, indexIntervalBytes: number): number {
  while (segments.length > 1 && segments[segments.length - 1]!.baseOffset >= target) segments.pop()!.delete();
  const seg = segments[segments.length - 1]!;
  seg.reopenAsActive();
  if (seg.nextOffset <= target) return seg.nextOffset;
  const pos = seg.locate(target);
  if (pos < 0) throw new StorageError(`segment ${seg.path}: no batch holds offset ${target}`);
  const end = lastHeader.baseOffset();
  seg.truncateTo(pos, indexIntervalBytes);
  return end;
}
