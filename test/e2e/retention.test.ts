// Retention runs on the interval --log-retention-check-interval-ms sets (Kafka's
// log.retention.check.interval.ms): expired segments go without waiting the 5-minute default.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';

describe('retention check interval', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({ args: ['--log-retention-check-interval-ms', '200'] });
  });

  after(async () => {
    await broker?.dispose();
  });

  it('deletes segments past retention.ms within a few check intervals', async () => {
    const kafka = kafkajsClient(broker.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    const producer = await connectedProducer(kafka);
    try {
      const topic = 'retained-briefly';
      await admin.createTopics({
        topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'segment.bytes', value: '4096' }, { name: 'retention.ms', value: '1' }] }],
      });
      // Each 3000-byte message fills most of a 4 KiB segment, so every send rolls a new one.
      for (let i = 0; i < 5; i++) await producer.send({ topic, messages: [{ value: Buffer.alloc(3000, i) }] });
      let low = 0;
      for (let i = 0; i < 50 && low === 0; i++) {
        await sleep(100);
        low = Number((await admin.fetchTopicOffsets(topic))[0]?.low ?? 0);
      }
      assert.ok(low > 0, 'the log start offset did not move: expired segments were not deleted');
      const high = Number((await admin.fetchTopicOffsets(topic))[0]?.high ?? 0);
      assert.equal(high, 5, 'the log end stays');
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
