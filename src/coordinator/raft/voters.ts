// The byte form of a `voters` entry (the voter set it puts in force) and majority arithmetic over
// a voter set. Pure; any thread. A voters entry is a big-endian int32 count followed by that many
// int32 node ids, sorted, so two entries naming the same set are byte-identical.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { NodeId } from './types.js';

export function encodeVoters(voters: readonly NodeId[]): Uint8Array {
  const sorted = [...new Set(voters)].sort((a, b) => a - b);
  const bytes = new Uint8Array(4 + 4 * sorted.length);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, sorted.length);
  sorted.forEach((id, i) => view.setInt32(4 + 4 * i, id));
  return bytes;
}

export function decodeVoters(bytes: Uint8Array): NodeId[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = bytes.byteLength >= 4 ? view.getInt32(0) : -1;
  if (count < 0 || bytes.byteLength !== 4 + 4 * count) {
    throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `voters entry of ${bytes.byteLength} bytes does not hold ${count} ids`);
  }
  return Array.from({ length: count }, (_, i) => view.getInt32(4 + 4 * i));
}

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
