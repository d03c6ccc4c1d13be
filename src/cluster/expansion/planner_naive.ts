// The baseline a planner must beat (online expansion, DESIGN §7): what Kafka's
// `kafka-reassign-partitions --generate` proposes. Each topic is laid out afresh over the brokers
// that stay, blind to where its replicas are now: leaders round robin over a rack-alternated
// broker list, followers at a shifted stride skipping racks already used (Kafka's rack-aware
// assignment). Kafka draws the start and the shift at random; here they come from a hash of the
// topic name, so the baseline is reproducible. Pure; any thread.
import type { PlanInput } from './model.js';
import { computeTargets, indexCluster, type IndexedCluster } from './planner_cluster.js';
import { buildPlan, type ReassignmentPlan } from './planner_report.js';

/** FNV-1a of a topic name: the seed standing in for Kafka's random start and shift. */
function topicSeed(topic: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < topic.length; i++) h = Math.imul(h ^ topic.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Staying brokers in Kafka's rack-alternated order (first broker of each rack, then the second of
 * each, ...; racks by name, brokers by id), or by id alone when some broker has no rack.
 */
function arrangedBrokers(c: IndexedCluster): { order: number[]; racks: number } {
  const staying: number[] = [];
  for (let b = 0; b < c.brokerIds.length; b++) if (c.removing[b] === 0) staying.push(b);
  staying.sort((a, b) => c.brokerIds[a]! - c.brokerIds[b]!);
  if (staying.some((b) => c.rackNames[c.rackOf[b]!] === null)) return { order: staying, racks: 1 };
  const byRack = new Map<number, number[]>();
  for (const b of staying) {
    const list = byRack.get(c.rackOf[b]!) ?? [];
    list.push(b);
    byRack.set(c.rackOf[b]!, list);
  }
  const lists = [...byRack.entries()].sort((a, b) => a[0] - b[0]).map(([, l]) => l);
  const order: number[] = [];
  for (let i = 0; order.length < staying.length; i++) for (const l of lists) if (i < l.length) order.push(l[i]!);
  return { order, racks: lists.length };
}

export function naiveReassignment(input: PlanInput): ReassignmentPlan {
  const c = indexCluster(input);
  const capacity = Float64Array.from(input.brokers, (b) => b.capacity);
  const targets = computeTargets(c, capacity);
  const { order, racks } = arrangedBrokers(c);
  const n = order.length;
  const target = new Int32Array(c.replicas.length);
  const usedRack = new Uint8Array(c.rackNames.length);
  const usedBroker = new Uint8Array(c.brokerIds.length);
  const seeds = new Map<string, number>();
  for (const [p, part] of input.partitions.entries()) {
    let seed = seeds.get(part.topic);
    if (seed === undefined) {
      seed = topicSeed(part.topic);
      seeds.set(part.topic, seed);
    }
    const start = seed % n;
    const shift = (Math.floor(seed / n) % n) + Math.floor(part.partition / n);
    const first = (part.partition + start) % n;
    const from = c.offsets[p]!;
    const rf = c.offsets[p + 1]! - from;
    let racksUsed = 0;
    const place = (slot: number, b: number): void => {
      target[from + slot] = b;
      if (usedRack[c.rackOf[b]!] === 0) racksUsed++;
      usedRack[c.rackOf[b]!] = 1;
      usedBroker[b] = 1;
    };
    place(0, order[first]!);
    for (let slot = 1, k = 0; slot < rf; k++) {
      const b = order[(first + 1 + ((shift * racks + k) % (n - 1))) % n]!;
      const rackFree = racks === 1 || usedRack[c.rackOf[b]!] === 0 || racksUsed === racks;
      if (rackFree && usedBroker[b] === 0) place(slot++, b);
    }
    for (let s = from; s < from + rf; s++) {
      usedRack[c.rackOf[target[s]!]!] = 0;
      usedBroker[target[s]!] = 0;
    }
  }
  return buildPlan(input, c, targets, target);
}
