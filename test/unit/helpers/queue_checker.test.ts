// The queue checker of the replication fault suite on synthetic histories: a clean run (any mix of
// producers, partitions, unacknowledged sends that landed or not) reports nothing, and each
// injected anomaly (a loss, a duplicate, a reorder, a foreign value, a consumed-then-truncated
// record, a diverging replica) is reported under its own name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkQueue, describeQueue, queueValue, totalAnomalies } from '../../helpers/queue_checker.js';
import type { QueueAck, QueueHistory, QueueRead } from '../../helpers/queue_checker.js';

const BROKERS = [1, 2, 3];

interface Send {
  readonly producer: number;
  readonly partition: number;
  /** 'acked' landed and was acknowledged; 'landed' landed without an answer; 'lost' never landed, no answer. */
  readonly fate: 'acked' | 'landed' | 'unanswered';
}

const sendArb = fc.record({
  producer: fc.integer({ min: 0, max: 3 }),
  partition: fc.integer({ min: 0, max: 3 }),
  fate: fc.constantFrom('acked', 'acked', 'acked', 'landed', 'unanswered'),
}) as fc.Arbitrary<Send>;
const runArb = fc.array(sendArb, { minLength: 1, maxLength: 200 });

/** An acknowledgement that says where its record landed, as our client's and kafkajs's do. */
type LocatedAck = QueueAck & { readonly partition: number; readonly offset: number };

/** Final logs, acks and attempts of a correct run of `sends` (each partition's log in send order). */
function cleanHistory(sends: readonly Send[]): { acked: LocatedAck[]; attempted: number[]; final: QueueRead[] } {
  const attempted = [0, 0, 0, 0];
  const logs: QueueRead[][] = [[], [], [], []];
  const acked: LocatedAck[] = [];
  for (const s of sends) {
    const value = queueValue(s.producer, (attempted[s.producer] as number)++);
    if (s.fate === 'unanswered') continue;
    const log = logs[s.partition] as QueueRead[];
    log.push({ partition: s.partition, offset: log.length, value });
    if (s.fate === 'acked') acked.push({ value, partition: s.partition, offset: log.length - 1 });
  }
  return { acked, attempted, final: logs.flat() };
}

/** The history whose consumers and every replica saw exactly `final`. */
function agreed(acked: QueueAck[], attempted: number[], final: QueueRead[]): QueueHistory {
  const partitions = [...new Set(final.map((r) => r.partition))];
  return {
    acked, attempted, final, consumed: final,
    replicas: partitions.map((partition) => {
      const log = final.filter((r) => r.partition === partition);
      return { partition, highWatermark: log.length, logs: new Map(BROKERS.map((b) => [b, log])) };
    }),
  };
}

/** `final` with partition p's records replaced by `records`, renumbered from offset 0. */
function replacePartition(final: readonly QueueRead[], p: number, records: readonly QueueRead[]): QueueRead[] {
  return [...final.filter((r) => r.partition !== p), ...records.map((r, offset) => ({ partition: p, offset, value: r.value }))];
}

test('a clean history reports no anomaly', () => {
  fc.assert(fc.property(runArb, (sends) => {
    const h = cleanHistory(sends);
    const r = checkQueue(agreed(h.acked, h.attempted, h.final));
    assert.equal(totalAnomalies(r), 0, describeQueue(r));
    assert.equal(r.acked, h.acked.length);
  }));
});

test('an acknowledged record missing from the final read is lost', () => {
  fc.assert(fc.property(runArb, fc.nat(), (sends, pick) => {
    const h = cleanHistory(sends);
    fc.pre(h.acked.length > 0);
    const victim = h.acked[pick % h.acked.length] as LocatedAck;
    const rest = h.final.filter((r) => r.partition === victim.partition && r.value !== victim.value);
    const r = checkQueue(agreed(h.acked, h.attempted, replacePartition(h.final, victim.partition, rest)));
    assert.deepEqual(r.lost, [victim.value], describeQueue(r));
    assert.deepEqual([r.duplicated, r.reordered.length, r.unexpected, r.vanished, r.replicaMismatches.length], [0, 0, 0, 0, 0]);
  }));
});

test('an acknowledgement without a location (kcat) is judged lost or present, never misplaced', () => {
  fc.assert(fc.property(runArb, fc.nat(), (sends, pick) => {
    const h = cleanHistory(sends);
    fc.pre(h.acked.length > 0);
    const unlocated: QueueAck[] = h.acked.map((a) => ({ value: a.value, partition: null, offset: null }));
    const clean = checkQueue(agreed(unlocated, h.attempted, h.final));
    assert.equal(totalAnomalies(clean), 0, describeQueue(clean));
    const victim = h.acked[pick % h.acked.length] as LocatedAck;
    const rest = h.final.filter((r) => r.partition === victim.partition && r.value !== victim.value);
    const r = checkQueue(agreed(unlocated, h.attempted, replacePartition(h.final, victim.partition, rest)));
    assert.deepEqual(r.lost, [victim.value], describeQueue(r));
    assert.equal(r.misplaced, 0);
  }));
});

test('a record written twice is one duplicate, not a reorder', () => {
  fc.assert(fc.property(runArb, fc.nat(), (sends, pick) => {
    const h = cleanHistory(sends);
    fc.pre(h.final.length > 0);
    const copied = h.final[pick % h.final.length] as QueueRead;
    const log = h.final.filter((r) => r.partition === copied.partition);
    const r = checkQueue(agreed(h.acked, h.attempted, replacePartition(h.final, copied.partition, [...log, copied])));
    assert.equal(r.duplicated, 1, describeQueue(r));
    assert.deepEqual([r.lost.length, r.reordered.length, r.unexpected, r.vanished, r.replicaMismatches.length], [0, 0, 0, 0, 0]);
  }));
});

test('two records of one producer swapped in a partition are reordered', () => {
  fc.assert(fc.property(runArb, fc.nat(), (sends, pick) => {
    const h = cleanHistory(sends);
    const candidates = h.final.filter((r, i) => h.final.some((o, j) => j > i && o.partition === r.partition && o.value.split('-')[0] === r.value.split('-')[0]));
    fc.pre(candidates.length > 0);
    const first = candidates[pick % candidates.length] as QueueRead;
    const log = h.final.filter((r) => r.partition === first.partition);
    const i = log.indexOf(first);
    const j = log.findIndex((o, k) => k > i && o.value.split('-')[0] === first.value.split('-')[0]);
    const swapped = log.map((r, k) => (k === i ? (log[j] as QueueRead) : k === j ? first : r));
    const r = checkQueue(agreed(h.acked, h.attempted, replacePartition(h.final, first.partition, swapped)));
    assert.ok(r.reordered.length >= 1, describeQueue(r));
    assert.deepEqual([r.lost.length, r.duplicated, r.unexpected, r.vanished, r.replicaMismatches.length], [0, 0, 0, 0, 0]);
  }));
});

test('a value no producer attempted is unexpected', () => {
  fc.assert(fc.property(runArb, fc.constantFrom('p0-999999', 'p7-0', 'garbage'), (sends, foreign) => {
    const h = cleanHistory(sends);
    const p = (h.final[0] ?? { partition: 0 }).partition;
    const log = h.final.filter((r) => r.partition === p);
    const r = checkQueue(agreed(h.acked, h.attempted, replacePartition(h.final, p, [...log, { partition: p, offset: 0, value: foreign }])));
    // Read once by the consumers and once by the final read.
    assert.equal(r.unexpected, 2, describeQueue(r));
    assert.deepEqual([r.lost.length, r.duplicated, r.reordered.length, r.vanished, r.replicaMismatches.length], [0, 0, 0, 0, 0]);
  }));
});

test('a record consumed and then truncated away has vanished', () => {
  fc.assert(fc.property(runArb, (sends) => {
    const h = cleanHistory(sends);
    const attempted = [...h.attempted];
    const value = queueValue(0, (attempted[0] as number)++);
    const history = agreed(h.acked, attempted, h.final);
    const end = h.final.filter((r) => r.partition === 0).length;
    const r = checkQueue({ ...history, consumed: [...history.consumed, { partition: 0, offset: end, value }] });
    assert.equal(r.vanished, 1, describeQueue(r));
    assert.equal(totalAnomalies(r), 1);
  }));
});

test('a replica missing, adding or changing a record below the high watermark is a mismatch', () => {
  fc.assert(fc.property(runArb, fc.constantFrom(...BROKERS), fc.constantFrom('drop', 'change', 'extra'), (sends, broker, how) => {
    const h = cleanHistory(sends);
    fc.pre(h.final.length > 0);
    const history = agreed(h.acked, h.attempted, h.final);
    const target = history.replicas[0];
    assert.ok(target !== undefined);
    const log = target.logs.get(broker) as readonly QueueRead[];
    const changed = how === 'drop' ? log.slice(1).map((r, offset) => ({ ...r, offset }))
      : how === 'change' ? log.map((r, k) => (k === log.length - 1 ? { ...r, value: 'p0-999999' } : r))
        : [{ partition: target.partition, offset: 0, value: 'p0-999999' }, ...log.map((r) => ({ ...r, offset: r.offset + 1 }))];
    const logs = new Map(target.logs);
    logs.set(broker, changed);
    const r = checkQueue({ ...history, replicas: [{ ...target, logs }, ...history.replicas.slice(1)] });
    assert.equal(r.replicaMismatches.length, 1, describeQueue(r));
    assert.match(r.replicaMismatches[0] as string, new RegExp(`^partition ${target.partition} broker ${broker}:`));
    assert.equal(totalAnomalies(r), 1);
  }));
});

test('records of a replica past the high watermark are not compared', () => {
  const h = cleanHistory([{ producer: 0, partition: 0, fate: 'acked' }]);
  const history = agreed(h.acked, [2], h.final);
  const target = history.replicas[0];
  assert.ok(target !== undefined);
  const logs = new Map(target.logs);
  logs.set(2, [...(logs.get(2) as QueueRead[]), { partition: 0, offset: 1, value: 'p0-1' }]);
  assert.equal(totalAnomalies(checkQueue({ ...history, replicas: [{ ...target, logs }] })), 0);
});

test('a reorder names the partition, the producer, both values with offsets and where the batches put them', () => {
  const origin = (sequence: number, leaderEpoch: number): QueueRead['batch'] => ({ producerId: 7, producerEpoch: 0, sequence, leaderEpoch });
  const final: QueueRead[] = [
    { partition: 2, offset: 0, value: 'p1-0', batch: origin(0, 1) },
    { partition: 2, offset: 1, value: 'p1-2', batch: origin(1, 2) },
    { partition: 2, offset: 2, value: 'p0-0' },
    { partition: 2, offset: 3, value: 'p1-1', batch: origin(2, 2) },
  ];
  const r = checkQueue(agreed([], [1, 3], final));
  assert.deepEqual(r.reordered, ['partition 2 producer p1: p1-1@3 (pid 7 epoch 0 seq 2, leader epoch 2) after p1-2@1 (pid 7 epoch 0 seq 1, leader epoch 2)']);
  assert.match(describeQueue(r), / reordered=1 \[partition 2 producer p1: p1-1@3 .*\] unexpected=0/);
});

test('a mismatch names the offset where the logs part and what each replica holds there', () => {
  const origin = (leaderEpoch: number, producerId: number, sequence: number): QueueRead['batch'] => ({ leaderEpoch, producerId, producerEpoch: 0, sequence });
  const record = (offset: number, value: string, leaderEpoch: number, producerId: number, sequence: number): QueueRead =>
    ({ partition: 0, offset, value, batch: origin(leaderEpoch, producerId, sequence) });
  const leader = [record(0, 'p0-0', 1, 7, 0), record(1, 'p0-1', 1, 7, 1), record(2, 'p1-0', 2, 8, 0), record(3, 'p1-1', 2, 8, 1)];
  // Broker 3 kept a record of epoch 1 at offset 2 that the new leader (epoch 2) replaced.
  const stale = [...leader.slice(0, 2), record(2, 'p0-2', 1, 7, 2), { ...(leader[3] as QueueRead) }];
  const final = leader.map(({ partition, offset, value }) => ({ partition, offset, value }));
  const r = checkQueue({
    acked: [], attempted: [3, 2], consumed: [], final,
    replicas: [{ partition: 0, highWatermark: 4, logs: new Map([[1, leader], [2, leader], [3, stale]]) }],
  });
  assert.equal(r.replicaMismatches.length, 1, describeQueue(r));
  const line = r.replicaMismatches[0] as string;
  assert.match(line, /^partition 0 broker 3: parts from the leader's read at offset 2 \(high watermark 4\)/);
  assert.match(line, /the leader's read has p1-0/);
  assert.match(line, /broker 1 p1-0 \(epoch 2, producer 8, seq 0\)/);
  assert.match(line, /broker 3 p0-2 \(epoch 1, producer 7, seq 2\)/);
  assert.match(line, /broker 1 \[1@0 2@2\] ends 4/);
  assert.match(line, /broker 3 \[1@0 2@3\] ends 4/);
});
