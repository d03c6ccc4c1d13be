// Majority arithmetic over a voter set. Pure; any thread. (A `voters` entry's bytes are KRaft's
// VotersRecord: encodeVoters/decodeVoters in entry_batches.ts.)
import type { NodeId } from './types.js';

/** How many of `voters` make a majority. */
export function majorityOf(voters: readonly NodeId[]): number {
  return Math.floor(voters.length / 2) + 1;
}

/**
 * The largest offset that a majority of voters holds, given each voter's durable end offset:
 * sorted descending, the value at index ⌊n/2⌋ (KRaft's LeaderState.maybeUpdateHighWatermark).
 */
export function majorityEnd(ends: readonly number[]): number {
  if (ends.length === 0) return 0;
  const sorted = [...ends].sort((a, b) => b - a);
  return sorted[Math.floor(sorted.length / 2)]!;
}
