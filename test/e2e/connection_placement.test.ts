// --connection-placement shards end to end (issue 16 stage A), against a broker child process
// with two shards: main hands each plaintext connection to a shard, whose Connection forwards
// every request to main. kafkajs creates a topic, produces, joins a group, consumes and commits
// offsets over placed connections; a raw client pipelining ApiVersions, Metadata and Produce in
// one write gets every answer, in order; clients that vanish mid-request leave the broker serving
// others and its connection count back at its base. Under --io node connections stay on main.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka as KafkaType } from 'kafkajs';
import { ApiVersionsApi } from '../../src/protocol/apis/api_versions.js';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { Reader } from '../../src/protocol/reader.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { ZERO_UUID, connectTo, fetchRequest, metadata, readPartition, topicInfo } from '../helpers/read_back.js';
import { RawConn, lengthPrefix, requestFrame } from '../helpers/raw_socket.js';

const TEST_TIMEOUT_MS = 60_000;

let broker: BrokerProcess;
let kafka: KafkaType;

/** What /v1/health says of client connections. */
interface Health {
  connections: number;
  placedConnections: number[] | null;
}

async function health(): Promise<Health> {
  const res = await fetch(`http://127.0.0.1:${broker.adminPort}/v1/health`, { signal: AbortSignal.timeout(5000) });
  return (await res.json()) as Health;
}

/** Polls until the broker counts `want` client connections (bounded); the last count seen. */
async function waitConnections(want: number, timeoutMs = 10_000): Promise<Health> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const h = await health();
    if (h.connections === want || Date.now() >= deadline) return h;
    await sleep(50);
  }
}

before(async () => {
  broker = await BrokerProcess.start({ shards: 2, args: ['--connection-placement', 'shards', '--offsets-topic-partitions', '2'] });
  kafka = kafkajsClient(broker.bootstrap, 'placement-e2e');
});
afterEach((t) => broker?.noteResult(t));
after(() => broker?.dispose());

describe('connections placed on shards', { timeout: TEST_TIMEOUT_MS }, () => {
  it('serves kafkajs: create a topic, produce, join a group, consume, commit offsets', async () => {
    assert.deepEqual((await health()).placedConnections, [0, 0], 'the broker places connections');
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: 'placed', numPartitions: 2 }] }), true);
      const placed = (await health()).placedConnections!;
      assert.ok(placed.reduce((a, b) => a + b, 0) >= 1, `the admin client's connection is on a shard: ${placed}`);
      const producer = kafka.producer();
      await producer.connect();
      const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
      await producer.send({ topic: 'placed', acks: -1, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: 'placed-group', sessionTimeout: 10_000, heartbeatInterval: 500 });
      await consumer.connect();
      const seen: string[] = [];
      try {
        await consumer.subscribe({ topic: 'placed', fromBeginning: true });
        await withTimeout(new Promise<void>((resolve) => {
          void consumer.run({
            autoCommit: false,
            eachMessage: async ({ topic, partition, message }) => {
              seen.push(message.value?.toString() ?? '');
              await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
              if (seen.length >= values.length) resolve();
            },
          });
        }), 30_000, 'consuming through the group');
      } finally {
        await consumer.disconnect();
      }
      assert.deepEqual([...seen].sort(), [...values].sort());
      const committed = await admin.fetchOffsets({ groupId: 'placed-group', topics: ['placed'] });
      const total = committed[0]!.partitions.reduce((n, p) => n + Number(p.offset), 0);
      assert.equal(total, values.length, 'committed offsets cover every message');
    } finally {
      await admin.disconnect();
    }
    const after = await waitConnections(0);
    assert.equal(after.connections, 0);
    assert.deepEqual(after.placedConnections, [0, 0]);
  });

  it('answers requests pipelined in one write, in order', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'pipe', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const batch = encodeRecordBatch([{ key: null, value: Buffer.from('pipelined'), timestamp: Date.now() }]);
    const conn = await RawConn.open(broker.kafkaPort);
    try {
      // One write, before the broker could have handed the connection over: the shard must find all of it.
      conn.write(
        requestFrame(ApiVersionsApi, 3, 1, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }),
        requestFrame(MetadataApi, 12, 2, { topics: [{ topicId: ZERO_UUID, name: 'pipe' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
        requestFrame(ProduceApi, 9, 3, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'pipe', partitionData: [{ index: 0, records: batch }] }] }),
        requestFrame(ApiVersionsApi, 3, 4, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }),
      );
      const out = await conn.wait({ frames: 4, timeoutMs: 10_000 });
      assert.equal(out.closed, false);
      assert.deepEqual(out.frames.map((f) => f.readInt32BE(0)), [1, 2, 3, 4], 'every answer, in request order');
      // Produce v9 is flexible: correlation id, tag buffer, then the body.
      const produce = ProduceApi.decodeResponse(9, new Reader(out.frames[2]!.subarray(5)));
      assert.equal(produce.responses[0]!.partitionResponses[0]!.errorCode, 0, 'the pipelined produce landed');
    } finally {
      conn.destroy();
    }
    const reader = await connectTo(broker.kafkaPort);
    try {
      assert.deepEqual((await readPartition(reader, 'pipe', 0)).map((r) => r.value?.toString()), ['pipelined']);
    } finally {
      await reader.close();
    }
    assert.equal((await waitConnections(0)).connections, 0);
  });

  it('clients gone mid-request leave the broker serving others and its count at its base', async () => {
    const base = (await waitConnections(0)).connections;
    const info = await withTimeout((async () => {
      const c = await connectTo(broker.kafkaPort);
      try {
        return await topicInfo(c, 'pipe');
      } finally {
        await c.close();
      }
    })(), 10_000, 'topic info');
    // A long-poll fetch parked on the shard's partition, then the client vanishes.
    const parked = await RawConn.open(broker.kafkaPort);
    parked.write(requestFrame(FetchApi, 12, 7, { ...fetchRequest('pipe', info.topicId, 0, 1, 1 << 20), maxWaitMs: 20_000, minBytes: 1 << 20 }));
    // Half a frame, then gone.
    const half = await RawConn.open(broker.kafkaPort);
    const frame = requestFrame(ApiVersionsApi, 3, 8, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });
    half.write(lengthPrefix(frame.length - 4 + 100), frame.subarray(4));
    const during = await waitConnections(base + 2);
    assert.equal(during.connections, base + 2, 'both counted while open');
    await sleep(200);
    parked.destroy();
    half.destroy();
    const producer = kafka.producer();
    await producer.connect();
    const [meta] = await producer.send({ topic: 'pipe', acks: -1, messages: [{ value: 'after' }] });
    await producer.disconnect();
    assert.equal(meta!.errorCode, 0);
    const end = await waitConnections(base);
    assert.equal(end.connections, base, 'the count is back at its base');
    assert.deepEqual(end.placedConnections, [0, 0]);
    assert.equal(await broker.metric('sluice_connections'), base);
  });
});

describe('where connections cannot be placed', { timeout: TEST_TIMEOUT_MS }, () => {
  it('keeps them on main under --io node, and serves them there', async () => {
    const nodeIo = await BrokerProcess.start({ shards: 2, args: ['--connection-placement', 'shards', '--io', 'node'] });
    try {
      const res = await fetch(`http://127.0.0.1:${nodeIo.adminPort}/v1/health`, { signal: AbortSignal.timeout(5000) });
      assert.equal(((await res.json()) as Health).placedConnections, null);
      const conn = await connectTo(nodeIo.kafkaPort);
      try {
        assert.equal((await metadata(conn, [])).brokers.length, 1);
      } finally {
        await conn.close();
      }
    } finally {
      await nodeIo.dispose();
    }
  });
});
