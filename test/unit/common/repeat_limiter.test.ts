// RepeatLimiter: first occurrence of a kind logged at once, then at most one line per interval
// per kind, and no occurrence lost (logged, or counted in the next logged line).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RepeatLimiter } from '../../../src/common/repeat_limiter.js';

describe('RepeatLimiter', () => {
  it('logs the first, suppresses repeats within the interval, then reports how many it suppressed', () => {
    let t = 0;
    const limiter = new RepeatLimiter(1000, () => t, 8);
    assert.deepEqual(limiter.offer('commit'), { log: true, suppressed: 0 });
    t = 10;
    assert.deepEqual(limiter.offer('commit'), { log: false });
    assert.deepEqual(limiter.offer('seal'), { log: true, suppressed: 0 });
    t = 999;
    assert.deepEqual(limiter.offer('commit'), { log: false });
    t = 1000;
    assert.deepEqual(limiter.offer('commit'), { log: true, suppressed: 2 });
    assert.deepEqual(limiter.offer('commit'), { log: false });
  });

  it('property: per kind, logged lines are at most one per interval after the first, and every occurrence is accounted for', () => {
    const event = fc.record({ dt: fc.nat(300), kind: fc.constantFrom('a', 'b', 'c') });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 300 }), fc.integer({ min: 1, max: 1000 }), (events, interval) => {
        let t = 0;
        const limiter = new RepeatLimiter(interval, () => t, 8);
        const logged = new Map<string, number[]>();
        const accounted = new Map<string, number>();
        const offered = new Map<string, number>();
        const pending = new Map<string, number>();
        for (const e of events) {
          t += e.dt;
          offered.set(e.kind, (offered.get(e.kind) ?? 0) + 1);
          const v = limiter.offer(e.kind);
          if (v.log) {
            const times = logged.get(e.kind) ?? [];
            if (times.length > 0) assert.ok(t - times[times.length - 1]! >= interval, 'two lines of one kind within an interval');
            times.push(t);
            logged.set(e.kind, times);
            assert.equal(v.suppressed, pending.get(e.kind) ?? 0);
            accounted.set(e.kind, (accounted.get(e.kind) ?? 0) + 1 + v.suppressed);
            pending.set(e.kind, 0);
          } else {
            pending.set(e.kind, (pending.get(e.kind) ?? 0) + 1);
          }
        }
        for (const [kind, n] of offered) assert.equal((accounted.get(kind) ?? 0) + (pending.get(kind) ?? 0), n);
      }),
    );
  });

  it('remembers at most maxKinds kinds, forgetting the oldest', () => {
    const limiter = new RepeatLimiter(1000, () => 0, 2);
    limiter.offer('a');
    limiter.offer('b');
    limiter.offer('c');
    assert.deepEqual(limiter.offer('a'), { log: true, suppressed: 0 }, 'a was forgotten, so it logs again');
    assert.deepEqual(limiter.offer('c'), { log: false });
  });
});
