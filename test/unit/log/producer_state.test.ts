// Idempotent producer rules (kafka-protocol.md §9): fencing, duplicates with original offsets,
// sequence gaps and wrap-around, expiry, the size bound, rollback and snapshots.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ProducerStateTable, RETAINED_BATCHES, type ProducerCheck } from '../../../src/log/producer_state.js';
import type { BatchHeader } from '../../../src/protocol/record_batch.js';

const INT32_MAX = 0x7fffffff;

function header(producerId: number, producerEpoch: number, baseSequence: number, count: number): BatchHeader {
  return {
    baseOffset: 0,
    batchLength: 100,
    partitionLeaderEpoch: -1,
    magic: 2,
    crc: 0,
    attributes: 0,
    lastOffsetDelta: count - 1,
    baseTimestamp: 1000,
    maxTimestamp: 1000,
    producerId,
    producerEpoch,
    baseSequence,
    recordsCount: count,
  };
}

class Clock {
  t = 1_000_000;
  readonly now = (): number => this.t;
}

/** Appends like a log would: check, then record at the next offsets. */
class Harness {
  readonly clock = new Clock();
  readonly table: ProducerStateTable;
  leo = 0;
  constructor(expirationMs = 60_000, maxProducers?: number) {
    this.table = new ProducerStateTable({ expirationMs, now: this.clock.now, ...(maxProducers ? { maxProducers } : {}) });
  }
  send(h: BatchHeader): ProducerCheck | { kind: 'appended'; baseOffset: number } {
    const c = this.table.check(h);
    if (c.kind !== 'append') return c;
    const baseOffset = this.leo;
    this.leo += h.lastOffsetDelta + 1;
    this.table.record(h, baseOffset, this.leo - 1);
    return { kind: 'appended', baseOffset };
  }
}

describe('ProducerStateTable', () => {
  it('accepts any sequence from an unknown producer, then requires the next one', () => {
    const h = new Harness();
    assert.equal(h.send(header(1, 0, 42, 3)).kind, 'appended');
    assert.equal(h.send(header(1, 0, 45, 2)).kind, 'appended');
    assert.deepEqual(h.send(header(1, 0, 48, 1)), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    assert.deepEqual(h.send(header(1, 0, 46, 1)), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    assert.equal(h.send(header(1, 0, 47, 1)).kind, 'appended');
  });

  it('answers a retried batch with its original offsets and appends nothing', () => {
    const h = new Harness();
    h.send(header(9, 0, 0, 10)); // offsets 0-9
    h.send(header(8, 0, 0, 5)); // another producer, 10-14
    h.send(header(9, 0, 10, 4)); // 15-18
    assert.deepEqual(h.send(header(9, 0, 0, 10)), { kind: 'duplicate', baseOffset: 0, lastOffset: 9 });
    assert.deepEqual(h.send(header(9, 0, 10, 4)), { kind: 'duplicate', baseOffset: 15, lastOffset: 18 });
    assert.equal(h.leo, 19);
  });

  it(`keeps only the last ${RETAINED_BATCHES} batches for duplicate detection`, () => {
    const h = new Harness();
    for (let i = 0; i < RETAINED_BATCHES + 1; i++) h.send(header(1, 0, i, 1));
    assert.equal(h.send(header(1, 0, 1, 1)).kind, 'duplicate');
    assert.deepEqual(h.send(header(1, 0, 0, 1)), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
  });

  it('fences an older epoch and requires sequence 0 for a newer one', () => {
    const h = new Harness();
    h.send(header(1, 3, 0, 2));
    assert.deepEqual(h.send(header(1, 2, 2, 1)), { kind: 'error', code: ErrorCode.INVALID_PRODUCER_EPOCH });
    assert.deepEqual(h.send(header(1, 4, 2, 1)), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    assert.equal(h.send(header(1, 4, 0, 1)).kind, 'appended');
    // The old epoch is now fenced, even for a batch that was a duplicate before.
    assert.deepEqual(h.send(header(1, 3, 0, 2)), { kind: 'error', code: ErrorCode.INVALID_PRODUCER_EPOCH });
  });

  it('wraps sequences from Int32.MAX to 0', () => {
    const h = new Harness();
    h.send(header(1, 0, INT32_MAX - 2, 3)); // last sequence = INT32_MAX
    assert.equal(h.send(header(1, 0, 0, 2)).kind, 'appended');
    const w = new Harness();
    w.send(header(1, 0, INT32_MAX - 1, 4)); // spans the wrap: last sequence 1
    assert.deepEqual(w.send(header(1, 0, INT32_MAX - 1, 4)), { kind: 'duplicate', baseOffset: 0, lastOffset: 3 });
    assert.equal(w.send(header(1, 0, 2, 1)).kind, 'appended');
  });

  it('ignores non-idempotent batches', () => {
    const h = new Harness();
    assert.equal(h.send(header(-1, -1, -1, 3)).kind, 'appended');
    assert.equal(h.send(header(-1, -1, -1, 3)).kind, 'appended');
    assert.equal(h.table.size, 0);
  });

  it('forgets a producer idle for the expiration time', () => {
    const h = new Harness(1000);
    h.send(header(1, 0, 0, 1));
    h.clock.t += 999;
    assert.equal(h.send(header(1, 0, 0, 1)).kind, 'duplicate');
    h.clock.t += 1000;
    assert.equal(h.send(header(1, 0, 77, 1)).kind, 'appended');
    h.clock.t += 5000;
    h.send(header(2, 0, 0, 1));
    assert.equal(h.table.size, 1);
  });

  it('bounds the number of producers by evicting the least recently written', () => {
    const h = new Harness(60_000, 3);
    for (const pid of [1, 2, 3]) h.send(header(pid, 0, 0, 1));
    h.send(header(1, 0, 1, 1)); // 1 becomes the most recent
    h.send(header(4, 0, 0, 1)); // evicts 2
    assert.equal(h.table.size, 3);
    assert.equal(h.send(header(2, 0, 99, 1)).kind, 'appended');
    assert.equal(h.send(header(1, 0, 1, 1)).kind, 'duplicate');
  });

  it('truncateFrom rolls back batches, restoring an earlier epoch', () => {
    const h = new Harness();
    h.send(header(1, 0, 0, 2)); // 0-1
    h.send(header(1, 1, 0, 2)); // 2-3, epoch bump
    h.send(header(2, 0, 0, 1)); // 4
    h.table.truncateFrom(2);
    h.leo = 2;
    assert.equal(h.send(header(1, 0, 2, 1)).kind, 'appended');
    assert.equal(h.send(header(2, 0, 5, 1)).kind, 'appended'); // producer 2 was forgotten
  });

  it('removeBefore forgets producers whose batches were all deleted', () => {
    const h = new Harness();
    h.send(header(1, 0, 0, 5)); // 0-4
    h.send(header(2, 0, 0, 5)); // 5-9
    h.table.removeBefore(5);
    assert.equal(h.table.size, 1);
    assert.equal(h.send(header(1, 0, 50, 1)).kind, 'appended');
  });

  it('snapshots round-trip and damaged snapshots are refused', () => {
    const h = new Harness();
    h.send(header(1, 2, 0, 3));
    h.send(header(1, 2, 3, 3));
    h.send(header(2 ** 40, 0, INT32_MAX, 1));
    const snap = h.table.encode();
    const copy = new ProducerStateTable({ expirationMs: 60_000, now: h.clock.now });
    assert.ok(copy.load(snap));
    assert.equal(copy.size, 2);
    assert.deepEqual(copy.check(header(1, 2, 3, 3)), { kind: 'duplicate', baseOffset: 3, lastOffset: 5 });
    assert.deepEqual(copy.check(header(1, 2, 7, 1)), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    assert.equal(copy.check(header(2 ** 40, 0, 0, 1)).kind, 'append');
    for (let i = 0; i < snap.length; i += 7) {
      const bad = Buffer.from(snap);
      bad[i]! ^= 0x10;
      const t = new ProducerStateTable({ expirationMs: 60_000, now: h.clock.now });
      assert.equal(t.load(bad), false);
      assert.equal(t.size, 0);
    }
  });

  it('property: retries of any in-flight window are duplicates with their original offsets', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 30 }), fc.integer({ min: INT32_MAX - 100, max: INT32_MAX }), fc.nat(), (counts, firstSeq, pick) => {
        const h = new Harness();
        const sent: Array<{ seq: number; count: number; base: number }> = [];
        let seq = firstSeq;
        for (const count of counts) {
          const r = h.send(header(5, 0, seq, count));
          assert.equal(r.kind, 'appended');
          sent.push({ seq, count, base: (r as { baseOffset: number }).baseOffset });
          seq = (seq + count) % (INT32_MAX + 1);
        }
        const leo = h.leo;
        const back = pick % Math.min(RETAINED_BATCHES, sent.length);
        const b = sent[sent.length - 1 - back]!;
        assert.deepEqual(h.send(header(5, 0, b.seq, b.count)), { kind: 'duplicate', baseOffset: b.base, lastOffset: b.base + b.count - 1 });
        assert.equal(h.leo, leo);
        assert.equal(h.send(header(5, 0, seq, 1)).kind, 'appended');
      }),
    );
  });
});
