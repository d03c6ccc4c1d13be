// End to end with kafkajs 2.2.4 against a broker child process: every produce flavour kafkajs has
// (acks 0/1/-1, idempotent with 5 in flight, gzip, multi-partition) read back through OUR fetch
// path byte for byte, plus the admin APIs kafkajs drives (CreateTopics, Metadata, ListOffsets,
// CreatePartitions, DeleteTopics, DescribeConfigs). No consumer groups: reads use explicit offsets.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { CompressionCodec } from '../../src/protocol/records.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { CompressionTypes, ConfigResourceTypes, connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { assertRecordIs, messageIndex, testMessage } from '../helpers/messages.js';
import { EARLIEST, LATEST, ZERO_UUID, connectTo, listOffset, metadata, readBatches, readPartition, topicInfo } from '../helpers/read_back.js';

let broker: BrokerProcess;
let kafka: KafkaType;
let admin: Admin;
let conn: KafkaConnection;
const producers: Producer[] = [];

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
  kafka = kafkajsClient(broker.bootstrap);
  admin = kafka.admin();
  await admin.connect();
  conn = await connectTo(broker.kafkaPort);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  for (const p of producers) await p.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

async function producer(config: Parameters<typeof connectedProducer>[1] = {}): Promise<Producer> {
  const p = await connectedProducer(kafka, config);
  producers.push(p);
  return p;
}

async function createTopic(topic: string, numPartitions = 1, configEntries: { name: string; value: string }[] = []): Promise<void> {
  const created = await admin.createTopics({ topics: [{ topic, numPartitions, configEntries }], waitForLeaders: true });
  assert.equal(created, true, `createTopics(${topic}) reported the topic as existing`);
}

/** Checks that `partition` holds exactly messages [0, n) of `tag` in order from offset 0. */
async function expectExactly(topic: string, partition: number, tag: string, n: number): Promise<void> {
  const records = await readPartition(conn, topic, partition);
  assert.equal(records.length, n, `${topic}/${partition}: ${records.length} records, expected ${n}`);
  records.forEach((r, i) => {
    assert.equal(r.offset, i);
    assertRecordIs(r, testMessage(tag, i), `${topic}/${partition}`);
  });
}

async function waitForEnd(topic: string, partition: number, end: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const latest = (await listOffset(conn, topic, partition, LATEST)).offset;
    if (latest >= end) return;
    assert.ok(Date.now() < deadline, `${topic}/${partition}: end offset ${latest}, expected ${end}`);
    await sleep(50);
  }
}

describe('kafkajs producer, read back through our fetch path', () => {
  for (const acks of [1, -1]) {
    it(`acks ${acks}: 1,000 messages in 10 sends land once each, byte-identical`, async () => {
      const topic = `acks-${acks}`;
      await createTopic(topic);
      await sendRange(await producer(), topic, topic, 0, 1000, { acks });
      await expectExactly(topic, 0, topic, 1000);
    });
  }

  it('acks 0: messages land although no response comes back', async () => {
    const topic = 'acks-0';
    await createTopic(topic);
    const p = await producer();
    await sendRange(p, topic, topic, 0, 500, { acks: 0, batch: 50 });
    await waitForEnd(topic, 0, 500);
    // The connection must still be in step: an acks=1 send after acks=0 ones gets its answer.
    await sendRange(p, topic, topic, 500, 510, { acks: 1 });
    await expectExactly(topic, 0, topic, 510);
  });

  it('gzip batches are stored as sent and decode identically', async () => {
    const topic = 'gzip';
    await createTopic(topic);
    await sendRange(await producer(), topic, topic, 0, 600, { compression: CompressionTypes.GZIP, batch: 200 });
    await expectExactly(topic, 0, topic, 600);
    const batches = await readBatches(conn, topic, 0);
    assert.equal(batches.length, 3);
    for (const b of batches) assert.equal(b.compression, CompressionCodec.gzip);
  });

  it('idempotent producer with 5 in flight: each message exactly once, sequences in order', async () => {
    const topic = 'idempotent';
    await createTopic(topic, 3);
    const p = await producer({ idempotent: true, maxInFlightRequests: 5 });
    const sends = [];
    for (let s = 0; s < 40; s++) sends.push(sendRange(p, topic, topic, s * 25, s * 25 + 25, { batch: 25 }));
    await Promise.all(sends);
    const seen = new Set<number>();
    for (let partition = 0; partition < 3; partition++) {
      const batches = await readBatches(conn, topic, partition);
      let sequence = 0;
      let producerId: number | null = null;
      for (const b of batches) {
        assert.ok(b.producerId >= 0, 'idempotent batch without a producer id');
        producerId ??= b.producerId;
        assert.equal(b.producerId, producerId);
        assert.equal(b.baseSequence, sequence, `partition ${partition}: batch at ${b.baseOffset} has sequence ${b.baseSequence}, expected ${sequence}`);
        sequence += b.records.length;
        for (const r of b.records) {
          const i = messageIndex(topic, r.value);
          assert.ok(i >= 0 && !seen.has(i), `duplicate or foreign record at ${partition}/${r.offset}`);
          seen.add(i);
          assertRecordIs(r, testMessage(topic, i), `${topic}/${partition}`);
        }
      }
    }
    assert.equal(seen.size, 1000);
  });

  it('multi-partition topic: explicit partitions and keyed sends land where kafkajs says', async () => {
    const topic = 'multi';
    await createTopic(topic, 4);
    const p = await producer();
    for (let partition = 0; partition < 4; partition++) {
      await sendRange(p, topic, `${topic}-${partition}`, 0, 100 * (partition + 1), { partition });
    }
    for (let partition = 0; partition < 4; partition++) await expectExactly(topic, partition, `${topic}-${partition}`, 100 * (partition + 1));
    const keyed = await p.send({ topic, messages: [{ key: 'alpha', value: 'a' }, { key: 'beta', value: 'b' }], acks: -1 });
    for (const meta of keyed) {
      assert.equal(meta.errorCode, 0);
      const records = await readPartition(conn, topic, meta.partition, { fromOffset: Number(meta.baseOffset) });
      assert.ok(records.length >= 1 && ['a', 'b'].includes(records[0]?.value?.toString() ?? ''));
    }
  });
});

describe('admin and offsets', () => {
  it('ListOffsets: earliest, latest, by timestamp (batch and record granularity), max timestamp', async () => {
    const topic = 'timestamps';
    await createTopic(topic);
    const p = await producer();
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 10; i++) await p.send({ topic, acks: -1, messages: [{ value: `m${i}`, timestamp: String(t0 + i * 1000) }] });
    await p.send({ topic, acks: -1, messages: [10, 11, 12].map((i) => ({ value: `m${i}`, timestamp: String(t0 + i * 1000) })) });
    assert.equal((await listOffset(conn, topic, 0, EARLIEST)).offset, 0);
    assert.equal((await listOffset(conn, topic, 0, LATEST)).offset, 13);
    assert.equal((await listOffset(conn, topic, 0, t0 + 3500)).offset, 4);
    assert.equal((await listOffset(conn, topic, 0, t0)).offset, 0);
    const inside = await listOffset(conn, topic, 0, t0 + 10_500);
    assert.deepEqual([inside.offset, inside.timestamp], [11, t0 + 11_000], 'lookup must land on the record inside a batch');
    assert.equal((await listOffset(conn, topic, 0, t0 + 99_000)).offset, -1);
    const max = await listOffset(conn, topic, 0, -3, 7);
    assert.deepEqual([max.offset, max.timestamp], [12, t0 + 12_000]);
    const [kjs] = await admin.fetchTopicOffsetsByTimestamp(topic, t0 + 5000);
    assert.equal(kjs?.offset, '5');
    const [range] = await admin.fetchTopicOffsets(topic);
    assert.deepEqual([range?.low, range?.high], ['0', '13']);
  });

  it('Metadata: non-zero unique topic ids, our address, unknown topics', async () => {
    await createTopic('meta-a', 2);
    await createTopic('meta-b', 1);
    for (const version of [1, 4, 9, 10, 12]) {
      const res = await metadata(conn, ['meta-a', 'meta-b'], version);
      assert.deepEqual(res.brokers.map((b) => [b.host, b.port]), [['127.0.0.1', broker.kafkaPort]], `v${version} brokers`);
      assert.deepEqual(res.topics.map((t) => [t.name, t.errorCode, t.partitions.length]), [['meta-a', 0, 2], ['meta-b', 0, 1]]);
      for (const t of res.topics) for (const p of t.partitions) assert.equal(p.leaderId, res.brokers[0]?.nodeId);
      if (version >= 10) {
        const [a, b] = res.topics.map((t) => t.topicId);
        assert.ok(a !== ZERO_UUID && b !== ZERO_UUID && a !== b, `v${version} topic ids ${a} ${b}`);
      }
    }
    const unknown = await metadata(conn, ['no-such-topic'], 12);
    assert.equal(unknown.topics[0]?.errorCode, 3);
    const kjs = await admin.fetchTopicMetadata({ topics: ['meta-a'] });
    assert.equal(kjs.topics[0]?.partitions.length, 2);
  });

  it('CreatePartitions grows a topic and the new partitions take writes', async () => {
    const topic = 'grow';
    await createTopic(topic, 1);
    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
    assert.equal((await topicInfo(conn, topic)).partitions, 3);
    const p = await producer();
    await sendRange(p, topic, topic, 0, 50, { partition: 2 });
    await expectExactly(topic, 2, topic, 50);
    await assert.rejects(admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] }), /partition/i);
  });

  it('DeleteTopics removes a topic; recreating it yields a new id and an empty log', async () => {
    const topic = 'doomed';
    await createTopic(topic, 2);
    const before = await topicInfo(conn, topic);
    await sendRange(await producer(), topic, topic, 0, 20, { partition: 0 });
    await admin.deleteTopics({ topics: [topic] });
    assert.ok(!(await admin.listTopics()).includes(topic));
    assert.equal((await metadata(conn, [topic])).topics[0]?.errorCode, 3);
    await createTopic(topic, 1);
    const after = await topicInfo(conn, topic);
    assert.notEqual(after.topicId, before.topicId);
    assert.equal((await listOffset(conn, topic, 0, LATEST)).offset, 0);
  });

  it('DescribeConfigs reports topic configs, including ones set at creation', async () => {
    const topic = 'configured';
    await createTopic(topic, 1, [{ name: 'retention.ms', value: '3600000' }]);
    const res = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false });
    const resource = res.resources[0];
    assert.ok(resource !== undefined);
    assert.equal(resource.errorCode, 0);
    const entries = new Map(resource.configEntries.map((e) => [e.configName, e]));
    assert.equal(entries.get('retention.ms')?.configValue, '3600000');
    assert.equal(entries.get('retention.ms')?.isDefault, false);
    for (const name of ['cleanup.policy', 'max.message.bytes', 'segment.bytes']) assert.ok(entries.has(name), `missing ${name}`);
    const only = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }], includeSynonyms: false });
    assert.deepEqual(only.resources[0]?.configEntries.map((e) => e.configName), ['retention.ms']);
  });
});
