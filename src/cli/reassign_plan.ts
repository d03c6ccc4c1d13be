// What `sluice reassign plan` computes and `apply` executes (main thread of the CLI process): the
// planner's input read off the live cluster (registered brokers and racks, every partition's
// replicas and leader, each partition's size from DescribeLogDirs and its byte rate from two size
// samples), the plan itself with the executor options that shape its batches, and the check that
// the cluster still looks as the plan assumed before `apply` starts. A stored plan is plain JSON:
// what `plan` prints and stores is byte for byte what `apply` runs.
import { randomBytes } from 'node:crypto';
import type { BrokerStanding, ClusterMetadata } from '../client/admin.js';
import { planReassignment, type PlanReport } from '../cluster/expansion/planner.js';
import type { BrokerSpec, LeadershipChange, PartitionMove, PartitionSpec, PlanInput } from '../cluster/expansion/model.js';
import { UsageError } from './args.js';

/** The executor options fixed at plan time: they decide the batches the dry run shows. */
export interface BatchOptions {
  readonly batchBytes: number;
  readonly perBrokerMoves: number;
  readonly hotBytesPerSec: number;
  readonly includeHot: boolean;
  readonly lookahead: number;
}

export const DEFAULT_BATCH_OPTIONS: BatchOptions = {
  batchBytes: 1024 ** 3,
  perBrokerMoves: 4,
  hotBytesPerSec: 10 * 1024 ** 2,
  includeHot: false,
  lookahead: 64,
};

export interface StoredPlan {
  readonly version: 1;
  readonly id: string;
  readonly createdAt: number;
  readonly brokers: readonly BrokerSpec[];
  readonly removing: readonly number[];
  readonly topics: readonly string[];
  readonly batch: BatchOptions;
  readonly moves: readonly PartitionMove[];
  readonly leadershipChanges: readonly LeadershipChange[];
  readonly report: PlanReport;
}

/** Each partition's size in bytes, keyed `topic:partition` (the leader's log; the largest replica's where the leader's is unknown). */
export type PartitionSizes = ReadonlyMap<string, number>;

export const partitionKey = (topic: string, partition: number): string => `${topic}:${partition}`;

/** Topics a plan covers by default: every topic but the internal ones (`__consumer_offsets`, `__sluice_*`). */
export function defaultTopics(meta: ClusterMetadata): string[] {
  return meta.topics.filter((t) => !t.internal && !t.name.startsWith('__')).map((t) => t.name);
}

/** `topics` plus every topic (internal ones too) with a replica on a broker being removed: a drain must empty it. */
export function withDrainedTopics(meta: ClusterMetadata, topics: readonly string[], removing: readonly number[]): string[] {
  const out = new Set(topics);
  for (const t of meta.topics) if (t.partitionDetails.some((p) => p.replicas.some((r) => removing.includes(r)))) out.add(t.name);
  return [...out];
}

/**
 * The planner's input. Brokers: every registered one; a fenced broker is refused unless it is
 * being removed (its replicas cannot be copied while it is down, so the operator decides). Byte
 * rates: growth between the two size samples over `intervalMs` (0 when not sampled or when
 * retention shrank the log).
 */
export function planInputOf(
  meta: ClusterMetadata,
  brokers: readonly BrokerStanding[],
  topics: readonly string[],
  removing: readonly number[],
  sizes: PartitionSizes,
  later: PartitionSizes | null,
  intervalMs: number,
): PlanInput {
  const ids = new Set(brokers.map((b) => b.id));
  for (const id of removing) if (!ids.has(id)) throw new UsageError(`--remove ${id}: no such broker is registered`);
  const fenced = brokers.filter((b) => b.state === 'fenced' && !removing.includes(b.id));
  if (fenced.length > 0) {
    throw new UsageError(`broker${fenced.length > 1 ? 's' : ''} ${fenced.map((b) => b.id).join(', ')} fenced: bring ${fenced.length > 1 ? 'them' : 'it'} back, or plan ${fenced.length > 1 ? 'their' : 'its'} removal with --remove`);
  }
  const wanted = new Set(topics);
  const known = new Set(meta.topics.map((t) => t.name));
  for (const t of wanted) if (!known.has(t)) throw new UsageError(`--topics: no topic ${t}`);
  const partitions: PartitionSpec[] = [];
  for (const t of meta.topics) {
    if (!wanted.has(t.name)) continue;
    for (const p of t.partitionDetails) {
      const key = partitionKey(t.name, p.partition);
      const size = sizes.get(key) ?? 0;
      const grown = later === null || intervalMs <= 0 ? 0 : Math.max(0, (later.get(key) ?? size) - size);
      partitions.push({
        topic: t.name, partition: p.partition, replicas: p.replicas, leader: p.leader,
        sizeBytes: later?.get(key) ?? size, bytesInPerSec: intervalMs > 0 ? Math.round((grown * 1000) / intervalMs) : 0,
      });
    }
  }
  return {
    brokers: brokers.map((b) => ({ id: b.id, rack: b.rack, capacity: 1 })),
    removing: [...removing],
    partitions,
  };
}

export function makePlan(input: PlanInput, topics: readonly string[], batch: BatchOptions, now: number): StoredPlan {
  const plan = planReassignment(input);
  return {
    version: 1,
    id: `${new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`,
    createdAt: now,
    brokers: input.brokers,
    removing: input.removing,
    topics: [...topics],
    batch,
    moves: plan.moves,
    leadershipChanges: plan.leadershipChanges,
    report: plan.report,
  };
}

/**
 * The partitions whose replicas are no longer what the plan started from (the cluster changed
 * since, or a reassignment is under way): `apply` refuses to run a plan with any. `resuming`:
 * the plan ran before, so its own moves done or under way are expected too.
 */
export function staleParts(plan: StoredPlan, meta: ClusterMetadata, resuming = false): string[] {
  const now = new Map<string, readonly number[]>();
  for (const t of meta.topics) for (const p of t.partitionDetails) now.set(partitionKey(t.name, p.partition), p.replicas);
  const same = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((r, i) => r === b[i]);
  const stale: string[] = [];
  for (const c of [...plan.moves, ...plan.leadershipChanges]) {
    const key = partitionKey(c.topic, c.partition);
    const replicas = now.get(key);
    if (replicas === undefined) stale.push(key);
    // A resumed run finds each partition where it started, where the plan put it, or moving
    // between the two (KIP-455 lists the union of both sets while a move runs).
    else if (!(same(replicas, c.from) || (resuming && (same(replicas, c.to) || replicas.every((r) => c.from.includes(r) || c.to.includes(r)))))) stale.push(key);
  }
  return stale;
}

/** Parses a stored plan, checking the shape `apply` relies on (it may come from a file). */
export function parseStoredPlan(text: string, where: string): StoredPlan {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${where}: not JSON (${(err as Error).message})`);
  }
  const p = raw as Partial<StoredPlan> | null;
  const isList = (x: unknown): boolean => Array.isArray(x);
  if (p === null || typeof p !== 'object' || p.version !== 1 || typeof p.id !== 'string' || !isList(p.moves) || !isList(p.leadershipChanges) || !isList(p.brokers) || typeof p.batch !== 'object' || p.batch === null) {
    throw new UsageError(`${where}: not a sluice reassignment plan (version 1)`);
  }
  return p as StoredPlan;
}
