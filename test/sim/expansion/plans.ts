// Inputs and stand-in plans for the expansion simulation: a seeded cluster of any size (brokers on
// racks "az<a>/r<r>", partitions with skewed sizes and byte rates), a sticky plan that moves
// replicas only from brokers over their share onto the added ones, and a plan shaped like Kafka's
// `--generate` (rack-aware round robin over every broker, blind to where replicas are). The real
// planner replaces the sticky one where it is wired in; these keep the simulation's own tests and
// a bench run self-contained. Tests and bench only.
import type { BrokerSpec, LeadershipChange, PartitionMove, PartitionSpec, PlanInput } from '../../../src/cluster/expansion/model.js';
import type { ExpansionPlan } from './model.js';

export interface ClusterShape {
  readonly brokers: number;
  readonly added: number;
  readonly partitions: number;
  readonly replication: number;
  /** Racks, spread over three AZs; at least the replication factor. */
  readonly racks: number;
  readonly seed: number;
  readonly meanSizeBytes: number;
  readonly meanBytesInPerSec: number;
}

/** mulberry32: a small seeded generator, so an input is the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rackOf = (id: number, racks: number): string => `az${(id % racks) % 3}/r${id % racks}`;

/**
 * `brokers` old brokers holding every partition (replicas on consecutive ids, so on distinct racks)
 * and `added` empty ones. Sizes: uniform³ (most small, a few large) around the mean; byte rates:
 * uniform⁴ (a long hot tail) plus a floor.
 */
export function clusterInput(shape: ClusterShape): PlanInput {
  const rnd = random(shape.seed);
  const brokers: BrokerSpec[] = [];
  for (let id = 0; id < shape.brokers + shape.added; id++) brokers.push({ id, rack: rackOf(id, shape.racks), capacity: 1 });
  const partitions: PartitionSpec[] = [];
  for (let i = 0; i < shape.partitions; i++) {
    const first = i % shape.brokers;
    const replicas = Array.from({ length: shape.replication }, (_, j) => (first + j) % shape.brokers);
    partitions.push({
      topic: `t${i % 100}`,
      partition: Math.floor(i / 100),
      replicas,
      leader: replicas[0]!,
      sizeBytes: Math.round(shape.meanSizeBytes * 4 * rnd() ** 3),
      bytesInPerSec: Math.round(shape.meanBytesInPerSec * (0.5 + 2.5 * rnd() ** 4)),
    });
  }
  return { brokers, removing: [], partitions };
}

/**
 * Moves replicas off brokers holding more than ⌊R/N⌋ onto brokers holding fewer, one follower per
 * partition, keeping each partition on distinct racks.
 */
export function stickyPlan(input: PlanInput): ExpansionPlan {
  const n = input.brokers.length;
  const total = input.partitions.reduce((sum, p) => sum + p.replicas.length, 0);
  const floor = Math.floor(total / n);
  const count = new Map<number, number>(input.brokers.map((b) => [b.id, 0]));
  for (const p of input.partitions) for (const r of p.replicas) count.set(r, count.get(r)! + 1);
  const rack = new Map(input.brokers.map((b) => [b.id, b.rack]));
  const under = input.brokers.map((b) => b.id).filter((id) => count.get(id)! < floor);
  const moves: PartitionMove[] = [];
  let turn = 0;
  for (const p of input.partitions) {
    if (under.length === 0) break;
    const to = [...p.replicas];
    // One replica per partition at most: each move then copies one log, and leaders stay put.
    for (let pos = to.length - 1; pos > 0 && under.length > 0 && to.every((b, j) => b === p.replicas[j]); pos--) {
      if (count.get(to[pos]!)! <= floor) continue;
      const others = new Set(to.filter((_, j) => j !== pos).map((b) => rack.get(b)));
      for (let tries = 0; tries < under.length; tries++) {
        const idx = (turn + tries) % under.length;
        const target = under[idx]!;
        if (to.includes(target) || others.has(rack.get(target))) continue;
        count.set(to[pos]!, count.get(to[pos]!)! - 1);
        count.set(target, count.get(target)! + 1);
        to[pos] = target;
        if (count.get(target)! >= floor) under.splice(idx, 1);
        turn = idx + 1;
        break;
      }
    }
    if (to.some((b, j) => b !== p.replicas[j])) moves.push({ topic: p.topic, partition: p.partition, from: p.replicas, to, sizeBytes: p.sizeBytes, bytesInPerSec: p.bytesInPerSec });
  }
  return { moves, leadershipChanges: [] };
}

/** Kafka's `--generate` shape: partition i on brokers i, i+1, … of the whole list, whatever it had. */
export function generatePlan(input: PlanInput): ExpansionPlan {
  const ids = input.brokers.map((b) => b.id);
  const moves: PartitionMove[] = [];
  const leadershipChanges: LeadershipChange[] = [];
  input.partitions.forEach((p, i) => {
    const to = p.replicas.map((_, j) => ids[(i + j) % ids.length]!);
    if (to.every((b, j) => b === p.replicas[j])) return;
    if (to.every((b) => p.replicas.includes(b))) leadershipChanges.push({ topic: p.topic, partition: p.partition, from: p.replicas, to });
    else moves.push({ topic: p.topic, partition: p.partition, from: p.replicas, to, sizeBytes: p.sizeBytes, bytesInPerSec: p.bytesInPerSec });
  });
  return { moves, leadershipChanges };
}
