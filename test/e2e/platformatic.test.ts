// End to end with @platformatic/kafka 1.x (flexible versions: Metadata 12, Produce 9+, Fetch 12+
// with topic ids): its admin creates topics, its producer writes (acks 1, idempotent, gzip,
// snappy, lz4), and both its own group-less Consumer.fetch() and our fetch path read back byte
// for byte. No consumer groups are involved.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Admin, Consumer, Producer } from '@platformatic/kafka';
import type { ClusterMetadata, CompressionAlgorithmValue, MessageToProduce } from '@platformatic/kafka';
import type { KafkaConnection } from '../../src/client/connection.js';
import { CompressionCodec, RecordBatchError } from '../../src/protocol/records.js';
import { BATCH_HEADER_BYTES, BatchField } from '../../src/protocol/record_batch.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { assertRecordIs, messageIndex, testMessage } from '../helpers/messages.js';
import type { TestMessage } from '../helpers/messages.js';
import { connectTo, fetchOnce, readBatches, readPartition, recordsBytes, topicInfo } from '../helpers/read_back.js';

let broker: BrokerProcess;
let admin: Admin;
let consumer: Consumer;
let conn: KafkaConnection;
const producers: Producer[] = [];

before(async () => {
  broker = await BrokerProcess.start();
  const base = { clientId: 'sluice-e2e-platformatic', bootstrapBrokers: [broker.bootstrap], retries: 3, retryDelay: 200 };
  admin = new Admin(base);
  consumer = new Consumer({ ...base, groupId: 'never-joined', maxWaitTime: 200 });
  conn = await connectTo(broker.kafkaPort);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  for (const p of producers) await p.close().catch(() => undefined);
  await consumer?.close().catch(() => undefined);
  await admin?.close().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

function producer(options: { idempotent?: boolean; compression?: CompressionAlgorithmValue } = {}): Producer {
  const p = new Producer({ clientId: 'sluice-e2e-platformatic', bootstrapBrokers: [broker.bootstrap], retries: 3, retryDelay: 200, ...options });
  producers.push(p);
  return p;
}

function toProduce(topic: string, partition: number, m: TestMessage): MessageToProduce {
  const headers = new Map<Buffer, Buffer>(m.headers.map((h) => [Buffer.from(h.key), h.value]));
  return m.key === null ? { topic, partition, value: m.value, headers } : { topic, partition, key: m.key, value: m.value, headers };
}

async function sendAll(p: Producer, topic: string, partition: number, tag: string, n: number, acks?: number): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    const messages = [];
    for (let k = i; k < Math.min(n, i + 100); k++) messages.push(toProduce(topic, partition, testMessage(tag, k)));
    await p.send(acks === undefined ? { messages } : { messages, acks });
  }
}

/** The part of platformatic's fetch answer used here (its .d.ts files do not resolve under NodeNext). */
interface PlatformaticFetchResult {
  responses: { partitions: { errorCode: number; records?: { firstOffset: bigint; records: { offsetDelta: number; key: Buffer | null; value: Buffer | null; headers: [Buffer | null, Buffer | null][] }[] }[] }[] }[];
}

/** Reads [0, n) of a partition with platformatic's own group-less fetch and checks every byte. */
async function platformaticReadBack(topic: string, partition: number, tag: string, n: number): Promise<void> {
  const meta: ClusterMetadata = await consumer.metadata({ topics: [topic], forceUpdate: true });
  const t = meta.topics.get(topic);
  assert.ok(t !== undefined);
  const leader = t.partitions[partition]?.leader;
  assert.ok(leader !== undefined);
  let next = 0;
  const deadline = Date.now() + 20_000;
  while (next < n) {
    assert.ok(Date.now() < deadline, `platformatic fetch stalled at ${next}/${n}`);
    const res: PlatformaticFetchResult = await consumer.fetch({
      node: leader,
      topics: [{ topicId: t.id, partitions: [{ partition, fetchOffset: BigInt(next), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }],
    });
    const p = res.responses[0]?.partitions[0];
    assert.ok(p !== undefined);
    assert.equal(p.errorCode, 0);
    for (const batch of p.records ?? []) {
      for (const r of batch.records) {
        const offset = Number(batch.firstOffset) + r.offsetDelta;
        if (offset < next) continue;
        assert.equal(offset, next);
        const m = testMessage(tag, offset);
        assert.ok(r.value !== null && r.value.equals(m.value), `value at ${offset}`);
        assert.deepEqual(r.key, m.key, `key at ${offset}`);
        assert.deepEqual(r.headers.map(([k, v]) => [k?.toString(), v]), m.headers.map((h) => [h.key, h.value]), `headers at ${offset}`);
        next++;
      }
    }
  }
}

async function ourReadBack(topic: string, partition: number, tag: string, n: number): Promise<void> {
  const records = await readPartition(conn, topic, partition);
  assert.equal(records.length, n);
  records.forEach((r, i) => assertRecordIs(r, testMessage(tag, i), `${topic}/${partition}`));
}

describe('@platformatic/kafka', () => {
  it('admin creates a 2-partition topic with a topic id', async () => {
    await admin.createTopics({ topics: ['plat'], partitions: 2 });
    const info = await topicInfo(conn, 'plat');
    assert.equal(info.partitions, 2);
    assert.notEqual(info.topicId, '0'.repeat(32));
  });

  it('acks 1 producer to explicit partitions; platformatic fetch and our fetch agree byte for byte', async () => {
    const p = producer();
    await sendAll(p, 'plat', 0, 'plat-0', 300, 1);
    await sendAll(p, 'plat', 1, 'plat-1', 450, 1);
    for (const [partition, n] of [[0, 300], [1, 450]] as const) {
      await platformaticReadBack('plat', partition, `plat-${partition}`, n);
      await ourReadBack('plat', partition, `plat-${partition}`, n);
    }
  });

  it('idempotent producer: producer id set, sequences contiguous, nothing duplicated', async () => {
    await admin.createTopics({ topics: ['plat-idem'], partitions: 1 });
    const p = producer({ idempotent: true });
    await sendAll(p, 'plat-idem', 0, 'plat-idem', 500);
    let sequence = 0;
    const seen = new Set<number>();
    for (const b of await readBatches(conn, 'plat-idem', 0)) {
      assert.ok(b.producerId >= 0);
      assert.equal(b.baseSequence, sequence);
      sequence += b.records.length;
      for (const r of b.records) {
        const i = messageIndex('plat-idem', r.value);
        assert.ok(!seen.has(i));
        seen.add(i);
      }
    }
    assert.equal(seen.size, 500);
  });

  for (const [codec, bits] of [['gzip', CompressionCodec.gzip], ['snappy', CompressionCodec.snappy], ['lz4', CompressionCodec.lz4]] as const) {
    it(`${codec} batches are stored as sent and read back identically`, async () => {
      const topic = `plat-${codec}`;
      await admin.createTopics({ topics: [topic], partitions: 1 });
      await sendAll(producer({ compression: codec }), topic, 0, topic, 400);
      await platformaticReadBack(topic, 0, topic, 400);
      const first = recordsBytes((await fetchOnce(conn, topic, await topicInfo(conn, topic), 0, 0)).records);
      assert.ok(first.length >= BATCH_HEADER_BYTES);
      assert.equal(first.readInt16BE(BatchField.attributes) & 7, bits, 'broker must keep the codec the producer chose');
      if (bits === CompressionCodec.gzip) await ourReadBack(topic, 0, topic, 400);
      else await assert.rejects(readPartition(conn, topic, 0), RecordBatchError);
    });
  }
});
