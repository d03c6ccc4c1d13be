// Partition directories keyed by topic id, end to end against a broker child process: a topic
// deleted and recreated under the same name starts empty even when the old partition directory
// survived the deletion (as after a crash mid-delete: put back here by hand), and a directory
// from before topic ids were recorded still opens with its data and gains the id.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { LATEST, connectTo, listOffset, readPartition, topicInfo } from '../helpers/read_back.js';

let broker: BrokerProcess;
let kafka: KafkaType;
let admin: Admin;
let producer: Producer;
let conn: KafkaConnection;

async function connectAll(): Promise<void> {
  kafka = kafkajsClient(broker.bootstrap);
  admin = kafka.admin();
  await admin.connect();
  producer = await connectedProducer(kafka);
  conn = await connectTo(broker.kafkaPort);
}

async function disconnectAll(): Promise<void> {
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
}

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
  await connectAll();
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await disconnectAll();
  await broker?.dispose();
});

async function createTopic(topic: string): Promise<void> {
  assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true }), true);
}

const metadataFile = (topic: string): string => join(broker.dataDir, `${topic}-0`, 'partition.metadata');

describe('topic ids in partition directories', () => {
  it('a recreated topic is empty even when the old topic’s directory was left behind', async () => {
    await createTopic('again');
    await sendRange(producer, 'again', 'old', 0, 5);
    const oldId = (await topicInfo(conn, 'again')).topicId;
    assert.ok(readFileSync(metadataFile('again'), 'utf8').includes(oldId), 'the directory names its topic id');
    const saved = join(tmpdir(), `sluice-again-${process.pid}`);
    cpSync(join(broker.dataDir, 'again-0'), saved, { recursive: true });
    try {
      await admin.deleteTopics({ topics: ['again'] });
      assert.equal(existsSync(join(broker.dataDir, 'again-0')), false, 'deletion removed the directory');
      // A deletion interrupted before the directory went: the old data is back under the name.
      cpSync(saved, join(broker.dataDir, 'again-0'), { recursive: true });
    } finally {
      rmSync(saved, { recursive: true, force: true });
    }
    await createTopic('again');
    const newId = (await topicInfo(conn, 'again')).topicId;
    assert.notEqual(newId, oldId);
    assert.equal((await listOffset(conn, 'again', 0, LATEST)).offset, 0, 'the new topic starts at offset 0');
    assert.deepEqual(await readPartition(conn, 'again', 0), [], 'none of the old records are served');
    await sendRange(producer, 'again', 'new', 0, 2);
    assert.equal((await readPartition(conn, 'again', 0)).length, 2);
    assert.ok(readFileSync(metadataFile('again'), 'utf8').includes(newId));
  });

  it('a partition directory without a metadata file (written before topic ids) opens with its data and gains the id', async () => {
    await createTopic('legacy');
    await sendRange(producer, 'legacy', 'kept', 0, 3);
    const id = (await topicInfo(conn, 'legacy')).topicId;
    await disconnectAll();
    await broker.stop();
    rmSync(metadataFile('legacy'));
    await broker.restart();
    await connectAll();
    assert.equal((await readPartition(conn, 'legacy', 0)).length, 3, 'the records survived');
    assert.ok(readFileSync(metadataFile('legacy'), 'utf8').includes(id), 'the file was written on open');
  });
});
