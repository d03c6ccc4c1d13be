// The reassignment executor against a model of the controller's KIP-455 behaviour: random plans,
// options and schedules (ticks, healthy and breaching samples, moves completing, operator
// commands), checking after every event that batches fit the byte budget and per-broker
// concurrency, go cold first, submit each move once, submit nothing while paused, pause on a
// breach at once, throttle only moving replicas, and that cancel and rollback end where they must;
// plus the same inputs giving the same effects, and a few worked examples.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DEFAULT_MIN_P99_RISE_MS,
  FOLLOWER_RATE,
  FOLLOWER_REPLICAS,
  LEADER_REPLICAS,
  ReassignmentExecutor,
  coldFirst,
  type Assignment,
  type ConfigEntry,
  type ExecutorEffect,
  type ExecutorEvent,
  type ExecutorOptions,
  type ExecutorState,
  type MetricsSample,
} from '../../../../src/cluster/expansion/executor.js';
import { addedReplicas, type LeadershipChange, type PartitionMove } from '../../../../src/cluster/expansion/model.js';
import { DEFAULT_THROTTLE } from '../../../../src/cluster/expansion/throttle.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { Kip455Controller, configKey, partitionKey } from '../../../sim/expansion/kip455.js';

const BROKERS = 6;
const BASELINE = { produceP99Ms: 10, fetchP99Ms: 10, consumerLag: 100 };
const HEALTHY: MetricsSample = { produceP99Ms: 11, fetchP99Ms: 9, consumerLag: 90, brokers: [] };
const BREACH: MetricsSample = { produceP99Ms: 80, fetchP99Ms: 9, consumerLag: 90, brokers: [] };
const SNAPSHOT_CONFIGS: ConfigEntry[] = [
  { resource: 'topic', name: 'a', key: FOLLOWER_REPLICAS, value: '0:5' },
  { resource: 'broker', name: '0', key: FOLLOWER_RATE, value: '5000000' },
  { resource: 'topic', name: 'b', key: LEADER_REPLICAS, value: null },
];

interface Plan {
  readonly moves: PartitionMove[];
  readonly changes: LeadershipChange[];
}

const replicaSet = (rf: number) => fc.shuffledSubarray([...Array(BROKERS).keys()], { minLength: rf, maxLength: rf });

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    moves: fc.uniqueArray(
      fc.record({
        topic: fc.constantFrom('a', 'b'),
        partition: fc.nat(20),
        rf: fc.integer({ min: 1, max: 3 }),
        seed: fc.nat(),
        sizeBytes: fc.nat(1000),
        bytesInPerSec: fc.nat(100),
      }),
      { selector: (m) => `${m.topic}:${m.partition}`, maxLength: 14 },
    ),
    changes: fc.uniqueArray(fc.nat(5), { maxLength: 3 }),
  })
  .chain(({ moves, changes }) =>
    fc.tuple(
      fc.tuple(...moves.map((m) => fc.tuple(replicaSet(m.rf), replicaSet(m.rf)))),
      fc.tuple(...changes.map(() => replicaSet(3))),
    ).map(([sets, changeSets]) => ({
      moves: moves.map((m, i) => ({ topic: m.topic, partition: m.partition, from: sets[i]![0], to: sets[i]![1], sizeBytes: m.sizeBytes, bytesInPerSec: m.bytesInPerSec })),
      changes: changes.map((p, i) => ({ topic: 'l', partition: p, from: changeSets[i]!, to: [...changeSets[i]!.slice(1), changeSets[i]![0]!] })),
    })),
  );

const optionsArb: fc.Arbitrary<ExecutorOptions> = fc.record({
  batchBytes: fc.integer({ min: 1, max: 3000 }),
  perBrokerMoves: fc.integer({ min: 1, max: 4 }),
  hotBytesPerSec: fc.nat(120),
  includeHot: fc.boolean(),
  observationMs: fc.nat(20_000),
  breach: fc.constant({ produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }),
  healthyHoldMs: fc.nat(30_000),
  throttle: fc.constant(DEFAULT_THROTTLE),
  lookahead: fc.nat(5),
});

type Step =
  | { readonly dt: number; readonly kind: 'tick' | 'healthy' | 'breach' | 'pause' | 'resume' | 'cancel' | 'rollback' }
  | { readonly dt: number; readonly kind: 'complete'; readonly pick: number };

const stepArb = (commands: boolean): fc.Arbitrary<Step> =>
  fc.oneof(
    fc.record({ dt: fc.nat(6000), kind: fc.constantFrom('tick' as const, 'healthy' as const, 'breach' as const) }),
    fc.record({ dt: fc.nat(6000), kind: fc.constant('complete' as const), pick: fc.nat() }),
    ...(commands ? [fc.record({ dt: fc.nat(6000), kind: fc.constantFrom('pause' as const, 'resume' as const, 'cancel' as const, 'rollback' as const) })] : []),
  );

function snapshotOf(plan: Plan): Assignment[] {
  return [...plan.moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.from })), ...plan.changes.map((c) => ({ topic: c.topic, partition: c.partition, replicas: c.from }))];
}

const usage = (now: number): MetricsSample['brokers'] =>
  [...Array(BROKERS).keys()].map((id) => ({ id, cpu: ((id + now / 1000) % 7) / 10, nic: 0.3, disk: 0.2, cpuBytesPerSec: 1e9, nicBytesPerSec: 1.25e9, diskBytesPerSec: 5e8, replicationBytesPerSec: 0 }));

interface Run {
  readonly log: { readonly event: ExecutorEvent; readonly effects: readonly ExecutorEffect[] }[];
  readonly executor: ReassignmentExecutor;
  readonly controller: Kip455Controller;
  /** Partitions reassigning when the first cancel or rollback was fed. */
  readonly inFlightAtEnd: ReadonlySet<string> | null;
  readonly ended: 'cancel' | 'rollback' | null;
}

/**
 * Runs a schedule, checking the per-event invariants as it goes, then (when `drain`) completes
 * every reassignment with healthy samples until the executor reaches an end state.
 */
function run(plan: Plan, options: ExecutorOptions, steps: readonly Step[], drain: boolean): Run {
  const racks = new Map([...Array(BROKERS).keys()].map((id) => [id, `az${id % 2}/r${id % 3}`]));
  const controller = new Kip455Controller(snapshotOf(plan), undefined, SNAPSHOT_CONFIGS);
  const executor = new ReassignmentExecutor(plan.moves, plan.changes, options, racks);
  const log: Run['log'] = [];
  const byKey = new Map(plan.moves.map((m) => [partitionKey(m.topic, m.partition), m]));
  const submitted = new Set<string>();
  let state: ExecutorState = 'planned';
  let ended: Run['ended'] = null;
  let inFlightAtEnd: Set<string> | null = null;

  const checkSubmit = (targets: readonly Assignment[]): void => {
    const bytes = targets.reduce((sum, t) => sum + byKey.get(partitionKey(t.topic, t.partition))!.sizeBytes * addedReplicas({ from: controller.observe(partitionKey(t.topic, t.partition)).replicas, to: t.replicas }).length, 0);
    assert.ok(targets.length === 1 || bytes <= options.batchBytes, `batch of ${bytes} bytes over the budget ${options.batchBytes}`);
    const load = new Map<number, number>();
    for (const t of targets) {
      const now = controller.observe(partitionKey(t.topic, t.partition));
      const added = addedReplicas({ from: now.replicas, to: t.replicas });
      for (const b of new Set([...added, ...(added.length > 0 ? [now.leader] : [])])) load.set(b, (load.get(b) ?? 0) + 1);
    }
    for (const [b, n] of load) assert.ok(n <= options.perBrokerMoves, `broker ${b} has ${n} moves in one batch`);
    // Cold first: the batch starts at the coldest move not yet submitted and not held.
    const pending = plan.moves.filter((m) => !submitted.has(partitionKey(m.topic, m.partition)) && (options.includeHot || m.bytesInPerSec <= options.hotBytesPerSec)).sort(coldFirst);
    const first = targets[0]!;
    assert.equal(partitionKey(first.topic, first.partition), partitionKey(pending[0]!.topic, pending[0]!.partition), 'a batch starts at the coldest pending move');
    for (const t of targets) {
      const key = partitionKey(t.topic, t.partition);
      assert.ok(!submitted.has(key), `${key} submitted twice`);
      assert.ok(options.includeHot || byKey.get(key)!.bytesInPerSec <= options.hotBytesPerSec, `hot ${key} submitted`);
      submitted.add(key);
    }
  };

  const feed = (event: ExecutorEvent): void => {
    const before = state;
    const effects = executor.handle(event);
    log.push({ event, effects });
    for (const e of effects) {
      if (e.kind === 'state') {
        assert.equal(e.from, state);
        state = e.to;
      } else if (e.kind === 'submit' && ended === 'cancel') {
        assert.fail('a batch submitted after a cancel');
      } else if (e.kind === 'submit' && ended === null) {
        assert.equal(state, 'running', 'a plan move submitted while not running');
        checkSubmit(e.targets);
      }
    }
    if (event.kind === 'metrics' && event.sample.produceP99Ms === BREACH.produceP99Ms && before === 'running' && ended === null) {
      const left = executor.status(event.now).moves;
      if (left.pending === 0 && left.inFlight === 0) assert.equal(state, 'done', 'a breach with nothing left to hold ends the run');
      else assert.equal(state, 'paused', 'a breach while running pauses at once');
    }
    controller.apply(effects);
    const observed = controller.drainChanged();
    if (observed.length > 0) feed({ kind: 'partitions', now: event.now, observed });
  };

  /** Throttled replica lists name only replicas being added or copied from, besides the snapshot's. */
  const checkThrottles = (): void => {
    const reassigning = new Map(controller.reassigning().map((k) => [k, controller.observe(k)]));
    for (const [key, value] of controller.configs) {
      const [resource, topic, name] = key.split('|');
      if (resource !== 'topic' || (name !== FOLLOWER_REPLICAS && name !== LEADER_REPLICAS)) continue;
      const before = SNAPSHOT_CONFIGS.find((c) => configKey(c) === key)?.value?.split(',') ?? [];
      for (const item of value.split(',')) {
        if (before.includes(item)) continue;
        const [p, b] = item.split(':').map(Number);
        const o = reassigning.get(partitionKey(topic!, p!));
        assert.ok(o !== undefined, `${key} lists ${item} of a partition not moving`);
        const allowed = name === FOLLOWER_REPLICAS ? o.addingReplicas : o.replicas.filter((r) => !o.addingReplicas.includes(r));
        assert.ok(allowed.includes(b!), `${key} lists ${item}`);
      }
    }
  };

  let now = 1_000;
  feed({ kind: 'start', now, baseline: BASELINE, snapshot: { assignment: snapshotOf(plan), configs: SNAPSHOT_CONFIGS } });
  const step = (s: Step): void => {
    now += s.dt;
    switch (s.kind) {
      case 'tick':
        feed({ kind: 'tick', now });
        break;
      case 'healthy':
      case 'breach':
        feed({ kind: 'metrics', now, sample: { ...(s.kind === 'healthy' ? HEALTHY : BREACH), brokers: usage(now) } });
        break;
      case 'complete': {
        const moving = controller.reassigning();
        if (moving.length > 0) controller.complete(moving[s.pick % moving.length]!);
        feed({ kind: 'partitions', now, observed: controller.drainChanged() });
        break;
      }
      default:
        if (s.kind === 'cancel' && ended === null) inFlightAtEnd = new Set(controller.reassigning());
        if (s.kind === 'rollback' || (s.kind === 'cancel' && ended === null)) ended = s.kind;
        feed({ kind: s.kind, now });
    }
    checkThrottles();
  };
  for (const s of steps) step(s);
  if (drain) {
    feed({ kind: 'resume', now });
    const settled = (): boolean => ['done', 'cancelled', 'rolled-back'].includes(executor.state) && executor.status(now).ending === null;
    for (let i = 0; i < 10_000 && !settled(); i++) {
      now += 5000;
      for (const k of controller.reassigning()) controller.complete(k);
      feed({ kind: 'partitions', now, observed: controller.drainChanged() });
      feed({ kind: 'metrics', now, sample: HEALTHY });
      checkThrottles();
    }
  }
  return { log, executor, controller, inFlightAtEnd, ended };
}

describe('reassignment executor', () => {
  it('keeps its invariants under any schedule and ends where each ending says', () => {
    fc.assert(
      fc.property(planArb, optionsArb, fc.array(stepArb(true), { maxLength: 40 }), (plan, options, steps) => {
        const r = run(plan, options, steps, true);
        const state = r.executor.state;
        const final = new Map(r.controller.assignment().map((a) => [partitionKey(a.topic, a.partition), a.replicas]));
        const snapshot = snapshotOf(plan);
        if (r.ended === 'rollback') {
          assert.equal(state, 'rolled-back');
          for (const a of snapshot) assert.deepEqual(final.get(partitionKey(a.topic, a.partition)), [...a.replicas]);
          const expected = new Map(SNAPSHOT_CONFIGS.filter((c) => c.value !== null).map((c) => [configKey(c), c.value]));
          assert.deepEqual(new Map(r.controller.configs), expected);
        } else if (r.ended === 'cancel' && state === 'cancelled') {
          for (const m of plan.moves) {
            const key = partitionKey(m.topic, m.partition);
            const replicas = final.get(key)!;
            if (r.inFlightAtEnd!.has(key)) assert.deepEqual(replicas, [...m.from], `${key} was in flight at the cancel`);
            else assert.ok([m.from, m.to].some((l) => l.join() === replicas.join()), `${key} is neither original nor target`);
          }
          assert.equal(r.controller.reassigning().length, 0);
        } else {
          // No ending, or a cancel that came after the plan was done.
          assert.equal(state, 'done');
          for (const m of plan.moves) {
            const hot = !options.includeHot && m.bytesInPerSec > options.hotBytesPerSec;
            assert.deepEqual(final.get(partitionKey(m.topic, m.partition)), [...(hot ? m.from : m.to)]);
          }
          for (const c of plan.changes) assert.deepEqual(final.get(partitionKey(c.topic, c.partition)), c.to);
        }
        if (state !== 'rolled-back') {
          // Throttles cleared: every config is back to its snapshot value.
          const expected = new Map(SNAPSHOT_CONFIGS.filter((c) => c.value !== null).map((c) => [configKey(c), c.value]));
          assert.deepEqual(new Map(r.controller.configs), expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('submits every cold move in cold-first order when concurrency does not bind', () => {
    fc.assert(
      fc.property(planArb, optionsArb, (plan, options) => {
        const opts = { ...options, perBrokerMoves: 100 };
        const r = run(plan, opts, [], true);
        const order = r.log.flatMap((l) => l.effects.flatMap((e) => (e.kind === 'submit' ? e.targets.map((t) => partitionKey(t.topic, t.partition)) : [])));
        const expected = plan.moves.filter((m) => opts.includeHot || m.bytesInPerSec <= opts.hotBytesPerSec).sort(coldFirst).map((m) => partitionKey(m.topic, m.partition));
        assert.deepEqual(order, expected);
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same effects for the same inputs (dry-run determinism), and its preview is the batches an uninterrupted run submits', () => {
    fc.assert(
      fc.property(planArb, optionsArb, fc.array(stepArb(true), { maxLength: 30 }), (plan, options, steps) => {
        const a = run(plan, options, steps, true);
        const b = run(plan, options, steps, true);
        assert.equal(JSON.stringify(a.log), JSON.stringify(b.log));
        const calm = { ...options, observationMs: 0 };
        const preview = new ReassignmentExecutor(plan.moves, [], calm, new Map()).previewBatches();
        const executed = run({ moves: plan.moves, changes: [] }, calm, [], true).log.flatMap((l) => l.effects.flatMap((e) => (e.kind === 'submit' ? [e.targets] : [])));
        assert.deepEqual(executed, preview);
      }),
      { numRuns: 150 },
    );
  });

  it('auto-resumes a breach pause after the healthy hold, never an operator pause', () => {
    const moves: PartitionMove[] = [0, 1, 2].map((p) => ({ topic: 'a', partition: p, from: [0, 1], to: [0, 2], sizeBytes: 100, bytesInPerSec: p }));
    const options: ExecutorOptions = { batchBytes: 100, perBrokerMoves: 1, hotBytesPerSec: 1e9, includeHot: false, observationMs: 10_000, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 30_000, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const plan = { moves, changes: [] };
    const r = run(plan, options, [{ dt: 1000, kind: 'breach' }, { dt: 5000, kind: 'healthy' }, { dt: 20_000, kind: 'healthy' }], false);
    assert.equal(r.executor.state, 'paused');
    const pause = r.log.flatMap((l) => l.effects).filter((e) => e.kind === 'log' && e.message.startsWith('reassignment paused'));
    assert.equal(pause.length, 1);
    assert.match(r.executor.status(0).pauseReason ?? '', /produce p99 80.0 ms is 8.00x the baseline 10.0 ms/);
    const resumed = run(plan, options, [{ dt: 1000, kind: 'breach' }, { dt: 5000, kind: 'healthy' }, { dt: 30_000, kind: 'healthy' }], false);
    assert.equal(resumed.executor.state, 'running');
    const operator = run(plan, options, [{ dt: 1000, kind: 'pause' }, { dt: 5000, kind: 'healthy' }, { dt: 60_000, kind: 'healthy' }], false);
    assert.equal(operator.executor.state, 'paused');
  });

  it('needs a p99 to rise by the minimum as well as the ratio: 4x a 10 ms baseline is noise, 70 ms over it is not', () => {
    const moves: PartitionMove[] = [{ topic: 'a', partition: 0, from: [0, 1], to: [0, 2], sizeBytes: 100, bytesInPerSec: 1 }];
    const start = (minP99RiseMs?: number): ReassignmentExecutor => {
      const options: ExecutorOptions = { batchBytes: 100, perBrokerMoves: 1, hotBytesPerSec: 1e9, includeHot: false, observationMs: 0, breach: { produceP99: 2, fetchP99: 2, consumerLag: 2, ...(minP99RiseMs === undefined ? {} : { minP99RiseMs }) }, healthyHoldMs: 5_000, throttle: DEFAULT_THROTTLE, lookahead: 0 };
      const ex = new ReassignmentExecutor(moves, [], options, new Map());
      ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot: { assignment: moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.from })), configs: [] } });
      return ex;
    };
    const noisy: MetricsSample = { ...HEALTHY, fetchP99Ms: 40 };
    const byDefault = start();
    byDefault.handle({ kind: 'metrics', now: 1000, sample: noisy });
    assert.equal(byDefault.state, 'running', `${DEFAULT_MIN_P99_RISE_MS} ms is the default minimum rise`);
    byDefault.handle({ kind: 'metrics', now: 2000, sample: { ...HEALTHY, fetchP99Ms: 80 } });
    assert.equal(byDefault.state, 'paused');
    const strict = start(0);
    strict.handle({ kind: 'metrics', now: 1000, sample: noisy });
    assert.equal(strict.state, 'paused', 'with no minimum rise the ratio alone decides');
  });

  it('pauses on a lag over its ratio only while it grows: a high lag that holds or shrinks lets the pause end', () => {
    const moves: PartitionMove[] = [0, 1, 2].map((p) => ({ topic: 'a', partition: p, from: [0, 1], to: [0, 2], sizeBytes: 100, bytesInPerSec: p }));
    const options: ExecutorOptions = { batchBytes: 100, perBrokerMoves: 1, hotBytesPerSec: 1e9, includeHot: false, observationMs: 10_000, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 5_000, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const ex = new ReassignmentExecutor(moves, [], options, new Map());
    ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot: { assignment: moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.from })), configs: [] } });
    const lagging = (lag: number): MetricsSample => ({ ...HEALTHY, consumerLag: lag });
    ex.handle({ kind: 'metrics', now: 1000, sample: lagging(150) });
    ex.handle({ kind: 'metrics', now: 2000, sample: lagging(400) });
    assert.equal(ex.state, 'paused');
    assert.match(ex.status(2000).pauseReason ?? '', /consumer lag 400.0 is 4.00x the baseline 100.0 \(limit 2x\) and growing/);
    ex.handle({ kind: 'metrics', now: 3000, sample: lagging(400) });
    ex.handle({ kind: 'metrics', now: 6000, sample: lagging(380) });
    ex.handle({ kind: 'metrics', now: 9000, sample: lagging(370) });
    assert.equal(ex.state, 'running', 'a lag that stopped growing for the healthy hold ends the pause');
  });

  it('holds hot moves, sends an oversized move alone, and reports progress as JSON', () => {
    const moves: PartitionMove[] = [
      { topic: 't', partition: 0, from: [0], to: [1], sizeBytes: 500, bytesInPerSec: 1 },
      { topic: 't', partition: 1, from: [0], to: [2], sizeBytes: 50, bytesInPerSec: 2 },
      { topic: 't', partition: 2, from: [0], to: [3], sizeBytes: 50, bytesInPerSec: 500 },
    ];
    const options: ExecutorOptions = { batchBytes: 100, perBrokerMoves: 4, hotBytesPerSec: 100, includeHot: false, observationMs: 0, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 0, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const r = run({ moves, changes: [] }, options, [{ dt: 2000, kind: 'healthy' }], false);
    const firstBatch = r.log.flatMap((l) => l.effects).find((e) => e.kind === 'submit');
    assert.deepEqual(firstBatch, { kind: 'submit', batch: 1, targets: [{ topic: 't', partition: 0, replicas: [1] }] });
    const status = r.executor.status(3000);
    assert.equal(status.state, 'running');
    assert.deepEqual(status.moves, { total: 3, done: 0, inFlight: 1, pending: 1, held: 1, refused: 0 });
    assert.equal(status.bytesTotal, 550);
    assert.deepEqual(status.batch, { number: 1, moves: 1, bytes: 500, inFlight: 1 });
    assert.equal(status.p99.produceMs, HEALTHY.produceP99Ms);
    const done = run({ moves, changes: [] }, options, [], true);
    assert.equal(done.executor.state, 'done');
    const end = done.executor.status(100_000);
    assert.equal(end.percent, 100);
    assert.equal(end.bytesLeft, 0);
    assert.equal(end.moves.held, 1);
    assert.ok(done.log.some((l) => l.effects.some((e) => e.kind === 'state' && e.reason.includes('1 hot moves held'))));
  });

  it('drops moves the controller refused: no longer in flight, not retried, counted, and the plan still completes', () => {
    const moves: PartitionMove[] = [0, 1].map((p) => ({ topic: 't', partition: p, from: [0, 1], to: [0, 2], sizeBytes: 10, bytesInPerSec: p }));
    const options: ExecutorOptions = { batchBytes: 1000, perBrokerMoves: 4, hotBytesPerSec: 1e9, includeHot: false, observationMs: 0, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 0, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const ex = new ReassignmentExecutor(moves, [], options, new Map());
    const snapshot = { assignment: moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.from })), configs: [] };
    const first = ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot });
    assert.equal(first.filter((e) => e.kind === 'submit').length, 1);
    const refused = ex.handle({ kind: 'refused', now: 1, partitions: [{ topic: 't', partition: 1 }], reason: 'INVALID_REPLICA_ASSIGNMENT' });
    assert.ok(refused.some((e) => e.kind === 'log' && e.level === 'warn' && e.message.includes('t:1')));
    assert.deepEqual(ex.status(1).moves, { total: 2, done: 0, inFlight: 1, pending: 0, held: 0, refused: 1 });
    const end = ex.handle({ kind: 'partitions', now: 2, observed: [{ topic: 't', partition: 0, replicas: [0, 2], addingReplicas: [], removingReplicas: [], leader: 0 }] });
    assert.equal(ex.state, 'done');
    assert.equal(end.filter((e) => e.kind === 'submit').length, 0);
    assert.ok(end.some((e) => e.kind === 'state' && e.reason.includes('1 moves refused')));
  });

  it('ends done, not paused, when a breach pauses it after its last move was submitted and that move completes', () => {
    const moves: PartitionMove[] = [{ topic: 't', partition: 0, from: [0, 1], to: [0, 2], sizeBytes: 10, bytesInPerSec: 1 }];
    const options: ExecutorOptions = { batchBytes: 1000, perBrokerMoves: 4, hotBytesPerSec: 1e9, includeHot: false, observationMs: 0, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 60_000, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const ex = new ReassignmentExecutor(moves, [], options, new Map());
    ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot: { assignment: [{ topic: 't', partition: 0, replicas: [0, 1] }], configs: [] } });
    ex.handle({ kind: 'metrics', now: 1, sample: BREACH });
    assert.equal(ex.state, 'paused');
    const end = ex.handle({ kind: 'partitions', now: 2, observed: [{ topic: 't', partition: 0, replicas: [0, 2], addingReplicas: [], removingReplicas: [], leader: 0 }] });
    assert.equal(ex.state, 'done', 'nothing is left for the pause to hold');
    assert.equal(ex.status(2).pauseReason, null);
    assert.ok(end.some((e) => e.kind === 'set-configs'), 'the throttles are cleared');
  });

  it('resumes a run whose driver died: moves the cluster already made are done before anything is submitted, the rest run', () => {
    const moves: PartitionMove[] = [0, 1, 2].map((p) => ({ topic: 't', partition: p, from: [0, 1], to: [0, 2], sizeBytes: 10, bytesInPerSec: p }));
    const options: ExecutorOptions = { batchBytes: 1000, perBrokerMoves: 4, hotBytesPerSec: 1e9, includeHot: false, observationMs: 0, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 0, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const ex = new ReassignmentExecutor(moves, [], options, new Map());
    const snapshot = { assignment: moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.from })), configs: [] };
    // Partition 0 was moved by the dead driver; 1 is still where it started; 2 is mid-move.
    ex.handle({ kind: 'partitions', now: 0, observed: [
      { topic: 't', partition: 0, replicas: [0, 2], addingReplicas: [], removingReplicas: [], leader: 0 },
      { topic: 't', partition: 1, replicas: [0, 1], addingReplicas: [], removingReplicas: [], leader: 0 },
      { topic: 't', partition: 2, replicas: [0, 2, 1], addingReplicas: [2], removingReplicas: [1], leader: 0 },
    ] });
    const started = ex.handle({ kind: 'start', now: 1, baseline: BASELINE, snapshot });
    assert.deepEqual(started.filter((e) => e.kind === 'submit').flatMap((e) => e.kind === 'submit' ? e.targets.map((t) => t.partition) : []).sort(), [1, 2]);
    assert.deepEqual(ex.status(1).moves, { total: 3, done: 1, inFlight: 2, pending: 0, held: 0, refused: 0 });
    ex.handle({ kind: 'partitions', now: 2, observed: [1, 2].map((partition) => ({ topic: 't', partition, replicas: [0, 2], addingReplicas: [], removingReplicas: [], leader: 0 })) });
    assert.equal(ex.state, 'done');
    assert.equal(ex.status(2).percent, 100);
  });

  it('rolls back from a snapshot alone (no moves, as the CLI does when no driver is left): unfinished until metadata matches it', () => {
    const options: ExecutorOptions = { batchBytes: 1000, perBrokerMoves: 4, hotBytesPerSec: 1e9, includeHot: false, observationMs: 0, breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 }, healthyHoldMs: 0, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const ex = new ReassignmentExecutor([], [], options, new Map());
    ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot: { assignment: [{ topic: 't', partition: 0, replicas: [1, 2] }], configs: [] } });
    assert.equal(ex.state, 'done');
    assert.equal(ex.finished, true);
    ex.handle({ kind: 'partitions', now: 1, observed: [{ topic: 't', partition: 0, replicas: [2, 1], addingReplicas: [], removingReplicas: [], leader: 2 }] });
    const back = ex.handle({ kind: 'rollback', now: 2 });
    assert.deepEqual(back.find((e) => e.kind === 'submit'), { kind: 'submit', batch: 1, targets: [{ topic: 't', partition: 0, replicas: [1, 2] }] });
    assert.equal(ex.finished, false, 'a rollback under way is not finished though the state still reads done');
    ex.handle({ kind: 'partitions', now: 3, observed: [{ topic: 't', partition: 0, replicas: [1, 2], addingReplicas: [], removingReplicas: [], leader: 1 }] });
    assert.equal(ex.state, 'rolled-back');
    assert.equal(ex.finished, true);
  });

  it('refuses a plan that names a partition twice or a replica list with repeats, with a Kafka error code', () => {
    const m: PartitionMove = { topic: 't', partition: 0, from: [0], to: [1], sizeBytes: 1, bytesInPerSec: 1 };
    const options: ExecutorOptions = { batchBytes: 1, perBrokerMoves: 1, hotBytesPerSec: 1, includeHot: true, observationMs: 0, breach: { produceP99: 2, fetchP99: 2, consumerLag: 2 }, healthyHoldMs: 0, throttle: DEFAULT_THROTTLE, lookahead: 0 };
    const code = (f: () => unknown): number => {
      try {
        f();
      } catch (e) {
        if (e instanceof KafkaError) return e.code;
      }
      return -1;
    };
    assert.equal(code(() => new ReassignmentExecutor([m, m], [], options, new Map())), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(code(() => new ReassignmentExecutor([{ ...m, to: [1, 1] }], [], options, new Map())), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(code(() => new ReassignmentExecutor([m], [], { ...options, perBrokerMoves: 0 }, new Map())), ErrorCode.INVALID_CONFIG);
    const ex = new ReassignmentExecutor([m], [], options, new Map());
    assert.equal(code(() => ex.handle({ kind: 'start', now: 0, baseline: BASELINE, snapshot: { assignment: [], configs: [] } })), ErrorCode.INVALID_REQUEST);
  });
});
