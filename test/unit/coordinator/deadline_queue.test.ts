// DeadlineQueue against a plain map: the earliest deadline, and exactly the due ids, under random
// updates, removals and pops.
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import fc from 'fast-check';
import { DeadlineQueue } from '../../../src/coordinator/groups/deadline_queue.js';

suite('DeadlineQueue', () => {
  it('agrees with a plain map', () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant('set' as const), id: fc.integer({ min: 0, max: 9 }), at: fc.option(fc.integer({ min: 0, max: 50 })) }),
      fc.record({ t: fc.constant('pop' as const), now: fc.integer({ min: 0, max: 50 }) }),
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 300, size: 'max' }), (ops) => {
      const q = new DeadlineQueue();
      const model = new Map<string, number>();
      for (const o of ops) {
        if (o.t === 'set') {
          q.set(`g${o.id}`, o.at);
          if (o.at === null) model.delete(`g${o.id}`);
          else model.set(`g${o.id}`, o.at);
        } else {
          const due = [...model].filter(([, at]) => at <= o.now).sort((a, b) => a[1] - b[1]);
          assert.deepEqual(q.popDue(o.now).sort(), due.map(([id]) => id).sort());
          for (const [id] of due) model.delete(id);
        }
        assert.equal(q.peek(), model.size === 0 ? null : Math.min(...model.values()));
      }
    }), { numRuns: 200 });
  });
});
