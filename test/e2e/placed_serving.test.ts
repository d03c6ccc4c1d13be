// Placed connections served on their shard (--connection-placement shards, issue 16 stage A):
// against broker child processes, /v1/health's placedRequests counts per shard the requests
// served there and those forwarded to main. One shard: kafkajs produces and consumes, our client
// reads back, lists offsets and asks an epoch's end, and the shard serves them; a CreateTopics
// then a Produce to the new topic pipelined in one write both succeed; a Produce pipelined behind
// a CreateAcls that denies it is refused (main's answer fences the shard's older snapshot). Two
// shards: a topic spread over both takes produces to each partition alone and to all at once, and
// reads back whole, all served on the connection's shard (the other shard's partitions over the
// shard mesh); kafkajs produces to such a topic on one placed connection, every Produce spanning
// both shards served there, and consumes it back whole; a metrics scrape made right after a
// placed connection's answers counts the requests the shards served.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka as KafkaType } from 'kafkajs';
import { CreateAclsApi } from '../../src/protocol/apis/acls.js';
import { CreateTopicsApi } from '../../src/protocol/apis/create_topics.js';
import { OffsetForLeaderEpochApi } from '../../src/protocol/apis/offset_for_leader_epoch.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import type { Api } from '../../src/protocol/schema.js';
import type { ProduceRequest } from '../../src/protocol/apis/produce.js';
import { AclOperation, AclPermission, ANONYMOUS_PRINCIPAL, PatternType, ResourceType } from '../../src/coordinator/acl/acl.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { Reader } from '../../src/protocol/reader.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { placedRequests, sum, waitServed, type PlacedRequests } from '../helpers/placed_requests.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { LATEST, connectTo, listOffset, readPartition } from '../helpers/read_back.js';
import { RawConn, requestFrame } from '../helpers/raw_socket.js';

const TEST_TIMEOUT_MS = 60_000;

/** Produce requests in a /metrics scrape of `broker` (sluice_requests_total). */
async function producesCounted(broker: BrokerProcess): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${broker.adminPort}/metrics`, { signal: AbortSignal.timeout(5000) });
  const line = /^sluice_requests_total\{api="Produce"\} (\d+)$/m.exec(await res.text());
  return line === null ? 0 : Number(line[1]);
}

function produceBody(topic: string, partitions: readonly number[], value: string): ProduceRequest {
  const records = encodeRecordBatch([{ key: null, value: Buffer.from(value), timestamp: Date.now() }]);
  return { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: partitions.map((index) => ({ index, records })) }] };
}

/** A response frame's body (after the correlation id and, in flexible versions, the header's tag buffer). */
function bodyOf<Req, Res>(api: Api<Req, Res>, version: number, frame: Buffer): Res {
  return api.decodeResponse(version, new Reader(frame.subarray(api.isFlexible(version) ? 5 : 4)));
}

describe('placed connections served on one shard', { timeout: TEST_TIMEOUT_MS }, () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  before(async () => {
    broker = await BrokerProcess.start({ shards: 1, args: ['--connection-placement', 'shards', '--offsets-topic-partitions', '1'] });
    kafka = kafkajsClient(broker.bootstrap, 'placed-serving-e2e');
  });
  afterEach((t) => broker?.noteResult(t));
  after(() => broker?.dispose());

  it('serves kafkajs and our client on the shard', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: 'local', numPartitions: 1 }], waitForLeaders: true }), true);
    } finally {
      await admin.disconnect();
    }
    const before = sum((await placedRequests(broker)).served);
    const values = Array.from({ length: 10 }, (_, i) => `v${i}`);
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'local', acks: -1, messages: values.map((value) => ({ value })) });
    } finally {
      await producer.disconnect();
    }
    const consumer = kafka.consumer({ groupId: 'local-group', sessionTimeout: 10_000, heartbeatInterval: 500 });
    await consumer.connect();
    const seen: string[] = [];
    try {
      await consumer.subscribe({ topic: 'local', fromBeginning: true });
      await withTimeout(new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value?.toString() ?? '');
            if (seen.length >= values.length) resolve();
          },
        });
      }), 30_000, 'consuming through kafkajs');
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(seen, values);
    const conn = await connectTo(broker.kafkaPort);
    try {
      assert.deepEqual((await readPartition(conn, 'local', 0)).map((r) => r.value?.toString()), values);
      const latest = await listOffset(conn, 'local', 0, LATEST);
      assert.equal(latest.errorCode, 0);
      assert.equal(latest.offset, values.length);
      const epochs = await conn.request(OffsetForLeaderEpochApi, {
        replicaId: -1, topics: [{ topic: 'local', partitions: [{ partition: 0, currentLeaderEpoch: latest.leaderEpoch, leaderEpoch: latest.leaderEpoch }] }],
      });
      const end = epochs.topics[0]!.partitions[0]!;
      assert.equal(end.errorCode, 0);
      assert.equal(end.endOffset, values.length, 'the current epoch ends at the log end');
    } finally {
      await conn.close();
    }
    // kafkajs's produce, our client's fetch, ListOffsets and OffsetForLeaderEpoch at least (the
    // consumer's fetches may be forwarded while a heartbeat on the same connection is unanswered).
    const after = await waitServed(broker, before + 4);
    assert.ok(sum(after.served) >= before + 4, `requests served on the shard: ${after.served} (${before} before)`);
    assert.ok((await broker.metric('sluice_messages_in_total')) >= values.length, 'the shard reports the records it took in');
  });

  it('takes a CreateTopics and a Produce to the new topic pipelined in one write', async () => {
    const conn = await RawConn.open(broker.kafkaPort);
    try {
      conn.write(
        requestFrame(CreateTopicsApi, 5, 1, { topics: [{ name: 'fresh', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
        requestFrame(ProduceApi, 9, 2, produceBody('fresh', [0], 'first')),
      );
      const out = await conn.wait({ frames: 2, timeoutMs: 10_000 });
      assert.equal(out.closed, false);
      assert.equal(bodyOf(CreateTopicsApi, 5, out.frames[0]!).topics[0]!.errorCode, 0);
      assert.equal(bodyOf(ProduceApi, 9, out.frames[1]!).responses[0]!.partitionResponses[0]!.errorCode, 0, 'the produce behind the CreateTopics landed');
    } finally {
      conn.destroy();
    }
    const reader = await connectTo(broker.kafkaPort);
    try {
      assert.deepEqual((await readPartition(reader, 'fresh', 0)).map((r) => r.value?.toString()), ['first']);
    } finally {
      await reader.close();
    }
  });

  // Last here: from then on an ACL exists, and the shard forwards every request.
  it('refuses a Produce pipelined behind a CreateAcls that denies it', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'guarded', numPartitions: 1 }], waitForLeaders: true });
    } finally {
      await admin.disconnect();
    }
    // The shard's snapshot takes the new topic a turn after main opened it.
    await sleep(200);
    const before = sum((await placedRequests(broker)).served);
    const conn = await RawConn.open(broker.kafkaPort);
    try {
      conn.write(
        requestFrame(ProduceApi, 9, 1, produceBody('guarded', [0], 'allowed')),
        requestFrame(CreateAclsApi, 2, 2, {
          creations: [{
            resourceType: ResourceType.TOPIC, resourceName: 'guarded', resourcePatternType: PatternType.LITERAL, principal: ANONYMOUS_PRINCIPAL, host: '*',
            operation: AclOperation.WRITE, permissionType: AclPermission.DENY,
          }],
        }),
        requestFrame(ProduceApi, 9, 3, produceBody('guarded', [0], 'denied')),
      );
      const out = await conn.wait({ frames: 3, timeoutMs: 10_000 });
      assert.equal(out.closed, false);
      assert.equal(bodyOf(ProduceApi, 9, out.frames[0]!).responses[0]!.partitionResponses[0]!.errorCode, 0);
      assert.equal(bodyOf(CreateAclsApi, 2, out.frames[1]!).results[0]!.errorCode, 0);
      assert.equal(
        bodyOf(ProduceApi, 9, out.frames[2]!).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        'the ACL created before it applies',
      );
    } finally {
      conn.destroy();
    }
    assert.ok(sum((await waitServed(broker, before + 1)).served) >= before + 1, 'the first produce was served on the shard');
  });
});

describe('placed connections over two shards', { timeout: TEST_TIMEOUT_MS }, () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  before(async () => {
    broker = await BrokerProcess.start({ shards: 2, args: ['--connection-placement', 'shards', '--offsets-topic-partitions', '2'] });
    kafka = kafkajsClient(broker.bootstrap, 'placed-mesh-e2e');
  });
  afterEach((t) => broker?.noteResult(t));
  after(() => broker?.dispose());

  it('serves partitions of both shards on the connection\'s shard', async () => {
    const conn = await connectTo(broker.kafkaPort);
    try {
      const created = await conn.request(CreateTopicsApi, {
        topics: [{ name: 'spread', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
      });
      assert.equal(created.topics[0]!.errorCode, 0);
      await sleep(200);
      const before = await placedRequests(broker);
      for (const p of [0, 1, 2, 3]) {
        const res = await conn.request(ProduceApi, produceBody('spread', [p], `alone-${p}`), 9);
        assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, 0, `produce to partition ${p} alone`);
      }
      const all = await conn.request(ProduceApi, produceBody('spread', [0, 1, 2, 3], 'all'), 9);
      assert.deepEqual(all.responses[0]!.partitionResponses.map((p) => p.errorCode), [0, 0, 0, 0], 'a produce over both shards');
      for (const p of [0, 1, 2, 3]) {
        assert.deepEqual((await readPartition(conn, 'spread', p)).map((r) => r.value?.toString()), [`alone-${p}`, 'all']);
      }
      // Two partitions on each shard, every produce and fetch served on the connection's shard.
      const after = await waitServed(broker, sum(before.served) + 9);
      assert.ok(sum(after.served) >= sum(before.served) + 9, `served on the shard: ${after.served}`);
    } finally {
      await conn.close();
    }
  });

  it('counts requests served on the shards in a metrics scrape made right after their answers', async () => {
    const conn = await connectTo(broker.kafkaPort);
    try {
      const created = await conn.request(CreateTopicsApi, {
        topics: [{ name: 'scraped', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
      });
      assert.equal(created.topics[0]!.errorCode, 0);
      await sleep(200);
      const before = await producesCounted(broker);
      const served = sum((await placedRequests(broker)).served);
      for (let i = 0; i < 3; i++) {
        const res = await conn.request(ProduceApi, produceBody('scraped', [0, 1], `scraped-${i}`), 9);
        assert.deepEqual(res.responses[0]!.partitionResponses.map((p) => p.errorCode), [0, 0]);
      }
      // At once: the shards report what they served only once a second unless a scrape asks.
      assert.equal(await producesCounted(broker), before + 3, 'the scrape counts the three produces');
      assert.ok(sum((await placedRequests(broker)).served) >= served + 3, 'served on the shard, not forwarded');
    } finally {
      await conn.close();
    }
  });

  it('serves a kafkajs producer\'s produces spanning both shards on its shard, consumed back whole', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: 'meshed', numPartitions: 4 }], waitForLeaders: true }), true);
    } finally {
      await admin.disconnect();
    }
    // The shards' snapshot takes the new topic a turn after main opened it.
    await sleep(200);
    const SENDS = 5;
    const PER_SEND = 20;
    const values = Array.from({ length: SENDS * PER_SEND }, (_, i) => `m${i}`);
    const producer = kafka.producer();
    await producer.connect();
    let before: PlacedRequests;
    try {
      // Connected (Metadata, ApiVersions) first, so what follows is produces only.
      await producer.send({ topic: 'meshed', acks: -1, messages: [{ value: 'first' }] });
      // Past the shards' report interval, so the counts include it.
      await sleep(1200);
      before = await placedRequests(broker);
      for (let s = 0; s < SENDS; s++) {
        // No keys: kafkajs spreads each send over the 4 partitions, so every Produce names both shards' partitions.
        await producer.send({ topic: 'meshed', acks: -1, messages: values.slice(s * PER_SEND, (s + 1) * PER_SEND).map((value) => ({ value })) });
      }
    } finally {
      await producer.disconnect();
    }
    const after = await waitServed(broker, sum(before.served) + SENDS);
    assert.ok(sum(after.served) >= sum(before.served) + SENDS, `produces served on the shard: ${after.served} (${before.served} before)`);
    assert.equal(sum(after.forwarded), sum(before.forwarded), `nothing forwarded while producing: ${after.forwarded} (${before.forwarded} before)`);

    const consumer = kafka.consumer({ groupId: 'meshed-group', sessionTimeout: 10_000, heartbeatInterval: 500 });
    await consumer.connect();
    const seen = new Set<string>();
    try {
      await consumer.subscribe({ topic: 'meshed', fromBeginning: true });
      await withTimeout(new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.add(message.value?.toString() ?? '');
            if (seen.size >= values.length + 1) resolve();
          },
        });
      }), 30_000, 'consuming through kafkajs');
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual([...seen].sort(), ['first', ...values].sort());
  });
});
