// Our producer (src/client/producer) against a broker child process, with kafkajs 2.2.4 as the
// reference reader: 20k keyed records over 6 partitions with acks all/1/0 and gzip come back
// byte-identical, each on the partition kafkajs's (Java-compatible murmur2) partitioner picks and
// at the offset our delivery promise reported; an idempotent producer survives a broker kill -9 +
// restart mid-stream with every acknowledged record present exactly once; a full buffer with
// onBufferFull 'error' rejects at once; a missing topic (auto-create off) rejects with
// UNKNOWN_TOPIC_OR_PARTITION; options Java refuses are refused.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType } from 'kafkajs';
import { BufferFullError, Producer } from '../../src/client/producer/index.js';
import type { ProducerOptions, RecordMetadata } from '../../src/client/producer/index.js';
import type { KafkaConnection } from '../../src/client/connection.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { messageIndex, testMessage } from '../helpers/messages.js';
import { connectTo, scanPartition } from '../helpers/read_back.js';

const PARTITIONS = 6;
const COUNT = 20_000;

let broker: BrokerProcess;
let kafka: KafkaType;
let admin: Admin;
const producers: Producer[] = [];

before(async () => {
  broker = await BrokerProcess.start({ args: ['--auto-create-topics', 'false', '--group-initial-rebalance-delay-ms', '0'] });
  kafka = kafkajsClient(broker.bootstrap);
  admin = kafka.admin();
  await admin.connect();
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  for (const p of producers) await withTimeout(p.close(), 10_000, 'producer close').catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await broker?.dispose();
});

async function producer(options: Omit<ProducerOptions, 'brokers'> = {}): Promise<Producer> {
  const p = new Producer({ brokers: [broker.bootstrap], clientId: 'sluice-producer-e2e', requestTimeoutMs: 10_000, ...options });
  producers.push(p);
  await p.connect();
  return p;
}

async function createTopic(topic: string, numPartitions: number): Promise<void> {
  assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true }), true);
}

/** testMessage(tag, i) with a key on every record. */
function keyed(tag: string, i: number): { key: Buffer; value: Buffer; headers: { key: string; value: Buffer }[] } {
  const m = testMessage(tag, i);
  return { key: Buffer.from(`key-${i % 1500}`), value: m.value, headers: [...m.headers] };
}

interface Consumed {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, unknown>;
}

/** Every record of `topic` as a kafkajs consumer (own group, from the beginning) sees it. */
async function consumeAll(topic: string, expected: number, timeoutMs = 20_000): Promise<Consumed[]> {
  const consumer = kafka.consumer({ groupId: `g-${topic}`, maxWaitTimeInMs: 100, sessionTimeout: 10_000 });
  const out: Consumed[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) {
            out.push({ partition: batch.partition, offset: Number(m.offset), key: m.key, value: m.value, headers: m.headers ?? {} });
          }
          if (out.length >= expected) resolve();
        },
      });
    });
    await withTimeout(done, timeoutMs, `kafkajs reading ${expected} records of ${topic} (got ${out.length})`);
    await sleep(200); // anything beyond `expected` would show up as a count mismatch
  } finally {
    await consumer.disconnect();
  }
  return out;
}

const kafkajsPartition = kafkajs.Partitioners.DefaultPartitioner();
const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] }));

describe('producing 20k keyed records, read back by kafkajs', () => {
  const variants: { name: string; options: Omit<ProducerOptions, 'brokers'> }[] = [
    { name: 'acks all (idempotent)', options: {} },
    { name: 'acks 1', options: { acks: 1 } },
    { name: 'acks 0', options: { acks: 0 } },
    { name: 'acks all + gzip', options: { compression: 'gzip' } },
  ];
  for (const [v, { name, options }] of variants.entries()) {
    it(`${name}: byte-identical, on the murmur2 partition, at the reported offset`, async () => {
      const topic = `produce-${v}`;
      await createTopic(topic, PARTITIONS);
      const p = await producer(options);
      const sent = Array.from({ length: COUNT }, (_, i) => keyed(topic, i));
      const acks: RecordMetadata[] = await Promise.all(sent.map((m) => p.send(topic, m)));
      await p.flush();
      const got = await consumeAll(topic, COUNT);
      assert.equal(got.length, COUNT);
      const seen = new Set<number>();
      for (const r of got) {
        const i = messageIndex(topic, r.value);
        const m = sent[i];
        assert.ok(m !== undefined && !seen.has(i), `record ${i} unexpected or seen twice`);
        seen.add(i);
        assert.ok(r.key !== null && r.key.equals(m.key) && r.value !== null && r.value.equals(m.value), `record ${i} differs`);
        assert.deepEqual(Object.entries(r.headers), m.headers.map((h) => [h.key, h.value]), `record ${i} headers`);
        const expectedPartition = kafkajsPartition({ topic, partitionMetadata, message: { key: m.key, value: m.value } });
        assert.equal(r.partition, expectedPartition, `record ${i}: partition`);
        const ack = acks[i] as RecordMetadata;
        assert.equal(ack.partition, r.partition);
        assert.equal(ack.offset, options.acks === 0 ? -1 : r.offset, `record ${i}: offset`);
      }
    });
  }
});

describe('idempotence across a broker crash', () => {
  it('kill -9 + restart mid-stream: every acknowledged record is in the log exactly once', async () => {
    const topic = 'idempotent-crash';
    await createTopic(topic, 3);
    const p = await producer({ lingerMs: 2, reconnectBackoff: { baseMs: 50, maxMs: 300 }, retryBackoffMs: 50 });
    const acked = new Set<number>();
    const failed: unknown[] = [];
    const pending = new Set<Promise<void>>();
    const total = 30_000;
    const deadline = Date.now() + 15_000;
    let crash: Promise<void> | null = null;
    for (let i = 0; i < total && Date.now() < deadline; i++) {
      if (i === 8_000) crash = broker.kill9().then(() => sleep(300)).then(() => broker.restart());
      const s = p.send(topic, keyed(topic, i)).then(() => void acked.add(i), (err: unknown) => void failed.push(err));
      pending.add(s);
      void s.finally(() => pending.delete(s));
      if (pending.size >= 2_000) await Promise.race(pending);
    }
    await crash;
    await withTimeout(p.flush(), 30_000, 'flush after the restart');
    await Promise.all(pending);
    assert.ok(acked.size > 8_000, `only ${acked.size} records acknowledged`);
    const counts = new Map<number, number>();
    const conn: KafkaConnection = await connectTo(broker.kafkaPort);
    try {
      for (let partition = 0; partition < 3; partition++) {
        await scanPartition(conn, topic, partition, (r) => {
          const i = messageIndex(topic, r.value);
          counts.set(i, (counts.get(i) ?? 0) + 1);
        });
      }
    } finally {
      await conn.close();
    }
    for (const i of acked) assert.equal(counts.get(i), 1, `acknowledged record ${i} is in the log ${counts.get(i) ?? 0} times`);
    const duplicated = [...counts].filter(([, n]) => n > 1).map(([i]) => i);
    assert.deepEqual(duplicated, [], 'no record is in the log twice');
    assert.deepEqual(failed, [], 'no send failed (the outage is far shorter than the delivery timeout)');
  });
});

describe('refusals', () => {
  it('a full buffer with onBufferFull "error" rejects at once with BufferFullError', async () => {
    const topic = 'buffer-full';
    await createTopic(topic, 1);
    const p = await producer({ bufferMemory: 64 * 1024, lingerMs: 60_000, batchSize: 1 << 20, onBufferFull: 'error' });
    const value = Buffer.alloc(1000, 1);
    const accepted: Promise<RecordMetadata>[] = [];
    const started = Date.now();
    let rejection: unknown = null;
    for (let i = 0; i < 200 && rejection === null; i++) {
      const s = p.send(topic, { value });
      s.catch(() => undefined);
      const outcome = await Promise.race([s.then(() => 'ok', (err: unknown) => err), sleep(0).then(() => 'pending')]);
      if (outcome === 'pending' || outcome === 'ok') accepted.push(s);
      else rejection = outcome;
    }
    assert.ok(rejection instanceof BufferFullError, `expected BufferFullError, got ${String(rejection)}`);
    assert.ok(Date.now() - started < 1000, 'rejected without waiting');
    assert.ok(accepted.length >= 30 && accepted.length < 70, `${accepted.length} records fit 64 KiB`);
    await p.flush();
    assert.equal((await Promise.all(accepted)).length, accepted.length, 'the records that fit are delivered');
  });

  it('a missing topic (auto-create off) rejects with UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const p = await producer();
    await assert.rejects(p.send('no-such-topic', { key: 'k', value: 'v' }),
      (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await assert.rejects(p.send('buffer-full', { value: 'v', partition: 5 }),
      (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('refuses idempotence without acks all, and codecs it does not carry', () => {
    assert.throws(() => new Producer({ brokers: [broker.bootstrap], acks: 1, idempotent: true }), TypeError);
    assert.throws(() => new Producer({ brokers: [broker.bootstrap], compression: 'zstd' as 'gzip' }), /only 'none' and 'gzip'/);
  });
});
