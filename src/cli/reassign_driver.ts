// The reassignment driver (main thread of the `sluice reassign apply` process, or of `rollback`
// when no driver runs): the thin I/O around the pure ReassignmentExecutor. It takes the rollback
// snapshot (the plan's replica lists, the throttle configs in force) and the metrics baseline,
// then loops: observes the plan's partitions (Metadata for replicas and leaders,
// ListPartitionReassignments for adding and removing replicas), samples the cluster's metrics,
// hands the operator's commands (read from the reassignment store) to the executor, and carries
// out what it asks (KIP-455 AlterPartitionReassignments, preferred elections, KIP-73 throttle
// configs through IncrementalAlterConfigs), publishing the status as it goes. It ends when the
// executor reaches done, cancelled or rolled-back, or when its signal aborts (the moves in flight
// then go on on the controller; the status shows the driver gone).
// Invariants: effects run one at a time in the order the executor gave them; every wait is
// bounded by the loop's period; the log kept for the status is bounded (STATUS_LOG_LINES).
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KafkaAdmin } from '../client/admin.js';
import type { ConfigChange } from '../client/config_admin.js';
import {
  FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS, ReassignmentExecutor,
  type Assignment, type Baseline, type ConfigEntry, type ExecutorEffect, type ExecutorEvent, type ExecutorOptions,
  type ExecutorState, type MetricsSample, type PartitionObservation, type RollbackSnapshot,
} from '../cluster/expansion/executor.js';
import type { ThrottleOptions } from '../cluster/expansion/throttle.js';
import { partitionKey, type StoredPlan } from './reassign_plan.js';
import { STATUS_EVERY_MS, type DriverStatus, type ReassignCommand, type ReassignStore, type StoreRecord } from './reassign_store.js';

/** Where the driver's metrics come from (the brokers' /metrics, sampled over the interval between calls). */
export interface MetricsSource {
  sample(): Promise<MetricsSample>;
}

/** How the driver runs the executor (what the plan does not fix). */
export interface RunOptions {
  readonly observationMs: number;
  readonly healthyHoldMs: number;
  readonly breach: ExecutorOptions['breach'];
  readonly throttle: ThrottleOptions;
  /** How often the plan's partitions are observed. */
  readonly pollMs: number;
  /** How often metrics are sampled: each sample's p99 is over the window since the one before. */
  readonly metricsMs: number;
  /**
   * The baseline's window. Longer than a sample's: a p99 over one short quiet window is a
   * baseline the noise of later windows breaches by itself, and a pause on it never ends.
   */
  readonly baselineMs: number;
}

export interface DriverDeps {
  /** Runs one admin call on a live connection (reconnecting to another broker when the last one failed). */
  readonly call: <T>(what: (admin: KafkaAdmin) => Promise<T>) => Promise<T>;
  readonly store: ReassignStore;
  /** null: no broker publishes metrics; the executor then never pauses itself. */
  readonly metrics: MetricsSource | null;
  /** An admin connection to one broker (its own configs are described only by it). */
  readonly brokerAdmin: (id: number) => Promise<KafkaAdmin>;
  readonly log: (level: 'info' | 'warn', line: string) => void;
  readonly onStatus: (status: DriverStatus) => void;
}

const STATUS_LOG_LINES = 20;
/** The loop's period: commands and effects wait at most this long. */
const STEP_MS = 250;
const BROKER_RATE_KEYS = [LEADER_RATE, FOLLOWER_RATE];
const TOPIC_REPLICA_KEYS = [LEADER_REPLICAS, FOLLOWER_REPLICAS];
/** How often the copies' progress is read off the brokers being added to (one connection to each). */
const COPIED_EVERY_MS = 3_000;
/** Tries of one effect (one per step of the loop) before it is given up. */
const EFFECT_ATTEMPTS = 40;

/** The plan's partitions grouped by topic, as the admin calls take them. */
function byTopic(parts: readonly { readonly topic: string; readonly partition: number }[]): { topic: string; partitions: number[] }[] {
  const m = new Map<string, number[]>();
  for (const p of parts) {
    const list = m.get(p.topic) ?? [];
    m.set(p.topic, list);
    list.push(p.partition);
  }
  return [...m].map(([topic, partitions]) => ({ topic, partitions }));
}

/** The throttle configs in force before anything moves: dynamic values only (null: unset), for rollback to restore. */
async function configSnapshot(plan: StoredPlan, deps: DriverDeps): Promise<ConfigEntry[]> {
  const entries: ConfigEntry[] = [];
  for (const b of plan.brokers) {
    const admin = await deps.brokerAdmin(b.id);
    const [described] = await admin.describeConfigs([{ type: 'broker', name: String(b.id) }], BROKER_RATE_KEYS);
    if (described === undefined || described.errorCode !== 0) throw new Error(`describing broker ${b.id}'s throttle configs: ${described?.error ?? 'no answer'}`);
    for (const key of BROKER_RATE_KEYS) {
      const c = described.configs.find((x) => x.name === key);
      entries.push({ resource: 'broker', name: String(b.id), key, value: c?.source === 'DYNAMIC_BROKER_CONFIG' ? c.value : null });
    }
  }
  const topics = [...new Set([...plan.moves, ...plan.leadershipChanges].map((m) => m.topic))].sort();
  if (topics.length > 0) {
    const described = await deps.call((a) => a.describeConfigs(topics.map((name) => ({ type: 'topic' as const, name })), TOPIC_REPLICA_KEYS));
    for (const d of described) {
      if (d.errorCode !== 0) throw new Error(`describing topic ${d.name}'s throttle configs: ${d.error}`);
      for (const key of TOPIC_REPLICA_KEYS) {
        const c = d.configs.find((x) => x.name === key);
        entries.push({ resource: 'topic', name: d.name, key, value: c?.source === 'DYNAMIC_TOPIC_CONFIG' ? c.value : null });
      }
    }
  }
  return entries;
}

/**
 * The plan partitions as metadata shows them now, with the bytes each adding replica holds so far
 * (DescribeLogDirs of the brokers being added to) when `withCopied` is set.
 */
async function observe(deps: DriverDeps, keys: ReadonlySet<string>, withCopied: boolean): Promise<PartitionObservation[]> {
  const [meta, ongoing] = await deps.call((a) => Promise.all([a.clusterMetadata(), a.listPartitionReassignments(null)]));
  const moving = new Map(ongoing.filter((o) => keys.has(partitionKey(o.topic, o.partition))).map((o) => [partitionKey(o.topic, o.partition), o]));
  const copied = new Map<string, number>();
  const adding = [...new Set([...moving.values()].flatMap((o) => o.addingReplicas))];
  if (withCopied && adding.length > 0) {
    for (const b of await deps.call((a) => a.describeLogDirs(adding))) {
      for (const d of b.logDirs) {
        for (const p of d.partitions) {
          const key = partitionKey(p.topic, p.partition);
          if (moving.get(key)?.addingReplicas.includes(b.broker) === true) copied.set(key, (copied.get(key) ?? 0) + p.sizeBytes);
        }
      }
    }
  }
  const out: PartitionObservation[] = [];
  for (const t of meta.topics) {
    for (const p of t.partitionDetails) {
      const key = partitionKey(t.name, p.partition);
      if (!keys.has(key)) continue;
      const o = moving.get(key);
      const c = copied.get(key);
      out.push({
        topic: t.name, partition: p.partition, replicas: o?.replicas ?? p.replicas, addingReplicas: o?.addingReplicas ?? [], removingReplicas: o?.removingReplicas ?? [], leader: p.leader,
        ...(c === undefined ? {} : { copiedBytes: c }),
      });
    }
  }
  return out;
}

export interface DriveMode {
  /** apply: run the plan; rollback: restore the snapshot a previous apply took (no driver runs it any more). */
  readonly kind: 'apply' | 'rollback';
  /**
   * What the apply stored before anything moved: for rollback, what to restore; for apply, a run
   * resumed after its driver died (moves the cluster already made count as done, the rest run).
   */
  readonly started?: { readonly snapshot: RollbackSnapshot; readonly baseline: Baseline };
}

/** Runs the plan (or its rollback) to a terminal state, or until `signal` aborts; returns the last state. */
export async function drive(plan: StoredPlan, executorOptions: ExecutorOptions, run: RunOptions, mode: DriveMode, deps: DriverDeps, signal: AbortSignal): Promise<ExecutorState> {
  const racks = new Map(plan.brokers.map((b) => [b.id, b.rack]));
  const rollbackOnly = mode.kind === 'rollback';
  const executor = rollbackOnly
    ? new ReassignmentExecutor([], [], executorOptions, racks)
    : new ReassignmentExecutor(plan.moves, plan.leadershipChanges, executorOptions, racks);
  const keys = new Set([...plan.moves, ...plan.leadershipChanges].map((m) => partitionKey(m.topic, m.partition)));
  const log: string[] = [];
  const say = (level: 'info' | 'warn', line: string): void => {
    log.push(`${new Date().toISOString()} ${line}`);
    if (log.length > STATUS_LOG_LINES) log.shift();
    deps.log(level, line);
  };

  const commands: ReassignCommand[] = [];
  const followAbort = new AbortController();
  const stopFollowing = (): void => followAbort.abort();
  signal.addEventListener('abort', stopFollowing, { once: true });
  const following = deps.store.end().then((from) => deps.store.follow(from, (r: StoreRecord) => {
    if (r.kind === 'command' && r.planId === plan.id) commands.push(r.command);
  }, followAbort.signal));
  following.catch((err: unknown) => say('warn', `reading commands stopped: ${(err as Error).message}`));

  let lastStatusAt = 0;
  let lastStatus = '';
  const publish = async (force: boolean): Promise<void> => {
    const now = Date.now();
    const status: DriverStatus = { ...executor.status(now), planId: plan.id, updatedAt: now, driver: { pid: process.pid, host: hostname() }, log: [...log] };
    const shape = JSON.stringify({ ...status, updatedAt: 0, etaSeconds: 0, bytesPerSec: 0 });
    deps.onStatus(status);
    if (!force && shape === lastStatus && now - lastStatusAt < STATUS_EVERY_MS) return;
    lastStatus = shape;
    lastStatusAt = now;
    await deps.store.append({ kind: 'status', status });
  };

  // An effect whose request failed (the broker went away, the controller moved) is tried again at
  // the next steps: each is idempotent (the same target, cancel or config value twice is one).
  // A submission that keeps failing is given up as refused, so the plan never waits on it.
  const retries: { effect: ExecutorEffect; attempts: number }[] = [];
  const carryOut = async (effects: readonly ExecutorEffect[], attempts = 0): Promise<void> => {
    for (const e of effects) {
      try {
        await carryOutOne(e);
      } catch (err) {
        const reason = (err as Error).message;
        if (attempts + 1 < EFFECT_ATTEMPTS) {
          if (attempts === 0) say('warn', `${e.kind} failed, trying again: ${reason}`);
          retries.push({ effect: e, attempts: attempts + 1 });
        } else if (e.kind === 'submit') {
          await carryOut(executor.handle({ kind: 'refused', now: Date.now(), partitions: e.targets, reason }));
        } else {
          say('warn', `${e.kind} given up after ${EFFECT_ATTEMPTS} attempts: ${reason}`);
        }
      }
    }
  };
  const carryOutOne = async (e: ExecutorEffect): Promise<void> => {
    switch (e.kind) {
      case 'log':
        say(e.level, e.message);
        break;
      case 'state':
        say('info', `state ${e.from} -> ${e.to}: ${e.reason}`);
        break;
      case 'elect-leaders': {
        // Reordering a replica list moves no data (KIP-455 completes it at once); the preferred
        // election then hands leadership to the new first replica.
        const reordered = await deps.call((a) => a.alterPartitionReassignments(e.changes.map((c) => ({ topic: c.topic, partition: c.partition, replicas: c.to }))));
        for (const r of reordered.filter((x) => x.errorCode !== 0)) say('warn', `reordering ${r.topic}:${r.partition} refused: ${r.error} ${r.message ?? ''}`);
        const elected = await deps.call((a) => a.electLeaders(0, byTopic(e.changes)));
        const failed = elected.filter((x) => x.error !== 'NONE' && x.error !== 'ELECTION_NOT_NEEDED');
        say(failed.length === 0 ? 'info' : 'warn', `${e.changes.length} preferred leaders changed${failed.length > 0 ? `, ${failed.length} elections failed (${failed[0]!.error})` : ''}`);
        break;
      }
      case 'submit': {
        const outcomes = await deps.call((a) => a.alterPartitionReassignments(e.targets.map((t: Assignment) => ({ topic: t.topic, partition: t.partition, replicas: t.replicas }))));
        const bad = outcomes.filter((o) => o.errorCode !== 0);
        if (bad.length > 0) {
          await carryOut(executor.handle({ kind: 'refused', now: Date.now(), partitions: bad, reason: `${bad[0]!.error}${bad[0]!.message === null ? '' : `: ${bad[0]!.message}`}` }));
        }
        break;
      }
      case 'cancel': {
        const outcomes = await deps.call((a) => a.alterPartitionReassignments(e.partitions.map((p) => ({ ...p, replicas: null }))));
        // A move that completed before its cancel arrived has nothing to cancel: it stays done.
        for (const o of outcomes.filter((x) => x.errorCode !== 0 && x.error !== 'NO_REASSIGNMENT_IN_PROGRESS')) say('warn', `cancelling ${o.topic}:${o.partition} refused: ${o.error}`);
        break;
      }
      case 'set-configs': {
        const changes: ConfigChange[] = e.entries.map((c) => ({ type: c.resource, name: c.name, key: c.key, value: c.value }));
        const outcomes = await deps.call((a) => a.incrementalAlterConfigs(changes));
        for (const o of outcomes.filter((x) => x.errorCode !== 0)) say('warn', `${e.reason} configs of ${o.type} ${o.name} refused: ${o.error} ${o.message ?? ''}`);
        break;
      }
    }
  };

  const handle = async (event: ExecutorEvent): Promise<void> => carryOut(executor.handle(event));

  try {
    let snapshot: RollbackSnapshot;
    let baseline: Baseline;
    if (mode.started !== undefined) {
      ({ snapshot, baseline } = mode.started);
    } else {
      const meta = await deps.call((a) => a.clusterMetadata());
      const assignment: Assignment[] = [];
      for (const t of meta.topics) for (const p of t.partitionDetails) if (keys.has(partitionKey(t.name, p.partition))) assignment.push({ topic: t.name, partition: p.partition, replicas: p.replicas });
      snapshot = { assignment, configs: await configSnapshot(plan, deps) };
      baseline = { produceP99Ms: 0, fetchP99Ms: 0, consumerLag: 0 };
      if (deps.metrics !== null) {
        await deps.metrics.sample();
        say('info', `taking the metrics baseline over ${run.baselineMs} ms`);
        await sleep(run.baselineMs, undefined, { signal });
        const s = await deps.metrics.sample();
        baseline = { produceP99Ms: s.produceP99Ms, fetchP99Ms: s.fetchP99Ms, consumerLag: s.consumerLag };
      } else {
        say('warn', 'no broker publishes an admin address: metrics are not watched and the reassignment will not pause itself');
      }
      await deps.store.append({ kind: 'started', planId: plan.id, at: Date.now(), snapshot, baseline });
    }
    // A resumed run learns first which moves the cluster already made, so it does not submit them again.
    if (mode.started !== undefined && !rollbackOnly) await handle({ kind: 'partitions', now: Date.now(), observed: await observe(deps, keys, false) });
    await handle({ kind: 'start', now: Date.now(), baseline, snapshot });
    if (rollbackOnly) {
      await handle({ kind: 'partitions', now: Date.now(), observed: await observe(deps, keys, false) });
      await handle({ kind: 'rollback', now: Date.now() });
    }
    await publish(true);
    let failing: string | null = null;
    let observedAt = Date.now();
    let copiedAt = 0;
    let sampledAt = Date.now();
    while (!executor.finished && !signal.aborted) {
      await sleep(STEP_MS, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      const now = Date.now();
      for (const { effect, attempts } of retries.splice(0)) await carryOut([effect], attempts);
      for (const command of commands.splice(0)) {
        say('info', `operator: ${command}`);
        await handle({ kind: command, now });
      }
      try {
        if (now - observedAt >= run.pollMs) {
          observedAt = now;
          const withCopied = now - copiedAt >= COPIED_EVERY_MS;
          if (withCopied) copiedAt = now;
          await handle({ kind: 'partitions', now, observed: await observe(deps, keys, withCopied) });
        }
        if (deps.metrics !== null && now - sampledAt >= run.metricsMs) {
          sampledAt = now;
          await handle({ kind: 'metrics', now, sample: await deps.metrics.sample() });
        }
        await handle({ kind: 'tick', now: Date.now() });
        await publish(false);
        failing = null;
      } catch (err) {
        // Observing, sampling and publishing are tried again next step; a failure is logged once until it clears.
        const reason = (err as Error).message;
        if (failing !== reason) say('warn', `cluster unreachable, retrying: ${reason}`);
        failing = reason;
      }
    }
    await publish(true);
    return executor.state;
  } finally {
    signal.removeEventListener('abort', stopFollowing);
    followAbort.abort();
    await following.catch(() => undefined);
  }
}
