// Durability across process death: kafkajs producers (acks -1, no client retries, so a message
// is either acknowledged once or unknown) load a --flush always broker that is kill -9'd at a
// random moment, three times on the same data dir. After each restart: every acknowledged
// message is present exactly once, offsets run from 0 without gaps, nothing appears twice, topic
// ids survive, earlier rounds' topics are unchanged, and appends continue at the recovered end.
// Also: SIGTERM exits 0 and a restart keeps everything. Kill points come from a printed seed
// (SLUICE_E2E_SEED=N replays a schedule).

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Producer } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { assertRecordIs, kafkajsMessage, messageIndex, testMessage } from '../helpers/messages.js';
import { LATEST, connectTo, listOffset, scanPartition, topicInfo } from '../helpers/read_back.js';

const PARTITIONS = 2;
const LOOPS = 4;
const BATCH = 20;
const NOISE = 100;

let broker: BrokerProcess;
const seed = Number(process.env['SLUICE_E2E_SEED'] ?? Date.now() % 1_000_000);
let rng = seed % 2147483646 || 1;

/** Park-Miller: deterministic from the seed, so a failing kill schedule can be replayed. */
function random(): number {
  rng = (rng * 48271) % 2147483647;
  return rng / 2147483647;
}

before(async () => {
  broker = await BrokerProcess.start({ flush: 'always', args: ['--num-partitions', String(PARTITIONS)] });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await broker?.dispose();
});

async function withConnection<T>(use: (conn: KafkaConnection) => Promise<T>): Promise<T> {
  const conn = await connectTo(broker.kafkaPort);
  try {
    return await use(conn);
  } finally {
    await conn.close();
  }
}

/** Message i always goes to the same partition, so a misplaced record is detectable. */
const partitionOf = (i: number): number => i % LOOPS % PARTITIONS;

interface LoadResult {
  acked: Set<number>;
  attempted: number;
}

/**
 * LOOPS concurrent send loops, loop k owning indices k, k+LOOPS, ..., in batches, until `stop`
 * is set or a send fails; a batch's indices join `acked` only once its send() resolved.
 */
async function runLoad(producer: Producer, topic: string, stop: { now: boolean }): Promise<LoadResult> {
  const result: LoadResult = { acked: new Set(), attempted: 0 };
  const loop = async (k: number): Promise<void> => {
    for (let round = 0; !stop.now; round++) {
      const indices = Array.from({ length: BATCH }, (_, j) => (round * BATCH + j) * LOOPS + k);
      result.attempted += BATCH;
      const messages = indices.map((i) => ({ ...kafkajsMessage(testMessage(topic, i, NOISE)), partition: partitionOf(i) }));
      try {
        await producer.send({ topic, acks: -1, messages });
      } catch {
        return;
      }
      for (const i of indices) result.acked.add(i);
    }
  };
  await Promise.all(Array.from({ length: LOOPS }, (_, k) => loop(k)));
  return result;
}

interface Verified {
  total: number;
  /** Per partition: the offset after the last load record. */
  ends: number[];
}

/**
 * Reads the load records of `topic` (partition 0 starts with one warm-up record) up to `until`
 * (default: the end): offsets contiguous, each record a known message in its partition, none
 * twice, every acknowledged one present.
 */
async function verifyTopic(topic: string, acked: ReadonlySet<number>, until?: readonly number[]): Promise<Verified> {
  return withConnection(async (conn) => {
    let warm = 0;
    await scanPartition(conn, topic, 0, (r) => {
      assertRecordIs(r, testMessage(`${topic}-warm`, 0), `${topic} warm-up`);
      warm++;
    }, { untilOffset: 1 });
    assert.equal(warm, 1, `${topic}: warm-up record lost`);
    const seen = new Set<number>();
    const ends: number[] = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const from = partition === 0 ? 1 : 0;
      const untilOffset = until?.[partition];
      const n = await scanPartition(conn, topic, partition, (r) => {
        const i = messageIndex(topic, r.value);
        assert.ok(i >= 0, `${topic}/${partition}@${r.offset}: record not from this test`);
        assert.ok(!seen.has(i), `${topic}/${partition}@${r.offset}: message ${i} appears twice`);
        assert.equal(partitionOf(i), partition, `message ${i} in the wrong partition`);
        assertRecordIs(r, testMessage(topic, i, NOISE), `${topic}/${partition}`);
        seen.add(i);
      }, untilOffset === undefined ? { fromOffset: from } : { fromOffset: from, untilOffset });
      ends.push(from + n);
    }
    const missing = [...acked].filter((i) => !seen.has(i));
    assert.equal(missing.length, 0, `${missing.length} acknowledged messages lost in ${topic}, e.g. ${missing.slice(0, 10).join(',')}`);
    return { total: seen.size, ends };
  });
}

/** After recovery, a new write to each partition gets exactly the recovered end offset. */
async function appendsContinue(topic: string, ends: readonly number[]): Promise<void> {
  const producer = kafkajsClient(broker.bootstrap).producer();
  await producer.connect();
  try {
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: 'after-restart', partition }] });
      assert.equal(Number(meta?.baseOffset), ends[partition], `${topic}/${partition}: first offset after restart`);
    }
  } finally {
    await producer.disconnect();
  }
}

async function endOffsets(topic: string): Promise<number[]> {
  return withConnection(async (conn) => {
    const out: number[] = [];
    for (let p = 0; p < PARTITIONS; p++) out.push((await listOffset(conn, topic, p, LATEST)).offset);
    return out;
  });
}

describe('durability', () => {
  it('kill -9 under acks=-1 load loses no acknowledged message (3 random kill points)', async (t) => {
    t.diagnostic(`seed ${seed}`);
    const history: { topic: string; acked: Set<number>; verified: Verified }[] = [];
    for (let round = 0; round < 3; round++) {
      const topic = `durable-${round}`;
      const producer = kafkajsClient(broker.bootstrap, 'sluice-durability', 0).producer({ allowAutoTopicCreation: true });
      await producer.connect();
      await warmUp(topic);
      const idBefore = await withConnection((c) => topicInfo(c, topic));
      const stop = { now: false };
      const load = runLoad(producer, topic, stop);
      const killAfter = 1500 + Math.floor(random() * 1500);
      await sleep(killAfter);
      stop.now = true;
      await broker.kill9();
      const result = await withTimeout(load, 30_000, 'send loops after the kill');
      await producer.disconnect().catch(() => undefined);
      t.diagnostic(`round ${round}: killed after ${killAfter} ms; ${result.acked.size} acknowledged of ${result.attempted} attempted`);
      assert.ok(result.acked.size > 0, 'no send was acknowledged before the kill');
      await broker.restart();
      const verified = await verifyTopic(topic, result.acked);
      t.diagnostic(`round ${round}: ${verified.total} records recovered (ends ${verified.ends.join(',')})`);
      assert.deepEqual(await withConnection((c) => topicInfo(c, topic)), idBefore, 'topic id or partition count changed across the crash');
      for (const old of history) {
        const again = await verifyTopic(old.topic, old.acked, old.verified.ends);
        assert.deepEqual(again, old.verified, `${old.topic} changed after a later crash`);
        assert.deepEqual(await endOffsets(old.topic), old.verified.ends.map((e) => e + 1), `${old.topic}: end offsets changed`);
      }
      await appendsContinue(topic, verified.ends);
      history.push({ topic, acked: result.acked, verified });
    }
  });

  it('SIGTERM exits 0 and a restart keeps every message, id and offset', async () => {
    const topic = 'graceful';
    const producer = kafkajsClient(broker.bootstrap).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    for (let partition = 0; partition < PARTITIONS; partition++) {
      await sendRange(producer, topic, `${topic}-${partition}`, 0, 1000, { partition, batch: 250 });
    }
    await producer.disconnect();
    const idBefore = await withConnection((c) => topicInfo(c, topic));
    assert.deepEqual(await broker.stop(), { code: 0, signal: null });
    await broker.restart();
    assert.deepEqual(await withConnection((c) => topicInfo(c, topic)), idBefore);
    await withConnection(async (conn) => {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const n = await scanPartition(conn, topic, partition, (r) => assertRecordIs(r, testMessage(`${topic}-${partition}`, r.offset), topic));
        assert.equal(n, 1000);
      }
    });
    assert.deepEqual(await endOffsets(topic), [1000, 1000]);
  });
});

/** Writes the warm-up record (offset 0 of partition 0), auto-creating the topic. */
async function warmUp(topic: string): Promise<void> {
  const producer = kafkajsClient(broker.bootstrap).producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    await sendRange(producer, topic, `${topic}-warm`, 0, 1, { partition: 0 });
  } finally {
    await producer.disconnect();
  }
}
