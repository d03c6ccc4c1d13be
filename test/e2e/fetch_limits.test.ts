// A Fetch over partitions that live on different shards obeys the response-wide limits: its
// records stay within max_bytes (each shard alone would fill up to it), and min_bytes counts the
// bytes of every shard: parts that each hold less but together enough answer before max_wait,
// and parts that together hold too little wait for it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KafkaConnection } from '../../src/client/connection.js';
import { FetchApi, type FetchRequest, type FetchResponse } from '../../src/protocol/apis/fetch.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { connectTo, recordsBytes, topicInfo, ZERO_UUID } from '../helpers/read_back.js';

const MIB = 1 << 20;
const BIG_RECORD = 900 * 1024;
const BIG_TOPIC = 'fetch-limits-big'; // 4 partitions: the shards take them in turn
const SMALL_TOPIC = 'fetch-limits-small'; // 2 partitions, one per shard
const MIN_BYTES = 1000;
const MAX_WAIT_MS = 3000;

async function produce(conn: KafkaConnection, topic: string, partition: number, valueBytes: number): Promise<void> {
  const records = encodeRecordBatch([{ key: null, value: Buffer.alloc(valueBytes, 1), timestamp: Date.now() }]);
  const res = await conn.request(ProduceApi, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  assert.equal(res.responses[0]?.partitionResponses[0]?.errorCode, 0, 'produce');
}

function fetchAll(topic: string, topicId: string, partitions: number, o: { maxBytes: number; minBytes: number; maxWaitMs: number }): FetchRequest {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1 },
    maxWaitMs: o.maxWaitMs,
    minBytes: o.minBytes,
    maxBytes: o.maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic, topicId,
      partitions: Array.from({ length: partitions }, (_, partition) => ({
        partition, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: o.maxBytes, replicaDirectoryId: ZERO_UUID,
      })),
    }],
    forgottenTopicsData: [],
    rackId: '',
  };
}

function recordBytesPerPartition(res: FetchResponse): number[] {
  return res.responses[0]!.partitions.map((p) => {
    assert.equal(p.errorCode, 0, `partition ${p.partitionIndex}`);
    return recordsBytes(p.records).length;
  });
}

describe('fetch limits across shards', () => {
  let broker: BrokerProcess;
  let conn: KafkaConnection;

  before(async () => {
    broker = await BrokerProcess.start({ shards: 2, flush: 'never' });
    const admin = kafkajsClient(broker.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: BIG_TOPIC, numPartitions: 4 }, { topic: SMALL_TOPIC, numPartitions: 2 }], waitForLeaders: true });
    await admin.disconnect();
    conn = await connectTo(broker.kafkaPort);
    for (let p = 0; p < 4; p++) for (let i = 0; i < 2; i++) await produce(conn, BIG_TOPIC, p, BIG_RECORD);
  });

  after(async () => {
    await conn?.close();
    await broker?.dispose();
  });

  it('keeps the records of a 1 MiB fetch over 4 partitions of 900 KiB batches within 1 MiB', async () => {
    const info = await topicInfo(conn, BIG_TOPIC);
    const res = await conn.request(FetchApi, fetchAll(BIG_TOPIC, info.topicId, 4, { maxBytes: MIB, minBytes: 1, maxWaitMs: 500 }));
    const bytes = recordBytesPerPartition(res);
    const total = bytes.reduce((a, b) => a + b, 0);
    assert.ok(bytes[0]! > BIG_RECORD, 'the first partition gets its first batch');
    assert.ok(total <= MIB, `records of ${total} bytes (${bytes.join(', ')}) passed max_bytes ${MIB}`);
  });

  it('answers before max_wait when the shards together hold min_bytes, each holding less', async () => {
    const info = await topicInfo(conn, SMALL_TOPIC);
    const parked = conn.request(FetchApi, fetchAll(SMALL_TOPIC, info.topicId, 2, { maxBytes: MIB, minBytes: MIN_BYTES, maxWaitMs: MAX_WAIT_MS }));
    const start = Date.now();
    // The fetch parks on both shards with nothing; each partition then gets less than min_bytes,
    // produced on another connection (this one answers in request order, the fetch first).
    await new Promise((r) => setTimeout(r, 200));
    const producer = await connectTo(broker.kafkaPort);
    try {
      await produce(producer, SMALL_TOPIC, 0, MIN_BYTES * 0.6);
      await produce(producer, SMALL_TOPIC, 1, MIN_BYTES * 0.6);
    } finally {
      await producer.close();
    }
    const bytes = recordBytesPerPartition(await parked);
    const took = Date.now() - start;
    assert.ok(took < MAX_WAIT_MS - 500, `answered after ${took} ms`);
    assert.ok(bytes[0]! > 0 && bytes[1]! > 0, `both partitions answered (${bytes.join(', ')})`);
  });

  it('waits for max_wait while the shards together hold less than min_bytes', async () => {
    const info = await topicInfo(conn, SMALL_TOPIC);
    const start = Date.now();
    const res = await conn.request(FetchApi, fetchAll(SMALL_TOPIC, info.topicId, 2, { maxBytes: MIB, minBytes: 100 * MIN_BYTES, maxWaitMs: 1000 }));
    const took = Date.now() - start;
    const bytes = recordBytesPerPartition(res);
    assert.ok(took >= 900, `answered after ${took} ms, before max_wait`);
    assert.ok(bytes[0]! > 0 && bytes[1]! > 0, `both partitions answered at max_wait (${bytes.join(', ')})`);
  });
});
