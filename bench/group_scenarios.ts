// The group-coordination scenarios (bench process, main thread), DESIGN.md §11: offset commits
// per second through the Kafka protocol, and the consumption pause a member joining causes,
// incremental (KIP-848, @platformatic/kafka) against eager (classic protocol, kafkajs). Each run
// gets its own broker child process (broker_run.ts); the loads live in bench/load.
import { performance } from 'node:perf_hooks';
import { KafkaConnection } from '../src/client/connection.js';
import { fetchGroupOffsets } from '../src/client/group_admin.js';
import { OffsetCommitApi } from '../src/protocol/apis/offset_commit.js';
import { withBroker } from './broker_run.js';
import type { RunCtx } from './broker_run.js';
import type { BrokerProcess } from '../src/bench/broker_process.js';
import { primeGroups, runCommitLoad } from './load/commit_load.js';
import type { CommitLoadOptions } from './load/commit_load.js';
import { spreadGroupIds } from './load/group_ids.js';
import type { GroupClient } from './load/group_members.js';
import { connectClient, createTopic, produceVersion } from '../src/bench/load/kafka_setup.js';
import { runRebalance } from './load/rebalance_run.js';
import type { RebalanceRunResult } from './load/rebalance_run.js';
import { monotonicUs } from './profile.js';
import type { Metrics, RunSettings, Scenario } from './scenarios.js';

export interface CommitParams {
  readonly kind: 'commit';
  readonly connections: number;
  readonly inflight: number;
  /** Partition-offsets per request. */
  readonly partitions: number;
  readonly groupCount: number;
  readonly flush: string;
  /** Partition-offsets committed at most. */
  readonly commits: number;
  readonly durationMs: number;
  readonly warmupMs: number;
}

export interface RebalanceParams {
  readonly kind: 'rebalance';
  readonly partitions: number;
  /** Members before the one that joins. */
  readonly members: number;
  /** Produced messages/s over all partitions. */
  readonly rate: number;
  readonly recordBytes: number;
  readonly flush: string;
  readonly baselineMs: number;
  readonly settleMs: number;
  readonly joinJitterMs: number;
  readonly phaseTimeoutMs: number;
}

/** Offsets partitions the broker is started with; the commit groups are spread over them. */
const OFFSETS_PARTITIONS = 16;
/** OffsetCommit v8: flexible, generation -1 + member '' = a commit from outside any generation. */
const COMMIT_VERSION = 8;
const COMMIT_TOPIC = 'bench-commits';
/** Heartbeat intervals: the broker's KIP-848 interval (5 s, fixed), kafkajs's default (3 s). */
const MAX_HEARTBEAT_INTERVAL_MS = 5_000;
/** An empty group's first classic rebalance need not wait for more members (Kafka waits 3 s). */
const GROUP_BROKER_ARGS = ['--offsets-topic-partitions', String(OFFSETS_PARTITIONS), '--group-initial-rebalance-delay-ms', '0'];

function commit(name: string, flush: string): Scenario {
  return {
    name,
    description: `OffsetCommit v${COMMIT_VERSION} outside a generation: 4 conns x 16 in flight, 10 partitions per request, 100 groups over ${OFFSETS_PARTITIONS} offsets partitions, flush ${flush}`,
    params: { kind: 'commit', connections: 4, inflight: 16, partitions: 10, groupCount: 100, flush, commits: 50_000_000, durationMs: 6_000, warmupMs: 1_000 },
  };
}

export const GROUP_SCENARIOS: readonly Scenario[] = [
  commit('commit-rate', 'always'),
  commit('commit-rate-never', 'never'),
  {
    name: 'rebalance',
    description: 'a 4th member joins 3 consuming 12 partitions at 2k msg/s: KIP-848 (platformatic) vs eager classic (kafkajs)',
    params: { kind: 'rebalance', partitions: 12, members: 3, rate: 2_000, recordBytes: 64, flush: 'never', baselineMs: 3_000, settleMs: 1_000,
      joinJitterMs: MAX_HEARTBEAT_INTERVAL_MS, phaseTimeoutMs: 30_000 },
  },
];

async function openLoadConnections(b: BrokerProcess, p: CommitParams, s: RunSettings): Promise<KafkaConnection[]> {
  return Promise.all(Array.from({ length: p.connections }, (_, c) => KafkaConnection.connect({
    host: b.host, port: b.kafkaPort, clientId: `sluice-bench-commit-${c}`, requestTimeoutMs: s.requestTimeoutMs, maxInflight: p.inflight,
  })));
}

/** Groups whose committed offsets differ from what their last acknowledged commit set. */
async function offsetMismatches(conn: KafkaConnection, o: CommitLoadOptions, lastAcked: ReadonlyMap<string, number>): Promise<number> {
  let bad = 0;
  for (const g of o.groups) {
    const want = lastAcked.get(g) ?? -1;
    const got = (await fetchGroupOffsets(conn, g)).filter((c) => c.topic === o.topic);
    if (got.length !== o.partitionsPerCommit || got.some((c) => c.offset !== want)) bad++;
  }
  return bad;
}

export async function runCommit(p: CommitParams, s: RunSettings, ctx: RunCtx): Promise<Metrics> {
  return withBroker(p.flush, s, ctx, async (b) => {
    const setup = await connectClient(b.host, b.kafkaPort, 'sluice-bench-setup', s.requestTimeoutMs);
    const conns: KafkaConnection[] = [];
    try {
      await createTopic(setup, COMMIT_TOPIC, p.partitions);
      const o: CommitLoadOptions = {
        topic: COMMIT_TOPIC, partitionsPerCommit: p.partitions, groups: spreadGroupIds('bench-commit', p.groupCount, OFFSETS_PARTITIONS),
        inflight: p.inflight, commits: p.commits, durationMs: p.durationMs, warmupMs: p.warmupMs,
        version: Math.min(COMMIT_VERSION, setup.versionFor(OffsetCommitApi)),
      };
      await primeGroups(setup, o, 30_000);
      conns.push(...await openLoadConnections(b, p, s));
      const cpu0 = b.cpuSeconds();
      const client0 = process.cpuUsage();
      const t0 = performance.now();
      const fromUs = monotonicUs() + p.warmupMs * 1000;
      const r = await runCommitLoad(conns, o);
      ctx.loadWindow = { fromUs, toUs: monotonicUs() };
      const wall = (performance.now() - t0) / 1000;
      const client = process.cpuUsage(client0);
      if (r.errors > 0) ctx.notes.push(`${r.errors} commit errors, first: ${r.firstError}`);
      const mismatched = r.errors > 0 ? -1 : await offsetMismatches(setup, o, r.lastAcked);
      if (mismatched > 0) ctx.notes.push(`${mismatched} groups' committed offsets differ from their last acknowledged commit`);
      return {
        commits_s: r.commitsPerSec, req_s: r.requestsPerSec, req_p50_ms: r.latency.p50Ms, req_p99_ms: r.latency.p99Ms,
        req_p999_ms: r.latency.p999Ms, req_max_ms: r.latency.maxMs,
        broker_cpu_pct: Math.round((100 * (b.cpuSeconds() - cpu0)) / wall), client_cpu_pct: Math.round((client.user + client.system) / 1e4 / wall),
        measured_s: r.seconds, measured_commits: r.commits, errors: r.errors, offsets_mismatched: mismatched,
      };
    } finally {
      await Promise.all(conns.map((c) => c.close()));
      await setup.close();
    }
  }, GROUP_BROKER_ARGS);
}

/** The figures of one protocol's run, keys prefixed (rows of the report table). */
function rebalanceMetrics(prefix: string, r: RebalanceRunResult): Metrics {
  return {
    [`${prefix}kept`]: r.kept, [`${prefix}moved`]: r.moved, [`${prefix}base_gap_ms`]: r.baselineGapMs,
    [`${prefix}kept_gap_ms`]: r.keptGapMs, [`${prefix}kept_pause_ms`]: r.keptPauseMs, [`${prefix}base_lat_ms`]: r.baselineLatencyMs, [`${prefix}kept_lat_ms`]: r.keptLatencyMs,
    [`${prefix}claimed_ms`]: r.assignedMs, [`${prefix}moved_first_ms`]: r.movedFirstMs, [`${prefix}moved_first_median_ms`]: r.movedFirstMedianMs,
    [`${prefix}moved_gap_ms`]: r.movedGapMs, [`${prefix}fetch_start_ms`]: r.fetchStartMs, [`${prefix}settled_ms`]: r.settledMs,
    [`${prefix}form_ms`]: r.formMs, [`${prefix}delivered`]: r.delivered, [`${prefix}producer_late_ticks`]: r.producerLateTicks,
  };
}

const PROTOCOLS: readonly { readonly client: GroupClient; readonly prefix: string }[] = [
  { client: 'platformatic-848', prefix: 'coop_' },
  { client: 'kafkajs-eager', prefix: 'eager_' },
];

export async function runRebalanceScenario(p: RebalanceParams, s: RunSettings, ctx: RunCtx): Promise<Metrics> {
  return withBroker(p.flush, s, ctx, async (b) => {
    const setup = await connectClient(b.host, b.kafkaPort, 'sluice-bench-setup', s.requestTimeoutMs);
    let version: number;
    try {
      for (const { prefix } of PROTOCOLS) await createTopic(setup, `bench-rebalance-${prefix.slice(0, -1)}`, p.partitions);
      version = s.produceVersion > 0 ? s.produceVersion : produceVersion(setup);
    } finally {
      await setup.close();
    }
    const results: RebalanceRunResult[] = [];
    for (const { client, prefix } of PROTOCOLS) {
      const name = `bench-rebalance-${prefix.slice(0, -1)}`;
      const r = await runRebalance({
        client, host: b.host, port: b.kafkaPort, topic: name, groupId: name, partitions: p.partitions, members: p.members,
        ratePerSec: p.rate, recordBytes: p.recordBytes, produceVersion: version, requestTimeoutMs: s.requestTimeoutMs,
        baselineMs: p.baselineMs, settleMs: p.settleMs, joinJitterMs: p.joinJitterMs, phaseTimeoutMs: p.phaseTimeoutMs,
      });
      if (r.droppedLog > 0) ctx.notes.push(`${prefix}: delivery log full, ${r.droppedLog} deliveries not recorded`);
      if (r.unclassified > 0) ctx.notes.push(`${prefix}: ${r.unclassified} partitions without a single owner before or after`);
      results.push(r);
    }
    const [coop, eager] = results as [RebalanceRunResult, RebalanceRunResult];
    return {
      ...rebalanceMetrics('coop_', coop), ...rebalanceMetrics('eager_', eager),
      ratio_kept_gap_ms: eager.keptGapMs / coop.keptGapMs, ratio_kept_pause_ms: eager.keptPauseMs / coop.keptPauseMs, ratio_kept_lat_ms: eager.keptLatencyMs / coop.keptLatencyMs,
      ratio_moved_first_ms: eager.movedFirstMs / coop.movedFirstMs, ratio_moved_gap_ms: eager.movedGapMs / coop.movedGapMs,
    };
  }, GROUP_BROKER_ARGS);
}
