// A single node is a one-voter metadata quorum of itself, end to end against broker child
// processes: a data dir an older Sluice wrote (meta/topics.json and the producer-id block file,
// written here the way the old topic table and allocator wrote them, beside partition data this
// broker produced) starts with its topics, topic ids, messages, committed group offsets and
// producer-id monotonicity, carries the old files into the metadata log once and renames
// topics.json; a crash before that rename carries nothing twice. A node killed with SIGKILL
// restarts and serves at once: its old registration does not keep it fenced for a session. Topics
// come out at replication factor 1 on it whatever --default-replication-factor says.
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaAdmin } from '../../src/client/admin.js';
import type { KafkaConnection } from '../../src/client/connection.js';
import { commitGroupOffsets, fetchGroupOffsets } from '../../src/client/group_admin.js';
import { resolveConfig } from '../../src/config.js';
import { CreateTopicsApi } from '../../src/protocol/apis/create_topics.js';
import { InitProducerIdApi } from '../../src/protocol/apis/init_producer_id.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { connectTo, readPartition, topicInfo, type TopicInfo } from '../helpers/read_back.js';

const OFFSETS = '__consumer_offsets';
const ARGS = ['--offsets-topic-partitions', '4', '--num-partitions', '1'];
/** Far beyond the test's bounds: a restart that waited for the old session to expire would time out. */
const LONG_SESSION = ['--broker-session-timeout-ms', '60000'];
/** The old allocator's file held the end of its last block; the next start resumes there. */
const OLD_PRODUCER_ID_MARK = 7000;

/** Every broker started, disposed at the end whatever happened (a leaked child would keep this file running). */
const brokers: BrokerProcess[] = [];
let conn: KafkaConnection | null = null;

afterEach((t) => brokers.at(-1)?.noteResult(t));
after(async () => {
  await conn?.close().catch(() => undefined);
  for (const b of brokers) await b.dispose();
});

async function startBroker(args: readonly string[]): Promise<BrokerProcess> {
  const b = await BrokerProcess.start({ args });
  brokers.push(b);
  return b;
}

async function reconnect(b: BrokerProcess): Promise<KafkaConnection> {
  await conn?.close().catch(() => undefined);
  conn = await connectTo(b.kafkaPort);
  return conn;
}

async function producerId(c: KafkaConnection): Promise<number> {
  const res = await c.request(InitProducerIdApi, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 }, 4);
  assert.equal(res.errorCode, 0);
  return res.producerId;
}

/** The old single node's topic table file: version 1, topics with name, id, partition count and overrides. */
function writeOldMeta(dataDir: string, topics: readonly { name: string; info: TopicInfo; configs: Record<string, string> }[]): void {
  const meta = join(dataDir, 'meta');
  rmSync(join(meta, 'quorum'), { recursive: true, force: true });
  const table = { version: 1, topics: topics.map((t) => ({ name: t.name, id: t.info.topicId, partitions: t.info.partitions, configs: t.configs })) };
  writeFileSync(join(meta, 'topics.json'), JSON.stringify(table));
  writeFileSync(join(meta, 'producer_id_block'), String(OLD_PRODUCER_ID_MARK));
}

/** What the old broker gave its offsets topic (group_directory's overrides at these settings). */
function oldOffsetsConfigs(): Record<string, string> {
  const c = resolveConfig(ARGS, {}).config;
  return { 'retention.ms': '-1', 'retention.bytes': '-1', 'segment.bytes': String(c.offsetsTopicSegmentBytes), 'max.message.bytes': String(Math.min(16 << 20, c.ringBytes / 2 - 1)) };
}

describe('single node', () => {
  it('starts on an old data dir with its topics, ids, messages, group offsets and producer ids, carrying them in once', async () => {
    const b = await startBroker(ARGS);
    let c = await reconnect(b);
    const admin = new KafkaAdmin(c, {});
    await admin.createTopics('orders', 3, 1, { 'retention.ms': '86400000' });
    const kafka = kafkajsClient(b.bootstrap);
    const producer = await connectedProducer(kafka);
    for (let p = 0; p < 3; p++) await sendRange(producer, 'orders', `p${p}`, 0, 20 + p, { partition: p });
    await producer.disconnect();
    await commitGroupOffsets(c, 'g1', [{ topic: 'orders', partition: 1, offset: 11 }]);
    const before = { orders: await topicInfo(c, 'orders'), offsets: await topicInfo(c, OFFSETS) };
    assert.equal((await b.stop()).code, 0);

    writeOldMeta(b.dataDir, [
      { name: OFFSETS, info: before.offsets, configs: oldOffsetsConfigs() },
      { name: 'orders', info: before.orders, configs: { 'retention.ms': '86400000' } },
    ]);
    const meta = join(b.dataDir, 'meta');
    await b.restart();
    c = await reconnect(b);
    assert.ok(!existsSync(join(meta, 'topics.json')) && existsSync(join(meta, 'topics.json.migrated')), 'topics.json renamed once carried');
    const checkKept = async (): Promise<number> => {
      assert.deepEqual(await topicInfo(c, 'orders'), before.orders);
      assert.deepEqual(await topicInfo(c, OFFSETS), before.offsets);
      for (let p = 0; p < 3; p++) assert.equal((await readPartition(c, 'orders', p)).length, 20 + p, `orders-${p}`);
      const committed = await fetchGroupOffsets(c, 'g1');
      assert.deepEqual(committed.map((o) => [o.topic, o.partition, o.offset]), [['orders', 1, 11]]);
      return producerId(c);
    };
    const firstId = await checkKept();
    assert.ok(firstId >= OLD_PRODUCER_ID_MARK, `producer id ${firstId} reuses one below the old mark ${OLD_PRODUCER_ID_MARK}`);

    // A crash between the commit and the rename leaves topics.json beside a log that holds it.
    assert.equal((await b.stop()).code, 0);
    copyFileSync(join(meta, 'topics.json.migrated'), join(meta, 'topics.json'));
    await b.restart();
    c = await reconnect(b);
    assert.ok(!existsSync(join(meta, 'topics.json')));
    assert.ok((await checkKept()) > firstId);

    // Carried once: a deleted topic stays deleted over the next start.
    await new KafkaAdmin(c, {}).deleteTopics(['orders']);
    assert.equal((await b.stop()).code, 0);
    await b.restart();
    c = await reconnect(b);
    assert.deepEqual((await new KafkaAdmin(c, {}).listTopics()).map((t) => t.name), [OFFSETS]);
    await b.dispose();
  });

  it('places topics on itself at replication factor 1 whatever the default asks', async () => {
    const b = await startBroker([...ARGS, '--default-replication-factor', '3']);
    const c = await reconnect(b);
    const admin = new KafkaAdmin(c, {});
    assert.equal((await admin.createTopics('defaults', 2, -1)).replicationFactor, 1);
    const res = await c.request(CreateTopicsApi, {
      topics: [{ name: 'placed', numPartitions: -1, replicationFactor: -1, assignments: [0, 1].map((partitionIndex) => ({ partitionIndex, brokerIds: [0] })), configs: [] }],
      timeoutMs: 15_000, validateOnly: false,
    }, 5);
    assert.deepEqual(res.topics.map((t) => [t.errorCode, t.numPartitions, t.replicationFactor]), [[0, 2, 1]]);
    assert.deepEqual((await admin.describeTopic('placed')).partitionDetails.map((p) => p.replicas), [[0], [0]]);
    await assert.rejects(admin.createTopics('three', 1, 3), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR);
  });

  it('restarts after SIGKILL and serves at once: the old registration does not keep it fenced', async () => {
    const b = await startBroker([...ARGS, ...LONG_SESSION]);
    let c = await reconnect(b);
    await new KafkaAdmin(c, {}).createTopics('events', 2, 1);
    const kafka = kafkajsClient(b.bootstrap);
    const producer = await connectedProducer(kafka);
    await sendRange(producer, 'events', 'a', 0, 10, { partition: 0 });
    await producer.disconnect();
    await b.kill9();
    const started = performance.now();
    await b.restart();
    const ms = performance.now() - started;
    assert.ok(ms < 30_000, `restart took ${Math.round(ms)} ms`);
    c = await reconnect(b);
    assert.equal((await readPartition(c, 'events', 0)).length, 10);
    const again = await connectedProducer(kafkajsClient(b.bootstrap));
    await sendRange(again, 'events', 'b', 0, 5, { partition: 1 });
    await again.disconnect();
    assert.equal((await readPartition(c, 'events', 1)).length, 5);
  });
});
