// The offsets log stays compact: thousands of commits over a few partitions would pile up
// megabytes of superseded records, but the coordinator rewrites its live state and drops the
// older segments, so the log stays near its live size plus a couple of segments. The last
// commit of every partition survives a kill -9 and restart, and so do offsets deleted before.
import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { OffsetCommitApi } from '../../src/protocol/apis/offset_commit.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { connectTo } from '../helpers/read_back.js';

const SEGMENT_BYTES = 64 << 10;
const LOG_SIZE = 'sluice_partition_log_size_bytes{topic="__consumer_offsets",partition="0"}';

let broker: BrokerProcess;
let admin: Admin;
let conn: KafkaConnection;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--offsets-topic-partitions', '1', '--offsets-topic-segment-bytes', String(SEGMENT_BYTES)] });
  admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  conn = await connectTo(broker.kafkaPort);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await admin?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

it('rewrites live offsets and drops superseded segments; commits survive kill -9', { timeout: 120_000 }, async () => {
  const topic = 'compacted-commits';
  const partitions = 8;
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  const rounds = 120;
  const groups = ['keep', 'other', 'gone'];
  // Big metadata makes each record ~1 KiB, so a few hundred commits write megabytes.
  const metadata = 'm'.repeat(1000);
  let appended = 0;
  for (let round = 1; round <= rounds; round++) {
    await Promise.all(groups.map(async (groupId) => {
      const res = await conn.request(OffsetCommitApi, {
        groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
        topics: [{ name: topic, partitions: Array.from({ length: partitions }, (_, p) => ({ partitionIndex: p, committedOffset: round * 10 + p, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: metadata })) }],
      }, 8);
      for (const p of res.topics[0]!.partitions) assert.equal(p.errorCode, 0);
    }));
    appended += groups.length * partitions;
  }
  await admin.deleteGroups(['gone']);
  const size = await broker.metric(LOG_SIZE);
  assert.ok(appended * metadata.length > 2 * (1 << 20), `test writes enough (${appended} records)`);
  assert.ok(size > 0 && size < (1 << 20) + 3 * SEGMENT_BYTES, `offsets log holds ${size} bytes after ${appended} commits`);

  await broker.kill9();
  await broker.restart();
  const again = kafkajsClient(broker.bootstrap).admin();
  await again.connect();
  try {
    for (const groupId of ['keep', 'other']) {
      const [t] = await again.fetchOffsets({ groupId, topics: [topic] });
      const got = t!.partitions.map((p) => [p.partition, Number(p.offset)]).sort((a, b) => a[0]! - b[0]!);
      assert.deepEqual(got, Array.from({ length: partitions }, (_, p) => [p, rounds * 10 + p]), `offsets of ${groupId}`);
    }
    const [gone] = await again.fetchOffsets({ groupId: 'gone', topics: [topic] });
    assert.ok(gone!.partitions.every((p) => p.offset === '-1'), 'a deleted group stays deleted');
  } finally {
    await again.disconnect();
  }
});
