// Where new partitions' replicas go when the client does not say: on a single node, round robin
// over the live brokers, each partition's list starting one broker further along, so leaders
// (the first replica) spread evenly and no broker appears twice in one partition; in a cluster
// (the metadata controller), balanced per broker and spread over racks. Also the checks a
// client's own assignment must pass. Pure.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** Replica lists for partitions `from` .. `from + count - 1`, over `brokers` (ascending ids). */
export function placeReplicas(brokers: readonly number[], from: number, count: number, replicationFactor: number): number[][] {
  const n = brokers.length;
  checkReplicationFactor(replicationFactor, n);
  return Array.from({ length: count }, (_, i) => Array.from({ length: replicationFactor }, (_, r) => brokers[(from + i + r) % n]!));
}

/** INVALID_REPLICATION_FACTOR unless 1 <= replicationFactor <= the live brokers. */
export function checkReplicationFactor(replicationFactor: number, liveBrokers: number): void {
  if (!Number.isInteger(replicationFactor) || replicationFactor < 1) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor must be larger than 0, got ${replicationFactor}`);
  }
  if (replicationFactor > liveBrokers) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor: ${replicationFactor} larger than available brokers: ${liveBrokers}`);
  }
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

/** A broker as placement sees it: its id and rack (null: a rack of its own kind, shared by every rackless broker). */
export interface PlacementBroker {
  readonly id: number;
  readonly rack: string | null;
}

/**
 * Replica lists for `count` new partitions over `brokers`, as the metadata controller places
 * them. Leaders (first replicas) go round robin from `rotation` (a topic's own start), so
 * leadership counts differ by at most one. Each follower goes to a rack the partition does not
 * use yet while one is left, and among those to the broker holding the fewest of this call's
 * replicas; of equals, the one whose turn to lead is furthest away, so the leaders to come are
 * not loaded first. Without racks, replica counts then differ by at most one as well.
 */
export function placeBalanced(brokers: readonly PlacementBroker[], count: number, replicationFactor: number, rotation: number): number[][] {
  const n = brokers.length;
  checkReplicationFactor(replicationFactor, n);
  const replicaCounts = new Array<number>(n).fill(0);
  const out: number[][] = [];
  const chosen: number[] = [];
  const usedRacks = new Set<string | null>();
  for (let p = 0; p < count; p++) {
    const leader = (rotation + p) % n;
    chosen.length = 0;
    chosen.push(leader);
    usedRacks.clear();
    usedRacks.add(brokers[leader]!.rack);
    replicaCounts[leader]!++;
    for (let r = 1; r < replicationFactor; r++) {
      let best = -1;
      let bestNewRack = false;
      // From the broker whose turn to lead is furthest away back to the next leader: the first of equals wins.
      for (let k = n - 1; k >= 0; k--) {
        const i = (leader + 1 + k) % n;
        if (chosen.includes(i)) continue;
        const newRack = !usedRacks.has(brokers[i]!.rack);
        if (best === -1 || (newRack && !bestNewRack) || (newRack === bestNewRack && replicaCounts[i]! < replicaCounts[best]!)) {
          best = i;
          bestNewRack = newRack;
        }
      }
      chosen.push(best);
      usedRacks.add(brokers[best]!.rack);
      replicaCounts[best]!++;
    }
    out.push(chosen.map((i) => brokers[i]!.id));
  }
  return out;
}
