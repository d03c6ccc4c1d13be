// Interop with kcat 1.7 / librdkafka 2.0.2 (Debian): metadata listing (-L), binary produce with
// keys and headers (-P -K -H) read back by kcat (-C) and by our fetch path, offset-for-time
// queries (-Q), and every compression codec librdkafka has (gzip, snappy, lz4, zstd) produced
// and consumed back identically, the broker keeping the producer's codec.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BATCH_HEADER_BYTES, BatchField } from '../../src/protocol/record_batch.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { consumeArgs, kcat, kcatInput, parseKcatOutput, produceArgs } from '../helpers/kcat.js';
import type { KcatRecord } from '../helpers/kcat.js';
import { testMessage } from '../helpers/messages.js';
import type { TestMessage } from '../helpers/messages.js';
import { connectTo, fetchOnce, readPartition, recordsBytes, topicInfo } from '../helpers/read_back.js';

let broker: BrokerProcess;
let conn: KafkaConnection;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
  conn = await connectTo(broker.kafkaPort);
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

const messages = (tag: string, n: number, maxNoise?: number): TestMessage[] => Array.from({ length: n }, (_, i) => testMessage(tag, i, maxNoise));

async function kcatConsume(topic: string, partition: number | null): Promise<KcatRecord[]> {
  const out: KcatRecord[] = [];
  parseKcatOutput((await kcat(consumeArgs(broker.bootstrap, topic, partition))).stdout, (r) => out.push(r));
  return out;
}

function assertKcatRecords(got: readonly KcatRecord[], sent: readonly TestMessage[], headers: string): void {
  assert.equal(got.length, sent.length);
  got.forEach((r, i) => {
    const m = sent[i] as TestMessage;
    assert.equal(r.offset, i);
    assert.ok(r.value !== null && r.value.equals(m.value), `value at ${i}`);
    assert.deepEqual(r.key, m.key, `key at ${i}`);
    assert.equal(r.headers, headers, `headers at ${i}`);
  });
}

describe('kcat', () => {
  it('-L lists our broker and each topic partition with its leader', async () => {
    const admin = kafkajsClient(broker.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'listed', numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
    const meta = JSON.parse((await kcat(['-b', broker.bootstrap, '-L', '-J', '-t', 'listed'])).stdout.toString()) as {
      brokers: { id: number; name: string }[];
      topics: { topic: string; error?: string; partitions: { partition: number; leader: number; error?: string }[] }[];
    };
    assert.equal(meta.brokers.length, 1);
    assert.equal(meta.brokers[0]?.name, broker.bootstrap);
    const topic = meta.topics.find((t) => t.topic === 'listed');
    assert.ok(topic !== undefined && topic.error === undefined, JSON.stringify(meta.topics));
    assert.deepEqual(topic.partitions.map((p) => [p.partition, p.leader, p.error]), [0, 1, 2].map((p) => [p, meta.brokers[0]?.id, undefined]));
  });

  it('-P with keys, null keys and headers; -C and our fetch path read identical bytes', async () => {
    const sent = messages('kc', 3000);
    await kcat(produceArgs(broker.bootstrap, 'kc', ['-H', 'trace=abc', '-H', 'run=interop']), { input: kcatInput(sent) });
    assertKcatRecords(await kcatConsume('kc', null), sent, 'trace=abc,run=interop');
    const ours = await readPartition(conn, 'kc', 0);
    assert.equal(ours.length, sent.length);
    ours.forEach((r, i) => {
      const m = sent[i] as TestMessage;
      assert.ok(r.value?.equals(m.value) === true && (r.key === null ? m.key === null : r.key.equals(m.key as Buffer)), `record ${i}`);
      assert.deepEqual(r.headers.map((h) => [h.key, h.value?.toString()]), [['trace', 'abc'], ['run', 'interop']]);
    });
  });

  it('-Q finds offsets by timestamp', async () => {
    const producer = kafkajsClient(broker.bootstrap).producer();
    await producer.connect();
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 10; i++) await producer.send({ topic: 'when', acks: -1, messages: [{ value: `m${i}`, timestamp: String(t0 + i * 1000) }] });
    await producer.disconnect();
    const query = async (ts: number): Promise<number> => {
      const out = JSON.parse((await kcat(['-b', broker.bootstrap, '-Q', '-J', '-t', `when:0:${ts}`])).stdout.toString()) as Record<string, Record<string, { offset: number }>>;
      const entry = out['when']?.['0'];
      assert.ok(entry !== undefined, JSON.stringify(out));
      return entry.offset;
    };
    assert.equal(await query(t0 - 1), 0);
    assert.equal(await query(t0 + 4500), 5);
    assert.equal(await query(t0 + 9000), 9);
    assert.equal(await query(t0 + 60_000), -1);
  });

  for (const [codec, bits] of [['gzip', 1], ['snappy', 2], ['lz4', 3], ['zstd', 4]] as const) {
    it(`compression.codec=${codec}: stored as sent, consumed back identical`, async () => {
      const topic = `codec-${codec}`;
      // Little noise: librdkafka sends a batch uncompressed when compressing does not shrink it.
      const sent = messages(topic, 2000, 8);
      await kcat(produceArgs(broker.bootstrap, topic, ['-X', `compression.codec=${codec}`, '-X', 'linger.ms=50']), { input: kcatInput(sent) });
      assertKcatRecords(await kcatConsume(topic, 0), sent, '');
      const first = recordsBytes((await fetchOnce(conn, topic, await topicInfo(conn, topic), 0, 0)).records);
      assert.ok(first.length >= BATCH_HEADER_BYTES);
      // librdkafka 2.0.2 compresses with lz4 only if the broker advertises FindCoordinator v0
      // (its RD_KAFKA_FEATURE_LZ4 check); otherwise it logs "Broker does not support
      // compression type lz4: not compressing batch" and sends the batch uncompressed.
      assert.equal(first.readInt16BE(BatchField.attributes) & 7, bits, `codec bits of the stored batch (${codec})`);
      if (codec === 'gzip') assert.equal((await readPartition(conn, topic, 0)).length, sent.length);
    });
  }
});
