// PendingAcks, the acknowledgement seam of a partition actor: against random interleavings of
// appends, acknowledged-offset advances, commit failures and deadline sweeps, every ticket is
// settled exactly once, successes come in append order and only once the acknowledged offset
// covers them, failures carry the code they failed with, and the capacity bound holds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PendingAcks } from '../../../src/actors/pending_acks.js';
import { ErrorCode } from '../../../src/protocol/errors.js';

type Op =
  | { kind: 'add'; records: number; timeout: number }
  | { kind: 'advance'; by: number }
  | { kind: 'fail' }
  | { kind: 'tick'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('add' as const), records: fc.integer({ min: 1, max: 5 }), timeout: fc.integer({ min: 0, max: 50 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), by: fc.integer({ min: 0, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
);

interface Ticket {
  id: number;
  endOffset: number;
  deadline: number;
  seq: number;
}

describe('PendingAcks', () => {
  it('settles every ticket once: successes in order and covered, failures with their code', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.integer({ min: 1, max: 12 }), (ops, capacity) => {
        const settled = new Map<number, number>();
        const successOrder: number[] = [];
        let ackOffset = 0;
        let now = 0;
        let logEnd = 0;
        const acks = new PendingAcks<Ticket>(capacity, (t, code) => {
          assert.ok(!settled.has(t.id), `ticket ${t.id} settled twice`);
          settled.set(t.id, code);
          if (code === ErrorCode.NONE) {
            assert.ok(t.endOffset <= ackOffset, `ticket ending at ${t.endOffset} completed at ack offset ${ackOffset}`);
            successOrder.push(t.id);
          } else if (code === ErrorCode.REQUEST_TIMED_OUT) {
            assert.ok(t.deadline <= now, `ticket with deadline ${t.deadline} timed out at ${now}`);
          }
        });
        const tickets: Ticket[] = [];
        let failedThrough = 0;
        for (const o of ops) {
          if (o.kind === 'add') {
            const full = acks.full;
            const t: Ticket = { id: tickets.length, endOffset: logEnd + o.records, deadline: now + o.timeout, seq: -1 };
            const added = acks.add(t.endOffset, t.deadline, t);
            assert.equal(added, !full);
            if (!added) continue;
            t.seq = acks.lastSeq;
            logEnd = t.endOffset;
            tickets.push(t);
          } else if (o.kind === 'advance') {
            ackOffset = Math.min(logEnd, ackOffset + o.by);
            acks.advance(ackOffset);
            for (const t of tickets) if (!settled.has(t.id) && t.endOffset <= ackOffset) assert.fail(`ticket ${t.id} covered by ${ackOffset} but waiting`);
          } else if (o.kind === 'fail') {
            // A failed commit rolls the log back to what was acknowledged.
            failedThrough = acks.lastSeq;
            acks.failThrough(failedThrough, ErrorCode.KAFKA_STORAGE_ERROR);
            logEnd = ackOffset;
          } else {
            now += o.ms;
            acks.expire(now);
          }
          assert.ok(acks.size <= capacity);
          for (const t of tickets) if (!settled.has(t.id) && t.seq <= failedThrough) assert.fail(`ticket ${t.id} survived its commit's failure`);
        }
        acks.failThrough(acks.lastSeq, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        assert.equal(acks.size, 0);
        assert.equal(settled.size, tickets.length, 'every ticket settled');
        assert.deepEqual(successOrder, [...successOrder].sort((a, b) => a - b), 'successes in append order');
      }),
      { numRuns: 400 },
    );
  });

  it('completes a covered ticket at the first advance that covers it', () => {
    const done: string[] = [];
    const acks = new PendingAcks<string>(10, (t, code) => done.push(`${t}:${code}`));
    acks.add(3, 100, 'a');
    acks.add(5, 100, 'b');
    acks.advance(2);
    assert.deepEqual(done, []);
    acks.advance(4);
    assert.deepEqual(done, ['a:0']);
    acks.advance(5);
    assert.deepEqual(done, ['a:0', 'b:0']);
  });

  it('refuses past its capacity and reports the earliest waiting deadline', () => {
    const acks = new PendingAcks<number>(2, () => undefined);
    assert.ok(acks.add(1, 40, 1));
    assert.ok(acks.add(2, 10, 2));
    assert.ok(acks.full);
    assert.equal(acks.add(3, 5, 3), false);
    assert.equal(acks.nextDeadline(), 10);
    acks.expire(10);
    assert.equal(acks.nextDeadline(), 40);
    assert.equal(acks.size, 1);
  });
});
