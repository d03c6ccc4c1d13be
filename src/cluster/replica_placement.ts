// Where new partitions' replicas go when the client does not say: on a single node, round robin
// over the live brokers, each partition's list starting one broker further along, so leaders
// (the first replica) spread evenly and no broker appears twice in one partition; in a cluster
// (the metadata controller), to the least-loaded brokers first and spread over racks, so brokers
// just added take new partitions and no history moves (no-move expansion). Also the checks a
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

/**
 * A broker as placement sees it: its id, rack (null: a rack of its own kind, shared by every
 * rackless broker) and what it holds already (absent: nothing), so new partitions go to the
 * least-loaded brokers first and a broker just added takes them before the others.
 */
export interface PlacementBroker {
  readonly id: number;
  readonly rack: string | null;
  /** Replicas it holds already. */
  readonly replicas?: number;
  /** Partitions it leads already. */
  readonly leaders?: number;
}

/**
 * Replica lists for `count` new partitions over `brokers`, as the metadata controller places
 * them, counting what each broker holds already and this call's replicas alike. A partition's
 * brokers are picked one by one: the first the broker holding the fewest replicas (of equals, the
 * one leading fewest), each next one on a rack the partition does not use yet while one is left,
 * and among those the one holding the fewest replicas; then the one of them leading fewest
 * partitions leads (comes first). Ties go by turn, starting at `rotation` (a topic's own start)
 * and one broker further along per partition: for the first pick the broker whose turn it is,
 * for the others the one whose turn is furthest away, so the brokers to come are not loaded
 * first. With nothing held already and no racks, leader and replica counts differ by at most
 * one; with brokers loaded unevenly (one just added) new partitions fill the least-loaded first
 * and nothing else moves.
 */
export function placeBalanced(brokers: readonly PlacementBroker[], count: number, replicationFactor: number, rotation: number): number[][] {
  const n = brokers.length;
  checkReplicationFactor(replicationFactor, n);
  const replicaCounts = brokers.map((b) => b.replicas ?? 0);
  const leaderCounts = brokers.map((b) => b.leaders ?? 0);
  const out: number[][] = [];
  const chosen: number[] = [];
  const usedRacks = new Set<string | null>();
  for (let p = 0; p < count; p++) {
    const turn = (rotation + p) % n;
    let first = turn;
    for (let k = 1; k < n; k++) {
      const i = (turn + k) % n;
      if (replicaCounts[i]! < replicaCounts[first]! || (replicaCounts[i] === replicaCounts[first] && leaderCounts[i]! < leaderCounts[first]!)) first = i;
    }
    chosen.length = 0;
    chosen.push(first);
    usedRacks.clear();
    usedRacks.add(brokers[first]!.rack);
    replicaCounts[first]!++;
    for (let r = 1; r < replicationFactor; r++) {
      let best = -1;
      let bestNewRack = false;
      // From the broker whose turn is furthest away back to the next one: the first of equals wins.
      for (let k = n - 1; k >= 0; k--) {
        const i = (first + 1 + k) % n;
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
    let lead = 0;
    for (let r = 1; r < chosen.length; r++) if (leaderCounts[chosen[r]!]! < leaderCounts[chosen[lead]!]!) lead = r;
    leaderCounts[chosen[lead]!]!++;
    const leader = chosen[lead]!;
    chosen.splice(lead, 1);
    chosen.unshift(leader);
    out.push(chosen.map((i) => brokers[i]!.id));
  }
  return out;
}
