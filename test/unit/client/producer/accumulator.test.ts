// RecordAccumulator: linger and batch-size readiness, drain grouping by leader under the request
// size cap, bounded buffer memory with FIFO waiters (wait / fail fast / abort), idempotent
// sequencing with at most 5 in flight per partition, retries back at the head in sequence
// order, delivery offsets, expiry. Properties run random append/drain/answer/retry schedules
// against a simulated broker that only accepts the next sequence, and check that memory stays
// bounded, each partition's log equals its append order, sequences are contiguous, nothing
// leaves before its linger, and drains respect the request size cap.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  BufferFullError,
  OnFull,
  RecordAccumulator,
  estimateRecordBytes,
} from '../../../../src/client/producer/accumulator.js';
import type { AccumulatorOptions, ProducerBatch } from '../../../../src/client/producer/accumulator.js';
import type { RecordMetadata } from '../../../../src/client/producer/delivery.js';
import type { ProducerRecord } from '../../../../src/protocol/records.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { BATCH_HEADER_BYTES } from '../../../../src/protocol/record_batch.js';

const T = 't';
const leaderOfPartition = (_topic: string, partition: number): number => partition % 2;
const allOnNode0 = (): number => 0;

function rec(value: string | number, size = 0): ProducerRecord {
  const text = String(value);
  return { key: null, value: Buffer.from(text.padEnd(Math.max(size, text.length), '.')), timestamp: 1_700_000_000_000 };
}

function ids(batch: ProducerBatch): string[] {
  return batch.records.map((r) => (r.value as Buffer).toString().replace(/\.+$/, ''));
}

function appended(acc: RecordAccumulator, partition: number, record: ProducerRecord, now: number): Promise<RecordMetadata> {
  const r = acc.append(T, partition, record, now);
  assert.equal(r.status, 'appended');
  return r.status === 'appended' ? r.delivery : Promise.reject(new Error('unreachable'));
}

function drained(acc: RecordAccumulator, now: number, leaderOf = allOnNode0): ProducerBatch[] {
  return [...acc.drain(now, leaderOf).values()].flat();
}

function ready(opts: AccumulatorOptions = {}): RecordAccumulator {
  const a = new RecordAccumulator({ lingerMs: 10, ...opts });
  a.setProducerId(1000, 0);
  return a;
}

describe('RecordAccumulator: linger and batch size', () => {
  it('holds a lone small batch for lingerMs, then drains it', () => {
    const acc = ready();
    const p = appended(acc, 0, rec('a'), 100);
    assert.deepEqual(drained(acc, 105), []);
    assert.equal(acc.timeUntilReady(105, allOnNode0), 5);
    const [batch] = drained(acc, 110);
    assert.ok(batch);
    assert.deepEqual(ids(batch), ['a']);
    acc.complete(batch, 7);
    return p.then((m) => assert.deepEqual(m, { topic: T, partition: 0, offset: 7 }));
  });

  it('drains a full batch before linger, but not the open batch behind it', () => {
    const acc = ready({ batchBytes: 200, lingerMs: 1000 });
    const results = Array.from({ length: 8 }, (_, i) => acc.append(T, 0, rec(i, 40), 0));
    const firstReady = results.findIndex((r) => r.status === 'appended' && r.ready);
    assert.ok(firstReady > 0, 'some append reports a ready batch');
    // Closed batches drain one per partition per drain, in order; the open one keeps lingering.
    const out: ProducerBatch[] = [];
    for (let round = 1; round <= 6; round++) out.push(...drained(acc, round));
    assert.ok(out.length >= 1);
    for (const b of out) assert.ok(b.bytes <= 200 && b.closed);
    const sent = out.flatMap(ids);
    assert.deepEqual(sent, Array.from({ length: sent.length }, (_, i) => String(i)));
    assert.ok(sent.length < 8, 'the last, open batch was not drained');
    assert.deepEqual(drained(acc, 1000).flatMap(ids), Array.from({ length: 8 - sent.length }, (_, i) => String(sent.length + i)));
  });

  it('gives a record larger than batchBytes a batch of its own', () => {
    const acc = ready({ batchBytes: 100 });
    appended(acc, 0, rec('small'), 0);
    const r = acc.append(T, 0, rec('big', 500), 0);
    assert.ok(r.status === 'appended' && r.newBatch && r.ready);
    const [first] = drained(acc, 0);
    assert.deepEqual(ids(first as ProducerBatch), ['small']);
  });

  it('flush makes every queued batch ready regardless of linger', () => {
    const acc = ready({ lingerMs: 60_000 });
    appended(acc, 0, rec('a'), 0);
    appended(acc, 1, rec('b'), 0);
    assert.deepEqual(drained(acc, 1), []);
    acc.flush();
    assert.equal(drained(acc, 1).length, 2);
  });

  it('nothing drains before the linger unless its batch is full (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ partition: fc.nat(3), gap: fc.nat(15), size: fc.nat(120), drain: fc.boolean() }), { maxLength: 80 }),
      fc.integer({ min: 0, max: 30 }),
      (steps, lingerMs) => {
        const acc = ready({ lingerMs, batchBytes: 1 << 20, retryBackoffMs: 0 });
        let now = 0;
        for (const s of steps) {
          now += s.gap;
          void appended(acc, s.partition, rec('x', s.size), now);
          if (!s.drain) continue;
          for (const b of drained(acc, now)) {
            assert.ok(now - b.createdAt >= lingerMs, `drained at ${now}, created ${b.createdAt}, linger ${lingerMs}`);
            acc.complete(b, 0);
          }
        }
      },
    ));
  });
});

describe('RecordAccumulator: drain', () => {
  it('groups ready batches by leader node and skips partitions with no leader', () => {
    const acc = ready();
    for (let p = 0; p < 5; p++) appended(acc, p, rec(p), 0);
    const out = acc.drain(10, (_t, p) => (p === 4 ? -1 : p % 2));
    assert.deepEqual([...out.keys()].sort(), [0, 1]);
    assert.deepEqual((out.get(0) ?? []).map((b) => b.partition).sort(), [0, 2]);
    assert.deepEqual((out.get(1) ?? []).map((b) => b.partition).sort(), [1, 3]);
    assert.equal(acc.timeUntilReady(10, (_t, p) => (p === 4 ? -1 : 0)), Infinity, 'the leaderless partition is not "ready"');
    assert.equal(acc.timeUntilReady(10, allOnNode0), 0);
  });

  it('honours maxRequestBytes per node, one batch per partition, and starves no partition (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ partition: fc.nat(7), size: fc.nat(400) }), { minLength: 1, maxLength: 120 }),
      fc.integer({ min: 700, max: 3000 }),
      (appends, maxRequestBytes) => {
        const acc = ready({ maxRequestBytes, batchBytes: 600, retryBackoffMs: 0, idempotent: false });
        appends.forEach((a, i) => void appended(acc, a.partition, rec(i, a.size), 0));
        const seen: number[] = [];
        for (let round = 0; round < appends.length + 1; round++) {
          const out = acc.drain(1000 + round, leaderOfPartition);
          for (const batches of out.values()) {
            const total = batches.reduce((n, b) => n + b.bytes, 0);
            assert.ok(batches.length === 1 || total <= maxRequestBytes, `${total} > ${maxRequestBytes}`);
            const partitions = batches.map((b) => b.partition);
            assert.equal(new Set(partitions).size, partitions.length);
            for (const b of batches) {
              seen.push(...ids(b).map(Number));
              acc.complete(b, 0);
            }
          }
        }
        assert.deepEqual(seen.sort((a, b) => a - b), appends.map((_, i) => i));
      },
    ));
  });
});

describe('RecordAccumulator: buffer memory', () => {
  it('reports full, then a waiter gets space when an ack frees it', async () => {
    const acc = ready({ bufferBytes: 1000, batchBytes: 300 });
    let n = 0;
    while (acc.append(T, n % 3, rec(n, 100), 0).status === 'appended') n++;
    const full = acc.append(T, 0, rec('late', 100), 0);
    assert.equal(full.status, 'full');
    assert.ok(acc.bufferedBytes <= 1000);
    let granted = false;
    const wait = acc.waitForSpace(full.status === 'full' ? full.bytes : 0).then((g) => {
      granted = true;
      return g;
    });
    assert.equal(acc.append(T, 1, rec('queue-jumper', 1), 0).status, 'full', 'fresh appends queue behind waiters');
    const batches = drained(acc, 100);
    await Promise.resolve();
    assert.equal(granted, false, 'draining alone frees nothing');
    acc.complete(batches[0] as ProducerBatch, 0);
    const grant = await wait;
    assert.ok(acc.bufferedBytes + acc.reservedSpace <= 1000);
    assert.equal(acc.append(T, 0, rec('late', 100), 100, grant).status, 'appended');
    assert.equal(acc.reservedSpace, 0);
  });

  it('appendOrWait fails fast with onFull "error" and waits with "wait"', async () => {
    const fast = ready({ bufferBytes: 400, onFull: OnFull.error });
    await fast.appendOrWait(T, 0, rec('a', 200), () => 0);
    await assert.rejects(fast.appendOrWait(T, 0, rec('b', 200), () => 0), BufferFullError);

    const patient = ready({ bufferBytes: 400 });
    await patient.appendOrWait(T, 0, rec('a', 200), () => 0);
    const second = patient.appendOrWait(T, 0, rec('b', 200), () => 20);
    const [batch] = drained(patient, 20);
    patient.complete(batch as ProducerBatch, 0);
    const r = await second;
    assert.equal(r.newBatch, true);
    assert.deepEqual(ids(drained(patient, 40)[0] as ProducerBatch), ['b']);
  });

  it('serves waiters first come first served, bounds them, and honours abort signals', async () => {
    const acc = ready({ bufferBytes: 1000, maxWaiters: 2 });
    appended(acc, 0, rec('fill', 800), 0);
    const order: string[] = [];
    const controller = new AbortController();
    const aborted = acc.waitForSpace(300, controller.signal);
    const big = acc.waitForSpace(600).then(() => order.push('big'));
    await assert.rejects(acc.waitForSpace(10), BufferFullError);
    controller.abort(new Error('gave up'));
    await assert.rejects(aborted, /gave up/);
    const small = acc.waitForSpace(50).then(() => order.push('small'));
    acc.complete(drained(acc, 100)[0] as ProducerBatch, 0);
    await Promise.all([big, small]);
    assert.deepEqual(order, ['big', 'small']);
    assert.equal(acc.reservedSpace, 650);
  });

  it('rejects a record that could never fit with MESSAGE_TOO_LARGE', () => {
    const acc = ready({ bufferBytes: 10_000, maxRequestBytes: 1000 });
    assert.throws(() => acc.append(T, 0, rec('x', 2000), 0), (e) => e instanceof KafkaError && e.code === ErrorCode.MESSAGE_TOO_LARGE);
    assert.equal(estimateRecordBytes(rec('x', 100)) + BATCH_HEADER_BYTES <= 1000, true);
  });

  it('abort fails queued, in-flight and waiting callers alike', async () => {
    const acc = ready({ bufferBytes: 500 });
    const p1 = appended(acc, 0, rec('a', 300), 0);
    drained(acc, 100);
    const p2 = appended(acc, 0, rec('b', 10), 100);
    const w = acc.waitForSpace(400);
    const err = new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'closed');
    acc.abort(err);
    for (const p of [p1, p2, w]) await assert.rejects(p, (e) => e === err);
    assert.throws(() => acc.append(T, 0, rec('c'), 0), (e) => e === err);
    assert.equal(acc.bufferedBytes, 0);
  });
});

describe('RecordAccumulator: idempotence and retries', () => {
  it('drains nothing until the producer id is known', () => {
    const acc = new RecordAccumulator({ lingerMs: 0 });
    appended(acc, 0, rec('a'), 0);
    assert.deepEqual(drained(acc, 10), []);
    assert.equal(acc.timeUntilReady(10, allOnNode0), Infinity);
    acc.setProducerId(42, 3);
    const [b] = drained(acc, 10);
    assert.ok(b);
    assert.deepEqual([b.producerId, b.producerEpoch, b.baseSequence], [42, 3, 0]);
  });

  it('keeps at most 5 batches in flight per partition with contiguous sequences', () => {
    const acc = ready({ lingerMs: 0, batchBytes: 1 });
    for (let i = 0; i < 8; i++) appended(acc, 0, rec(i), 0);
    const sent: ProducerBatch[] = [];
    for (let round = 0; round < 8; round++) sent.push(...drained(acc, round));
    assert.equal(sent.length, 5);
    assert.deepEqual(sent.map((b) => b.baseSequence), [0, 1, 2, 3, 4]);
    acc.complete(sent[0] as ProducerBatch, 0);
    const next = drained(acc, 20);
    assert.deepEqual(next.map((b) => b.baseSequence), [5]);
  });

  it('re-enqueues a retried batch at the head in sequence order, keeping its sequence', () => {
    const acc = ready({ lingerMs: 0, batchBytes: 1, retryBackoffMs: 50 });
    for (let i = 0; i < 6; i++) appended(acc, 0, rec(i), 0);
    const sent: ProducerBatch[] = [];
    for (let round = 0; round < 5; round++) sent.push(...drained(acc, round));
    const [b0, b1, b2, b3] = sent as [ProducerBatch, ProducerBatch, ProducerBatch, ProducerBatch];
    // b1 fails (e.g. NOT_LEADER); b2 and b3 then fail OUT_OF_ORDER_SEQUENCE: retried out of order.
    assert.ok(acc.retry(b3, 10));
    assert.ok(acc.retry(b1, 10));
    assert.ok(acc.retry(b2, 10));
    assert.deepEqual(drained(acc, 59), [], 'backoff not over');
    assert.deepEqual(drained(acc, 60), [], 'b0, drained before b1, is still in flight');
    assert.equal(acc.timeUntilReady(60, allOnNode0), Infinity);
    // As in the Java client, retried batches go one at a time: each waits for the one before.
    acc.complete(b0, 0);
    const again: ProducerBatch[] = [];
    for (let round = 0; round < 4; round++) {
      const out = drained(acc, 60 + round);
      assert.equal(out.length, 1);
      again.push(...out);
      if (round < 2) assert.deepEqual(drained(acc, 60 + round), [], 'the next retry waits for this one');
      acc.complete(out[0] as ProducerBatch, round);
    }
    assert.deepEqual(again.map((b) => b.baseSequence), [1, 2, 3, 5]);
    assert.deepEqual(again.map((b) => b.attempts), [2, 2, 2, 1]);
    assert.ok(again[0] === b1 && again[1] === b2 && again[2] === b3);
  });

  it('after a leader change drains nothing to the new leader until the old one answered every batch in flight (KIP-951 requeue)', () => {
    const acc = ready({ lingerMs: 0, batchBytes: 1, retryBackoffMs: 50 });
    for (let i = 0; i < 4; i++) appended(acc, 0, rec(i), 0);
    let leader = 1;
    const leaderNow = (): number => leader;
    const [b0, b1] = [...drained(acc, 0, leaderNow), ...drained(acc, 1, leaderNow)] as [ProducerBatch, ProducerBatch];
    assert.deepEqual([b0.node, b1.node], [1, 1]);
    // Broker 1 answers b0 NOT_LEADER_OR_FOLLOWER naming broker 2: b0 is requeued with no backoff.
    leader = 2;
    assert.ok(acc.retry(b0, 2, 0));
    // b1 is still in flight to broker 1: neither b0 nor the never-sent batches may reach broker 2
    // first, or broker 2 would see a later sequence before b0's.
    assert.deepEqual(drained(acc, 2, leaderNow), []);
    assert.equal(acc.timeUntilReady(2, leaderNow), Infinity);
    assert.ok(acc.retry(b1, 3, 0));
    const order: ProducerBatch[] = [];
    for (let t = 3; t < 10; t++) {
      const out = drained(acc, t, leaderNow);
      order.push(...out);
      for (const b of out) acc.complete(b, t);
    }
    assert.deepEqual(order.map((b) => b.baseSequence), [0, 1, 2, 3]);
    assert.ok(order.every((b) => b.node === 2));
    assert.equal(order[0], b0);
    assert.equal(b0.retryAt, 2, 'requeued without backoff');
  });

  it('expires queued and in-flight batches, then blocks until a new producer epoch', async () => {
    const acc = ready({ lingerMs: 0, deliveryTimeoutMs: 1000 });
    const inflight = appended(acc, 0, rec('a'), 0);
    const [sent] = drained(acc, 0);
    const queued = appended(acc, 1, rec('b'), 500);
    const later = appended(acc, 0, rec('c'), 900);
    const expired = acc.expire(1000);
    assert.deepEqual(expired.map((b) => ids(b)[0]), ['a']);
    await assert.rejects(inflight, (e) => e instanceof KafkaError && e.code === ErrorCode.REQUEST_TIMED_OUT);
    assert.equal(acc.complete(sent as ProducerBatch, 5), false, 'a late answer is ignored');
    assert.ok(acc.needsProducerIdReset);
    assert.deepEqual(drained(acc, 1000), [], 'sequence gap: nothing drains');
    acc.expire(1500);
    await assert.rejects(queued, (e) => e instanceof KafkaError && e.code === ErrorCode.REQUEST_TIMED_OUT);
    acc.setProducerId(1000, 1);
    const [c] = drained(acc, 1500);
    assert.deepEqual([ids(c as ProducerBatch)[0], c?.baseSequence, c?.producerEpoch], ['c', 0, 1]);
    acc.complete(c as ProducerBatch, 10);
    assert.equal((await later).offset, 10);
    assert.equal(acc.bufferedBytes, 0);
  });

  it('a failed batch rejects its records with the batch error', async () => {
    const acc = ready({ lingerMs: 0 });
    const ps = [appended(acc, 0, rec('a'), 0), appended(acc, 0, rec('b'), 0)];
    const [b] = drained(acc, 0);
    const err = new KafkaError(ErrorCode.CORRUPT_MESSAGE);
    assert.ok(acc.fail(b as ProducerBatch, err));
    for (const p of ps) await assert.rejects(p, (e) => e === err);
    assert.ok(acc.needsProducerIdReset);
    assert.equal(acc.bufferedBytes, 0);
  });

  it('refuses more than 5 in flight when idempotent', () => {
    assert.throws(() => new RecordAccumulator({ maxInflightPerPartition: 6 }), RangeError);
    assert.doesNotThrow(() => new RecordAccumulator({ maxInflightPerPartition: 6, idempotent: false }));
  });
});

type Op =
  | { readonly kind: 'append'; readonly partition: number; readonly size: number }
  | { readonly kind: 'tick'; readonly ms: number }
  | { readonly kind: 'drain' }
  | { readonly kind: 'answer'; readonly pick: number }
  | { readonly kind: 'retry'; readonly pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), partition: fc.nat(3), size: fc.nat(250) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.nat(30) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drain' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('answer' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const), pick: fc.nat() }) },
);

/** A broker that appends a partition's batch only if it carries the next expected sequence. */
class SequencedBroker {
  readonly logs = new Map<number, string[]>();
  readonly nextSeq = new Map<number, number>();

  answer(acc: RecordAccumulator, b: ProducerBatch, now: number): void {
    const expected = this.nextSeq.get(b.partition) ?? 0;
    if (b.baseSequence !== expected) {
      assert.ok(b.baseSequence > expected, `duplicate sequence ${b.baseSequence} < ${expected}`);
      assert.ok(acc.retry(b, now)); // OUT_OF_ORDER_SEQUENCE_NUMBER is retriable here
      return;
    }
    const log = this.logs.get(b.partition) ?? [];
    const base = log.length;
    log.push(...ids(b));
    this.logs.set(b.partition, log);
    this.nextSeq.set(b.partition, expected + b.records.length);
    assert.ok(acc.complete(b, base));
  }
}

describe('RecordAccumulator: random schedules (property)', () => {
  it('bounded memory, per-partition append order, contiguous sequences, correct offsets', async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { maxLength: 150, size: 'max' }), async (ops) => {
      const bufferBytes = 3000;
      const acc = ready({ bufferBytes, batchBytes: 500, lingerMs: 5, retryBackoffMs: 3, maxRequestBytes: 1500, deliveryTimeoutMs: 1e12 });
      const broker = new SequencedBroker();
      const expected = new Map<number, string[]>();
      const deliveries: [string, number, Promise<RecordMetadata>][] = [];
      const inflight: ProducerBatch[] = [];
      let now = 0;
      let nextId = 0;
      const drainAll = (): void => {
        for (const batches of acc.drain(now, leaderOfPartition).values()) {
          for (const b of batches) {
            assert.ok(inflight.filter((x) => x.partition === b.partition).length < 5, 'at most 5 in flight');
            inflight.push(b);
          }
        }
      };
      const take = (pick: number): ProducerBatch | undefined => inflight.splice(pick % Math.max(1, inflight.length), 1)[0];
      for (const op of ops) {
        if (op.kind === 'append') {
          const id = String(nextId++);
          const r = acc.append(T, op.partition, rec(id, op.size), now);
          if (r.status === 'appended') {
            expected.set(op.partition, [...(expected.get(op.partition) ?? []), id]);
            deliveries.push([id, op.partition, r.delivery]);
          }
        } else if (op.kind === 'tick') now += op.ms;
        else if (op.kind === 'drain') drainAll();
        else {
          const b = take(op.pick);
          if (b !== undefined && op.kind === 'answer') broker.answer(acc, b, now);
          else if (b !== undefined) assert.ok(acc.retry(b, now));
        }
        assert.ok(acc.bufferedBytes + acc.reservedSpace <= bufferBytes, `${acc.bufferedBytes} > ${bufferBytes}`);
      }
      // Finish: answer everything in flight oldest first until the accumulator is empty.
      acc.flush();
      for (let round = 0; round < 2000 && acc.bufferedBytes > 0; round++) {
        now += 10;
        drainAll();
        inflight.sort((a, b) => a.baseSequence - b.baseSequence);
        for (const b of inflight.splice(0)) broker.answer(acc, b, now);
      }
      assert.equal(acc.bufferedBytes, 0);
      for (const [p, ids] of expected) assert.deepEqual(broker.logs.get(p) ?? [], ids, `partition ${p} log order`);
      for (const [id, p, delivery] of deliveries) {
        const meta = await delivery;
        assert.equal(meta.partition, p);
        assert.equal((broker.logs.get(p) ?? [])[meta.offset], id);
      }
    }), { numRuns: 200 });
  });

  it('sequences per partition are contiguous across batches (property)', () => {
    fc.assert(fc.property(fc.array(fc.record({ partition: fc.nat(2), size: fc.nat(300), drain: fc.boolean() }), { maxLength: 100 }), (steps) => {
      const acc = ready({ batchBytes: 400, lingerMs: 0 });
      const batches: ProducerBatch[] = [];
      for (const s of steps) {
        void appended(acc, s.partition, rec('x', s.size), 0);
        if (!s.drain) continue;
        for (const b of drained(acc, 0)) {
          batches.push(b);
          acc.complete(b, 0);
        }
      }
      for (const p of [0, 1, 2]) {
        let seq = 0;
        for (const b of batches.filter((x) => x.partition === p)) {
          assert.equal(b.baseSequence, seq);
          seq += b.records.length;
        }
      }
    }));
  });
});
