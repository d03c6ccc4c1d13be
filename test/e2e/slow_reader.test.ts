// A client that pipelines large Fetches and never reads its socket must not grow the broker's
// memory past the connection's bound on queued response bytes (plus one batch), where fetched
// ranges are read into memory before they are sent: on the Node I/O backend, and on a connection
// placed on a shard whose Fetches main serves (a client quota is set, so the shard forwards every
// request; main's answers come back to the shard as whole bodies). Also: Fetch max_bytes beyond
// fetch.max.bytes is reduced to it, as Kafka does.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { placedRequests, sum } from '../helpers/placed_requests.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { connectTo, fetchOnce, fetchRequest, recordsBytes, topicInfo } from '../helpers/read_back.js';
import { RawConn, requestFrame } from '../helpers/raw_socket.js';

const TOPIC = 'slow-reader';
const RECORD_BYTES = 900 * 1024;
const RECORDS = 40; // ~35 MiB in one partition
const QUEUED_RESPONSE_BOUND = 16 << 20;
const PIPELINED_FETCHES = 64;
const GIB = 1 << 30;

const SETUPS = [
  { name: 'io=node', args: ['--io', 'node'], placed: false },
  // Placement needs the native addon: --io auto (the default) even where SLUICE_IO=node runs this file.
  { name: 'placed on a shard, served by main', args: ['--connection-placement', 'shards', '--io', 'auto'], placed: true },
] as const;

for (const setup of SETUPS) describe(`a client that does not read (${setup.name})`, () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({
      shards: 2,
      flush: 'never',
      args: [...setup.args, '--max-queued-response-bytes', String(QUEUED_RESPONSE_BOUND), '--fetch-max-bytes', String(8 << 20), '--num-partitions', '1'],
    });
    if (setup.placed) {
      // Any client quota makes the shards forward every request to main (it owns the quotas).
      const quotas = await KafkaAdmin.connect({ host: '127.0.0.1', port: broker.kafkaPort });
      try {
        await quotas.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'someone-else' }], ops: [{ key: 'consumer_byte_rate', value: 1 << 20, remove: false }] }]);
      } finally {
        await quotas.close();
      }
    }
    const admin = kafkajsClient(broker.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.disconnect();
    const conn = await RawConn.open(broker.kafkaPort);
    try {
      const value = Buffer.alloc(RECORD_BYTES, 7);
      const frames: Buffer[] = [];
      for (let i = 0; i < RECORDS; i++) {
        const records = encodeRecordBatch([{ key: null, value, timestamp: Date.now() }]);
        frames.push(requestFrame(ProduceApi, 9, i, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] }));
      }
      for (const f of frames) conn.write(f);
      const out = await conn.wait({ frames: RECORDS, timeoutMs: 30_000 });
      assert.equal(out.frames.length, RECORDS, 'every produce answered');
    } finally {
      conn.destroy();
    }
  });

  afterEach((t) => broker?.noteResult(t));
  after(async () => {
    await broker?.dispose();
  });

  it('a Fetch asking for more than fetch.max.bytes gets at most that much', async () => {
    const conn = await connectTo(broker.kafkaPort);
    try {
      const info = await topicInfo(conn, TOPIC);
      const p = await fetchOnce(conn, TOPIC, info, 0, 0, GIB);
      const bytes = recordsBytes(p.records).length;
      assert.ok(bytes > 0, 'records returned');
      assert.ok(bytes <= 8 << 20, `response carried ${bytes} bytes, above fetch.max.bytes`);
    } finally {
      await conn.close();
    }
  });

  it(`${PIPELINED_FETCHES} pipelined 1 GiB Fetches, never read: RSS stays within the bound, other clients are served`, async () => {
    const conn0 = await connectTo(broker.kafkaPort);
    const info = await topicInfo(conn0, TOPIC);
    await conn0.close();
    const rssBefore = broker.rssKb();
    const forwardedBefore = setup.placed ? sum((await placedRequests(broker)).forwarded) : 0;
    const slow = await RawConn.open(broker.kafkaPort);
    slow.socket.pause(); // the kernel buffers fill, then the broker's writes back up
    try {
      const req = fetchRequest(TOPIC, info.topicId, 0, 0, GIB);
      for (let i = 0; i < PIPELINED_FETCHES; i++) slow.write(requestFrame(FetchApi, 12, i, { ...req, maxWaitMs: 0 }));
      let peakKb = rssBefore;
      for (let i = 0; i < 30; i++) {
        await sleep(100);
        peakKb = Math.max(peakKb, broker.rssKb());
      }
      const grownMiB = (peakKb - rssBefore) / 1024;
      // Without the bound, each of the 64 fetches reads up to 8 MiB into memory (~512 MiB).
      assert.ok(grownMiB < 150, `broker RSS grew by ${grownMiB.toFixed(0)} MiB under a client that does not read`);
      if (setup.placed) {
        const forwarded = sum((await placedRequests(broker)).forwarded) - forwardedBefore;
        assert.ok(forwarded >= 2, `the slow client's fetches went to main: ${forwarded} forwarded`);
      }
      const other = await connectTo(broker.kafkaPort);
      try {
        const p = await fetchOnce(other, TOPIC, info, 0, 0, 1 << 20);
        assert.ok(recordsBytes(p.records).length > 0, 'another client is still served');
      } finally {
        await other.close();
      }
    } finally {
      slow.destroy();
    }
  });
});
