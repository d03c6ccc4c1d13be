// The bench scenarios (bench process, main thread): named presets, and one run of a scenario
// against a freshly started broker child process (quiet gate, topic creation, load, broker CPU
// over the measured load, stop). A run returns flat numeric metrics; run.ts repeats and
// aggregates them. Every load is bounded by a message count and a duration (see bench/load).
// The group-coordination scenarios live in group_scenarios.ts (run.ts's `groups`, not `main`);
// runScenarioOnce runs either kind.
import { performance } from 'node:perf_hooks';
import type { BrokerProcess, ShardLag } from '../src/bench/broker_process.js';
import { withBroker } from './broker_run.js';
import type { RunCtx } from './broker_run.js';
import { readOnWorker } from './load/catch_up_reader.js';
import { GROUP_SCENARIOS, runCommit, runRebalanceScenario } from './group_scenarios.js';
import type { CommitParams, RebalanceParams } from './group_scenarios.js';
import { runE2eLatency } from '../src/bench/load/e2e_latency.js';
import { BATCH_BYTES, CONSUMER_FETCH, batchRecordsFor, connectClient, createTopic, produceVersion } from '../src/bench/load/kafka_setup.js';
import type { FetchShape } from '../src/bench/load/kafka_setup.js';
import { runProduceLoad } from '../src/bench/load/produce_load.js';
import type { ProduceLoadOptions, ProduceLoadResult } from '../src/bench/load/produce_load.js';
import { monotonicUs } from './profile.js';
import type { Window } from './profile.js';

export interface ProduceParams {
  readonly kind: 'produce';
  readonly recordBytes: number;
  /** 0 = as many as fit in BATCH_BYTES. */
  readonly batchRecords: number;
  readonly connections: number;
  readonly inflight: number;
  readonly partitions: number;
  readonly acks: number;
  readonly flush: string;
  readonly messages: number;
  readonly durationMs: number;
  readonly warmupMs: number;
}

export interface CatchUpParams {
  readonly kind: 'catchup';
  readonly recordBytes: number;
  readonly batchRecords: number;
  readonly partitions: number;
  readonly flush: string;
  /** Records pre-filled, then read back. */
  readonly messages: number;
  readonly durationMs: number;
  /**
   * Unmeasured whole reads from offset 0 for this long first. The measured pass lasts about a
   * second, and the reader's Fetch path reaches optimized code only after a few: measured right
   * away, the figure is mostly the client's warm-up (0 s: 889 MB/s, 1 s: 1094, 3 s: 1352, same sitting).
   */
  readonly warmupMs: number;
  readonly fetch: FetchShape;
}

export interface E2eParams {
  readonly kind: 'e2e';
  readonly recordBytes: number;
  readonly batchRecords: number;
  readonly partitions: number;
  readonly inflight: number;
  readonly acks: number;
  readonly flush: string;
  /** Messages/s; 0 = rateFraction x the max measured by a probe run on the same broker. */
  readonly rate: number;
  readonly rateFraction: number;
  readonly probeMs: number;
  readonly messages: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly fetch: FetchShape;
}

export type ScenarioParams = ProduceParams | CatchUpParams | E2eParams | CommitParams | RebalanceParams;

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly params: ScenarioParams;
}

export interface RunSettings {
  /** Shard workers per broker; undefined: the broker's own default. */
  readonly shards: number | undefined;
  readonly quietWaitS: number;
  readonly requestTimeoutMs: number;
  /** Produce version to send; 0 = the highest both sides support (librdkafka 2.0.2 sends v7). */
  readonly produceVersion: number;
  /** Node flags for the broker process (profiling). */
  readonly brokerNodeArgs?: readonly string[];
}

/** Metric name -> value for one run. */
export type Metrics = Record<string, number>;

export interface RunOutcome {
  readonly metrics: Metrics;
  readonly notes: string[];
  /** Monotonic µs span of the measured produce load (profiles are cut to it). */
  readonly loadWindow?: Window;
}

export { BATCH_BYTES, CONSUMER_FETCH, batchRecordsFor };
/** Produce requests in flight per connection: produce scenarios, catch-up fill, e2e max probe. */
const DEFAULT_INFLIGHT = 16;

function produce(name: string, description: string, p: Partial<ProduceParams>): Scenario {
  const recordBytes = p.recordBytes ?? 1024;
  return {
    name,
    description,
    params: {
      kind: 'produce', recordBytes, batchRecords: 0, connections: 1, inflight: DEFAULT_INFLIGHT, partitions: 1, acks: 1,
      flush: 'never', messages: recordBytes >= 1024 ? 5_000_000 : 30_000_000, durationMs: 12_000, warmupMs: 1_000, ...p,
    },
  };
}

function e2e(name: string, rateFraction: number): Scenario {
  return {
    name,
    description: `produce->fetch latency at ${rateFraction} x the max rate (probe: 1 conn, ${DEFAULT_INFLIGHT} in flight), 1 KiB, acks=1, 1 partition, flush never`,
    params: {
      kind: 'e2e', recordBytes: 1024, batchRecords: 0, partitions: 1, inflight: 64, acks: 1, flush: 'never', rate: 0,
      rateFraction, probeMs: 5_000, messages: 50_000_000, durationMs: 10_000, warmupMs: 1_000, fetch: CONSUMER_FETCH,
    },
  };
}

export const SCENARIOS: readonly Scenario[] = [
  produce('produce-1k-acks1', '1 KiB, acks=1, 1 conn, 1 partition, flush never', {}),
  produce('produce-1k-acks1-c4', '1 KiB, acks=1, 4 conns, 4 partitions, flush never', { connections: 4, partitions: 4 }),
  produce('produce-100b-acks1', '100 B, acks=1, 1 conn, 1 partition, flush never', { recordBytes: 100 }),
  produce('produce-100b-acks1-c4', '100 B, acks=1, 4 conns, 4 partitions, flush never', { recordBytes: 100, connections: 4, partitions: 4 }),
  produce('produce-1k-acks1-always', '1 KiB, acks=1, 1 conn, flush always', { flush: 'always' }),
  produce('produce-1k-acksall-never', '1 KiB, acks=all, 1 conn, flush never', { acks: -1 }),
  produce('produce-1k-acksall-always', '1 KiB, acks=all, 1 conn, fsync before ack (flush always)', { acks: -1, flush: 'always' }),
  produce('produce-1k-acksall-always-c4', '1 KiB, acks=all, 4 conns, 4 partitions, flush always', {
    acks: -1, flush: 'always', connections: 4, partitions: 4,
  }),
  {
    name: 'catchup-1k',
    description: 'consumer catch-up: read 1M x 1 KiB from offset 0 (after 3 s of unmeasured reading), 1 conn, 1 partition, Kafka default fetch sizes',
    params: {
      kind: 'catchup', recordBytes: 1024, batchRecords: 0, partitions: 1, flush: 'never', messages: 1_000_000, durationMs: 30_000,
      warmupMs: 3_000, fetch: CONSUMER_FETCH,
    },
  },
  e2e('e2e-1k', 0.5),
  e2e('e2e-1k-light', 0.1),
];

async function produceOn(
  b: BrokerProcess, s: RunSettings, topic: string, p: Omit<ProduceParams, 'kind' | 'flush'>,
): Promise<{ r: ProduceLoadResult; brokerCpuPct: number; brokerCpuUsPerMsg: number; clientCpuPct: number; shardLag: ShardLag }> {
  const conn = await connectClient(b.host, b.kafkaPort, 'sluice-bench-setup');
  let version: number;
  try {
    await createTopic(conn, topic, p.partitions);
    version = s.produceVersion > 0 ? s.produceVersion : produceVersion(conn);
  } finally {
    await conn.close();
  }
  const o: ProduceLoadOptions = {
    host: b.host, port: b.kafkaPort, topic, partitions: p.partitions, connections: p.connections, inflight: p.inflight,
    batchRecords: batchRecordsFor(p.recordBytes, p.batchRecords), recordBytes: p.recordBytes, acks: p.acks,
    messages: p.messages, durationMs: p.durationMs, warmupMs: p.warmupMs, version, requestTimeoutMs: s.requestTimeoutMs,
  };
  await b.shardLag(); // resets the shards' delay histograms: the next reading covers the load only
  const cpu0 = b.cpuSeconds();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await runProduceLoad(o);
  const wall = (performance.now() - t0) / 1000;
  const brokerCpu = b.cpuSeconds() - cpu0;
  const client = process.cpuUsage(client0);
  return {
    r,
    shardLag: await b.shardLag(),
    brokerCpuPct: Math.round((100 * brokerCpu) / wall),
    // DESIGN.md §11's CPU figure: the broker process's utime+stime over every record it acknowledged, warm-up included.
    brokerCpuUsPerMsg: r.totalMessages > 0 ? (brokerCpu / r.totalMessages) * 1e6 : NaN,
    clientCpuPct: Math.round((client.user + client.system) / 1e4 / wall),
  };
}

async function runProduce(p: ProduceParams, s: RunSettings, ctx: RunCtx): Promise<Metrics> {
  return withBroker(p.flush, s, ctx, async (b) => {
    const fromUs = monotonicUs() + p.warmupMs * 1000;
    const { r, brokerCpuPct, brokerCpuUsPerMsg, clientCpuPct, shardLag } = await produceOn(b, s, 'bench-produce', p);
    ctx.loadWindow = { fromUs, toUs: monotonicUs() };
    if (r.errors > 0) ctx.notes.push(`${r.errors} produce errors, first: ${r.firstError}`);
    return {
      msgs_s: r.msgsPerSec, MB_s: r.mbPerSec, req_p50_ms: r.latency.p50Ms, req_p99_ms: r.latency.p99Ms,
      req_p999_ms: r.latency.p999Ms, broker_cpu_pct: brokerCpuPct, broker_cpu_us_msg: brokerCpuUsPerMsg, client_cpu_pct: clientCpuPct,
      shard_lag_p99_ms: shardLag.p99Ms, shard_lag_max_ms: shardLag.maxMs,
      shard_own_lag_p99_ms: shardLag.ownP99Ms, shard_cpu_wait_pct: shardLag.cpuWaitPct,
      measured_s: r.seconds, measured_msgs: r.messages, errors: r.errors,
    };
  });
}

async function runCatchUpScenario(p: CatchUpParams, s: RunSettings, ctx: RunCtx): Promise<Metrics> {
  return withBroker(p.flush, s, ctx, async (b) => {
    const fill = await produceOn(b, s, 'bench-catchup', {
      recordBytes: p.recordBytes, batchRecords: p.batchRecords, connections: 1, inflight: DEFAULT_INFLIGHT, partitions: p.partitions,
      acks: 1, messages: p.messages, durationMs: p.durationMs, warmupMs: 0,
    });
    if (fill.r.errors > 0) ctx.notes.push(`${fill.r.errors} fill errors, first: ${fill.r.firstError}`);
    let cpu0 = 0;
    let t0 = 0;
    let fromUs = 0;
    const r = await readOnWorker({
      host: b.host, port: b.kafkaPort, warmupMs: p.warmupMs,
      read: { topic: 'bench-catchup', partitions: p.partitions, expectedRecords: fill.r.totalMessages, recordBytes: p.recordBytes, durationMs: p.durationMs, fetch: p.fetch },
      onMeasuring: () => {
        cpu0 = b.cpuSeconds();
        t0 = performance.now();
        fromUs = monotonicUs();
      },
    });
    ctx.loadWindow = { fromUs, toUs: monotonicUs() };
    const brokerCpuPct = Math.round((100 * (b.cpuSeconds() - cpu0)) / ((performance.now() - t0) / 1000));
    if (!r.complete) ctx.notes.push(`catch-up read ${r.records} of ${fill.r.totalMessages} records before the deadline`);
    return {
      msgs_s: r.msgsPerSec, MB_s: r.mbPerSec, batch_MB_s: r.batchMbPerSec, records: r.records, fetches: r.requests,
      broker_cpu_pct: brokerCpuPct, fill_msgs_s: fill.r.msgsPerSec,
    };
  });
}

async function runE2e(p: E2eParams, s: RunSettings, ctx: RunCtx): Promise<Metrics> {
  return withBroker(p.flush, s, ctx, async (b) => {
    const batchRecords = batchRecordsFor(p.recordBytes, p.batchRecords);
    let maxRate = 0;
    if (p.rate <= 0) {
      const probe = await produceOn(b, s, 'bench-e2e-probe', {
        recordBytes: p.recordBytes, batchRecords, connections: 1, inflight: DEFAULT_INFLIGHT, partitions: p.partitions,
        acks: p.acks, messages: p.messages, durationMs: p.probeMs, warmupMs: 1_000,
      });
      maxRate = probe.r.msgsPerSec;
    }
    const rate = p.rate > 0 ? p.rate : maxRate * p.rateFraction;
    const conn = await connectClient(b.host, b.kafkaPort, 'sluice-bench-e2e-consumer');
    try {
      await createTopic(conn, 'bench-e2e', p.partitions);
      const fromUs = monotonicUs();
      const r = await runE2eLatency(conn, {
        host: b.host, port: b.kafkaPort, topic: 'bench-e2e', partitions: p.partitions, batchRecords,
        recordBytes: p.recordBytes, acks: p.acks, ratePerSec: rate, messages: p.messages, durationMs: p.durationMs,
        warmupMs: p.warmupMs, inflight: p.inflight, produceVersion: s.produceVersion > 0 ? s.produceVersion : produceVersion(conn),
        requestTimeoutMs: s.requestTimeoutMs, drainTimeoutMs: 10_000, fetch: p.fetch,
      });
      ctx.loadWindow = { fromUs, toUs: monotonicUs() };
      if (r.received < r.acked) ctx.notes.push(`e2e consumed ${r.received} of ${r.acked} acknowledged records`);
      if (r.lateSends > 0) ctx.notes.push(`${r.lateSends} ticks found no free slot (producer fell behind)`);
      return {
        max_msgs_s: maxRate, rate_msgs_s: r.targetRate, achieved_msgs_s: r.achievedRate,
        e2e_p50_ms: r.latency.p50Ms, e2e_p99_ms: r.latency.p99Ms, e2e_p999_ms: r.latency.p999Ms, e2e_max_ms: r.latency.maxMs,
        produce_p99_ms: r.produceLatency.p99Ms, received: r.received,
      };
    } finally {
      await conn.close();
    }
  });
}

/** The `main` scenarios and the group-coordination ones (`groups`): every name a run may select. */
export const ALL_SCENARIOS: readonly Scenario[] = [...SCENARIOS, ...GROUP_SCENARIOS];

/** One run of `sc` against its own fresh broker. */
export async function runScenarioOnce(sc: Scenario, s: RunSettings): Promise<RunOutcome> {
  const ctx: RunCtx = { notes: [] };
  const p = sc.params;
  const metrics = p.kind === 'produce' ? await runProduce(p, s, ctx)
    : p.kind === 'catchup' ? await runCatchUpScenario(p, s, ctx)
      : p.kind === 'e2e' ? await runE2e(p, s, ctx)
        : p.kind === 'commit' ? await runCommit(p, s, ctx)
          : await runRebalanceScenario(p, s, ctx);
  return { metrics, notes: ctx.notes, ...(ctx.loadWindow ? { loadWindow: ctx.loadWindow } : {}) };
}
