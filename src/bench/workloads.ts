// The workloads of `sluice bench` (bench driver, main thread), OMB-style, run the same way
// against Sluice and against each peer (a Target): fixed rates with end-to-end and publish
// latency percentiles, a max-rate ramp (the rate steps up until p99 or the backlog explodes), and
// a backlog drain (N MiB published with no consumer, then timed while a consumer reads it all).
// Each run yields one OMB TestResult plus our fields: the target's CPU (a ProcessCpuClock on its pid)
// per message and per MB, since rates on a shared machine drift and CPU cost drifts less.
// Bounds: every run is bounded by a message count and a duration; a ramp by its steps and budget.
import { performance } from 'node:perf_hooks';
import type { KafkaConnection } from '../client/connection.js';
import { ProcessCpuClock } from './process_cpu.js';
import { runCatchUp } from './load/catch_up.js';
import { runE2eLatency } from './load/e2e_latency.js';
import type { E2eObserver } from './load/e2e_latency.js';
import { CONSUMER_FETCH, batchRecordsFor, connectClient, createTopic, produceVersion } from './load/kafka_setup.js';
import { runProduceLoad } from './load/produce_load.js';
import { OmbRecorder } from './omb_result.js';
import type { OmbTestResult } from './omb_result.js';
import { runPacedPeer } from './peer_load.js';
import type { PeerServer } from './peer_servers.js';

export type WorkloadKind = 'fixed-rate' | 'max-rate' | 'backlog-drain';

export interface BenchPlan {
  readonly sizes: readonly number[];
  /** 1 or -1 (all). */
  readonly acks: readonly number[];
  readonly fixedRates: readonly number[];
  readonly fixedMs: number;
  readonly ramp: RampPlan;
  readonly drainBytes: number;
  readonly windowMs: number;
  readonly drainTimeoutMs: number;
}

export interface RampPlan {
  readonly startRate: number;
  readonly factor: number;
  readonly maxSteps: number;
  readonly stepMs: number;
  /** A step whose end-to-end p99 is above this fails. */
  readonly p99LimitMs: number;
  readonly budgetMs: number;
}

export const QUICK_PLAN: BenchPlan = {
  sizes: [1024, 100], acks: [1, -1], fixedRates: [2_000], fixedMs: 3_000,
  ramp: { startRate: 5_000, factor: 2, maxSteps: 3, stepMs: 2_000, p99LimitMs: 500, budgetMs: 15_000 },
  drainBytes: 8 << 20, windowMs: 1_000, drainTimeoutMs: 10_000,
};

export const FULL_PLAN: BenchPlan = {
  sizes: [1024, 100], acks: [1, -1], fixedRates: [10_000, 50_000], fixedMs: 30_000,
  ramp: { startRate: 10_000, factor: 1.5, maxSteps: 10, stepMs: 10_000, p99LimitMs: 200, budgetMs: 150_000 },
  drainBytes: 256 << 20, windowMs: 10_000, drainTimeoutMs: 60_000,
};

/** What one run of a target reports besides its events. */
interface RunTotals {
  readonly sent: number;
  readonly acked: number;
  readonly consumed: number;
}

/** Something to benchmark: Sluice (one broker) or a peer server. */
export interface Target {
  readonly driver: string;
  readonly label: string;
  /** Its CPU seconds so far, NaN when its process is not ours to read. */
  cpuSeconds(): number;
  /** Whether it has an equivalent of this acks setting (a peer has one durability mode). */
  supportsAcks(acks: number): boolean;
  /** Publishes at `rate` (at most `messages`, for at most durationMs), consuming back when `consume`. */
  paced(name: string, size: number, acks: number, rate: number, messages: number, durationMs: number, observer: E2eObserver, consume: boolean): Promise<RunTotals>;
  /** Reads back everything the previous publish-only run stored; absent when it cannot. */
  drain?(name: string, size: number, expected: number, onConsumed: (atMs: number, records: number) => void): Promise<number>;
}

/** Our fields beside OMB's. */
export interface SluiceBenchFields {
  kind: WorkloadKind;
  acks: number;
  targetRate: number | null;
  achievedPublishRate: number;
  cpuSeconds: number | null;
  cpuMicrosPerMessage: number | null;
  cpuMillisPerMB: number | null;
  maxSustainableRate?: number;
  rampSteps?: RampStep[];
  drainSeconds?: number;
  drainRate?: number;
  sampleIntervalSeconds: number;
}

export type BenchResult = OmbTestResult & SluiceBenchFields;

export interface RampStep {
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly p99Ms: number;
  readonly backlog: number;
  readonly ok: boolean;
}

const WARM_UP_MS = 2_000;
const IGNORE: E2eObserver = { acked: () => undefined, consumed: () => undefined };

const acksName = (acks: number): string => (acks === -1 ? 'all' : String(acks));
const sizeName = (size: number): string => (size % 1024 === 0 ? `${size / 1024}k` : `${size}b`);

function tee(a: OmbRecorder, b: OmbRecorder | null): E2eObserver {
  return {
    acked: (at, records, latencyMs, delayMs) => {
      a.acked(at, records, latencyMs, delayMs);
      b?.acked(at, records, latencyMs, delayMs);
    },
    consumed: (at, latencyMs) => {
      a.consumedOne(at, latencyMs);
      b?.consumedOne(at, latencyMs);
    },
  };
}

function cpuFields(target: Target, cpu0: number, messages: number, size: number): Pick<SluiceBenchFields, 'cpuSeconds' | 'cpuMicrosPerMessage' | 'cpuMillisPerMB'> {
  const cpu = target.cpuSeconds() - cpu0;
  if (!Number.isFinite(cpu) || messages === 0) return { cpuSeconds: null, cpuMicrosPerMessage: null, cpuMillisPerMB: null };
  return { cpuSeconds: cpu, cpuMicrosPerMessage: (cpu * 1e6) / messages, cpuMillisPerMB: (cpu * 1e3) / ((messages * size) / 1e6) };
}

/** A step passes when it kept the rate, lost nothing, and its p99 and final backlog stayed bounded. */
export function rampStepOk(s: Omit<RampStep, 'ok'>, p99LimitMs: number): boolean {
  return s.achievedRate >= 0.9 * s.targetRate && s.p99Ms <= p99LimitMs && s.backlog <= Math.max(1, s.targetRate * 0.1);
}

export async function fixedRate(target: Target, plan: BenchPlan, size: number, acks: number, rate: number): Promise<BenchResult> {
  const workload = `fixed-${sizeName(size)}-acks${acksName(acks)}-${rate}`;
  const start = performance.now();
  const rec = new OmbRecorder(plan.windowMs, start);
  const cpu0 = target.cpuSeconds();
  const r = await target.paced(workload, size, acks, rate, Math.ceil((rate * plan.fixedMs) / 1000), plan.fixedMs, tee(rec, null), true);
  const end = performance.now();
  return {
    ...rec.result({ workload, driver: target.driver, messageSize: size, partitions: 1, consumers: 1 }, end),
    kind: 'fixed-rate', acks, targetRate: rate, achievedPublishRate: r.sent / Math.min(plan.fixedMs / 1000, (end - start) / 1000),
    ...cpuFields(target, cpu0, r.acked, size), sampleIntervalSeconds: plan.windowMs / 1000,
  };
}

export async function maxRateRamp(target: Target, plan: BenchPlan, size: number, acks: number): Promise<BenchResult> {
  const workload = `max-rate-${sizeName(size)}-acks${acksName(acks)}`;
  const start = performance.now();
  const rec = new OmbRecorder(plan.windowMs, start);
  const cpu0 = target.cpuSeconds();
  const steps: RampStep[] = [];
  let acked = 0;
  let sent = 0;
  for (let i = 0; i < plan.ramp.maxSteps && performance.now() - start < plan.ramp.budgetMs; i++) {
    const rate = Math.round(plan.ramp.startRate * plan.ramp.factor ** i);
    const stepStart = performance.now();
    const stepRec = new OmbRecorder(plan.ramp.stepMs, stepStart);
    const r = await target.paced(`${workload}-${rate}`, size, acks, rate, Math.ceil((rate * plan.ramp.stepMs) / 1000), plan.ramp.stepMs, tee(rec, stepRec), true);
    acked += r.acked;
    sent += r.sent;
    const stepResult = stepRec.result({ workload, driver: target.driver, messageSize: size, partitions: 1, consumers: 1 }, performance.now());
    const step = { targetRate: rate, achievedRate: r.sent / (plan.ramp.stepMs / 1000), p99Ms: Number(stepResult['aggregatedEndToEndLatency99pct']), backlog: r.acked - r.consumed };
    const ok = rampStepOk(step, plan.ramp.p99LimitMs);
    steps.push({ ...step, ok });
    if (!ok) break;
  }
  const end = performance.now();
  const passed = steps.filter((s) => s.ok);
  return {
    ...rec.result({ workload, driver: target.driver, messageSize: size, partitions: 1, consumers: 1 }, end),
    kind: 'max-rate', acks, targetRate: null, achievedPublishRate: sent / Math.max(1e-6, (end - start) / 1000),
    ...cpuFields(target, cpu0, acked, size), maxSustainableRate: passed.length === 0 ? 0 : Math.max(...passed.map((s) => s.achievedRate)),
    rampSteps: steps, sampleIntervalSeconds: plan.windowMs / 1000,
  };
}

/** Publishes plan.drainBytes with no consumer as fast as the target takes them, then times a consumer reading them all. */
export async function backlogDrain(target: Target, plan: BenchPlan, size: number, acks: number): Promise<BenchResult | null> {
  if (target.drain === undefined) return null;
  const workload = `backlog-drain-${sizeName(size)}-acks${acksName(acks)}`;
  const messages = Math.max(1, Math.floor(plan.drainBytes / size));
  const start = performance.now();
  const rec = new OmbRecorder(plan.windowMs, start);
  const cpu0 = target.cpuSeconds();
  // Paced at a rate it cannot reach, bounded by the count and the drain timeout.
  const fill = await target.paced(workload, size, acks, messages * 10, messages, plan.drainTimeoutMs, tee(rec, null), false);
  const drainStart = performance.now();
  const drained = await target.drain(workload, size, fill.acked, (at, records) => rec.consumedMany(at, records, null));
  const end = performance.now();
  const drainSeconds = (end - drainStart) / 1000;
  return {
    ...rec.result({ workload, driver: target.driver, messageSize: size, partitions: 1, consumers: 1 }, end),
    kind: 'backlog-drain', acks, targetRate: null, achievedPublishRate: fill.acked / Math.max(1e-6, (drainStart - start) / 1000),
    ...cpuFields(target, cpu0, fill.acked, size), drainSeconds, drainRate: drained / Math.max(1e-6, drainSeconds),
    sampleIntervalSeconds: plan.windowMs / 1000,
  };
}

/** Every workload of the plan against one target, in order; `progress` is told what runs. */
export async function runWorkloads(target: Target, plan: BenchPlan, progress: (what: string) => void): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  // Unrecorded: the first run of a fresh process pays for JIT compilation, page faults and TCP
  // autotuning, on our side and the target's.
  progress(`${target.driver}: warming up`);
  const warmRate = plan.fixedRates[0] ?? 1000;
  await target.paced('warm-up', plan.sizes[0] ?? 1024, 1, warmRate, Math.ceil((warmRate * WARM_UP_MS) / 1000), WARM_UP_MS, IGNORE, true);
  for (const size of plan.sizes) {
    for (const acks of plan.acks.filter((a) => target.supportsAcks(a))) {
      for (const rate of plan.fixedRates) {
        progress(`${target.driver}: fixed rate ${rate} msgs/s, ${size} B, acks=${acksName(acks)}`);
        out.push(await fixedRate(target, plan, size, acks, rate));
      }
    }
    const acks = plan.acks[0] ?? 1;
    progress(`${target.driver}: max-rate ramp, ${size} B, acks=${acksName(acks)}`);
    out.push(await maxRateRamp(target, plan, size, acks));
    progress(`${target.driver}: backlog drain, ${size} B`);
    const drained = await backlogDrain(target, plan, size, acks);
    if (drained !== null) out.push(drained);
  }
  return out;
}

/** Sluice at `bootstrap`: one topic per run; CPU of `pid` when the broker is ours. */
export async function sluiceTarget(host: string, port: number, pid: number | null): Promise<Target & { close(): Promise<void> }> {
  const conn: KafkaConnection = await connectClient(host, port, 'sluice-bench');
  const version = produceVersion(conn);
  const cpu = pid === null ? null : new ProcessCpuClock(pid);
  let topics = 0;
  const fresh = async (name: string): Promise<string> => {
    const topic = `sluice-bench-${process.pid}-${topics++}-${name}`;
    await createTopic(conn, topic, 1);
    return topic;
  };
  let lastTopic = '';
  return {
    driver: 'sluice',
    label: `Sluice at ${host}:${port}`,
    cpuSeconds: () => cpu?.seconds() ?? NaN,
    supportsAcks: () => true,
    async paced(name, size, acks, rate, messages, durationMs, observer, consume) {
      const topic = await fresh(name);
      lastTopic = topic;
      if (!consume) {
        // A backlog: as fast as the broker takes it, batches as a producer fills them.
        const r = await runProduceLoad({
          host, port, topic, partitions: 1, connections: 1, inflight: 8, batchRecords: batchRecordsFor(size, 0), recordBytes: size,
          acks, messages, durationMs, warmupMs: 0, version, requestTimeoutMs: 30_000,
        });
        // The produce load keeps one histogram per run: the fill's publish latency is its median.
        observer.acked(performance.now(), r.totalMessages, r.latency.p50Ms, 0);
        return { sent: r.totalMessages, acked: r.totalMessages, consumed: 0 };
      }
      // About one Produce per millisecond, as a producer with linger.ms=1 would send.
      const batchRecords = Math.max(1, Math.min(batchRecordsFor(size, 0), Math.round(rate / 1000)));
      const r = await runE2eLatency(conn, {
        host, port, topic, partitions: 1, batchRecords, recordBytes: size, acks, ratePerSec: rate, messages,
        durationMs, warmupMs: 0, inflight: 64, produceVersion: version, requestTimeoutMs: 30_000, drainTimeoutMs: 10_000, fetch: CONSUMER_FETCH, observer,
      });
      return { sent: r.sent, acked: r.acked, consumed: r.received };
    },
    async drain(_name, size, expected, onConsumed) {
      const r = await runCatchUp(conn, { topic: lastTopic, partitions: 1, expectedRecords: expected, recordBytes: size, durationMs: 120_000, fetch: CONSUMER_FETCH, onFetched: onConsumed });
      return r.records;
    },
    close: async () => conn.close(),
  };
}

/** A peer server started for this sitting. */
export function peerTarget(server: PeerServer, plan: BenchPlan): Target & { close(): void } {
  let client: Awaited<ReturnType<PeerServer['open']>> | null = null;
  const fresh = async (run: string): Promise<NonNullable<typeof client>> => {
    client?.close();
    client = await server.open(run);
    return client;
  };
  const maxInflight = 10_000;
  const cpu = new ProcessCpuClock(server.pid);
  return {
    driver: server.id,
    label: server.label,
    cpuSeconds: () => cpu.seconds(),
    supportsAcks: (acks) => acks === 1,
    async paced(name, size, _acks, rate, messages, durationMs, observer, consume) {
      const c = await fresh(name);
      const r = await runPacedPeer(c, { ratePerSec: rate, messageBytes: size, messages, durationMs, maxInflight, drainTimeoutMs: plan.drainTimeoutMs, consume }, observer);
      return { sent: r.sent, acked: r.acked, consumed: r.consumed };
    },
    ...(server.replaysStored ? {
      async drain(_name: string, _size: number, expected: number, onConsumed: (atMs: number, records: number) => void): Promise<number> {
        const c = client;
        if (c === null) return 0;
        let consumed = 0;
        c.consume(() => {
          consumed++;
          onConsumed(performance.now(), 1);
        });
        const deadline = performance.now() + plan.drainTimeoutMs;
        while (consumed < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        return consumed;
      },
    } : {}),
    close: () => client?.close(),
  };
}
