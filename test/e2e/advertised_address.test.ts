// --advertised-kafka-addr end to end against a broker child process: the broker binds its own
// listener but registers, and Metadata names, the advertised HOST:PORT; kafkajs bootstrapped at the
// listener itself then produces through a proxy at the advertised address, and the records read back.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { FaultProxy } from '../helpers/fault_proxy.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { connectTo, metadata, readPartition } from '../helpers/read_back.js';

let broker: BrokerProcess;
let proxy: FaultProxy;

before(async () => {
  const advertisedPort = await freePort();
  broker = await BrokerProcess.start({ args: ['--advertised-kafka-addr', `127.0.0.1:${advertisedPort}`, '--num-partitions', '1'] });
  proxy = await FaultProxy.start(broker.kafkaPort, { port: advertisedPort });
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await proxy?.close();
  await broker?.dispose();
});

test('Metadata names the advertised address, not the listener the broker binds', async () => {
  const conn = await connectTo(broker.kafkaPort);
  try {
    const res = await metadata(conn, []);
    assert.deepEqual(res.brokers.map((b) => ({ host: b.host, port: b.port })), [{ host: '127.0.0.1', port: proxy.port }]);
  } finally {
    await conn.close();
  }
});

test('a client bootstrapped at the listener produces through the advertised address', async () => {
  const kafka = kafkajsClient(broker.bootstrap, 'sluice-advertised');
  const admin = kafka.admin();
  await admin.connect();
  const producer = await connectedProducer(kafka);
  try {
    const acceptedBefore = proxy.accepted;
    await admin.createTopics({ topics: [{ topic: 'advertised', numPartitions: 1 }], waitForLeaders: true });
    await sendRange(producer, 'advertised', 'a', 0, 20);
    assert.ok(proxy.accepted > acceptedBefore, 'the client reached the broker through the advertised address');
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
  const conn = await connectTo(proxy.port);
  try {
    assert.equal((await readPartition(conn, 'advertised', 0)).length, 20);
  } finally {
    await conn.close();
  }
});
