// `sluice reassign plan|apply|status|pause|resume|cancel|rollback` (main thread of the CLI
// process): online expansion and decommission for operators. `plan` reads the live cluster, plans
// the fewest moves to balance it (or to drain --remove brokers) and stores the plan; `apply` runs
// the stored plan in the foreground (reassign_driver.ts), throttled, cold first, pausing itself on
// a p99 or lag breach; `status` shows the driver's latest status from any machine; `pause`,
// `resume`, `cancel` and `rollback` send a command to the running driver and wait until its status
// shows it taken. `rollback` with no driver running (after `apply` finished or died) drives the
// rollback itself from the snapshot `apply` stored. State lives in the reassignment store topic.
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaAdmin } from '../client/admin.js';
import { ConnectionError } from '../client/connection.js';
import { DEFAULT_MIN_P99_RISE_MS, ReassignmentExecutor, type Assignment, type ExecutorOptions, type ExecutorState } from '../cluster/expansion/executor.js';
import { DEFAULT_THROTTLE } from '../cluster/expansion/throttle.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import { formatOption, renderer, streamItem } from './output.js';
import type { OutputFormat } from './output.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, adminAuthorization, brokerList, connectAdmin, timeoutOption } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import type { CliIo } from './io.js';
import { drive, type DriverDeps, type MetricsSource, type RunOptions } from './reassign_driver.js';
import { ClusterMetricsSampler, metricsEndpoints, type MetricsEndpoint } from './reassign_metrics.js';
import {
  DEFAULT_BATCH_OPTIONS, defaultTopics, makePlan, partitionKey, withDrainedTopics, parseStoredPlan, planInputOf, staleParts, type BatchOptions, type PartitionSizes, type StoredPlan,
} from './reassign_plan.js';
import {
  DRIVER_SILENT_MS, ReassignStore, isPlan, isStarted, isStatus, newCommandId, type DriverStatus, type ReassignCommand, type StoreRecord,
} from './reassign_store.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];
const BATCH: readonly OptionSpec[] = [{ name: 'batch-bytes' }, { name: 'per-broker' }, { name: 'include-hot', switch: true }, { name: 'hot-bytes-per-sec' }];

export const REASSIGN_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  plan: [...COMMON, ...BATCH, { name: 'remove' }, { name: 'topics' }, { name: 'sample-ms' }, { name: 'out' }],
  apply: [
    ...COMMON, ...BATCH, { name: 'plan' }, { name: 'observation-ms' }, { name: 'healthy-hold-ms' }, { name: 'breach-ratio' },
    { name: 'max-rate' }, { name: 'metrics-interval-ms' }, { name: 'baseline-ms' }, { name: 'breach-min-ms' }, { name: 'poll-ms' }, { name: 'nic-bytes-per-sec' }, { name: 'disk-bytes-per-sec' },
    { name: 'admin-token-file' }, { name: 'admin-https', switch: true },
  ],
  status: COMMON,
  pause: COMMON,
  resume: COMMON,
  cancel: COMMON,
  rollback: COMMON,
};

const WAIT_POLL_MS = 500;
/** States a reassignment ends in: no driver runs it any more. */
const ENDED: ReadonlySet<ExecutorState> = new Set(['done', 'cancelled', 'rolled-back']);
/** Capacities the throttle sizes copies against where the operator does not say: a 10 GbE NIC, a 500 MB/s disk. */
const DEFAULT_NIC_BYTES_PER_SEC = 1_250_000_000;
const DEFAULT_DISK_BYTES_PER_SEC = 500_000_000;
const METRICS_SCRAPE_TIMEOUT_MS = 3_000;
/** A rollback copies data back: it may take as long as the moves did. */
const DEFAULT_ROLLBACK_TIMEOUT_MS = 3_600_000;

// ---- options -------------------------------------------------------------------------------------

function idList(parsed: ParsedArgs, name: string): number[] {
  const raw = optionValue(parsed, name);
  if (raw === undefined) return [];
  return raw.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 0 || n > MAX_INT32) throw new UsageError(`--${name}: "${s}" is not a broker id`);
    return n;
  });
}

function batchOptions(parsed: ParsedArgs, base: BatchOptions): BatchOptions {
  return {
    batchBytes: intOption(parsed, 'batch-bytes', 1, Number.MAX_SAFE_INTEGER) ?? base.batchBytes,
    perBrokerMoves: intOption(parsed, 'per-broker', 1, 1000) ?? base.perBrokerMoves,
    hotBytesPerSec: intOption(parsed, 'hot-bytes-per-sec', 0, Number.MAX_SAFE_INTEGER) ?? base.hotBytesPerSec,
    includeHot: parsed.options.has('include-hot') || base.includeHot,
    lookahead: base.lookahead,
  };
}

function ratioOption(parsed: ParsedArgs, name: string, fallback: number): number {
  const raw = optionValue(parsed, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(n > 1 && n < 1000)) throw new UsageError(`--${name}: "${raw}" is not a ratio above 1`);
  return n;
}

function runOptions(parsed: ParsedArgs): RunOptions {
  const ratio = ratioOption(parsed, 'breach-ratio', 2);
  const maxRate = intOption(parsed, 'max-rate', 1024, Number.MAX_SAFE_INTEGER);
  const metricsMs = intOption(parsed, 'metrics-interval-ms', 500, 60_000) ?? 5_000;
  return {
    observationMs: intOption(parsed, 'observation-ms', 0, MAX_INT32) ?? 30_000,
    healthyHoldMs: intOption(parsed, 'healthy-hold-ms', 0, MAX_INT32) ?? 30_000,
    breach: { produceP99: ratio, fetchP99: ratio, consumerLag: ratio * 5, minP99RiseMs: intOption(parsed, 'breach-min-ms', 0, 3_600_000) ?? DEFAULT_MIN_P99_RISE_MS },
    throttle: maxRate === undefined
      ? { ...DEFAULT_THROTTLE, intervalMs: Math.min(DEFAULT_THROTTLE.intervalMs, metricsMs) }
      : { ...DEFAULT_THROTTLE, intervalMs: Math.min(DEFAULT_THROTTLE.intervalMs, metricsMs), maxBytesPerSec: maxRate, initialBytesPerSec: Math.min(maxRate, DEFAULT_THROTTLE.initialBytesPerSec), minBytesPerSec: Math.min(maxRate, DEFAULT_THROTTLE.minBytesPerSec) },
    pollMs: intOption(parsed, 'poll-ms', 100, 60_000) ?? 1_000,
    metricsMs,
    baselineMs: intOption(parsed, 'baseline-ms', 500, MAX_INT32) ?? 30_000,
  };
}

function executorOptions(batch: BatchOptions, run: RunOptions): ExecutorOptions {
  return { ...batch, observationMs: run.observationMs, healthyHoldMs: run.healthyHoldMs, breach: run.breach, throttle: run.throttle };
}

// ---- text --------------------------------------------------------------------------------------

function bytesText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]!}`;
}

function durationText(seconds: number | null): string {
  if (seconds === null) return '?';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

function bar(percent: number, width = 30): string {
  const full = Math.round((Math.min(100, Math.max(0, percent)) / 100) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

const ms = (v: number | null): string => (v === null ? '-' : `${v.toFixed(1)} ms`);

export function planText(plan: StoredPlan, batches: number): string {
  const r = plan.report;
  const lines = [
    `plan ${plan.id}: ${plan.moves.length} partitions move (${r.replicaMoves} replica moves, lower bound ${r.lowerBound}, ratio ${r.ratio.toFixed(2)}), ${bytesText(r.bytesToMove)} to copy, ${plan.leadershipChanges.length} leadership changes (no data moves)`,
    `  brokers ${plan.brokers.map((b) => b.id).join(',')}${plan.removing.length > 0 ? `, removing ${plan.removing.join(',')}` : ''}; topics ${plan.topics.join(',') || '(none)'}`,
    `  ${batches} batches of at most ${bytesText(plan.batch.batchBytes)} and ${plan.batch.perBrokerMoves} moves per broker${plan.batch.includeHot ? ', hot partitions included' : `; partitions over ${bytesText(plan.batch.hotBytesPerSec)}/s are held`}`,
    `  balanced after: ${r.balanced ? 'yes' : 'no'}; rack violations ${r.rackViolationsBefore} -> ${r.rackViolationsAfter}`,
    '  BROKER  REPLICAS BEFORE -> AFTER  LEADERS BEFORE -> AFTER',
    ...r.brokers.map((b) => `  ${String(b.id).padEnd(6)}  ${String(b.replicasBefore).padStart(15)} -> ${String(b.replicasAfter).padEnd(5)}  ${String(b.leadersBefore).padStart(14)} -> ${b.leadersAfter}`),
  ];
  for (const m of plan.moves.slice(0, 50)) lines.push(`  move ${m.topic}:${m.partition} [${m.from.join(',')}] -> [${m.to.join(',')}] ${bytesText(m.sizeBytes)}`);
  if (plan.moves.length > 50) lines.push(`  ... ${plan.moves.length - 50} more moves (--format json lists them all)`);
  lines.push("Run 'sluice reassign apply' to execute this plan.");
  return lines.join('\n');
}

export function statusText(s: DriverStatus, now: number): string {
  const silent = now - s.updatedAt;
  const driver = ENDED.has(s.state) ? '' : silent > DRIVER_SILENT_MS ? ` (driver ${s.driver.host}:${s.driver.pid} silent for ${durationText(silent / 1000)})` : ` (driver ${s.driver.host}:${s.driver.pid})`;
  const lines = [
    `reassignment ${s.planId}: ${s.state}${s.ending === null ? '' : ` (${s.ending} under way)`}${driver}`,
    `  ${bar(s.percent)} ${s.percent.toFixed(1)}%  ${bytesText(s.bytesLeft)} left of ${bytesText(s.bytesTotal)}, ${bytesText(s.bytesPerSec)}/s, ETA ${durationText(s.etaSeconds)}`,
    `  moves: ${s.moves.done}/${s.moves.total} done, ${s.moves.inFlight} in flight${s.batch === null ? '' : ` (batch ${s.batch.number}: ${s.batch.moves} moves, ${bytesText(s.batch.bytes)})`}, ${s.moves.pending} pending, ${s.moves.held} held, ${s.moves.refused} refused`,
    `  produce p99 ${ms(s.p99.produceMs)} (baseline ${ms(s.p99.produceBaselineMs)}), fetch p99 ${ms(s.p99.fetchMs)} (baseline ${ms(s.p99.fetchBaselineMs)}), consumer lag ${s.p99.consumerLag ?? '-'} (baseline ${s.p99.consumerLagBaseline ?? '-'})`,
  ];
  if (s.pauseReason !== null) lines.push(`  paused: ${s.pauseReason}`);
  const rates = Object.entries(s.throttleBytesPerSec);
  if (rates.length > 0) lines.push(`  throttle: ${rates.map(([id, r]) => `broker ${id} ${bytesText(r)}/s`).join(', ')}`);
  return lines.join('\n');
}

/** One line for a terminal that redraws it, or for a log. */
function progressLine(s: DriverStatus): string {
  return `${s.state} ${bar(s.percent, 20)} ${s.percent.toFixed(1)}% ${s.moves.done}/${s.moves.total} moves, ${bytesText(s.bytesLeft)} left, ${bytesText(s.bytesPerSec)}/s, ETA ${durationText(s.etaSeconds)}, produce p99 ${ms(s.p99.produceMs)}/${ms(s.p99.produceBaselineMs)}${s.pauseReason === null ? '' : `, paused: ${s.pauseReason}`}`;
}

// ---- cluster access ------------------------------------------------------------------------------

/** Admin connections the driver reuses: one to any broker (replaced when it fails), one per broker for its own configs. */
class AdminPool {
  private any: KafkaAdmin | null = null;
  private readonly perBroker = new Map<number, KafkaAdmin>();

  constructor(private readonly parsed: ParsedArgs, private readonly env: NodeJS.ProcessEnv) {}

  async call<T>(what: (admin: KafkaAdmin) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      this.any ??= await connectAdmin(this.parsed, this.env);
      try {
        return await what(this.any);
      } catch (err) {
        if (!(err instanceof ConnectionError) || attempt > 0) throw err;
        await this.any.close().catch(() => undefined);
        this.any = null;
      }
    }
  }

  async broker(id: number): Promise<KafkaAdmin> {
    const known = this.perBroker.get(id);
    if (known !== undefined) return known;
    const b = (await this.call((a) => a.describeBrokers())).find((x) => x.id === id);
    if (b === undefined) throw new UsageError(`broker ${id} is not registered`);
    const admin = await KafkaAdmin.connect({ host: b.host, port: b.port, clientId: 'sluice-cli', requestTimeoutMs: timeoutOption(this.parsed) });
    this.perBroker.set(id, admin);
    return admin;
  }

  async close(): Promise<void> {
    await Promise.all([this.any?.close(), ...[...this.perBroker.values()].map((a) => a.close())].map((p) => p?.catch(() => undefined)));
  }
}

/** Each partition's size (the leader's log, else the largest replica's), from DescribeLogDirs. */
async function partitionSizes(pool: AdminPool): Promise<PartitionSizes> {
  const [meta, dirs] = await pool.call((a) => Promise.all([a.clusterMetadata(), a.describeLogDirs()]));
  const leaders = new Map<string, number>();
  for (const t of meta.topics) for (const p of t.partitionDetails) leaders.set(partitionKey(t.name, p.partition), p.leader);
  const sizes = new Map<string, number>();
  const fromLeader = new Set<string>();
  for (const b of dirs) {
    for (const d of b.logDirs) {
      for (const p of d.partitions) {
        const key = partitionKey(p.topic, p.partition);
        if (leaders.get(key) === b.broker) {
          sizes.set(key, p.sizeBytes);
          fromLeader.add(key);
        } else if (!fromLeader.has(key)) {
          sizes.set(key, Math.max(sizes.get(key) ?? 0, p.sizeBytes));
        }
      }
    }
  }
  return sizes;
}

/** The brokers' /metrics, or null when none registers an admin address (brokers older than the field). */
async function metricsSource(pool: AdminPool, parsed: ParsedArgs, env: NodeJS.ProcessEnv): Promise<MetricsSource | null> {
  const scheme = parsed.options.has('admin-https') ? 'https' : 'http';
  const endpoints = async (): Promise<MetricsEndpoint[]> => metricsEndpoints(await pool.call((a) => a.describeBrokers()), scheme);
  if ((await endpoints()).length === 0) return null;
  const authorization = adminAuthorization(parsed, env);
  return new ClusterMetricsSampler({
    endpoints,
    ...(authorization === undefined ? {} : { authorization }),
    capacities: {
      nicBytesPerSec: intOption(parsed, 'nic-bytes-per-sec', 1, Number.MAX_SAFE_INTEGER) ?? DEFAULT_NIC_BYTES_PER_SEC,
      diskBytesPerSec: intOption(parsed, 'disk-bytes-per-sec', 1, Number.MAX_SAFE_INTEGER) ?? DEFAULT_DISK_BYTES_PER_SEC,
    },
    timeoutMs: METRICS_SCRAPE_TIMEOUT_MS,
  });
}

async function withStore<T>(parsed: ParsedArgs, io: CliIo, f: (store: ReassignStore, pool: AdminPool) => Promise<T>): Promise<T> {
  const pool = new AdminPool(parsed, io.env);
  let store: ReassignStore | null = null;
  try {
    store = await pool.call((a) => ReassignStore.open(a, brokerList(parsed, io.env).map((b) => `${b.host}:${b.port}`)));
    return await f(store, pool);
  } finally {
    await store?.close().catch(() => undefined);
    await pool.close();
  }
}

const isLive = (s: DriverStatus, now: number): boolean => !ENDED.has(s.state) && now - s.updatedAt <= DRIVER_SILENT_MS;

// ---- verbs ---------------------------------------------------------------------------------------

async function planVerb(parsed: ParsedArgs, io: CliIo, format: OutputFormat): Promise<number> {
  const removing = idList(parsed, 'remove');
  const sampleMs = intOption(parsed, 'sample-ms', 0, 600_000) ?? 2_000;
  const batch = batchOptions(parsed, DEFAULT_BATCH_OPTIONS);
  return withStore(parsed, io, async (store, pool) => {
    const latest = await store.latest(isStatus);
    if (latest !== null && isLive(latest.status, Date.now())) throw new UsageError(`reassignment ${latest.status.planId} is ${latest.status.state}: cancel it or wait for it to end before planning another`);
    const [meta, brokers] = await pool.call((a) => Promise.all([a.clusterMetadata(), a.describeBrokers()]));
    const topicsRaw = optionValue(parsed, 'topics');
    const topics = withDrainedTopics(meta, topicsRaw === undefined ? defaultTopics(meta) : topicsRaw.split(',').map((t) => t.trim()).filter((t) => t !== ''), removing);
    const first = await partitionSizes(pool);
    let later: PartitionSizes | null = null;
    if (sampleMs > 0) {
      await sleep(sampleMs);
      later = await partitionSizes(pool);
    }
    const plan = makePlan(planInputOf(meta, brokers, topics, removing, first, later, sampleMs), topics, batch, Date.now());
    await store.append({ kind: 'plan', plan });
    const out = optionValue(parsed, 'out');
    if (out !== undefined) writeFileSync(out, `${JSON.stringify(plan, null, 2)}\n`);
    const batches = previewBatches(plan);
    io.out(renderer(format)({ ...plan, batches }, planText(plan, batches.length)));
    return 0;
  });
}

/** The batches `apply` submits for the plan, leaders taken as each move's first replica: the dry run. */
function previewBatches(plan: StoredPlan): Assignment[][] {
  const run = runOptions(parseArgs([], [], false));
  return new ReassignmentExecutor(plan.moves, plan.leadershipChanges, executorOptions(plan.batch, run), new Map(plan.brokers.map((b) => [b.id, b.rack]))).previewBatches();
}

async function applyVerb(parsed: ParsedArgs, io: CliIo, format: OutputFormat): Promise<number> {
  const run = runOptions(parsed);
  const file = optionValue(parsed, 'plan');
  return withStore(parsed, io, async (store, pool) => {
    const latest = await store.latest(isStatus);
    if (latest !== null && isLive(latest.status, Date.now())) throw new UsageError(`reassignment ${latest.status.planId} is already ${latest.status.state} (driver ${latest.status.driver.host}:${latest.status.driver.pid})`);
    let plan: StoredPlan;
    if (file !== undefined) {
      plan = parseStoredPlan(readFileSync(file, 'utf8'), file);
    } else {
      const stored = await store.latest(isPlan);
      if (stored === null) throw new UsageError("no plan is stored: run 'sluice reassign plan' first");
      plan = stored.plan;
    }
    // The same plan again with no driver left running it: its driver died (kill -9, a lost
    // machine). Resume from the snapshot it stored, so a later rollback still restores the
    // assignment from before the plan; with no snapshot stored, nothing had moved yet.
    const previous = latest !== null && latest.status.planId === plan.id ? latest.status : null;
    if (previous !== null && ENDED.has(previous.state)) throw new UsageError(`plan ${plan.id} was already applied (${previous.state}): run 'sluice reassign plan' again`);
    const resumed = previous === null ? null : await startedRecord(store, plan.id);
    const stale = staleParts(plan, await pool.call((a) => a.clusterMetadata()), resumed !== null);
    if (stale.length > 0) throw new UsageError(`the cluster changed since plan ${plan.id} was made (${stale.length} partitions differ, e.g. ${stale.slice(0, 3).join(', ')}): run 'sluice reassign plan' again`);
    const batch = batchOptions(parsed, plan.batch);
    if (JSON.stringify(batch) !== JSON.stringify(plan.batch)) io.err('sluice: batch options differ from the plan\'s: the batches will differ from its dry run');
    if (previous !== null && resumed !== null) {
      io.err(`sluice: resuming plan ${plan.id}, whose driver ${previous.driver.host}:${previous.driver.pid} stopped while ${previous.state}: moves already made count as done`);
      return driveToEnd(plan, executorOptions(batch, run), run, { kind: 'apply', started: resumed }, store, pool, parsed, io, format);
    }
    io.err(`sluice: applying plan ${plan.id}: ${plan.moves.length} moves, ${plan.leadershipChanges.length} leadership changes`);
    return driveToEnd(plan, executorOptions(batch, run), run, { kind: 'apply' }, store, pool, parsed, io, format);
  });
}

async function driveToEnd(
  plan: StoredPlan, options: ExecutorOptions, run: RunOptions, mode: Parameters<typeof drive>[3],
  store: ReassignStore, pool: AdminPool, parsed: ParsedArgs, io: CliIo, format: OutputFormat,
): Promise<number> {
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let lastLine = '';
  let lastLineAt = 0;
  const deps: DriverDeps = {
    call: (what) => pool.call(what),
    store,
    metrics: await metricsSource(pool, parsed, io.env),
    brokerAdmin: (id) => pool.broker(id),
    log: (level, line) => io.err(`${new Date().toISOString()} ${level === 'warn' ? 'WARN ' : ''}${line}`),
    onStatus: (s) => {
      const now = Date.now();
      if (format === 'json' || format === 'yaml') {
        if (now - lastLineAt >= 1000 || s.state !== 'running') {
          lastLineAt = now;
          io.out(streamItem(format, s));
        }
        return;
      }
      const line = progressLine(s);
      if (io.progress !== undefined) {
        if (now - lastLineAt >= 250) io.progress(line);
      } else if (line.replace(/ETA \S+|[\d.]+ \S+\/s|[\d.]+ \S+ left/g, '') !== lastLine || now - lastLineAt >= 10_000) {
        lastLine = line.replace(/ETA \S+|[\d.]+ \S+\/s|[\d.]+ \S+ left/g, '');
        io.out(line);
      } else {
        return;
      }
      lastLineAt = now;
    },
  };
  let state: ExecutorState;
  try {
    state = await drive(plan, options, run, mode, deps, abort.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.progress?.('');
  }
  if (abort.signal.aborted && !ENDED.has(state)) {
    io.err(`sluice: interrupted while ${state}: moves in flight go on on the controller; 'sluice reassign apply' resumes the plan, 'sluice reassign rollback' restores the assignment from before it`);
    return 1;
  }
  io.err(`sluice: reassignment ${plan.id} ${state}`);
  return 0;
}

async function statusVerb(parsed: ParsedArgs, io: CliIo, format: OutputFormat): Promise<number> {
  return withStore(parsed, io, async (store) => {
    const latest = await store.latest(isStatus);
    if (latest === null) {
      const plan = await store.latest(isPlan);
      if (plan === null) throw new UsageError("no reassignment: run 'sluice reassign plan' first");
      const batches = previewBatches(plan.plan).length;
      io.out(renderer(format)({ state: 'planned', planId: plan.plan.id, moves: { total: plan.plan.moves.length }, batches }, `reassignment ${plan.plan.id}: planned, ${plan.plan.moves.length} moves in ${batches} batches (not applied)`));
      return 0;
    }
    const plan = await store.latest(isPlan);
    if (plan !== null && plan.plan.id !== latest.status.planId && plan.plan.createdAt > latest.status.updatedAt && !isLive(latest.status, Date.now())) {
      io.out(renderer(format)({ state: 'planned', planId: plan.plan.id, moves: { total: plan.plan.moves.length }, previous: latest.status }, `reassignment ${plan.plan.id}: planned, ${plan.plan.moves.length} moves (not applied)\nprevious: ${statusText(latest.status, Date.now())}`));
      return 0;
    }
    io.out(renderer(format)({ ...latest.status, driverLive: isLive(latest.status, Date.now()) }, statusText(latest.status, Date.now())));
    return 0;
  });
}

const COMMAND_TAKEN: Readonly<Record<ReassignCommand, (s: DriverStatus) => boolean>> = {
  pause: (s) => s.state === 'paused' && s.pauseReason === 'paused by the operator',
  resume: (s) => s.state === 'running',
  cancel: (s) => s.state === 'cancelled',
  rollback: (s) => s.state === 'rolled-back',
};

async function commandVerb(command: ReassignCommand, parsed: ParsedArgs, io: CliIo, format: OutputFormat): Promise<number> {
  const timeoutMs = intOption(parsed, 'timeout-ms', 1, MAX_INT32) ?? (command === 'rollback' ? DEFAULT_ROLLBACK_TIMEOUT_MS : 120_000);
  return withStore(parsed, io, async (store, pool) => {
    const latest = await store.latest(isStatus);
    if (latest === null) throw new UsageError("no reassignment was applied: nothing to " + command);
    const status = latest.status;
    if (!isLive(status, Date.now())) {
      if (command !== 'rollback') throw new UsageError(`reassignment ${status.planId} is ${status.state} and no driver runs it: nothing to ${command}`);
      if (status.state === 'rolled-back') throw new UsageError(`reassignment ${status.planId} is already rolled back`);
      return rollbackWithoutDriver(status.planId, store, pool, parsed, io, format);
    }
    await store.append({ kind: 'command', planId: status.planId, command, id: newCommandId(), at: Date.now() });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await store.latest(isStatus);
      if (now !== null && now.status.planId === status.planId && COMMAND_TAKEN[command](now.status)) {
        io.out(renderer(format)(now.status, statusText(now.status, Date.now())));
        return 0;
      }
      if (Date.now() > deadline) {
        io.err(`sluice: ${command} sent, but the status did not show it within ${timeoutMs} ms${now === null ? '' : ` (state ${now.status.state})`}`);
        return 1;
      }
      await sleep(WAIT_POLL_MS);
    }
  });
}

/** The snapshot and baseline the plan's first driver stored before anything moved, or null. */
function startedRecord(store: ReassignStore, planId: string): Promise<Extract<StoreRecord, { kind: 'started' }> | null> {
  return store.latest((r): r is Extract<StoreRecord, { kind: 'started' }> => isStarted(r) && r.planId === planId);
}

async function rollbackWithoutDriver(planId: string, store: ReassignStore, pool: AdminPool, parsed: ParsedArgs, io: CliIo, format: OutputFormat): Promise<number> {
  const plan = await store.latest((r): r is Extract<typeof r, { kind: 'plan' }> => isPlan(r) && r.plan.id === planId);
  const started = await startedRecord(store, planId);
  if (plan === null || started === null) throw new UsageError(`the snapshot of reassignment ${planId} is no longer stored: nothing to roll back to`);
  io.err(`sluice: no driver runs reassignment ${planId}: rolling it back from its snapshot`);
  const run = runOptions(parsed);
  return driveToEnd(plan.plan, executorOptions(plan.plan.batch, run), run, { kind: 'rollback', started }, store, pool, parsed, io, format);
}

export async function runReassign(verb: string, argv: readonly string[], io: CliIo): Promise<number> {
  const spec = REASSIGN_VERBS[verb];
  if (spec === undefined) throw new UsageError(`unknown reassign command "${verb}"`);
  const parsed = parseArgs(argv, spec, false);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
  timeoutOption(parsed);
  const format = formatOption(parsed);
  switch (verb) {
    case 'plan':
      return planVerb(parsed, io, format);
    case 'apply':
      return applyVerb(parsed, io, format);
    case 'status':
      return statusVerb(parsed, io, format);
    default:
      return commandVerb(verb as ReassignCommand, parsed, io, format);
  }
}

export const REASSIGN_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice reassign <plan|apply|status|pause|resume|cancel|rollback> [options]

Balances the cluster's replicas and leaders over its brokers (after adding brokers), or drains
brokers (--remove) before they are decommissioned, moving as few replicas as possible, online:
copies are throttled to moving replicas only, run cold partitions first in batches, and pause by
themselves when produce or fetch p99 or consumer lag exceed their baseline.

  reassign plan [--remove IDS] [--topics T,...]   plan the moves and store the plan (a dry run)
  reassign apply                                  execute the stored plan (runs until it ends)
  reassign status                                 progress, rate, ETA, p99 against the baseline
  reassign pause | resume                         hold or continue the running reassignment
  reassign cancel                                 revert the moves in flight, stop
  reassign rollback                               restore the assignment and configs from before
                                                  the plan

Options for all of them:
${CLIENT_OPTIONS_HELP}`,
  plan: `Usage: sluice reassign plan [options]

Reads the live cluster (brokers and racks, every partition's replicas and leader, sizes from
DescribeLogDirs and byte rates from two size samples), plans the fewest replica moves that put every
broker's replica and leader counts within one of its share (racks kept distinct), and stores the
plan for 'apply'. Prints the moves against their lower bound, the bytes to copy, the batches
'apply' will submit and each broker's counts before and after.

Options:
  --remove IDS                        brokers to drain to zero replicas (comma-separated); every
                                      topic with a replica on them is planned, internal ones too
  --topics T,...                      topics to balance [every topic but internal ones]
  --batch-bytes N                     bytes one batch may copy [${DEFAULT_BATCH_OPTIONS.batchBytes}]
  --per-broker N                      moves in flight per broker [${DEFAULT_BATCH_OPTIONS.perBrokerMoves}]
  --hot-bytes-per-sec N               partitions taking more are hot and held [${DEFAULT_BATCH_OPTIONS.hotBytesPerSec}]
  --include-hot                       move hot partitions too
  --sample-ms N                       interval between the two size samples that give byte rates [2000]
  --out FILE                          also write the plan to FILE ('apply --plan FILE' runs it)
${CLIENT_OPTIONS_HELP}`,
  apply: `Usage: sluice reassign apply [options]

Executes the stored plan (or --plan FILE) in the foreground until it is done, cancelled or rolled
back: takes a snapshot of the assignment and throttle configs and a metrics baseline, moves
leaders first (no data moves), then submits the moves batch by batch (KIP-455) with KIP-73
throttles on the moving replicas only, waiting an observation window after each batch. A produce
or fetch p99 (or consumer lag) over its ratio to the baseline pauses it until samples stay healthy.
Refuses to start when the cluster changed since the plan was made. Ctrl-C stops the driver; moves
in flight then complete on the controller. Run again on a plan whose driver stopped (Ctrl-C, kill,
a lost machine), apply resumes it: moves already made count as done, the snapshot stays the one
taken before anything moved.

Options:
  --plan FILE                         run this plan instead of the stored one
  --observation-ms N                  wait after each batch [30000]
  --healthy-hold-ms N                 healthy time before a breach pause resumes [30000]
  --breach-ratio X                    p99 over X times the baseline pauses (lag: 5X) [2]
  --breach-min-ms N                   ... and at least N ms over it [50]
  --max-rate BYTES_PER_SEC            cap on each broker's replication throttle [2 GiB/s]
  --metrics-interval-ms N             metrics sampling period [5000]
  --baseline-ms N                     the p99 and lag baseline's window, before anything moves [30000]
  --poll-ms N                         how often progress is read from metadata [1000]
  --nic-bytes-per-sec N               each broker's NIC capacity, for the throttle [1250000000]
  --disk-bytes-per-sec N              each broker's disk bandwidth, for the throttle [500000000]
  --admin-token-file F                the brokers' admin token, sent when scraping /metrics
                                      [$SLUICE_ADMIN_TOKEN_FILE]
  --admin-https                       scrape https:// (brokers with --admin-ssl-cert-file; trust
                                      their CA with NODE_EXTRA_CA_CERTS)
  --batch-bytes, --per-broker, --include-hot, --hot-bytes-per-sec
                                      override the plan's (the batches then differ from its dry run)
${CLIENT_OPTIONS_HELP}`,
  status: `Usage: sluice reassign status [options]

The latest status of the reassignment: state (planned, running, paused, done, cancelled,
rolled-back), percent, bytes left, rate, ETA, the current batch, moves, the pause reason and p99
and lag against the baseline. --format json prints it as one JSON object.

Options:
${CLIENT_OPTIONS_HELP}`,
  pause: `Usage: sluice reassign pause [options]\n\nHolds the running reassignment: nothing more is submitted (copies in flight complete). Returns once paused.\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
  resume: `Usage: sluice reassign resume [options]\n\nContinues a paused reassignment. Returns once running.\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
  cancel: `Usage: sluice reassign cancel [options]\n\nReverts the moves in flight to their original replicas (nothing is lost) and stops. Moves already done stay. Returns once cancelled.\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
  rollback: `Usage: sluice reassign rollback [options]

Restores the exact assignment (replica lists, in order) and throttle configs from before the plan:
reverts the moves in flight, then moves back what was moved. Sent to the running driver, or, when
none runs, driven by this command from the snapshot 'apply' stored. Returns once rolled back
(--timeout-ms, default one hour).

Options:
${CLIENT_OPTIONS_HELP}`,
};
