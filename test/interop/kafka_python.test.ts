// Interop with kafka-python 2.0.2 (Debian python3-kafka), version auto-detected: it must infer a
// broker >= 2.1 (so it uses Produce v7 / Fetch v4 with record batches). Its producer writes with
// acks=1 and acks=all to explicit partitions; its consumer reads with assign() and
// seek_to_beginning() (no group); both its reads and our fetch path must match byte for byte.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { assertModernApiVersion, assertPythonRecord, kafkaPython, parsePythonLine, writePythonInput } from '../helpers/kafka_python.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { assertRecordIs, testMessage } from '../helpers/messages.js';
import { connectTo, readPartition } from '../helpers/read_back.js';

const PARTITIONS = 2;
const N = 3000;

let broker: BrokerProcess;
let conn: KafkaConnection;
let work: string;

before(async () => {
  broker = await BrokerProcess.start();
  conn = await connectTo(broker.kafkaPort);
  work = mkdtempSync(join(tmpdir(), 'sluice-kafka-python-'));
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** Message i goes to partition i % PARTITIONS, so partition p holds messages p, p+2, ... in order. */
const placement = (tag: string) => (i: number) => ({ partition: i % PARTITIONS, message: testMessage(tag, i) });

describe('kafka-python', () => {
  for (const acks of ['1', 'all']) {
    it(`acks=${acks}: produced by kafka-python, read back by kafka-python (assign) and by our fetch path`, async (t) => {
      const topic = `kp-acks-${acks}`;
      const admin = kafkajsClient(broker.bootstrap).admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
      await admin.disconnect();
      const input = join(work, `${topic}.in`);
      await writePythonInput(input, N, placement(topic));
      const produced = await kafkaPython(['produce', broker.bootstrap, topic, acks, input], 60_000);
      assert.deepEqual([produced.sent, produced.errors], [N, 0]);
      assertModernApiVersion(produced.api_version);

      const output = join(work, `${topic}.out`);
      const consumed = await kafkaPython(['consume', broker.bootstrap, topic, String(PARTITIONS), String(N), output, '30'], 60_000);
      assert.equal(consumed.received, N);
      assertModernApiVersion(consumed.api_version);
      t.diagnostic(`kafka-python inferred broker version ${consumed.api_version.join('.')}`);
      const next = new Array<number>(PARTITIONS).fill(0);
      for (const line of readFileSync(output, 'utf8').split('\n')) {
        if (line === '') continue;
        const r = parsePythonLine(line);
        assert.equal(r.offset, next[r.partition], `partition ${r.partition}: offsets not contiguous`);
        next[r.partition] = r.offset + 1;
        assertPythonRecord(r, testMessage(topic, r.offset * PARTITIONS + r.partition), topic);
      }
      assert.deepEqual(next, [N / PARTITIONS, N / PARTITIONS]);

      for (let p = 0; p < PARTITIONS; p++) {
        const records = await readPartition(conn, topic, p);
        assert.equal(records.length, N / PARTITIONS);
        records.forEach((r, j) => assertRecordIs(r, testMessage(topic, j * PARTITIONS + p), `${topic}/${p}`));
      }
    });
  }

  it('consumes what kafkajs produced (gzip), byte-identical', async () => {
    const topic = 'kp-from-kafkajs';
    const producer = kafkajsClient(broker.bootstrap).producer();
    await producer.connect();
    for (let i = 0; i < 1000; i += 100) {
      const messages = Array.from({ length: 100 }, (_, k) => {
        const m = testMessage(topic, i + k);
        return { key: m.key, value: m.value, headers: Object.fromEntries(m.headers.map((h) => [h.key, h.value])), partition: 0 };
      });
      await producer.send({ topic, acks: -1, compression: 1, messages });
    }
    await producer.disconnect();
    const output = join(work, `${topic}.out`);
    const consumed = await kafkaPython(['consume', broker.bootstrap, topic, '1', '1000', output, '30'], 60_000);
    assert.equal(consumed.received, 1000);
    readFileSync(output, 'utf8').split('\n').filter((l) => l !== '').forEach((line, i) => {
      const r = parsePythonLine(line);
      assert.equal(r.offset, i);
      assertPythonRecord(r, testMessage(topic, i), topic);
    });
  });
});
