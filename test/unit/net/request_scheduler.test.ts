// The main thread's request priority classes on a simulated event loop: a poll phase submits
// requests, a check phase runs the deferred ticks. Properties: no turn runs more than the budget,
// every request runs exactly once, FIFO within a class, and a class that waits is served within
// one round (the sum of the weights) of queued runs, however long the other queues are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_CLASS_WEIGHTS, PRIORITY_CLASSES, RequestScheduler, priorityClassOf, type PriorityClass } from '../../../src/net/request_scheduler.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import { HeartbeatApi } from '../../../src/protocol/apis/heartbeat.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';

const ROUND = PRIORITY_CLASSES.reduce((s, c) => s + DEFAULT_CLASS_WEIGHTS[c], 0);

interface Run {
  readonly cls: PriorityClass;
  readonly seq: number;
  readonly turn: number;
  /** Whether it waited in a queue (ran from a tick) rather than at once. */
  readonly queued: boolean;
  /** Requests waiting per class as it was picked (itself included). */
  readonly waiting: Record<PriorityClass, number>;
}

/** A scheduler on a fake loop: `poll` submits, `check` runs one check phase's deferred callbacks. */
function simulate(budget: number) {
  let deferred: Array<() => void> = [];
  let turn = 0;
  let inTick = false;
  const runs: Run[] = [];
  const s = new RequestScheduler({ turnBudget: budget, weights: DEFAULT_CLASS_WEIGHTS, defer: (fn) => deferred.push(fn) });
  let seq = 0;
  return {
    s,
    runs,
    submit(cls: PriorityClass): void {
      const mine = seq++;
      s.submit(cls, () => {
        const waiting = Object.fromEntries(PRIORITY_CLASSES.map((c) => [c, s.queuedIn(c)])) as Record<PriorityClass, number>;
        if (inTick) waiting[cls]++;
        runs.push({ cls, seq: mine, turn, queued: inTick, waiting });
      });
    },
    check(): void {
      // A turn, as the scheduler counts it, starts with its tick and runs through the next poll phase.
      turn++;
      const now = deferred;
      deferred = [];
      inTick = true;
      for (const fn of now) fn();
      inTick = false;
    },
    drain(): void {
      for (let i = 0; i < 100_000 && (deferred.length > 0 || s.queued > 0); i++) this.check();
    },
    /** Each phase's requests submitted in one poll phase, a turn after each, then drained. */
    runPhases(phases: readonly (readonly PriorityClass[])[]): void {
      for (const phase of phases) {
        for (const cls of phase) this.submit(cls);
        this.check();
      }
      this.drain();
    },
  };
}

const classArb = fc.constantFrom(...PRIORITY_CLASSES);
/** Poll phases, each a list of submitted classes. */
const phasesArb = fc.array(fc.array(classArb, { maxLength: 60 }), { minLength: 1, maxLength: 12 });

test('no turn runs more than the budget, every request runs once, FIFO within a class', () => {
  fc.assert(
    fc.property(phasesArb, fc.integer({ min: 1, max: 20 }), (phases, budget) => {
      const sim = simulate(budget);
      sim.runPhases(phases);
      const perTurn = new Map<number, number>();
      for (const r of sim.runs) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
      for (const n of perTurn.values()) assert.ok(n <= budget, `a turn ran ${n} > ${budget}`);
      const total = phases.reduce((s, p) => s + p.length, 0);
      assert.equal(sim.runs.length, total);
      assert.equal(new Set(sim.runs.map((r) => r.seq)).size, total);
      for (const cls of PRIORITY_CLASSES) {
        const order = sim.runs.filter((r) => r.cls === cls).map((r) => r.seq);
        assert.deepEqual(order, [...order].sort((a, b) => a - b), `${cls} ran out of order`);
      }
      assert.equal(sim.s.queued, 0);
    }),
  );
});

test('a waiting class runs within one round of queued runs (no starvation beyond its weight)', () => {
  fc.assert(
    fc.property(phasesArb, fc.integer({ min: 1, max: 20 }), (phases, budget) => {
      const sim = simulate(budget);
      sim.runPhases(phases);
      const queuedRuns = sim.runs.filter((r) => r.queued);
      for (let i = 0; i < queuedRuns.length; i++) {
        for (const cls of PRIORITY_CLASSES) {
          if (queuedRuns[i]!.waiting[cls] === 0) continue;
          const window = queuedRuns.slice(i, i + ROUND).map((r) => r.cls);
          if (window.length < ROUND) continue;
          assert.ok(window.includes(cls), `${cls} waited through ${ROUND} queued runs: ${window.join(',')}`);
        }
      }
    }),
  );
});

test('a replica fetch behind a flood of Metadata runs within one round, not after the flood', () => {
  const sim = simulate(8);
  for (let i = 0; i < 500; i++) sim.submit('metadata');
  sim.submit('replication');
  sim.drain();
  const at = sim.runs.findIndex((r) => r.cls === 'replication');
  const queuedBefore = sim.runs.slice(0, at).filter((r) => r.queued).length;
  assert.ok(queuedBefore < ROUND, `the replica fetch waited for ${queuedBefore} queued Metadata requests`);
  // With the flood served one per round while the fetch waits, the whole flood still runs.
  assert.equal(sim.runs.length, 501);
});

test('with nothing waiting and room in the turn, a request runs at once', () => {
  const sim = simulate(4);
  sim.submit('metadata');
  assert.equal(sim.runs.length, 1);
  for (let i = 0; i < 5; i++) sim.submit('data');
  assert.equal(sim.runs.length, 4, 'the fifth request of the turn waits');
  assert.equal(sim.s.queued, 2);
  sim.check();
  assert.equal(sim.runs.length, 6);
});

test('tryRunNow claims a place in the turn only while nothing waits and the budget has room', () => {
  const sim = simulate(3);
  assert.equal(sim.s.tryRunNow(), true);
  assert.equal(sim.s.tryRunNow(), true);
  sim.submit('data');
  assert.equal(sim.runs.length, 1, 'the third place of the turn');
  assert.equal(sim.s.tryRunNow(), false, 'the budget is spent');
  sim.submit('replication');
  sim.check();
  assert.equal(sim.runs.length, 2, 'the waiting request ran in the next turn');
  sim.submit('metadata');
  assert.equal(sim.s.queued, 0);
  assert.equal(sim.runs.length, 3);
  for (let i = 0; i < 3; i++) sim.submit('metadata');
  assert.equal(sim.s.queued, 2);
  assert.equal(sim.s.tryRunNow(), false, 'the budget is spent');
  sim.check();
  assert.equal(sim.s.queued, 0);
  assert.equal(sim.s.tryRunNow(), true, 'the queue drained within the turn, which still has room');
});

test('a request dispatched while others wait, though the turn has room, queues behind them', () => {
  let deferred: Array<() => void> = [];
  const s = new RequestScheduler({ turnBudget: 4, weights: DEFAULT_CLASS_WEIGHTS, defer: (fn) => deferred.push(fn) });
  const claims: boolean[] = [];
  for (let i = 0; i < 4; i++) s.submit('metadata', () => undefined);
  // The first queued request's connection dispatches its next one as it runs (pump), while two wait.
  s.submit('metadata', () => claims.push(s.tryRunNow()));
  s.submit('metadata', () => undefined);
  s.submit('metadata', () => undefined);
  const now = deferred;
  deferred = [];
  for (const fn of now) fn();
  assert.deepEqual(claims, [false]);
});

test('classes: replica fetch, group traffic, data, metadata', () => {
  const fetch = (version: number, replicaId: number): unknown => ({ replicaId: version >= 15 ? -1 : replicaId, replicaState: { replicaId, replicaEpoch: 1 } });
  assert.equal(priorityClassOf(FetchApi.key, 17, fetch(17, 2)), 'replication');
  assert.equal(priorityClassOf(FetchApi.key, 11, fetch(11, 2)), 'replication');
  assert.equal(priorityClassOf(FetchApi.key, 17, fetch(17, -1)), 'data');
  assert.equal(priorityClassOf(HeartbeatApi.key, 4, {}), 'coordination');
  assert.equal(priorityClassOf(MetadataApi.key, 12, {}), 'metadata');
  assert.equal(priorityClassOf(ProduceApi.key, 9, {}), 'data');
});

test('weights and budget must be positive integers', () => {
  assert.throws(() => new RequestScheduler({ turnBudget: 0, weights: DEFAULT_CLASS_WEIGHTS, defer: () => {} }), RangeError);
  assert.throws(() => new RequestScheduler({ turnBudget: 4, weights: { ...DEFAULT_CLASS_WEIGHTS, metadata: 0 }, defer: () => {} }), RangeError);
});
