// DescribeLogDirs read by kafka-python 2.0.2 (Debian python3-kafka): its admin client frames a v1
// request and decodes the answer with its own protocol types (2.0.2 has no describe_log_dirs(), so
// the script declares the schema). It must see the broker's data dir, the named topic's partitions
// only when it names them, every partition held when it asks for null, and the sizes our admin
// client reads.

import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkaPython } from '../helpers/kafka_python.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';

const TOPIC = 'kp-log-dirs';

/** One dir as the script prints it: path, error code, [topic, partition, size, lag, future]. */
type PythonPartition = [string, number, number, number, boolean];
type PythonDir = [string, number, PythonPartition[]];

let broker: BrokerProcess;

before(async () => {
  broker = await BrokerProcess.start();
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await broker?.dispose();
});

it('kafka-python reads DescribeLogDirs: the data dir, only the named partitions or all, and the sizes our client reads', async () => {
  const admin = await KafkaAdmin.connect({ host: broker.host, port: broker.kafkaPort });
  try {
    await admin.createTopics(TOPIC, 2, 1);
    await admin.createTopics('other', 1, 1);
    const producer = await connectedProducer(kafkajsClient(broker.bootstrap, 'kp-log-dirs'));
    await sendRange(producer, TOPIC, 'kp', 0, 200, { batch: 20 });
    await sendRange(producer, 'other', 'kp', 0, 10);
    await producer.disconnect();

    const out = await kafkaPython<{ brokers: Record<string, [PythonDir[], PythonDir[]]> }>(['log-dirs', broker.bootstrap, TOPIC], 60_000);
    const ours = (await admin.describeLogDirs())[0]?.logDirs[0];
    assert.ok(ours !== undefined);
    assert.equal(Object.keys(out.brokers).length, 1, JSON.stringify(out));
    const answers = Object.values(out.brokers)[0]!;
    const [[named], [all]] = answers;
    assert.ok(named !== undefined && all !== undefined);
    for (const [path, error] of [named, all]) assert.deepEqual([path, error], [resolve(broker.dataDir), 0]);

    const oursOf = (topics: readonly string[]): PythonPartition[] => ours.partitions.filter((p) => topics.includes(p.topic)).map((p) => [p.topic, p.partition, p.sizeBytes, 0, false]);
    assert.deepEqual(named[2], oursOf([TOPIC]), 'named: that topic only');
    assert.ok(named[2].every(([, , size]) => size > 0));
    assert.deepEqual(all[2].filter(([t]) => t === TOPIC || t === 'other'), oursOf([TOPIC, 'other']), 'null: every partition held');
  } finally {
    await admin.close();
  }
});
