// Clients that stall halfway through large produce requests hold the broker's bound on request
// bytes (--max-partial-request-bytes: a frame takes its room once its length is read). A real
// producer whose request then finds no room waits for it instead of losing its connection, as
// Kafka mutes channels on queued.max.request.bytes: its send is acknowledged once the stalled
// requests complete, no connection is closed, and every record is in the log once. On connections
// placed on a shard and on connections main reads. The producer is kafkajs's and does not retry,
// so a closed connection would fail its send.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { connectTo, readPartition } from '../helpers/read_back.js';
import { RawConn, requestFrame } from '../helpers/raw_socket.js';

const TOPIC = 'held-bound';
/** The broker's bound (one shard: its share is all of it): room for three of the requests below, not four. */
const HELD_BOUND = 3 << 20;
const VALUE_BYTES = 900_000;
const STALLED = 3;

const SETUPS = [
  { name: 'placed on a shard', placement: 'shards' },
  { name: 'read by main', placement: 'main' },
] as const;

/** A value saying who sent it, filled with one byte. */
function value(sender: number): Buffer {
  const v = Buffer.alloc(VALUE_BYTES, sender + 1);
  v.writeUInt16BE(sender, 0);
  return v;
}

for (const setup of SETUPS) describe(`a request the held-bytes bound has no room for yet (${setup.name})`, () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({
      shards: 1,
      flush: 'never',
      args: ['--connection-placement', setup.placement, '--max-partial-request-bytes', String(HELD_BOUND), '--max-request-bytes', String(2 << 20), '--num-partitions', '1'],
    });
    const admin = kafkajsClient(broker.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.disconnect();
  });

  after(async () => {
    await broker?.stop();
  });

  it('waits for room while stalled requests hold the bound, then is served on the same connection, and nothing is lost', { timeout: 120_000 }, async () => {
    const producer = await connectedProducer(kafkajsClient(broker.bootstrap, 'held-bound', 0), { idempotent: false });
    const stalled = await Promise.all(Array.from({ length: STALLED }, () => RawConn.open(broker.kafkaPort)));
    try {
      const frames = stalled.map((_, i) => {
        const records = encodeRecordBatch([{ key: null, value: value(i), timestamp: Date.now() }]);
        return requestFrame(ProduceApi, 9, 1, { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] });
      });
      // Each stalls after its frame's start: the broker holds room for the whole frame meanwhile.
      stalled.forEach((c, i) => c.write(frames[i]!.subarray(0, 1000)));
      await sleep(200);
      const sent = producer.send({ topic: TOPIC, acks: 1, messages: [{ key: null, value: value(STALLED) }] });
      const outcome = sent.then(() => 'acknowledged', (err: unknown) => `failed: ${String(err)}`);
      // A shard reports what its connections counted about once a second.
      assert.ok(await broker.waitMetric('sluice_request_memory_waits_total', (v) => v > 0) > 0, 'the producer\'s connection waits for room');
      assert.equal(await Promise.race([outcome, sleep(300).then(() => 'pending')]), 'pending', 'and its send is not answered meanwhile');
      stalled.forEach((c, i) => c.write(frames[i]!.subarray(1000)));
      assert.equal(await outcome, 'acknowledged');
      for (const c of stalled) {
        const o = await c.wait({ frames: 1, timeoutMs: 10_000 });
        assert.equal(o.frames.length, 1, 'each stalled request is answered too');
        assert.equal(o.closed, false);
      }
      assert.equal(await broker.metric('sluice_protocol_errors_total{reason="buffer-bound"}'), 0, 'no connection was closed for the bound');
      const conn = await connectTo(broker.kafkaPort);
      try {
        const records = await readPartition(conn, TOPIC, 0);
        const senders = records.map((r) => r.value!.readUInt16BE(0)).sort();
        assert.deepEqual(senders, [0, 1, 2, 3], 'every record once');
        for (const r of records) assert.ok(r.value!.equals(value(r.value!.readUInt16BE(0))), `record at ${r.offset} is whole`);
      } finally {
        await conn.close();
      }
    } finally {
      for (const c of stalled) c.destroy();
      await producer.disconnect();
    }
  });
});
