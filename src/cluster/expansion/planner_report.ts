// A reassignment plan from target replica lists (online expansion, DESIGN §7): the moves and
// leadership changes that turn the input into the target, and the report an operator reads
// (moves against their lower bound, bytes, per-broker counts before and after against their
// bands, rack violations). Shared by the planner and the naive baseline. Pure; any thread.
import type { LeadershipChange, PartitionMove, PlanInput } from './model.js';
import {
  countPerBroker, leaderLowerBound, rackExcess, replicaLowerBound, type IndexedCluster, type Targets,
} from './planner_cluster.js';

/** One broker's load before and after the plan, with the bands the planner aims for. */
export interface BrokerLoad {
  readonly id: number;
  readonly rack: string | null;
  readonly removing: boolean;
  readonly replicasBefore: number;
  readonly replicasAfter: number;
  /** [low, high]: a balanced result holds between these many replicas. */
  readonly replicaTarget: readonly [number, number];
  readonly leadersBefore: number;
  readonly leadersAfter: number;
  readonly leaderTarget: readonly [number, number];
}

export interface PlanReport {
  /** Replicas copied to a broker that did not hold them (each copies the partition's log once). */
  replicaMoves: number;
  /** The fewest replica moves any plan reaching the bands needs (see replicaLowerBound). */
  lowerBound: number;
  /** replicaMoves / lowerBound; 1 when both are 0. */
  ratio: number;
  /** Bytes copied: each added replica copies its partition's sizeBytes. */
  bytesToMove: number;
  /** Partitions whose replicas stay and whose preferred leader changes: LeadershipChange entries. */
  leadershipChanges: number;
  /** Partitions whose preferred leader changes, moved or not: leader elections the plan causes. */
  preferredLeaderChanges: number;
  /** The fewest preferred-leader changes reaching the leader bands. */
  leaderLowerBound: number;
  /** Added replicas whose broker shares a rack with the replica it replaces (a copy that need not cross racks). */
  sameRackMoves: number;
  /** Replicas beyond the first in a rack, over partitions that could have one rack per replica. */
  rackViolationsBefore: number;
  rackViolationsAfter: number;
  /** Every broker's replica and leader count inside its band after the plan. */
  balanced: boolean;
  /** Some band is not the plain capacity share: racks too small or too large for the RFs, or a share above one replica per partition. */
  sharesClamped: boolean;
  readonly brokers: readonly BrokerLoad[];
}

export interface ReassignmentPlan {
  readonly moves: readonly PartitionMove[];
  readonly leadershipChanges: readonly LeadershipChange[];
  readonly report: PlanReport;
}

/** Whether broker b is in replicas[from..to) (one partition's list). */
export function holds(replicas: Int32Array, from: number, to: number, b: number): boolean {
  for (let s = from; s < to; s++) if (replicas[s] === b) return true;
  return false;
}

function ids(c: IndexedCluster, replicas: Int32Array, p: number): number[] {
  const out: number[] = [];
  for (let s = c.offsets[p]!; s < c.offsets[p + 1]!; s++) out.push(c.brokerIds[replicas[s]!]!);
  return out;
}

function violations(c: IndexedCluster, replicas: Int32Array): number {
  const seen = new Uint8Array(c.rackNames.length);
  let n = 0;
  for (let p = 0; p + 1 < c.offsets.length; p++) n += rackExcess(c, replicas, p, seen);
  return n;
}

/** The plan from `input` (indexed as `c`) to the replica lists in `target` (same layout as c.replicas). */
export function buildPlan(input: PlanInput, c: IndexedCluster, t: Targets, target: Int32Array): ReassignmentPlan {
  const moves: PartitionMove[] = [];
  const leadershipChanges: LeadershipChange[] = [];
  let replicaMoves = 0;
  let bytesToMove = 0;
  let preferredLeaderChanges = 0;
  let sameRackMoves = 0;
  for (let p = 0; p < input.partitions.length; p++) {
    const part = input.partitions[p]!;
    const from = c.offsets[p]!;
    const to = c.offsets[p + 1]!;
    if (target[from] !== c.replicas[from]) preferredLeaderChanges++;
    let changed = false;
    let added = 0;
    for (let s = from; s < to; s++) {
      if (target[s] !== c.replicas[s]) changed = true;
      if (holds(c.replicas, from, to, target[s]!)) continue;
      added++;
      // A copy within the rack of a replica it replaces (one the partition drops).
      const r = c.rackOf[target[s]!];
      for (let o = from; o < to; o++) {
        if (c.rackOf[c.replicas[o]!] === r && !holds(target, from, to, c.replicas[o]!)) {
          sameRackMoves++;
          break;
        }
      }
    }
    if (!changed) continue;
    if (added === 0) {
      leadershipChanges.push({ topic: part.topic, partition: part.partition, from: part.replicas, to: ids(c, target, p) });
      continue;
    }
    replicaMoves += added;
    bytesToMove += added * part.sizeBytes;
    moves.push({
      topic: part.topic, partition: part.partition, from: part.replicas, to: ids(c, target, p),
      sizeBytes: part.sizeBytes, bytesInPerSec: part.bytesInPerSec,
    });
  }
  const replicasBefore = countPerBroker(c, c.replicas, false);
  const replicasAfter = countPerBroker(c, target, false);
  const leadersBefore = countPerBroker(c, c.replicas, true);
  const leadersAfter = countPerBroker(c, target, true);
  let balanced = true;
  const brokers: BrokerLoad[] = [];
  for (const [b, spec] of input.brokers.entries()) {
    if (replicasAfter[b]! < t.replicaLow[b]! || replicasAfter[b]! > t.replicaHigh[b]!) balanced = false;
    if (leadersAfter[b]! < t.leaderLow[b]! || leadersAfter[b]! > t.leaderHigh[b]!) balanced = false;
    brokers.push({
      id: spec.id, rack: spec.rack, removing: c.removing[b] === 1,
      replicasBefore: replicasBefore[b]!, replicasAfter: replicasAfter[b]!, replicaTarget: [t.replicaLow[b]!, t.replicaHigh[b]!],
      leadersBefore: leadersBefore[b]!, leadersAfter: leadersAfter[b]!, leaderTarget: [t.leaderLow[b]!, t.leaderHigh[b]!],
    });
  }
  const lowerBound = replicaLowerBound(c, t);
  return {
    moves,
    leadershipChanges,
    report: {
      replicaMoves,
      lowerBound,
      ratio: lowerBound === 0 ? (replicaMoves === 0 ? 1 : Infinity) : replicaMoves / lowerBound,
      bytesToMove,
      leadershipChanges: leadershipChanges.length,
      preferredLeaderChanges,
      leaderLowerBound: leaderLowerBound(c, t),
      sameRackMoves,
      rackViolationsBefore: violations(c, c.replicas),
      rackViolationsAfter: violations(c, target),
      balanced,
      sharesClamped: t.sharesClamped,
      brokers,
    },
  };
}
