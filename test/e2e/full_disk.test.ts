// A full disk under a produce load: every produce fails with KAFKA_STORAGE_ERROR, the broker
// logs the failing group commits a bounded number of times (first at once, then rate-limited)
// while sluice_storage_errors_total counts every failure. The data dir is a tiny tmpfs (skipped
// where mounting is refused).

import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { tinyTmpfs } from '../helpers/tmpfs.js';

const FAILED_SENDS = 40;
const VALUE = Buffer.alloc(64 * 1024, 7);

const fs = tinyTmpfs('4m');
let broker: BrokerProcess | undefined;

after(async () => {
  await broker?.dispose();
  if (typeof fs !== 'string') fs.unmount();
});

it('a commit storm on a full disk logs a bounded number of lines and counts every failure', { skip: typeof fs === 'string' ? fs : false, timeout: 120_000 }, async () => {
  if (typeof fs === 'string') return;
  broker = await BrokerProcess.start({ args: ['--data-dir', fs.dir] });
  const producer = kafkajsClient(broker.bootstrap, 'full-disk', 0).producer({ allowAutoTopicCreation: true });
  await producer.connect();
  let failed = 0;
  try {
    // One send at a time, so each failed send is one failed group commit.
    for (let sent = 0; failed < FAILED_SENDS && sent < 10_000; sent++) {
      try {
        await producer.send({ topic: 'fill', acks: -1, messages: [{ value: VALUE }] });
      } catch (err) {
        assert.match(String(err), /Disk error/, 'KAFKA_STORAGE_ERROR');
        failed++;
      }
    }
  } finally {
    await producer.disconnect();
  }
  assert.equal(failed, FAILED_SENDS);
  const errors = (await broker.metric('sluice_storage_errors_total{shard="0"}')) + (await broker.metric('sluice_storage_errors_total{shard="1"}'));
  assert.ok(errors >= FAILED_SENDS, `sluice_storage_errors_total ${errors} < ${FAILED_SENDS} failed sends`);
  const lines = broker.logTail(100_000).split('\n').filter((l) => l.includes('group commit failed'));
  // First failure at once; the sends span well under two 10 s intervals.
  assert.ok(lines.length >= 1 && lines.length <= 3, `${lines.length} 'group commit failed' lines for ${FAILED_SENDS} failures`);
});
