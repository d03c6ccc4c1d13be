// The reassignment planner's indexed view of a PlanInput (online expansion, DESIGN §7): brokers
// and racks as dense indices, replica lists as one flat Int32Array, and the targets a balanced
// plan must reach (replica and preferred-leader counts per broker, from capacity shares clamped
// by what racks can hold), plus the lower bound on replica moves. Shared by the planner and the
// naive baseline so both are judged against the same targets. Pure; any thread.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { PlanInput } from './model.js';

/** Slack for float shares, so an exact share such as 33 is not read as 33.000000001 and given a ceiling of 34. */
const SHARE_EPSILON = 1e-9;

/** The input as dense arrays: broker index b, partition index p, replica slot s (offsets[p] <= s < offsets[p + 1]). */
export interface IndexedCluster {
  readonly brokerIds: Int32Array;
  /** Dense rack index per broker (racks sorted by name; brokers without a rack share one rack of their own). */
  readonly rackOf: Int32Array;
  readonly rackNames: readonly (string | null)[];
  /** 1 for a broker being removed: it ends with no replicas. */
  readonly removing: Uint8Array;
  readonly offsets: Int32Array;
  /** Broker index per replica slot, preferred leader first, as the input has them. */
  readonly replicas: Int32Array;
  /** Distinct racks among the brokers that stay: a partition whose RF is at most this needs one rack per replica. */
  readonly racksAvailable: number;
}

/** What a balanced result holds per broker: replicas and preferred leaders each within [low, high]. */
export interface Targets {
  readonly replicaLow: Int32Array;
  readonly replicaHigh: Int32Array;
  readonly leaderLow: Int32Array;
  readonly leaderHigh: Int32Array;
  /**
   * True when some broker's band is not its plain capacity share: a rack too small or too large
   * for the RFs, or a share above one replica of every partition.
   */
  readonly sharesClamped: boolean;
}

export function indexCluster(input: PlanInput): IndexedCluster {
  const nb = input.brokers.length;
  const brokerIds = new Int32Array(nb);
  const indexOf = new Map<number, number>();
  const rackSet = new Set<string | null>();
  for (const [b, spec] of input.brokers.entries()) {
    if (!Number.isInteger(spec.id) || indexOf.has(spec.id)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker id ${spec.id} is not an integer or is listed twice`);
    }
    if (!(spec.capacity > 0) || !Number.isFinite(spec.capacity)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker ${spec.id} has capacity ${spec.capacity}; capacities are positive`);
    }
    brokerIds[b] = spec.id;
    indexOf.set(spec.id, b);
    rackSet.add(spec.rack);
  }
  // null sorts first; names by code unit order, so the rack indices do not depend on the input's order.
  const rackNames = [...rackSet].sort((a, c) => (a === c ? 0 : a === null ? -1 : c === null ? 1 : a < c ? -1 : 1));
  const rackIndex = new Map(rackNames.map((r, i) => [r, i]));
  const rackOf = new Int32Array(nb);
  for (const [b, spec] of input.brokers.entries()) rackOf[b] = rackIndex.get(spec.rack)!;
  const removing = new Uint8Array(nb);
  for (const id of input.removing) {
    const b = indexOf.get(id);
    if (b === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker ${id} to remove is not among the brokers`);
    removing[b] = 1;
  }
  const staying = rackNames.map(() => false);
  let stayingBrokers = 0;
  for (let b = 0; b < nb; b++) {
    if (removing[b] === 0) {
      staying[rackOf[b]!] = true;
      stayingBrokers++;
    }
  }
  const np = input.partitions.length;
  const offsets = new Int32Array(np + 1);
  for (let p = 0; p < np; p++) offsets[p + 1] = offsets[p]! + input.partitions[p]!.replicas.length;
  const replicas = new Int32Array(offsets[np]!);
  for (let p = 0; p < np; p++) {
    const part = input.partitions[p]!;
    const first = offsets[p]!;
    const rf = offsets[p + 1]! - first;
    if (rf === 0 || rf > stayingBrokers) {
      throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
        `${part.topic}-${part.partition} has ${rf} replicas and ${stayingBrokers} brokers stay: it cannot keep its replication factor`);
    }
    for (let i = 0; i < rf; i++) {
      const id = part.replicas[i]!;
      const b = indexOf.get(id);
      if (b === undefined) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${part.topic}-${part.partition} names broker ${id}, which is not among the brokers`);
      for (let j = first; j < first + i; j++) {
        if (replicas[j] === b) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${part.topic}-${part.partition} names broker ${id} twice`);
      }
      replicas[first + i] = b;
    }
  }
  return { brokerIds, rackOf, rackNames, removing, offsets, replicas, racksAvailable: staying.filter((s) => s).length };
}

/** Replicas of partition p beyond the first in each rack, when its RF leaves it a rack per replica (0 otherwise). */
export function rackExcess(c: IndexedCluster, replicas: Int32Array, p: number, seen: Uint8Array): number {
  const from = c.offsets[p]!;
  const to = c.offsets[p + 1]!;
  if (to - from > c.racksAvailable) return 0;
  let excess = 0;
  for (let s = from; s < to; s++) {
    const r = c.rackOf[replicas[s]!]!;
    if (seen[r] === 1) excess++;
    seen[r] = 1;
  }
  for (let s = from; s < to; s++) seen[c.rackOf[replicas[s]!]!] = 0;
  return excess;
}

/**
 * Shares of `total` by weight, each clamped into [min, max]: share = clamp(λ × weight, min, max)
 * with the one λ at which they sum to `total` (all at min below it, all at max above). The sum is
 * piecewise linear in λ with breakpoints min/weight and max/weight, so λ is found exactly between
 * two of them, and the result does not depend on the order of the entries (fixing the first
 * entry found out of range, then sharing again, does). `clamped`: some share is not its plain
 * proportional one.
 */
function clampedShares(total: number, weight: Float64Array, min: Float64Array, max: Float64Array): { shares: Float64Array; clamped: boolean } {
  const n = weight.length;
  const sumAt = (lambda: number): number => {
    let sum = 0;
    for (let r = 0; r < n; r++) sum += Math.min(max[r]!, Math.max(min[r]!, lambda * weight[r]!));
    return sum;
  };
  const points: number[] = [0];
  let totalWeight = 0;
  for (let r = 0; r < n; r++) {
    if (weight[r]! <= 0) continue;
    totalWeight += weight[r]!;
    points.push(min[r]! / weight[r]!, max[r]! / weight[r]!);
  }
  points.sort((x, y) => x - y);
  let lambda = points[points.length - 1]!;
  for (let i = 1; i < points.length; i++) {
    const hi = points[i]!;
    if (sumAt(hi) < total) continue;
    const lo = points[i - 1]!;
    const atLo = sumAt(lo);
    // Between two breakpoints the entries strictly inside their ranges grow with slope weight.
    let slope = 0;
    for (let r = 0; r < n; r++) if (weight[r]! > 0 && min[r]! / weight[r]! <= lo && max[r]! / weight[r]! >= hi) slope += weight[r]!;
    lambda = slope > 0 ? lo + (total - atLo) / slope : lo;
    break;
  }
  const plain = totalWeight > 0 ? total / totalWeight : 0;
  const shares = new Float64Array(n);
  let clamped = false;
  for (let r = 0; r < n; r++) {
    shares[r] = Math.min(max[r]!, Math.max(min[r]!, lambda * weight[r]!));
    if (Math.abs(shares[r]! - plain * weight[r]!) > SHARE_EPSILON) clamped = true;
  }
  return { shares, clamped };
}

/**
 * Per-broker bands. Replicas: what a rack can hold and what it must hold are summed over
 * partitions (grouped by RF, which is all they depend on). A partition whose RF leaves it a rack
 * per replica puts at most one replica in a rack, any other at most one per broker of the rack;
 * a rack must hold what the other racks cannot (all three replicas of an RF 3 partition on three
 * racks put one in every rack). Each rack's capacity share is clamped into that range, then split
 * over its brokers the same way: a broker holds at most one replica of each partition, and must
 * hold what the rack's other brokers cannot of the rack's minimum. Floor to ceiling of the
 * clamped share. Leaders: the plain capacity share, floor to ceiling. Brokers being removed get
 * [0, 0].
 */
export function computeTargets(c: IndexedCluster, capacity: Float64Array): Targets {
  const nb = c.brokerIds.length;
  const np = c.offsets.length - 1;
  const nr = c.rackNames.length;
  const rackWeight = new Float64Array(nr);
  const rackBrokers = Array.from({ length: nr }, (): number[] => []);
  let totalWeight = 0;
  for (let b = 0; b < nb; b++) {
    if (c.removing[b] === 1) continue;
    rackWeight[c.rackOf[b]!]! += capacity[b]!;
    rackBrokers[c.rackOf[b]!]!.push(b);
    totalWeight += capacity[b]!;
  }
  const partitionsByRf = new Map<number, number>();
  for (let p = 0; p < np; p++) {
    const rf = c.offsets[p + 1]! - c.offsets[p]!;
    partitionsByRf.set(rf, (partitionsByRf.get(rf) ?? 0) + 1);
  }
  const rackMin = new Float64Array(nr);
  const rackMax = new Float64Array(nr);
  /** Per rack: the sum over partitions of what each of its brokers must hold of the rack's minimum. */
  const brokerMin = new Float64Array(nr);
  const mostInRack = new Int32Array(nr);
  for (const [rf, count] of partitionsByRf) {
    let mostOverall = 0;
    for (let r = 0; r < nr; r++) {
      mostInRack[r] = Math.min(rf <= c.racksAvailable ? 1 : rf, rackBrokers[r]!.length);
      mostOverall += mostInRack[r]!;
    }
    for (let r = 0; r < nr; r++) {
      const least = Math.max(0, rf - (mostOverall - mostInRack[r]!));
      rackMax[r]! += count * mostInRack[r]!;
      rackMin[r]! += count * least;
      brokerMin[r]! += count * Math.max(0, least - (rackBrokers[r]!.length - 1));
    }
  }
  const racks = clampedShares(c.replicas.length, rackWeight, rackMin, rackMax);
  let clamped = racks.clamped;
  const replicaLow = new Int32Array(nb);
  const replicaHigh = new Int32Array(nb);
  const leaderLow = new Int32Array(nb);
  const leaderHigh = new Int32Array(nb);
  for (let r = 0; r < nr; r++) {
    const members = rackBrokers[r]!;
    const weight = Float64Array.from(members, (b) => capacity[b]!);
    const brokers = clampedShares(racks.shares[r]!, weight, new Float64Array(members.length).fill(brokerMin[r]!), new Float64Array(members.length).fill(np));
    clamped ||= brokers.clamped;
    for (const [i, b] of members.entries()) {
      const share = brokers.shares[i]!;
      replicaLow[b] = Math.floor(share + SHARE_EPSILON);
      replicaHigh[b] = Math.ceil(share - SHARE_EPSILON);
      const leaders = (np * capacity[b]!) / totalWeight;
      leaderLow[b] = Math.floor(leaders + SHARE_EPSILON);
      leaderHigh[b] = Math.ceil(leaders - SHARE_EPSILON);
    }
  }
  return { replicaLow, replicaHigh, leaderLow, leaderHigh, sharesClamped: clamped };
}

/** Replicas (or leaders) per broker index in `replicas`; leadersOnly counts the first slot of each partition. */
export function countPerBroker(c: IndexedCluster, replicas: Int32Array, leadersOnly: boolean): Int32Array {
  const counts = new Int32Array(c.brokerIds.length);
  if (leadersOnly) {
    for (let p = 0; p + 1 < c.offsets.length; p++) counts[replicas[c.offsets[p]!]!]!++;
  } else {
    for (let s = 0; s < replicas.length; s++) counts[replicas[s]!]!++;
  }
  return counts;
}

/** max(what brokers hold above their band, what they lack below it): each move fixes at most one unit of each. */
function bandGap(counts: Int32Array, low: Int32Array, high: Int32Array): { above: Int32Array; total: number } {
  const above = new Int32Array(counts.length);
  let sumAbove = 0;
  let sumBelow = 0;
  for (let b = 0; b < counts.length; b++) {
    above[b] = Math.max(0, counts[b]! - high[b]!);
    sumAbove += above[b]!;
    sumBelow += Math.max(0, low[b]! - counts[b]!);
  }
  return { above, total: Math.max(sumAbove, sumBelow) };
}

/**
 * The fewest replica moves that can reach the targets from the input: the larger of the surplus
 * above the bands and the shortfall below them, where rack fixes the surplus cannot absorb add
 * to the surplus. A partition with two replicas in one rack must move one of them; it counts
 * against the surplus only up to what the brokers holding its doubled replicas have to shed.
 */
export function replicaLowerBound(c: IndexedCluster, t: Targets): number {
  const counts = countPerBroker(c, c.replicas, false);
  const { above, total } = bandGap(counts, t.replicaLow, t.replicaHigh);
  let sumAbove = 0;
  for (let b = 0; b < above.length; b++) sumAbove += above[b]!;
  const seen = new Uint8Array(c.rackNames.length);
  const doubled = new Int32Array(c.brokerIds.length);
  let fixes = 0;
  for (let p = 0; p + 1 < c.offsets.length; p++) {
    const excess = rackExcess(c, c.replicas, p, seen);
    if (excess === 0) continue;
    fixes += excess;
    // Every replica sharing a rack with another of its partition could be the one that leaves.
    for (let s = c.offsets[p]!; s < c.offsets[p + 1]!; s++) {
      const r = c.rackOf[c.replicas[s]!]!;
      for (let o = c.offsets[p]!; o < c.offsets[p + 1]!; o++) {
        if (o !== s && c.rackOf[c.replicas[o]!] === r) {
          doubled[c.replicas[s]!]!++;
          break;
        }
      }
    }
  }
  let absorbable = 0;
  for (let b = 0; b < above.length; b++) absorbable += Math.min(above[b]!, doubled[b]!);
  return Math.max(total, sumAbove + Math.max(0, fixes - absorbable));
}

/** The fewest preferred-leader changes that reach the leader bands. */
export function leaderLowerBound(c: IndexedCluster, t: Targets): number {
  return bandGap(countPerBroker(c, c.replicas, true), t.leaderLow, t.leaderHigh).total;
}
