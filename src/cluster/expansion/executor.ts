// The reassignment executor of an expansion plan (DESIGN §7, issue 15 item 3): a pure state
// machine, events in (start, ticks, metrics samples, partitions observed in metadata, operator
// commands) and effects out (leader elections, reassignment batches, cancels, config writes, log
// lines, state changes), with the clock passed in each event. The driver around it does the I/O:
// KIP-455 AlterPartitionReassignments, ElectLeaders, IncrementalAlterConfigs. Pure; any thread.
//
// How it runs a plan:
// - Leadership changes go first, in one `elect-leaders` effect at start: they move no data.
// - Moves go cold first (lowest byte rate, then smallest, then by name), in batches that fit the
//   byte budget (a move larger than the budget goes alone) and the per-broker concurrency: a move
//   counts against each broker it adds and against the leader it copies from. A batch is filled
//   from the coldest pending move on; one blocked by concurrency is skipped (up to `lookahead` of
//   them) and one past the budget closes the batch, so each batch starts at the coldest move left.
//   Moves of partitions whose byte rate is above `hotBytesPerSec` are held unless `includeHot`.
// - One batch is in flight at a time; when its moves are done an observation window passes before
//   the next. A metrics sample whose produce p99, fetch p99 or consumer lag (while it grows) is over
//   its ratio to the baseline pauses the executor at once (nothing more is submitted; copies in flight go on), and it
//   resumes by itself once samples stayed healthy for `healthyHoldMs`. An operator pause never
//   resumes by itself. Each pause is logged once, with its reason.
// - Copies are throttled under Kafka's KIP-73 names, only for moving replicas: the topic lists
//   `leader.replication.throttled.replicas` (the original replicas of moving partitions, any of
//   which may lead) and `follower.replication.throttled.replicas` (the replicas being added), and
//   the broker rates of brokers sending or receiving a copy, recomputed from utilisation samples
//   (throttle.ts): a broker's rate bounds its copy traffic in and out together, split between its
//   leader and follower rates by the streams it sends and receives. Values the snapshot held are kept (lists are merged) and restored afterwards.
// - cancel: in-flight moves are cancelled (KIP-455: their partitions revert to the original
//   replicas), nothing more is submitted, and the state is `cancelled` once metadata shows every one
//   of them settled. rollback: the same, then every partition of the snapshot whose replicas differ
//   from it is reassigned back (in batches under the same limits, without observation windows: it
//   is the way out), the snapshot's config values are written back, and the state is `rolled-back`
//   once metadata matches the snapshot exactly.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { addedReplicas, type LeadershipChange, type PartitionMove } from './model.js';
import { checkThrottleOptions, throttleRates, type BrokerUsage, type ThrottleOptions } from './throttle.js';

export type ExecutorState = 'planned' | 'running' | 'paused' | 'done' | 'cancelled' | 'rolled-back';

export interface BreachRatios {
  /** A sample over baseline × ratio is a breach. */
  readonly produceP99: number;
  readonly fetchP99: number;
  readonly consumerLag: number;
  /**
   * A p99 breach must also rise this many ms over its baseline (default DEFAULT_MIN_P99_RISE_MS):
   * ratios of small p99s read scheduling noise as harm (a fetch p99 of 9 ms seen at 40 ms on a
   * busy host), and a pause on noise does not end.
   */
  readonly minP99RiseMs?: number;
}

export const DEFAULT_MIN_P99_RISE_MS = 50;

export interface ExecutorOptions {
  /** Bytes one batch may copy (size × replicas added); a single larger move goes alone. */
  readonly batchBytes: number;
  /** Moves in flight per broker, counted on brokers added to and on the leader copied from. */
  readonly perBrokerMoves: number;
  /** A partition producing more bytes/s than this is hot. */
  readonly hotBytesPerSec: number;
  readonly includeHot: boolean;
  /** The wait after a batch completes before the next one is submitted. */
  readonly observationMs: number;
  readonly breach: BreachRatios;
  /** How long samples must stay healthy before a breach pause resumes by itself. */
  readonly healthyHoldMs: number;
  readonly throttle: ThrottleOptions;
  /** Moves blocked by concurrency a batch looks past before it closes. */
  readonly lookahead: number;
}

/** Plans beyond this are refused: every map of the executor is keyed by the plan's partitions. */
export const MAX_PLAN_PARTITIONS = 5_000_000;

/** Baselines are floored so that an idle baseline (0 lag, a sub-ms p99) does not read every sample as a breach. */
const MIN_BASELINE_P99_MS = 1;
const MIN_BASELINE_LAG = 1;

export interface Baseline {
  readonly produceP99Ms: number;
  readonly fetchP99Ms: number;
  readonly consumerLag: number;
}

export interface Assignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
}

/** One config value; null: unset (deleted). */
export interface ConfigEntry {
  readonly resource: 'broker' | 'topic';
  /** The broker id as a string, or the topic name. */
  readonly name: string;
  readonly key: string;
  readonly value: string | null;
}

/** What rollback restores: taken before anything moves. */
export interface RollbackSnapshot {
  /** The replica lists of every partition in the plan (moves and leadership changes). */
  readonly assignment: readonly Assignment[];
  /** Throttle and config values before the plan (null: unset). */
  readonly configs: readonly ConfigEntry[];
}

export interface MetricsSample {
  readonly produceP99Ms: number;
  readonly fetchP99Ms: number;
  readonly consumerLag: number;
  readonly brokers: readonly BrokerUsage[];
}

/** A partition as metadata shows it (KIP-455's view: the full replica set plus adding and removing). */
export interface PartitionObservation {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly leader: number;
  /** Bytes the adding replicas have caught up so far, when the driver knows it. */
  readonly copiedBytes?: number;
}

export type ExecutorEvent =
  | { readonly kind: 'start'; readonly now: number; readonly baseline: Baseline; readonly snapshot: RollbackSnapshot }
  | { readonly kind: 'tick'; readonly now: number }
  | { readonly kind: 'metrics'; readonly now: number; readonly sample: MetricsSample }
  | { readonly kind: 'partitions'; readonly now: number; readonly observed: readonly PartitionObservation[] }
  /** The controller refused these submitted reassignments: they stay as they were and are not retried. */
  | { readonly kind: 'refused'; readonly now: number; readonly partitions: readonly PartitionRef[]; readonly reason: string }
  | { readonly kind: 'pause' | 'resume' | 'cancel' | 'rollback'; readonly now: number };

export interface PartitionRef {
  readonly topic: string;
  readonly partition: number;
}

export type ExecutorEffect =
  /** Make each change's to[0] the leader: reorder the replicas (no data moves), then a preferred election. */
  | { readonly kind: 'elect-leaders'; readonly changes: readonly LeadershipChange[] }
  /** AlterPartitionReassignments with these targets. */
  | { readonly kind: 'submit'; readonly batch: number; readonly targets: readonly Assignment[] }
  /** AlterPartitionReassignments with an empty target for each: revert to the original replicas. */
  | { readonly kind: 'cancel'; readonly partitions: readonly PartitionRef[] }
  /** IncrementalAlterConfigs: set each value (null: delete). */
  | { readonly kind: 'set-configs'; readonly reason: 'throttle' | 'restore'; readonly entries: readonly ConfigEntry[] }
  | { readonly kind: 'log'; readonly level: 'info' | 'warn'; readonly message: string }
  | { readonly kind: 'state'; readonly from: ExecutorState; readonly to: ExecutorState; readonly reason: string };

export type PauseCause = 'operator' | 'breach';

/** `status(now)`: plain JSON. */
export interface ExecutorStatus {
  readonly state: ExecutorState;
  /** Set while a cancel or rollback waits for metadata to settle. */
  readonly ending: 'cancel' | 'rollback' | null;
  readonly percent: number;
  readonly bytesTotal: number;
  readonly bytesDone: number;
  readonly bytesLeft: number;
  readonly bytesPerSec: number;
  readonly etaSeconds: number | null;
  readonly batch: { readonly number: number; readonly moves: number; readonly bytes: number; readonly inFlight: number } | null;
  readonly moves: { readonly total: number; readonly done: number; readonly inFlight: number; readonly pending: number; readonly held: number; readonly refused: number };
  readonly pauseReason: string | null;
  readonly p99: {
    readonly produceMs: number | null;
    readonly produceBaselineMs: number | null;
    readonly fetchMs: number | null;
    readonly fetchBaselineMs: number | null;
    readonly consumerLag: number | null;
    readonly consumerLagBaseline: number | null;
  };
  readonly throttleBytesPerSec: Readonly<Record<string, number>>;
}

export const LEADER_RATE = 'leader.replication.throttled.rate';
export const FOLLOWER_RATE = 'follower.replication.throttled.rate';
export const LEADER_REPLICAS = 'leader.replication.throttled.replicas';
export const FOLLOWER_REPLICAS = 'follower.replication.throttled.replicas';

type TaskPhase = 'pending' | 'held' | 'in-flight' | 'done' | 'cancelling' | 'settled' | 'refused';

/** One reassignment the executor submits: a plan move, or a rollback's way back. */
interface Task {
  readonly key: string;
  readonly topic: string;
  readonly partition: number;
  readonly from: readonly number[];
  readonly to: readonly number[];
  readonly added: readonly number[];
  /** Bytes of the partition's log (0 where unknown: a rollback's reorder of a leadership change). */
  readonly size: number;
  /** Bytes the copy moves: the log size times the replicas added. */
  readonly bytes: number;
  phase: TaskPhase;
  copied: number;
}

const keyOf = (topic: string, partition: number): string => `${topic}:${partition}`;

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Cold first: lowest byte rate, then smallest, then by name, so the order is total and stable. */
export function coldFirst(a: PartitionMove, b: PartitionMove): number {
  return a.bytesInPerSec - b.bytesInPerSec || a.sizeBytes - b.sizeBytes || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0) || a.partition - b.partition;
}

function checkOptions(o: ExecutorOptions): void {
  const bad = (what: string): never => {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `reassignment executor: ${what}`);
  };
  if (!(o.batchBytes > 0)) bad('batchBytes must be positive');
  if (!(Number.isInteger(o.perBrokerMoves) && o.perBrokerMoves >= 1)) bad('perBrokerMoves must be a positive integer');
  if (!(o.hotBytesPerSec >= 0)) bad('hotBytesPerSec must not be negative');
  if (!(o.observationMs >= 0 && o.healthyHoldMs >= 0)) bad('observationMs and healthyHoldMs must not be negative');
  if (!(o.breach.produceP99 > 1 && o.breach.fetchP99 > 1 && o.breach.consumerLag > 1)) bad('breach ratios must be above 1');
  if (o.breach.minP99RiseMs !== undefined && !(o.breach.minP99RiseMs >= 0)) bad('the minimum p99 rise must not be negative');
  if (!(Number.isInteger(o.lookahead) && o.lookahead >= 0)) bad('lookahead must be a non-negative integer');
  checkThrottleOptions(o.throttle);
}

function checkReplicas(what: string, replicas: readonly number[]): void {
  if (replicas.length === 0 || new Set(replicas).size !== replicas.length || !replicas.every((r) => Number.isInteger(r) && r >= 0)) {
    throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${what}: replicas must be distinct broker ids, at least one`);
  }
}

/**
 * Takes the next batch from `order` (tasks in submission order), marking the taken ones in flight:
 * see the file's head for the rule. `leaderOf` says whom a partition copies from. Returns the
 * batch, empty when nothing is pending.
 */
function takeBatch(order: readonly Task[], from: number, o: ExecutorOptions, leaderOf: (t: Task) => number): Task[] {
  const batch: Task[] = [];
  const load = new Map<number, number>();
  let bytes = 0;
  let blocked = 0;
  for (let i = from; i < order.length; i++) {
    const t = order[i]!;
    if (t.phase !== 'pending') continue;
    if (batch.length > 0 && bytes + t.bytes > o.batchBytes) break;
    const brokers = new Set(t.added);
    if (t.added.length > 0) brokers.add(leaderOf(t));
    if ([...brokers].some((b) => (load.get(b) ?? 0) >= o.perBrokerMoves)) {
      if (++blocked > o.lookahead) break;
      continue;
    }
    for (const b of brokers) load.set(b, (load.get(b) ?? 0) + 1);
    bytes += t.bytes;
    t.phase = 'in-flight';
    batch.push(t);
    if (bytes >= o.batchBytes) break;
  }
  return batch;
}

export class ReassignmentExecutor {
  private current: ExecutorState = 'planned';
  private pauseCause: PauseCause | null = null;
  private pauseReason: string | null = null;
  private ending: 'cancel' | 'rollback' | null = null;
  /** Plan moves in submission order, then (during a rollback) the ways back. */
  private readonly moves: Task[];
  private reverts: Task[] = [];
  private readonly byKey = new Map<string, Task>();
  private head = 0;
  private inFlight: Task[] = [];
  private batchNumber = 0;
  private batchBytes = 0;
  private batchSize = 0;
  private windowEndsAt = 0;
  private baseline: Baseline | null = null;
  private snapshot: RollbackSnapshot | null = null;
  private readonly snapshotByKey = new Map<string, Assignment>();
  private readonly snapshotConfigs = new Map<string, ConfigEntry>();
  /** What metadata last showed of each plan partition. */
  private readonly observed = new Map<string, PartitionObservation>();
  private latest: MetricsSample | null = null;
  private healthySince: number | null = null;
  private ratesAt = -Infinity;
  private rates = new Map<number, number>();
  /** Config values this executor has written and not yet restored. */
  private readonly applied = new Map<string, ConfigEntry>();
  private activeMs = 0;
  private activeSince: number | null = null;
  private readonly racks: ReadonlyMap<number, string | null>;

  constructor(
    moves: readonly PartitionMove[],
    private readonly leadershipChanges: readonly LeadershipChange[],
    private readonly options: ExecutorOptions,
    /** Broker racks, for the throttle's link types. */
    racks: ReadonlyMap<number, string | null>,
  ) {
    checkOptions(options);
    this.racks = racks;
    if (moves.length + leadershipChanges.length > MAX_PLAN_PARTITIONS) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `a plan may touch at most ${MAX_PLAN_PARTITIONS} partitions`);
    }
    const seen = new Set<string>();
    const once = (topic: string, partition: number): string => {
      const key = keyOf(topic, partition);
      if (seen.has(key)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${key} appears twice in the plan`);
      seen.add(key);
      return key;
    };
    for (const c of leadershipChanges) {
      once(c.topic, c.partition);
      checkReplicas(keyOf(c.topic, c.partition), c.to);
    }
    this.moves = [...moves].sort(coldFirst).map((m) => {
      const key = once(m.topic, m.partition);
      checkReplicas(key, m.from);
      checkReplicas(key, m.to);
      if (!(m.sizeBytes >= 0 && m.bytesInPerSec >= 0)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${key}: negative size or rate`);
      const added = addedReplicas(m);
      const hot = m.bytesInPerSec > options.hotBytesPerSec && !options.includeHot;
      const task: Task = { key, topic: m.topic, partition: m.partition, from: m.from, to: m.to, added, size: m.sizeBytes, bytes: m.sizeBytes * added.length, phase: hot ? 'held' : 'pending', copied: 0 };
      this.byKey.set(key, task);
      return task;
    });
  }

  get state(): ExecutorState {
    return this.current;
  }

  /** Nothing left to do: done, cancelled or rolled back, with no cancel or rollback still settling (a rollback may follow done). */
  get finished(): boolean {
    if (this.ending === 'rollback') return this.current === 'rolled-back';
    if (this.ending === 'cancel') return this.current === 'cancelled';
    return this.current === 'done';
  }

  /** The batches an uninterrupted run would submit, leaders taken as each move's from[0]: the dry run. */
  previewBatches(): Assignment[][] {
    const copy = this.moves.map((t) => ({ ...t }));
    const batches: Assignment[][] = [];
    for (;;) {
      const batch = takeBatch(copy, 0, this.options, (t) => t.from[0]!);
      if (batch.length === 0) return batches;
      for (const t of batch) t.phase = 'done';
      batches.push(batch.map((t) => ({ topic: t.topic, partition: t.partition, replicas: t.to })));
    }
  }

  handle(event: ExecutorEvent): ExecutorEffect[] {
    const out: ExecutorEffect[] = [];
    switch (event.kind) {
      case 'start':
        this.start(event.now, event.baseline, event.snapshot, out);
        break;
      case 'tick':
        break;
      case 'metrics':
        this.onMetrics(event.now, event.sample, out);
        break;
      case 'partitions':
        this.onPartitions(event.observed, out);
        break;
      case 'refused':
        this.onRefused(event.partitions, event.reason, out);
        break;
      case 'pause':
        this.onPause(event.now, out);
        break;
      case 'resume':
        this.onResume(event.now, out);
        break;
      case 'cancel':
      case 'rollback':
        this.onEnd(event.kind, out);
        break;
    }
    this.advance(event.now, out);
    return out;
  }

  private setState(to: ExecutorState, now: number, reason: string, out: ExecutorEffect[]): void {
    if (to === this.current) return;
    if (this.activeSince !== null) this.activeMs += now - this.activeSince;
    this.activeSince = to === 'running' ? now : null;
    out.push({ kind: 'state', from: this.current, to, reason });
    this.current = to;
  }

  private start(now: number, baseline: Baseline, snapshot: RollbackSnapshot, out: ExecutorEffect[]): void {
    if (this.current !== 'planned' || this.snapshot !== null) {
      out.push({ kind: 'log', level: 'warn', message: `start ignored: the executor is ${this.current}` });
      return;
    }
    for (const a of snapshot.assignment) this.snapshotByKey.set(keyOf(a.topic, a.partition), a);
    const missing = [...this.moves.map((t) => t.key), ...this.leadershipChanges.map((c) => keyOf(c.topic, c.partition))].find((k) => !this.snapshotByKey.has(k));
    if (missing !== undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `the snapshot lacks ${missing}: rollback could not restore it`);
    for (const c of snapshot.configs) this.snapshotConfigs.set(`${c.resource}|${c.name}|${c.key}`, c);
    this.baseline = baseline;
    this.snapshot = snapshot;
    const held = this.moves.filter((t) => t.phase === 'held').length;
    this.setState('running', now, 'started', out);
    out.push({ kind: 'log', level: 'info', message: `reassignment started: ${this.moves.length} moves, ${this.leadershipChanges.length} leadership changes, ${held} hot moves held` });
    if (this.leadershipChanges.length > 0) out.push({ kind: 'elect-leaders', changes: this.leadershipChanges });
  }

  /**
   * The first ratio over its limit, as a reason, or null when the sample is healthy. Lag over its
   * ratio is a breach only while it still grows (over the previous sample's): a lag that holds or
   * shrinks means consumers keep up again, and a pause on it alone would never end where consumers
   * cannot work a backlog off faster than producers add to it.
   */
  private breachOf(s: MetricsSample, previous: MetricsSample | null): string | null {
    const b = this.baseline;
    if (b === null) return null;
    const lagGrows = previous === null || s.consumerLag > previous.consumerLag;
    const rise = this.options.breach.minP99RiseMs ?? DEFAULT_MIN_P99_RISE_MS;
    const checks: [string, number, number, number, string, number][] = [
      ['produce p99', s.produceP99Ms, Math.max(b.produceP99Ms, MIN_BASELINE_P99_MS), this.options.breach.produceP99, ' ms', rise],
      ['fetch p99', s.fetchP99Ms, Math.max(b.fetchP99Ms, MIN_BASELINE_P99_MS), this.options.breach.fetchP99, ' ms', rise],
      ['consumer lag', lagGrows ? s.consumerLag : 0, Math.max(b.consumerLag, MIN_BASELINE_LAG), this.options.breach.consumerLag, '', 0],
    ];
    for (const [what, value, base, limit, unit, minRise] of checks) {
      if (value > base * limit && value - base >= minRise) return `${what} ${value.toFixed(1)}${unit} is ${(value / base).toFixed(2)}x the baseline ${base.toFixed(1)}${unit} (limit ${limit}x)${what === 'consumer lag' ? ' and growing' : ''}`;
    }
    return null;
  }

  private onMetrics(now: number, sample: MetricsSample, out: ExecutorEffect[]): void {
    const breach = this.breachOf(sample, this.latest);
    this.latest = sample;
    if (breach === null) {
      this.healthySince ??= now;
    } else {
      this.healthySince = null;
      if (this.current === 'running' && this.ending === null) this.pause(now, 'breach', breach, out);
    }
    if (now - this.ratesAt >= this.options.throttle.intervalMs) {
      this.ratesAt = now;
      this.recomputeRates();
      this.writeThrottles(out);
    }
  }

  private pause(now: number, cause: PauseCause, reason: string, out: ExecutorEffect[]): void {
    this.pauseCause = cause;
    this.pauseReason = reason;
    this.setState('paused', now, reason, out);
    out.push({ kind: 'log', level: 'warn', message: `reassignment paused (${cause}): ${reason}` });
  }

  private onPause(now: number, out: ExecutorEffect[]): void {
    if (this.ending !== null || (this.current !== 'running' && this.current !== 'paused')) {
      out.push({ kind: 'log', level: 'warn', message: `pause ignored: the executor is ${this.ending ?? this.current}` });
    } else if (this.pauseCause !== 'operator') {
      this.pause(now, 'operator', 'paused by the operator', out);
    }
  }

  private onResume(now: number, out: ExecutorEffect[]): void {
    if (this.ending !== null || this.current !== 'paused') {
      out.push({ kind: 'log', level: 'warn', message: `resume ignored: the executor is ${this.ending ?? this.current}` });
      return;
    }
    this.resume(now, 'resumed by the operator', out);
  }

  private resume(now: number, reason: string, out: ExecutorEffect[]): void {
    this.pauseCause = null;
    this.pauseReason = null;
    this.setState('running', now, reason, out);
    out.push({ kind: 'log', level: 'info', message: `reassignment ${reason}` });
  }

  private onEnd(kind: 'cancel' | 'rollback', out: ExecutorEffect[]): void {
    const endable = kind === 'cancel' ? this.current === 'running' || this.current === 'paused' || this.current === 'planned' : this.current !== 'rolled-back' && this.snapshot !== null;
    if (!endable || this.ending === 'rollback' || (this.ending === 'cancel' && kind === 'cancel')) {
      out.push({ kind: 'log', level: 'warn', message: `${kind} ignored: the executor is ${this.ending ?? this.current}` });
      return;
    }
    this.ending = kind;
    for (const t of this.moves) if (t.phase === 'pending') t.phase = 'settled';
    if (this.inFlight.length > 0) {
      for (const t of this.inFlight) t.phase = 'cancelling';
      out.push({ kind: 'cancel', partitions: this.inFlight.map((t) => ({ topic: t.topic, partition: t.partition })) });
    }
    out.push({ kind: 'log', level: 'warn', message: `${kind} requested: ${this.inFlight.length} moves in flight are being reverted` });
  }

  private onPartitions(observed: readonly PartitionObservation[], out: ExecutorEffect[]): void {
    let changed = false;
    for (const o of observed) {
      const key = keyOf(o.topic, o.partition);
      if (!this.snapshotByKey.has(key) && !this.byKey.has(key)) continue;
      this.observed.set(key, o);
      const settled = o.addingReplicas.length === 0 && o.removingReplicas.length === 0;
      const waiting = this.byKey.get(key);
      if (waiting !== undefined && (waiting.phase === 'pending' || waiting.phase === 'held') && settled && sameList(o.replicas, waiting.to) && !sameList(o.replicas, waiting.from)) {
        // Already made: a run resumed after its driver died, whose earlier batches completed.
        waiting.phase = 'done';
        waiting.copied = waiting.bytes;
        continue;
      }
      const task = this.inFlight.find((t) => t.key === key);
      if (task === undefined) continue;
      if (task.phase === 'in-flight' && settled && sameList(o.replicas, task.to)) {
        task.phase = 'done';
        task.copied = task.bytes;
      } else if (task.phase === 'cancelling' && settled) {
        // A move may complete before its cancel reaches the controller: then it stays done.
        task.phase = sameList(o.replicas, task.to) ? 'done' : 'settled';
        if (task.phase === 'done') task.copied = task.bytes;
      } else if (task.phase === 'in-flight' && o.copiedBytes !== undefined) {
        task.copied = Math.min(task.bytes, o.copiedBytes);
      }
      changed ||= task.phase === 'done' || task.phase === 'settled';
    }
    if (changed) {
      this.inFlight = this.inFlight.filter((t) => t.phase === 'in-flight' || t.phase === 'cancelling');
      this.writeThrottles(out);
    }
  }

  private onRefused(partitions: readonly PartitionRef[], reason: string, out: ExecutorEffect[]): void {
    const keys = new Set(partitions.map((p) => keyOf(p.topic, p.partition)));
    const refused = this.inFlight.filter((t) => keys.has(t.key) && t.phase === 'in-flight');
    if (refused.length === 0) return;
    for (const t of refused) t.phase = 'refused';
    this.inFlight = this.inFlight.filter((t) => t.phase !== 'refused');
    out.push({ kind: 'log', level: 'warn', message: `${refused.length} moves refused (${reason}): ${refused.slice(0, 5).map((t) => t.key).join(', ')}${refused.length > 5 ? ', ...' : ''}` });
    this.writeThrottles(out);
  }

  private leaderOf(t: Task): number {
    const leader = this.observed.get(t.key)?.leader ?? -1;
    return leader >= 0 ? leader : t.from[0]!;
  }

  private submit(order: readonly Task[], now: number, out: ExecutorEffect[]): boolean {
    while (this.head < order.length && order[this.head]!.phase !== 'pending') this.head++;
    const batch = takeBatch(order, this.head, this.options, (t) => this.leaderOf(t));
    if (batch.length === 0) return false;
    this.inFlight = batch;
    this.batchNumber++;
    this.batchSize = batch.length;
    this.batchBytes = batch.reduce((sum, t) => sum + t.bytes, 0);
    out.push({ kind: 'submit', batch: this.batchNumber, targets: batch.map((t) => ({ topic: t.topic, partition: t.partition, replicas: t.to })) });
    out.push({ kind: 'log', level: 'info', message: `batch ${this.batchNumber}: ${batch.length} moves, ${this.batchBytes} bytes` });
    this.windowEndsAt = Infinity;
    if (this.latest !== null && now - this.ratesAt >= this.options.throttle.intervalMs) {
      this.ratesAt = now;
      this.recomputeRates();
    }
    this.writeThrottles(out);
    return true;
  }

  /** Moves on whatever the state allows: the next batch, an auto-resume, or the end of the plan, a cancel or a rollback. */
  private advance(now: number, out: ExecutorEffect[]): void {
    if (this.ending !== null) {
      this.advanceEnding(now, out);
      return;
    }
    if (this.current === 'paused' && this.pauseCause === 'breach' && this.healthySince !== null && now - this.healthySince >= this.options.healthyHoldMs) {
      this.resume(now, `resumed: healthy for ${Math.round((now - this.healthySince) / 1000)} s`, out);
    }
    // A pause holds the moves not yet submitted; with none left and none in flight the run is
    // over, and waiting for health first would only keep the throttles and the status paused.
    if (this.current === 'paused' && this.inFlight.length === 0 && !this.moves.some((t) => t.phase === 'pending')) {
      this.finish(now, out);
      return;
    }
    if (this.current !== 'running' || this.inFlight.length > 0) return;
    if (this.windowEndsAt === Infinity) this.windowEndsAt = now + this.options.observationMs;
    if (now < this.windowEndsAt) return;
    if (this.submit(this.moves, now, out)) return;
    this.finish(now, out);
  }

  private finish(now: number, out: ExecutorEffect[]): void {
    this.pauseCause = null;
    this.pauseReason = null;
    const held = this.moves.filter((t) => t.phase === 'held').length;
    const refused = this.moves.filter((t) => t.phase === 'refused').length;
    const left = [held > 0 ? `${held} hot moves held (run again with includeHot to move them)` : '', refused > 0 ? `${refused} moves refused by the controller` : ''].filter((x) => x !== '');
    this.writeThrottles(out, true);
    this.setState('done', now, left.length === 0 ? 'every move done' : `every move done but ${left.join(' and ')}`, out);
    out.push({ kind: 'log', level: left.length === 0 ? 'info' : 'warn', message: left.length === 0 ? 'reassignment done' : `reassignment done; ${left.join('; ')}` });
  }

  private advanceEnding(now: number, out: ExecutorEffect[]): void {
    if (this.inFlight.length > 0 || this.current === 'rolled-back' || (this.ending === 'cancel' && this.current === 'cancelled')) return;
    if (this.ending === 'cancel') {
      this.writeThrottles(out, true);
      this.setState('cancelled', now, 'in-flight moves reverted', out);
      out.push({ kind: 'log', level: 'info', message: 'reassignment cancelled' });
      return;
    }
    if (this.reverts.length === 0) this.reverts = this.waysBack();
    if (this.submit(this.reverts, now, out)) return;
    if (!this.matchesSnapshot()) return;
    this.restoreConfigs(out);
    this.setState('rolled-back', now, 'metadata matches the snapshot', out);
    out.push({ kind: 'log', level: 'info', message: 'reassignment rolled back' });
  }

  /** A reassignment back to the snapshot for each partition whose replicas differ from it, cold first. */
  private waysBack(): Task[] {
    const ways: Task[] = [];
    for (const [key, a] of this.snapshotByKey) {
      const now = this.observed.get(key)?.replicas ?? a.replicas;
      if (sameList(now, a.replicas)) continue;
      const size = this.byKey.get(key)?.size ?? 0;
      const added = a.replicas.filter((r) => !now.includes(r));
      ways.push({ key, topic: a.topic, partition: a.partition, from: now, to: a.replicas, added, size, bytes: size * added.length, phase: 'pending', copied: 0 });
    }
    this.head = 0;
    return ways.sort((x, y) => x.bytes - y.bytes || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  }

  /** Every partition of the snapshot settled on its snapshot replicas (one never observed has not changed). */
  private matchesSnapshot(): boolean {
    for (const [key, a] of this.snapshotByKey) {
      const o = this.observed.get(key);
      if (o !== undefined && (o.addingReplicas.length > 0 || o.removingReplicas.length > 0 || !sameList(o.replicas, a.replicas))) return false;
    }
    return true;
  }

  private recomputeRates(): void {
    const usage = new Map((this.latest?.brokers ?? []).map((b) => [b.id, b]));
    this.rates = throttleRates(this.streams(), this.racks, usage, this.options.throttle);
  }

  private streams(): { from: number; to: number }[] {
    return this.inFlight.flatMap((t) => t.added.map((to) => ({ from: this.leaderOf(t), to })));
  }

  /** The config values the moves in flight need: see the file's head. */
  private desiredConfigs(): Map<string, ConfigEntry> {
    const desired = new Map<string, ConfigEntry>();
    const put = (resource: 'broker' | 'topic', name: string, key: string, value: string): void => {
      desired.set(`${resource}|${name}|${key}`, { resource, name, key, value });
    };
    const streams = this.streams();
    if (streams.length === 0) return desired;
    if (this.rates.size === 0 || streams.some((s) => !this.rates.has(s.from) || !this.rates.has(s.to))) this.recomputeRates();
    // A broker's rate bounds all its copy traffic; it is split between the KIP-73 leader (sending)
    // and follower (receiving) rates in proportion to the streams it sends and receives.
    const sends = new Map<number, number>();
    const receives = new Map<number, number>();
    for (const s of streams) {
      sends.set(s.from, (sends.get(s.from) ?? 0) + 1);
      receives.set(s.to, (receives.get(s.to) ?? 0) + 1);
    }
    const floor = this.options.throttle.minBytesPerSec;
    for (const [broker, rate] of this.rates) {
      const out = sends.get(broker) ?? 0;
      const into = receives.get(broker) ?? 0;
      if (out > 0) put('broker', String(broker), LEADER_RATE, String(Math.max(floor, Math.floor((rate * out) / (out + into)))));
      if (into > 0) put('broker', String(broker), FOLLOWER_RATE, String(Math.max(floor, Math.floor((rate * into) / (out + into)))));
    }
    const lists = new Map<string, { leader: string[]; follower: string[] }>();
    for (const t of this.inFlight) {
      if (t.added.length === 0) continue;
      const l = lists.get(t.topic) ?? { leader: [], follower: [] };
      lists.set(t.topic, l);
      l.leader.push(...t.from.map((b) => `${t.partition}:${b}`));
      l.follower.push(...t.added.map((b) => `${t.partition}:${b}`));
    }
    for (const [topic, l] of lists) {
      for (const [key, items] of [[LEADER_REPLICAS, l.leader], [FOLLOWER_REPLICAS, l.follower]] as const) {
        const before = this.snapshotConfigs.get(`topic|${topic}|${key}`)?.value ?? null;
        if (before === '*') continue;
        const merged = new Set([...(before === null || before === '' ? [] : before.split(',')), ...items]);
        put('topic', topic, key, [...merged].join(','));
      }
    }
    return desired;
  }

  /**
   * Writes the difference between the values in force and those wanted (none when `clear`), in the
   * order the maps were filled, which depends only on the events: the same inputs write the same.
   */
  private writeThrottles(out: ExecutorEffect[], clear = false): void {
    const desired = clear ? new Map<string, ConfigEntry>() : this.desiredConfigs();
    const entries: ConfigEntry[] = [];
    for (const [k, e] of desired) {
      if (this.applied.get(k)?.value !== e.value) entries.push(e);
    }
    for (const [k, e] of this.applied) {
      if (!desired.has(k)) entries.push({ ...e, value: this.snapshotConfigs.get(k)?.value ?? null });
    }
    for (const e of entries) {
      const k = `${e.resource}|${e.name}|${e.key}`;
      if (desired.has(k)) this.applied.set(k, e);
      else this.applied.delete(k);
    }
    if (entries.length > 0) out.push({ kind: 'set-configs', reason: 'throttle', entries });
  }

  private restoreConfigs(out: ExecutorEffect[]): void {
    const entries = [...this.snapshotConfigs.values()];
    for (const [k, e] of this.applied) if (!this.snapshotConfigs.has(k)) entries.push({ ...e, value: null });
    this.applied.clear();
    if (entries.length > 0) out.push({ kind: 'set-configs', reason: 'restore', entries });
  }

  status(now: number): ExecutorStatus {
    let total = 0;
    let done = 0;
    const count = { done: 0, inFlight: 0, pending: 0, held: 0, refused: 0 };
    for (const t of this.moves) {
      if (t.phase === 'held' || t.phase === 'refused') {
        count[t.phase === 'held' ? 'held' : 'refused']++;
        continue;
      }
      total += t.bytes;
      done += t.phase === 'done' ? t.bytes : t.copied;
      if (t.phase === 'done') count.done++;
      else if (t.phase === 'in-flight' || t.phase === 'cancelling') count.inFlight++;
      else if (t.phase === 'pending') count.pending++;
    }
    const activeMs = this.activeMs + (this.activeSince === null ? 0 : now - this.activeSince);
    const rate = activeMs > 0 ? (done * 1000) / activeMs : 0;
    const left = total - done;
    const s = this.latest;
    const b = this.baseline;
    return {
      state: this.current,
      ending: this.current === 'rolled-back' || (this.ending === 'cancel' && this.current === 'cancelled') ? null : this.ending,
      percent: total === 0 ? 100 : Math.floor((done / total) * 1000) / 10,
      bytesTotal: total,
      bytesDone: done,
      bytesLeft: left,
      bytesPerSec: Math.round(rate),
      etaSeconds: left === 0 ? 0 : rate > 0 ? Math.ceil(left / rate) : null,
      batch: this.batchNumber === 0 ? null : { number: this.batchNumber, moves: this.batchSize, bytes: this.batchBytes, inFlight: this.inFlight.length },
      moves: { total: this.moves.length, ...count },
      pauseReason: this.pauseReason,
      p99: {
        produceMs: s?.produceP99Ms ?? null,
        produceBaselineMs: b?.produceP99Ms ?? null,
        fetchMs: s?.fetchP99Ms ?? null,
        fetchBaselineMs: b?.fetchP99Ms ?? null,
        consumerLag: s?.consumerLag ?? null,
        consumerLagBaseline: b?.consumerLag ?? null,
      },
      throttleBytesPerSec: Object.fromEntries([...this.rates].map(([id, r]) => [String(id), r])),
    };
  }
}
