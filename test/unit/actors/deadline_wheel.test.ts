// DeadlineWheel on a hand-driven clock: no key expires before its deadline, every key expires
// no later than the first advance at or past deadline + one tick, each at most once, deleted
// keys never expire, and the wheel's timer runs only while a deadline is pending.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DeadlineWheel, type WheelClock } from '../../../src/actors/deadline_wheel.js';

class ManualClock implements WheelClock {
  t: number;
  running = 0;
  constructor(start: number) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  every(): () => void {
    this.running++;
    return () => this.running--;
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
            clock.t += o.ms;
            wheel.advance(clock.t);
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
