// DeadlineWheel on a hand-driven clock whose timers the test fires as time passes: no key expires
// before its deadline, every key expires by its own timer no later than deadline + one tick, each
// at most once, deleted keys never expire, exactly one timer is armed while a deadline is pending
// and none when idle, and the timer does not fire while nothing is due.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DeadlineWheel, type WheelClock } from '../../../src/actors/deadline_wheel.js';

class ManualClock implements WheelClock {
  t: number;
  /** Armed timers, by id. */
  readonly timers = new Map<number, { due: number; fn: () => void }>();
  fired = 0;
  private nextId = 0;
  constructor(start: number) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  after(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.timers.set(id, { due: this.t + ms, fn });
    return () => this.timers.delete(id);
  }
  get running(): number {
    return this.timers.size;
  }
  /** Moves time on by `ms`, firing each timer that falls due on the way, at its due time. */
  pass(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].due <= end && (next === undefined || e[1].due < next[1].due)) next = e;
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].due);
      this.fired++;
      next[1].fn();
    }
    this.t = end;
  }
}

/** Times in eighths of a millisecond: fractional, yet spread evenly (fc.double favours edge values). */
const eighths = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max: max * 8 }).map((n) => n / 8);

type Op = { kind: 'add'; key: number; inMs: number } | { kind: 'delete'; key: number } | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), key: fc.integer({ min: 0, max: 15 }), inMs: eighths(200) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 15 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: eighths(40) }) },
);

describe('DeadlineWheel', () => {
  it('expires each key once, never early, within one tick of its deadline', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), eighths(1e6), fc.array(op, { maxLength: 150 }), (tickMs, start, ops) => {
        const clock = new ManualClock(start);
        const deadlineOf = new Map<number, number>();
        const wheel = new DeadlineWheel<number>(tickMs, (key) => {
          const deadline = deadlineOf.get(key);
          assert.ok(deadline !== undefined, `key ${key} expired while not pending (or twice)`);
          assert.ok(clock.t >= deadline, `key ${key} expired at ${clock.t}, before its deadline ${deadline}`);
          deadlineOf.delete(key);
        }, clock);
        for (const o of ops) {
          if (o.kind === 'add') {
            deadlineOf.set(o.key, clock.t + o.inMs);
            wheel.add(o.key, clock.t + o.inMs);
          } else if (o.kind === 'delete') {
            deadlineOf.delete(o.key);
            wheel.delete(o.key);
          } else {
            clock.pass(o.ms);
            for (const [key, deadline] of deadlineOf) {
              assert.ok(clock.t < deadline + tickMs, `key ${key} (deadline ${deadline}) still pending at ${clock.t}, tick ${tickMs}`);
            }
          }
          assert.equal(wheel.size, deadlineOf.size);
          assert.equal(clock.running, deadlineOf.size > 0 ? 1 : 0, 'one timer while pending, none when idle');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('lets an expiring key delete another key of the same tick', () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const wheel: DeadlineWheel<number> = new DeadlineWheel<number>(10, (key) => {
      fired.push(key);
      wheel.delete(key === 1 ? 2 : 1);
    }, clock);
    wheel.add(1, 5);
    wheel.add(2, 6);
    clock.t = 10;
    wheel.advance(10);
    assert.equal(fired.length, 1);
    assert.equal(wheel.size, 0);
  });
});

describe('DeadlineWheel timer', () => {
  it('wakes once per deadline that falls due, not once per tick, while deadlines are pending', () => {
    const clock = new ManualClock(0);
    const expired: number[] = [];
    const wheel = new DeadlineWheel<number>(10, (key) => expired.push(key), clock);
    // A steady stream of requests answered long before their 30 s timeout: none falls due.
    for (let i = 0; i < 1000; i++) {
      wheel.add(i, clock.t + 30_000);
      clock.pass(5);
      wheel.delete(i);
      wheel.add(i + 10_000, clock.t + 30_000);
      clock.pass(5);
      wheel.delete(i + 10_000);
    }
    assert.equal(clock.fired, 0, 'no wake-up in 10 s of traffic whose deadlines were all 30 s away');
    wheel.add(1, clock.t + 30_000);
    wheel.add(2, clock.t + 100);
    clock.pass(200);
    assert.deepEqual(expired, [2]);
    assert.equal(clock.fired, 1);
    clock.pass(30_000);
    assert.deepEqual(expired, [2, 1]);
    assert.equal(clock.running, 0);
  });
});
