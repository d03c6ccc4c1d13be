// librdkafka (confluent_kafka over the system librdkafka) against a broker that stamps leader
// epochs into batches and advertises OffsetForLeaderEpoch: its consumer reads a partition, seeks
// back and reads it again, and its API-version probe lists OffsetForLeaderEpoch. (This librdkafka
// predates its KIP-320 offset validation, so it never sends OffsetForLeaderEpoch itself; the
// broker's answers are checked in test/e2e/leader_epochs.test.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { BrokerProcess } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { PYTHON } from '../helpers/kafka_python.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';

const SCRIPT = fileURLToPath(new URL('../../../test/interop/confluent_seek_client.py', import.meta.url));
const TOPIC = 'epochs-rdkafka';
const COUNT = 20;
const SEEK_TO = 7;
const READ_SECONDS = 30;

describe('librdkafka consumer on leader-epoch-stamped batches', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start();
    const kafka = kafkajsClient(broker.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = await connectedProducer(kafka);
    await sendRange(producer, TOPIC, 'rd', 0, COUNT, { batch: 5 });
    await producer.disconnect();
  });

  after(async () => {
    await broker?.dispose();
  });

  it('reads, seeks back and reads again, and sees OffsetForLeaderEpoch advertised', async () => {
    const r = await run(PYTHON, [SCRIPT, broker.bootstrap, TOPIC, String(COUNT), String(SEEK_TO), String(READ_SECONDS)], { timeoutMs: (READ_SECONDS + 30) * 1000 });
    const offsets = r.stdout.toString('utf8').trim().split('\n').filter((l) => l.length > 0).map(Number);
    const stderr = r.stderr.toString();
    assert.equal(r.code, 0, `read ${offsets.length} messages; stderr: ${stderr.slice(-600)}`);
    const all = Array.from({ length: COUNT }, (_, i) => i);
    assert.deepEqual(offsets, [...all, ...all.slice(SEEK_TO)]);
    assert.match(stderr, /OffsetForLeaderEpoch \(23\) Versions 2\.\.4/);
  });
});
