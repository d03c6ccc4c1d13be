// The volume bar: 1,000,000 messages produced by kcat and read back byte-identical by kcat and by
// our fetch path; SLUICE_INTEROP_MESSAGES messages (see DEFAULT_MESSAGES) produced by kafkajs and
// by kafka-python and read back the same way. Messages are binary (testMessage with up to 40
// bytes of noise), offsets must be contiguous and every message present exactly once, in order.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { assertModernApiVersion, assertPythonRecord, kafkaPython, parsePythonLine, writePythonInput } from '../helpers/kafka_python.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { KEY_DELIM, MSG_DELIM, consumeArgs, kcat, parseKcatOutput, produceArgs } from '../helpers/kcat.js';
import { assertRecordIs, kafkajsMessage, testMessage } from '../helpers/messages.js';
import type { TestMessage } from '../helpers/messages.js';
import { connectTo, scanPartition } from '../helpers/read_back.js';

const KCAT_MESSAGES = 1_000_000;
/** What kafkajs and kafka-python each send by default; SLUICE_INTEROP_MESSAGES overrides. */
const DEFAULT_MESSAGES = 1_000_000;
const MESSAGES = Number(process.env['SLUICE_INTEROP_MESSAGES'] ?? DEFAULT_MESSAGES);
const NOISE = 40;
const PARTITIONS = 4;

let broker: BrokerProcess;
let conn: KafkaConnection;
let work: string;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
  conn = await connectTo(broker.kafkaPort);
  work = mkdtempSync(join(tmpdir(), 'sluice-volume-'));
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

const message = (tag: string, i: number): TestMessage => testMessage(tag, i, NOISE);

async function createTopic(topic: string, numPartitions: number): Promise<void> {
  const admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
  await admin.disconnect();
}

/** Our fetch path: partition p holds messages p, p+P, p+2P, ... in order. */
async function ourReadBack(topic: string, partitions: number, total: number, expected = message): Promise<number> {
  const started = Date.now();
  let count = 0;
  for (let p = 0; p < partitions; p++) {
    count += await scanPartition(conn, topic, p, (r) => assertRecordIs(r, expected(topic, r.offset * partitions + p), `${topic}/${p}`), { timeoutMs: 180_000 });
  }
  assert.equal(count, total);
  return Date.now() - started;
}

async function writeKcatInput(path: string, topic: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  const msgDelim = Buffer.from(MSG_DELIM);
  const keyDelim = Buffer.from(KEY_DELIM);
  for (let i = 0; i < n; i++) {
    const m = message(topic, i);
    const parts = m.key === null ? [m.value] : [m.key, keyDelim, m.value];
    if (i > 0) parts.unshift(msgDelim);
    if (!out.write(Buffer.concat(parts))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

describe('volume', () => {
  it(`${KCAT_MESSAGES} messages by kcat, read back by kcat and by our fetch path`, async (t) => {
    const topic = 'vol-kcat';
    await createTopic(topic, 1);
    const input = join(work, 'kcat.in');
    await writeKcatInput(input, topic, KCAT_MESSAGES);
    const produced = await kcat(produceArgs(broker.bootstrap, topic, ['-p', '0', '-X', 'linger.ms=20']), { input: { file: input }, timeoutMs: 240_000 });
    rmSync(input);
    // kcat has no per-message headers (-H would stamp every message alike): none are sent here.
    const ourMs = await ourReadBack(topic, 1, KCAT_MESSAGES, (tag, i) => ({ ...message(tag, i), headers: [] }));
    const output = join(work, 'kcat.out');
    const consumed = await kcat(consumeArgs(broker.bootstrap, topic, 0), { stdoutFile: output, timeoutMs: 240_000 });
    let next = 0;
    const n = parseKcatOutput(readFileSync(output), (r) => {
      assert.equal(r.offset, next, 'kcat consumer: offsets not contiguous');
      const m = message(topic, next++);
      assert.ok(r.value !== null && r.value.equals(m.value), `kcat consumer: value at ${r.offset}`);
      assert.deepEqual(r.key, m.key, `kcat consumer: key at ${r.offset}`);
    });
    rmSync(output);
    assert.equal(n, KCAT_MESSAGES);
    t.diagnostic(`kcat produce ${produced.ms} ms, our fetch ${ourMs} ms, kcat consume ${consumed.ms} ms`);
  });

  it(`${MESSAGES} messages by kafkajs (4 partitions, 4 concurrent senders), read back by our fetch path`, async (t) => {
    const topic = 'vol-kafkajs';
    await createTopic(topic, PARTITIONS);
    const producer = kafkajsClient(broker.bootstrap).producer();
    await producer.connect();
    const started = Date.now();
    const perPartition = Math.ceil(MESSAGES / PARTITIONS);
    const sender = async (p: number): Promise<void> => {
      for (let j = 0; j < perPartition; j += 2000) {
        const messages = [];
        for (let k = j; k < Math.min(perPartition, j + 2000); k++) {
          const i = k * PARTITIONS + p;
          if (i < MESSAGES) messages.push({ ...kafkajsMessage(message(topic, i)), partition: p });
        }
        if (messages.length > 0) await producer.send({ topic, acks: 1, messages });
      }
    };
    await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => sender(p)));
    const produceMs = Date.now() - started;
    await producer.disconnect();
    const ourMs = await ourReadBack(topic, PARTITIONS, MESSAGES);
    t.diagnostic(`kafkajs produce ${produceMs} ms, our fetch ${ourMs} ms`);
  });

  it(`${MESSAGES} messages by kafka-python, read back by kafka-python (assign) and by our fetch path`, async (t) => {
    const topic = 'vol-python';
    await createTopic(topic, PARTITIONS);
    const input = join(work, 'python.in');
    await writePythonInput(input, MESSAGES, (i) => ({ partition: i % PARTITIONS, message: message(topic, i) }));
    const started = Date.now();
    const produced = await kafkaPython(['produce', broker.bootstrap, topic, '1', input], 300_000);
    const produceMs = Date.now() - started;
    rmSync(input);
    assert.deepEqual([produced.sent, produced.errors], [MESSAGES, 0]);
    assertModernApiVersion(produced.api_version);
    const ourMs = await ourReadBack(topic, PARTITIONS, MESSAGES);
    const output = join(work, 'python.out');
    const consumeStarted = Date.now();
    const consumed = await kafkaPython(['consume', broker.bootstrap, topic, String(PARTITIONS), String(MESSAGES), output, '240'], 300_000);
    const consumeMs = Date.now() - consumeStarted;
    assert.equal(consumed.received, MESSAGES);
    const next = new Array<number>(PARTITIONS).fill(0);
    for await (const line of createInterface({ input: createReadStream(output) })) {
      if (line === '') continue;
      const r = parsePythonLine(line);
      assert.equal(r.offset, next[r.partition], `kafka-python consumer: partition ${r.partition} offsets not contiguous`);
      next[r.partition] = r.offset + 1;
      assertPythonRecord(r, message(topic, r.offset * PARTITIONS + r.partition), topic);
    }
    rmSync(output);
    assert.equal(next.reduce((a, b) => a + b, 0), MESSAGES);
    t.diagnostic(`kafka-python produce ${produceMs} ms, our fetch ${ourMs} ms, kafka-python consume ${consumeMs} ms (api_version ${consumed.api_version.join('.')})`);
  });
});
