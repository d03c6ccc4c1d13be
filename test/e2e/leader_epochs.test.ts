// Leader epochs end to end against a broker child process: produced batches carry the partition's
// leader epoch (0 on a new single node, higher after each restart), OffsetForLeaderEpoch answers where an epoch ends (also after a
// restart, from the leader-epoch-checkpoint), and the current leader epoch of Fetch, ListOffsets
// and OffsetForLeaderEpoch is checked against the broker's. A Fetch v12+ past the end of the
// fetcher's last epoch gets that epoch's real end as its diverging epoch.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka as KafkaType, Producer } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { FetchApi, type FetchResponsePartition } from '../../src/protocol/apis/fetch.js';
import { ListOffsetsApi } from '../../src/protocol/apis/list_offsets.js';
import {
  OffsetForLeaderEpochApi,
  type OffsetForLeaderEpochResponsePartition,
} from '../../src/protocol/apis/offset_for_leader_epoch.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { LATEST, connectTo, fetchRequest, listOffset, metadata, readBatches, topicInfo } from '../helpers/read_back.js';

const TOPIC = 'epochs';
let broker: BrokerProcess;
let kafka: KafkaType;
let producer: Producer;
let conn: KafkaConnection;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
  kafka = kafkajsClient(broker.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  assert.equal(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true }), true);
  await admin.disconnect();
  producer = await connectedProducer(kafka);
  conn = await connectTo(broker.kafkaPort);
  await sendRange(producer, TOPIC, 'e', 0, 30, { batch: 10 });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

async function epochEnd(leaderEpoch: number, currentLeaderEpoch = -1, version = 4, topic = TOPIC): Promise<OffsetForLeaderEpochResponsePartition> {
  const res = await conn.request(OffsetForLeaderEpochApi, { replicaId: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }] }, version);
  const p = res.topics[0]?.partitions[0];
  assert.ok(p !== undefined, 'OffsetForLeaderEpoch answered without the partition');
  return p;
}

async function fetchAt(fetchOffset: number, lastFetchedEpoch: number, currentLeaderEpoch = -1): Promise<FetchResponsePartition> {
  const req = fetchRequest(TOPIC, (await topicInfo(conn, TOPIC)).topicId, 0, fetchOffset, 1 << 20);
  const part = req.topics[0]!.partitions[0]!;
  part.lastFetchedEpoch = lastFetchedEpoch;
  part.currentLeaderEpoch = currentLeaderEpoch;
  const res = await conn.request(FetchApi, { ...req, maxWaitMs: 100 }, 13);
  const p = res.responses[0]?.partitions[0];
  assert.ok(p !== undefined, 'fetch answered without the partition');
  return p;
}

describe('leader epochs on a single broker', () => {
  it('stamps every produced batch with leader epoch 0', async () => {
    const batches = await readBatches(conn, TOPIC, 0);
    assert.equal(batches.length, 3);
    assert.deepEqual(batches.map((b) => b.partitionLeaderEpoch), [0, 0, 0]);
  });

  it('answers where an epoch ends, in every served version', async () => {
    for (const version of [2, 3, 4]) {
      assert.deepEqual(await epochEnd(0, 0, version), { errorCode: 0, partition: 0, leaderEpoch: 0, endOffset: 30 }, `v${version}`);
    }
    assert.deepEqual(await epochEnd(1), { errorCode: 0, partition: 0, leaderEpoch: -1, endOffset: -1 }, 'an epoch newer than the log knows');
    assert.equal((await epochEnd(0, 1)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal((await epochEnd(0, -1, 4, 'no-such-topic')).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('checks the current leader epoch of Fetch and ListOffsets', async () => {
    assert.equal((await fetchAt(0, -1, 0)).errorCode, ErrorCode.NONE);
    assert.equal((await fetchAt(0, -1, 1)).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    const listed = await conn.request(ListOffsetsApi, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: 1, timestamp: LATEST }] }] }, 7);
    assert.equal(listed.topics[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.deepEqual([(await listOffset(conn, TOPIC, 0, LATEST)).offset, (await listOffset(conn, TOPIC, 0, LATEST)).leaderEpoch], [30, 0]);
  });

  it('answers a fetch v12+ past the end of its last epoch with the diverging epoch, and reads one that agrees', async () => {
    const diverged = await fetchAt(35, 0);
    assert.equal(diverged.errorCode, ErrorCode.NONE);
    assert.deepEqual(diverged.divergingEpoch, { epoch: 0, endOffset: 30 });
    const agreeing = await fetchAt(20, 0);
    assert.deepEqual([agreeing.errorCode, agreeing.divergingEpoch], [ErrorCode.NONE, { epoch: -1, endOffset: -1 }]);
    assert.ok(agreeing.records !== null, 'records were read');
    assert.equal((await fetchAt(20, 3)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, 'an epoch the log cannot place');
  });

  it('still knows where epoch 0 ends after a restart (leader-epoch-checkpoint), and leads the next batches in a newer epoch', async () => {
    await producer.disconnect();
    await conn.close();
    await broker.stop(10_000);
    await broker.restart();
    conn = await connectTo(broker.kafkaPort);
    producer = await connectedProducer(kafka);
    // The restarted broker registers anew: the controller takes its leaderships and gives them back, each a new epoch.
    const current = (await metadata(conn, [TOPIC])).topics[0]!.partitions[0]!.leaderEpoch;
    assert.ok(current > 0, `leader epoch after the restart is ${current}`);
    assert.equal((await epochEnd(0, 0)).errorCode, ErrorCode.FENCED_LEADER_EPOCH, 'epoch 0 is no longer current');
    assert.deepEqual(await epochEnd(0, current), { errorCode: 0, partition: 0, leaderEpoch: 0, endOffset: 30 });
    await sendRange(producer, TOPIC, 'f', 30, 35, { batch: 5 });
    assert.deepEqual(await epochEnd(0, current), { errorCode: 0, partition: 0, leaderEpoch: 0, endOffset: 30 }, 'epoch 0 ended where the restart found it');
    assert.deepEqual(await epochEnd(current, current), { errorCode: 0, partition: 0, leaderEpoch: current, endOffset: 35 });
  });
});
