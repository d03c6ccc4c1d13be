// Where new partitions' replicas go when the client does not say: round robin over the live
// brokers, each partition's list starting one broker further along, so leaders (the first
// replica) spread evenly and no broker appears twice in one partition. Also the checks a
// client's own assignment must pass. Pure.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** Replica lists for partitions `from` .. `from + count - 1`, over `brokers` (ascending ids). */
export function placeReplicas(brokers: readonly number[], from: number, count: number, replicationFactor: number): number[][] {
  const n = brokers.length;
  if (replicationFactor < 1) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor must be larger than 0, got ${replicationFactor}`);
  }
  if (replicationFactor > n) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor: ${replicationFactor} larger than available brokers: ${n}`);
  }
  return Array.from({ length: count }, (_, i) => Array.from({ length: replicationFactor }, (_, r) => brokers[(from + i + r) % n]!));
}

/** A client's replica lists: each names live brokers, none twice, all of one length. */
export function checkAssignment(assignment: readonly (readonly number[])[], live: readonly number[], replicationFactor: number): void {
  for (const [i, replicas] of assignment.entries()) {
    if (replicas.length !== replicationFactor) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `partition ${i} has ${replicas.length} replicas; every partition needs ${replicationFactor}`);
    }
    if (new Set(replicas).size !== replicas.length) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `partition ${i} names a broker twice: [${replicas.join(', ')}]`);
    }
    const unknown = replicas.find((r) => !live.includes(r));
    if (unknown !== undefined) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `partition ${i} names broker ${unknown}, which is not a live broker`);
    }
  }
}
