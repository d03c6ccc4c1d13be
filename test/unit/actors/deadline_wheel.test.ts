// DeadlineWheel on a hand-driven clock whose timers the test fires as time passes: no key expires
// before its deadline, every key expires by its own timer no later than deadline + one tick, each
// at most once, deleted keys never expire, exactly one timer is armed while a deadline is pending
// and at most one when idle (the last, left to fire once rather than cancelled: it then arms
// nothing), and the timer does not fire while nothing is due. The same holds with timers
// firing late (within one tick plus the lateness), with keys re-added from expiry callbacks and
// across quiet spells of hours; no timer is ever re-armed for a time already past (counted), the
// timer is not rounded up to whole milliseconds, and a quiet spell is not walked tick by tick.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DeadlineWheel, type WheelClock } from '../../../src/actors/deadline_wheel.js';

class ManualClock implements WheelClock {
  t: number;
  /** Armed timers, by id. */
  readonly timers = new Map<number, { due: number; fn: () => void }>();
  fired = 0;
  /** Timers armed so far (after() calls). */
  armed = 0;
  /** How late the next timer fires, past the time it was armed for (the event loop was busy). */
  lateness: () => number = () => 0;
  private nextId = 0;
  private lastFiredAt = -Infinity;
  constructor(start: number) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  after(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.armed++;
    this.timers.set(id, { due: this.t + ms + this.lateness(), fn });
    return () => this.timers.delete(id);
  }
  get running(): number {
    return this.timers.size;
  }
  /**
   * Moves time on by `ms`, firing each timer that falls due on the way, at its due time. Two
   * firings at one instant mean a timer re-armed for a time already past: the start of a 0 ms
   * re-arm loop, which would otherwise spin here for ever.
   */
  pass(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].due <= end && (next === undefined || e[1].due < next[1].due)) next = e;
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].due);
      assert.notEqual(this.t, this.lastFiredAt, `a second timer fired at ${this.t}: re-armed for a time already past`);
      this.lastFiredAt = this.t;
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
          if (deadlineOf.size > 0) assert.equal(clock.running, 1, 'one timer while pending');
          else assert.ok(clock.running <= 1, 'at most the last one when idle');
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
    assert.equal(clock.armed, 1, 'one timer for the whole stream, not one armed and cancelled per request');
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

describe('DeadlineWheel left empty', () => {
  it('lets its last timer fire once, finding nothing, and arms no other', () => {
    const clock = new ManualClock(0);
    const expired: number[] = [];
    const wheel = new DeadlineWheel<number>(10, (key) => expired.push(key), clock);
    wheel.add(1, 30_000);
    clock.pass(5);
    wheel.delete(1);
    assert.equal(clock.running, 1);
    clock.pass(60_000);
    assert.deepEqual(expired, []);
    assert.equal(clock.fired, 1);
    assert.equal(clock.running, 0);
    assert.equal(clock.armed, 1);
    wheel.add(2, clock.t + 100);
    clock.pass(200);
    assert.deepEqual(expired, [2]);
    assert.equal(clock.armed, 2);
  });
});

describe('DeadlineWheel on the real clock', () => {
  it('does not keep a process alive once its keys are gone', () => {
    // A broker's last request answered long before its 30 s timeout: the timer left armed for it
    // must not hold the process that stopped the broker.
    const wheelModule = new URL('../../../src/actors/deadline_wheel.js', import.meta.url).href;
    const script = `const { DeadlineWheel } = await import(${JSON.stringify(wheelModule)});
      const wheel = new DeadlineWheel(10, () => {});
      wheel.add(1, wheel.now() + 30000);
      wheel.delete(1);`;
    const started = performance.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    assert.equal(run.status, 0, String(run.stderr));
    assert.ok(performance.now() - started < 10_000, `the process took ${(performance.now() - started).toFixed(0)} ms to exit`);
  });
});

/** What one expiry does next: re-add key (expired + offset) % 16 (itself at 0), due `inMs` from now (negative: overdue). */
interface Readd {
  readonly offset: number;
  readonly inMs: number;
}

type SpellOp = Op | { kind: 'quiet'; ms: number };

const spellOp: fc.Arbitrary<SpellOp> = fc.oneof(
  { weight: 12, arbitrary: op },
  // Hours to days with nothing falling due, ending mid-tick.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('quiet' as const), ms: fc.integer({ min: 3_600_000, max: 200_000_000 }).map((n) => n + 0.375) }) },
);

const readd: fc.Arbitrary<Readd | null> = fc.option(
  fc.record({ offset: fc.integer({ min: 0, max: 15 }), inMs: fc.integer({ min: -320, max: 320 }).map((n) => n / 8) }),
  { nil: null, freq: 2 },
);

describe('DeadlineWheel with late timers, re-adds from expiry callbacks and quiet spells', () => {
  it('expires each key once, never early, within one tick (plus the timer\'s lateness) of its deadline, without re-arm loops', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }), eighths(1e6), eighths(3), fc.array(eighths(1), { minLength: 1, maxLength: 20 }),
        fc.array(readd, { maxLength: 30 }), fc.array(spellOp, { maxLength: 150 }),
        (tickMs, start, lateTicks, lates, plan, ops) => {
          const clock = new ManualClock(start);
          const maxLate = lateTicks * tickMs;
          let lateAt = 0;
          clock.lateness = () => (lates[lateAt++ % lates.length] as number) * maxLate;
          /** Pending keys: deadline, and when they were added (an overdue key is due one tick after that). */
          const pending = new Map<number, { deadline: number; addedAt: number }>();
          let adds = 0;
          let planAt = 0;
          const add = (key: number, deadline: number): void => {
            pending.set(key, { deadline, addedAt: clock.t });
            adds++;
            wheel.add(key, deadline);
          };
          const wheel: DeadlineWheel<number> = new DeadlineWheel<number>(tickMs, (key) => {
            const p = pending.get(key);
            assert.ok(p !== undefined, `key ${key} expired while not pending (or twice)`);
            assert.ok(clock.t >= p.deadline, `key ${key} expired at ${clock.t}, before its deadline ${p.deadline}`);
            pending.delete(key);
            const next = planAt < plan.length ? plan[planAt++] : null;
            if (next !== null && next !== undefined) add((key + next.offset) % 16, clock.t + next.inMs);
          }, clock);
          for (const o of ops) {
            if (o.kind === 'add') {
              add(o.key, clock.t + o.inMs);
            } else if (o.kind === 'delete') {
              pending.delete(o.key);
              wheel.delete(o.key);
            } else {
              clock.pass(o.ms);
              for (const [key, p] of pending) {
                const due = Math.max(p.deadline, p.addedAt) + tickMs + maxLate;
                assert.ok(clock.t < due, `key ${key} (deadline ${p.deadline}, added at ${p.addedAt}) still pending at ${clock.t}, tick ${tickMs}, late ≤ ${maxLate}`);
              }
            }
            assert.equal(wheel.size, pending.size);
            if (pending.size > 0) assert.equal(clock.running, 1, 'one timer while pending');
            else assert.ok(clock.running <= 1, 'at most the last one when idle');
            // Each firing serves a distinct tick that held a key when the timer was armed, and each
            // arming follows an add or a firing: a re-arm loop breaks both.
            assert.ok(clock.fired <= adds, `${clock.fired} timer firings for ${adds} adds`);
            assert.ok(clock.armed <= adds + clock.fired, `${clock.armed} timers armed for ${adds} adds and ${clock.fired} firings`);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('re-adding a key from its own expiry after a late firing leaves no stale tick behind (no 0 ms re-arm)', () => {
    const clock = new ManualClock(0);
    // The first timer fires 3.5 ticks late, the rest on time.
    const lates = [35];
    clock.lateness = () => lates.shift() ?? 0;
    const expiredAt: number[] = [];
    const wheel: DeadlineWheel<string> = new DeadlineWheel<string>(10, (key) => {
      expiredAt.push(clock.t);
      // The wheel is empty while its only key expires: the re-add lands on an empty wheel mid-advance.
      if (expiredAt.length < 4) wheel.add(key, clock.t + 15);
    }, clock);
    wheel.add('k', 5);
    clock.pass(1000);
    assert.deepEqual(expiredAt, [45, 60, 80, 100]);
    assert.equal(clock.fired, 4);
    assert.equal(clock.armed, 4);
    assert.equal(clock.running, 0);
  });

  it('fires exactly at the end of the deadline\'s tick, not rounded up to a whole millisecond', () => {
    // Armed at 0.5 for the tick ending at 20: the timer is due 19.5 ms later, not 20 ms later,
    // which would be past deadline + one tick (20.125) for this deadline just after a boundary.
    const clock = new ManualClock(0.5);
    const expiredAt: number[] = [];
    const wheel = new DeadlineWheel<string>(10, () => expiredAt.push(clock.t), clock);
    wheel.add('k', 10.125);
    clock.pass(19.5);
    assert.deepEqual(expiredAt, [20]);
  });

  it('walks no quiet spell tick by tick: neither an empty wheel\'s nor a pending far deadline\'s', () => {
    const clock = new ManualClock(0.5);
    const expired: number[] = [];
    const wheel = new DeadlineWheel<number>(1, (key) => expired.push(key), clock);
    wheel.add(1, 5);
    clock.pass(10);
    // 23 days of 1 ms ticks with the wheel empty, then a key arrives (walked tick by tick, ~20 s here).
    clock.pass(2e9);
    const armedBefore = clock.armed;
    wheel.add(2, clock.t + 20.5);
    let began = performance.now();
    clock.pass(30);
    let took = performance.now() - began;
    assert.deepEqual(expired, [1, 2]);
    assert.equal(clock.armed - armedBefore, 1, 'one timer for the new key, no re-arms');
    // A bound far from both (microseconds with the skip, ~20 s without), so a loaded machine cannot fail it.
    assert.ok(took < 2000, `the first firing after an empty spell took ${took.toFixed(0)} ms`);
    // A deadline 23 days away is the only one pending all along: its firing skips the ticks before it.
    wheel.add(3, clock.t + 2e9);
    began = performance.now();
    clock.pass(2e9 + 1);
    took = performance.now() - began;
    assert.deepEqual(expired, [1, 2, 3]);
    assert.ok(took < 2000, `the firing of a far deadline took ${took.toFixed(0)} ms`);
    assert.equal(clock.fired, 3);
  });
});
