// A graceful stop at scale: a broker holding thousands of partitions (a few of them written to)
// stops on SIGTERM within a bound that scales (the shards close their logs together rather than
// one after another), exits 0, and its next start rescans no segment (every partition reopens
// from its clean-shutdown marker).

import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';

/** Closing them one after another took over the 10 s deadline on a loaded 2-core machine; together, 1.5-6.7 s there. */
const PARTITIONS = 2000;
const STOP_BOUND_MS = 8000;
const WRITTEN = 8;

let broker: BrokerProcess;

before(async () => {
  broker = await BrokerProcess.start({ logLevel: 'info' });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await broker?.dispose();
});

it(`stops with ${PARTITIONS} partitions within ${STOP_BOUND_MS} ms, exits 0, and the next start rescans nothing`, { timeout: 180_000 }, async () => {
  const topic = 'wide';
  const admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], timeout: 120_000 });
  } finally {
    await admin.disconnect();
  }
  const producer = kafkajsClient(broker.bootstrap).producer();
  await producer.connect();
  for (let partition = 0; partition < WRITTEN; partition++) {
    await sendRange(producer, topic, `${topic}-${partition}`, 0, 50, { partition, batch: 25 });
  }
  await producer.disconnect();

  const started = performance.now();
  const exit = await broker.stop();
  const stopMs = performance.now() - started;
  assert.deepEqual(exit, { code: 0, signal: null }, broker.logTail());
  assert.ok(stopMs <= STOP_BOUND_MS, `stop took ${stopMs.toFixed(0)} ms`);

  // The broker reports ready only once every partition it holds is open (and recovered).
  await broker.restart();
  assert.equal(await broker.metric(`sluice_partition_high_watermark{topic="${topic}",partition="${WRITTEN - 1}"}`), 50);
  for (const shard of ['0', '1']) {
    assert.equal(await broker.metric(`sluice_log_recovery_rescanned_segments_total{shard="${shard}"}`), 0, `shard ${shard} rescanned segments`);
  }
});
