// librdkafka refuses a response larger than receive.message.max.bytes and retries it forever, so a
// Fetch over partitions on several shards must keep to fetch.max.bytes as a whole: a consumer with
// fetch.max.bytes ~1 MB and receive.message.max.bytes at its minimum (fetch.max.bytes + 512)
// reads 4 partitions, spread over 2 shards, of ~900 KiB messages to the end.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { KafkaConnection } from '../../src/client/connection.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { PYTHON } from '../helpers/kafka_python.js';
import { connectTo } from '../helpers/read_back.js';

const SCRIPT = fileURLToPath(new URL('../../../test/interop/confluent_fetch_client.py', import.meta.url));
const TOPIC = 'fetch-limits-rdkafka';
const PARTITIONS = 4;
const PER_PARTITION = 3;
const RECORD_BYTES = 900 * 1024;
const FETCH_MAX_BYTES = 1_000_000;
const RECEIVE_MAX_BYTES = FETCH_MAX_BYTES + 512;
const READ_SECONDS = 30;

describe('librdkafka with fetch.max.bytes 1 MB over partitions on 2 shards', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({ shards: 2, flush: 'never' });
    const admin = kafkajsClient(broker.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    const conn: KafkaConnection = await connectTo(broker.kafkaPort);
    try {
      for (let p = 0; p < PARTITIONS; p++) {
        for (let i = 0; i < PER_PARTITION; i++) {
          const records = encodeRecordBatch([{ key: null, value: Buffer.alloc(RECORD_BYTES, i), timestamp: Date.now() }]);
          const res = await conn.request(ProduceApi, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: p, records }] }] });
          assert.equal(res.responses[0]?.partitionResponses[0]?.errorCode, 0, 'produce');
        }
      }
    } finally {
      await conn.close();
    }
  });

  after(async () => {
    await broker?.dispose();
  });

  it('reads every message within the time bound', async () => {
    const expected = PARTITIONS * PER_PARTITION;
    const args = [SCRIPT, broker.bootstrap, TOPIC, String(PARTITIONS), String(expected), String(FETCH_MAX_BYTES), String(RECEIVE_MAX_BYTES), String(READ_SECONDS)];
    const r = await run(PYTHON, args, { timeoutMs: (READ_SECONDS + 30) * 1000 });
    const lines = r.stdout.toString('utf8').trim().split('\n').filter((l) => l.length > 0);
    assert.equal(r.code, 0, `read ${lines.length} of ${expected} messages; stderr: ${r.stderr.slice(-600)}`);
    for (let p = 0; p < PARTITIONS; p++) {
      const offsets = lines.filter((l) => l.startsWith(`${p} `)).map((l) => Number(l.split(' ')[1]));
      assert.deepEqual(offsets, Array.from({ length: PER_PARTITION }, (_, i) => i), `partition ${p}`);
    }
  });
});
