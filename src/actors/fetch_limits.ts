// The response-wide limits of a fetch whose partitions live on several shards (main thread).
// Each shard fills its own partitions in request order up to max_bytes, so the merged answer
// may hold up to max_bytes per shard; this trims it to Kafka's contract. Kafka walks the
// partitions in request order with a running limit: a partition gets whole batches up to
// min(partition_max_bytes, bytes left), except that the first partition returning data gets
// its first batch whole even when that is larger (KIP-74), so consumers always progress.
// Main sees only whole per-partition answers, so it keeps a partition's answer whole when it
// fits that rule and otherwise cuts there: that partition and every later one answer empty.
// Every partition before the cut then holds exactly what Kafka would have returned (a shard's
// running limit is never below main's, since its earlier partitions are a subset of main's), and
// the cut partition is read again by the client's next fetch.

export interface FetchRanges {
  ranges: ReadonlyArray<{ readonly length: number }>;
}

function bytesOf(part: FetchRanges): number {
  let n = 0;
  for (const r of part.ranges) n += r.length;
  return n;
}

/**
 * Empties, in place, the answers past the response's limits: `parts[i]` answers the request's
 * i-th partition (request order), whose own limit is `partitionMaxBytes[i]`. Returns the bytes kept.
 */
export function trimToFetchLimits(parts: FetchRanges[], partitionMaxBytes: readonly number[], maxBytes: number): number {
  let kept = 0;
  let cut = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.ranges.length === 0) continue;
    const bytes = bytesOf(part);
    // Only a first non-empty partition may pass the limits, and only by its first batch,
    // which the shard's own first-batch rule already bounded.
    if (!cut && (kept === 0 || (bytes <= maxBytes - kept && bytes <= partitionMaxBytes[i]!))) {
      kept += bytes;
      continue;
    }
    cut = true;
    part.ranges = [];
  }
  return kept;
}
