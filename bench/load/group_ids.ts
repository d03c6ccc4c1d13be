// Group ids for the group-coordination benches (bench process, main thread, pure): ids whose
// offsets partitions (Kafka's hash, as the broker places groups) are spread as evenly as the count
// allows, so every coordinator shard gets its share of the load.
// Invariant: every offsets partition holds floor or ceil(count / offsetsPartitions) of the ids.
// Limit: Java's string hash is 31*h + c, so modulo a multiple of 31 a short id lands by its last
// character alone, and decimal suffixes reach only 10 offsets partitions: such counts throw.
import { offsetsPartitionFor } from '../../src/coordinator/groups/group_api.js';

/** Candidate names tried per id before giving up (the hash spreads sequential names well). */
const TRIES_PER_ID = 64;

/** `count` distinct ids `${prefix}-<n>`, floor or ceil(count / offsetsPartitions) per offsets partition. */
export function spreadGroupIds(prefix: string, count: number, offsetsPartitions: number): string[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer (got ${count})`);
  if (!Number.isInteger(offsetsPartitions) || offsetsPartitions < 1) {
    throw new RangeError(`offsetsPartitions must be a positive integer (got ${offsetsPartitions})`);
  }
  const base = Math.floor(count / offsetsPartitions);
  let extras = count % offsetsPartitions;
  const used = new Int32Array(offsetsPartitions);
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    if (i > count * TRIES_PER_ID) {
      throw new Error(`could not spread ${count} group ids over ${offsetsPartitions} offsets partitions (Kafka's group hash cannot, for multiples of 31)`);
    }
    const id = `${prefix}-${i}`;
    const p = offsetsPartitionFor(id, offsetsPartitions);
    const n = used[p] as number;
    if (n > base || (n === base && extras === 0)) continue;
    if (n === base) extras--;
    used[p] = n + 1;
    ids.push(id);
  }
  return ids;
}
