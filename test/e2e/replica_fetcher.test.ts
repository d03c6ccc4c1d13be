// The replica fetcher against a real broker child process, through its Fetch handler: with
// replica id -1 (a consumer's fetch; the broker refuses replica ids of non-replicas) it reads back,
// in order and byte for byte, what a kafkajs producer wrote, over many small fetches whose
// positions advance from the answers; with the id of a broker that holds no replica it is refused
// with NOT_LEADER_OR_FOLLOWER, which shows the ReplicaState of the request reaches the broker.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Kafka as KafkaType, Producer } from 'kafkajs';
import { ReplicaFetcher, type FollowedPartition, type ReplicaFetcherSettings } from '../../src/actors/replica_fetcher.js';
import type { KafkaConnection } from '../../src/client/connection.js';
import type { ReplicaFetchAnswer, ReplicaFetchPosition } from '../../src/coordinator/replication/types.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeRecordBatches } from '../../src/protocol/records.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { testMessage } from '../helpers/messages.js';
import { connectTo, topicInfo } from '../helpers/read_back.js';
import { PLAINTEXT_PEER } from '../../src/common/peer_socket.js';

const TOPIC = 'replica-fetch';
const COUNT = 300;
let broker: BrokerProcess;
let kafka: KafkaType;
let producer: Producer;
let conn: KafkaConnection;

const settings = (replicaId: number): ReplicaFetcherSettings => ({
  replicaId,
  clientId: `sluice-replica-${replicaId}-shard-0`,
  maxWaitMs: 100,
  minBytes: 1,
  maxBytes: 64 * 1024,
  // Small, so the log comes back over many fetches.
  partitionMaxBytes: 4 * 1024,
  backoffMs: 50,
  requestTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  security: PLAINTEXT_PEER,
});

/** Follows partition 0 from its log start, as a follower would, keeping every batch it is given. */
class ReadingPartition implements FollowedPartition {
  readonly partition = 0;
  readonly throttled = false;
  fetchOffset = 0;
  lastFetchedEpoch = -1;
  readonly batches: Buffer[] = [];
  readonly answers: ReplicaFetchAnswer[] = [];

  constructor(readonly topicId: string) {}

  fetchPosition(): ReplicaFetchPosition {
    return { replicaId: -1, replicaEpoch: -1, currentLeaderEpoch: -1, fetchOffset: this.fetchOffset, lastFetchedEpoch: this.lastFetchedEpoch, logStartOffset: 0 };
  }

  onFetchAnswer(_sent: ReplicaFetchPosition, answer: ReplicaFetchAnswer, records: Buffer | null): Promise<boolean> {
    this.answers.push(answer);
    if (records !== null) {
      const batches = decodeRecordBatches(records);
      this.batches.push(Buffer.from(records));
      const last = batches[batches.length - 1];
      if (last !== undefined) {
        this.fetchOffset = last.lastOffset + 1;
        this.lastFetchedEpoch = last.partitionLeaderEpoch;
      }
    }
    return Promise.resolve(true);
  }
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

before(async () => {
  broker = await BrokerProcess.start({ shards: 1 });
  kafka = kafkajsClient(broker.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  assert.equal(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true }), true);
  await admin.disconnect();
  producer = await connectedProducer(kafka);
  await sendRange(producer, TOPIC, 'rf', 0, COUNT, { batch: 25, partition: 0 });
  conn = await connectTo(broker.kafkaPort);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

describe('ReplicaFetcher against a broker', () => {
  it('reads back what a client produced, through the Fetch handler, as a consumer-id fetcher', async () => {
    const { topicId } = await topicInfo(conn, TOPIC);
    const endpoint = { id: 0, host: broker.host, port: broker.kafkaPort };
    const p = new ReadingPartition(topicId);
    const fetcher = new ReplicaFetcher(endpoint, settings(-1), () => -1, () => Date.now());
    try {
      fetcher.add(p);
      await until('the whole log fetched', () => p.fetchOffset >= COUNT);
    } finally {
      await fetcher.close();
    }
    assert.ok(p.answers.every((a) => a.errorCode === ErrorCode.NONE && a.divergingEpoch === null));
    assert.equal(p.answers[p.answers.length - 1]?.highWatermark, COUNT);
    assert.ok(p.batches.length > 1, `${p.batches.length} fetches: the small partition limit should take several`);
    const records = p.batches.flatMap((b) => decodeRecordBatches(b).flatMap((batch) => batch.records));
    assert.deepEqual(records.map((r) => r.offset), Array.from({ length: COUNT }, (_, i) => i));
    records.forEach((r, i) => assert.deepEqual(r.value, testMessage('rf', i).value, `value at offset ${i}`));
    const stats = fetcher.stats();
    assert.equal(stats.errors, 0);
    assert.ok(stats.requests >= p.batches.length);
    assert.equal(stats.bytes, p.batches.reduce((n, b) => n + b.length, 0));
  });

  it('is refused NOT_LEADER_OR_FOLLOWER under the id of a broker holding no replica', async () => {
    const { topicId } = await topicInfo(conn, TOPIC);
    const endpoint = { id: 0, host: broker.host, port: broker.kafkaPort };
    const p = new ReadingPartition(topicId);
    const fetcher = new ReplicaFetcher(endpoint, settings(999), () => 1, () => Date.now());
    try {
      fetcher.add(p);
      await until('an answer', () => p.answers.length > 0);
    } finally {
      await fetcher.close();
    }
    assert.equal(p.answers[0]?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(p.batches.length, 0);
  });
});
