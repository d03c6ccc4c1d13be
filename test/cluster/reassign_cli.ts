// Test helper: the operator's side of an online expansion, through the compiled `sluice` command as
// a new user runs it (`sluice reassign plan|apply|status|pause|resume|cancel|rollback`, all with
// --brokers), with the JSON shapes the driver prints; and the cluster state a test compares before
// and after: every partition's replica list (in order) and leader, and the KIP-73 throttle configs
// (topic throttled-replica lists, broker throttle rates) read back with DescribeConfigs. Runs on the
// test's main thread. Invariants: every command is bounded (30 s for plan and status, the verb's
// own --timeout-ms plus 15 s for the controls, the caller's lifetime for `apply`, which runs as a
// LineChild and is SIGKILLed past it).

import assert from 'node:assert/strict';
import type { KafkaAdmin } from '../../src/client/admin.js';
import { BROKER_MAIN, sleep } from '../helpers/broker_process.js';
import { sluice } from '../helpers/cli_run.js';
import type { CliRun } from '../helpers/cli_run.js';
import type { PartitionMove } from '../../src/cluster/expansion/model.js';
import { ConfigResourceTypes } from '../helpers/kafkajs_client.js';
import { LineChild } from '../helpers/line_child.js';
import { partitionKey } from '../helpers/delivery_gaps.js';
import { kafkajsOf } from './expansion_load.js';

export type ReassignState = 'planned' | 'running' | 'paused' | 'done' | 'cancelled' | 'rolled-back';

/** One partition's move: its replica list now and the target list (preferred leader first). */
export type PlannedMove = PartitionMove;

/** `sluice reassign plan --format json`. */
export interface ReassignPlan {
  readonly moves: readonly PlannedMove[];
  readonly leadershipChanges: readonly { readonly topic: string; readonly partition: number }[];
  /** The planner's report (PlanReport): moves against the lower bound, bytes, and whether every broker ends in its band. */
  readonly report: { readonly replicaMoves: number; readonly lowerBound: number; readonly ratio: number; readonly bytesToMove: number; readonly balanced: boolean };
  readonly batches: readonly (readonly { readonly topic: string; readonly partition: number; readonly replicas: readonly number[] }[])[];
}

/** `sluice reassign status --format json` once a driver published (before, only state, planId and moves.total). */
export interface ReassignStatus {
  readonly state: ReassignState;
  readonly percent: number;
  readonly bytesLeft: number;
  readonly bytesPerSec: number;
  readonly etaSeconds: number | null;
  readonly batch: { readonly number: number; readonly moves: number; readonly bytes: number; readonly inFlight: number } | null;
  readonly moves: { readonly total: number; readonly done: number; readonly inFlight: number; readonly pending: number; readonly held: number };
  readonly pauseReason: string | null;
  readonly p99: {
    readonly produceMs: number | null; readonly produceBaselineMs: number | null;
    readonly fetchMs: number | null; readonly fetchBaselineMs: number | null;
    readonly consumerLag: number | null; readonly consumerLagBaseline: number | null;
  };
  readonly updatedAt: number;
}

export type ControlVerb = 'pause' | 'resume' | 'cancel' | 'rollback';

/** A failed command's exit code and output, for assertion messages. */
export function describeRun(args: readonly string[], r: CliRun): string {
  return `sluice ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`;
}

export class ReassignCli {
  constructor(private readonly brokers: string) {}

  async plan(extra: readonly string[] = []): Promise<ReassignPlan> {
    const args = ['reassign', 'plan', ...extra, '--brokers', this.brokers, '--format', 'json'];
    const r = await sluice(args);
    assert.equal(r.code, 0, describeRun(args, r));
    return JSON.parse(r.stdout) as ReassignPlan;
  }

  /** `apply` in the background; its JSON status lines arrive on the child's stdout. */
  apply(extra: readonly string[], lifetimeMs: number): LineChild {
    return new LineChild('sluice reassign apply', process.execPath, [BROKER_MAIN, 'reassign', 'apply', ...extra, '--brokers', this.brokers, '--format', 'json'], lifetimeMs);
  }

  async status(): Promise<ReassignStatus> {
    const args = ['reassign', 'status', '--brokers', this.brokers, '--format', 'json'];
    const r = await sluice(args);
    assert.equal(r.code, 0, describeRun(args, r));
    return JSON.parse(r.stdout) as ReassignStatus;
  }

  /** pause/resume/cancel/rollback; the driver returns once status shows the effect, else exits non-zero. */
  async control(verb: ControlVerb, timeoutMs = 20_000): Promise<CliRun & { args: string[] }> {
    const args = ['reassign', verb, '--brokers', this.brokers, '--timeout-ms', String(timeoutMs)];
    return { ...(await sluice(args, {}, timeoutMs + 15_000)), args };
  }

  /** Polls status every `everyMs` until `ok` holds (bounded); every status seen goes to `seen`. */
  async statusUntil(what: string, ok: (s: ReassignStatus) => boolean, timeoutMs: number, seen: ReassignStatus[] = [], everyMs = 500): Promise<ReassignStatus> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.status();
      seen.push(s);
      if (ok(s)) return s;
      if (Date.now() >= deadline) throw new Error(`reassign status: no ${what} within ${timeoutMs} ms; last ${JSON.stringify(s)}`);
      await sleep(everyMs);
    }
  }
}

export interface PartitionPlacement {
  readonly replicas: readonly number[];
  readonly leader: number;
  readonly isr: readonly number[];
}

/** Every partition of `topics`: replica list in order, leader and ISR, keyed by partitionKey. */
export async function assignment(admin: KafkaAdmin, topics: readonly string[]): Promise<Map<string, PartitionPlacement>> {
  const out = new Map<string, PartitionPlacement>();
  for (const t of topics) {
    for (const p of (await admin.describeTopic(t)).partitionDetails) out.set(partitionKey(t, p.partition), { replicas: [...p.replicas], leader: p.leader, isr: [...p.isr] });
  }
  return out;
}

/** Replica lists only (in order), sorted by partition key: what rollback must restore exactly. */
export function replicaLists(a: ReadonlyMap<string, PartitionPlacement>): [string, string][] {
  return [...a].map(([k, p]): [string, string] => [k, p.replicas.join(',')]).sort((x, y) => (x[0] < y[0] ? -1 : 1));
}

/** Replicas and leaders per broker over `a`. */
export function perBroker(a: ReadonlyMap<string, PartitionPlacement>, brokers: readonly number[]): Map<number, { replicas: number; leaders: number }> {
  const out = new Map(brokers.map((b) => [b, { replicas: 0, leaders: 0 }]));
  for (const p of a.values()) {
    for (const r of p.replicas) {
      const c = out.get(r);
      if (c !== undefined) c.replicas++;
    }
    const l = out.get(p.leader);
    if (l !== undefined) l.leaders++;
  }
  return out;
}

const TOPIC_THROTTLES = ['leader.replication.throttled.replicas', 'follower.replication.throttled.replicas'];
const BROKER_THROTTLES = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate'];

/** The KIP-73 throttle configs as DescribeConfigs (kafkajs) reads them: `resource name=value (source)` lines, sorted. */
export async function throttleConfigs(bootstrap: string, topics: readonly string[], brokers: readonly number[]): Promise<string[]> {
  const admin = kafkajsOf(bootstrap, 'expansion-configs').admin();
  await admin.connect();
  try {
    const r = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        ...topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: TOPIC_THROTTLES })),
        ...brokers.map((b) => ({ type: ConfigResourceTypes.BROKER, name: String(b), configNames: BROKER_THROTTLES })),
      ],
    });
    return r.resources.flatMap((res) => res.configEntries
      .filter((e) => TOPIC_THROTTLES.includes(e.configName) || BROKER_THROTTLES.includes(e.configName))
      .map((e) => `${res.resourceName} ${e.configName}=${e.configValue} (source ${e.configSource})`)).sort();
  } finally {
    await admin.disconnect();
  }
}
