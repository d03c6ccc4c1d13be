// Our producer keeps the order of send() calls within a partition when a send has to wait for
// topic metadata: against a fake broker whose Metadata answer is lost once (the request times out,
// as when the broker asked is shutting down), the send that met the lost answer backs off, and a
// send made meanwhile finds the metadata through a fresh request. Records must still reach the
// broker in call order, with sequences in that order (the rolling-restart row of the replication
// fault suite saw later values of one producer land before earlier ones this way).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Producer } from '../../../../src/client/producer/index.js';
import { InitProducerIdApi } from '../../../../src/protocol/apis/init_producer_id.js';
import { MetadataApi } from '../../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../../src/protocol/apis/produce.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { decodeRecordBatches } from '../../../../src/protocol/records.js';
import { ZERO_UUID } from '../../../../src/protocol/schema.js';
import { FakeBroker, respond } from '../fake_broker.js';
import type { FakeHandler } from '../fake_broker.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('a send waiting for metadata is not overtaken by a later send of the same partition', async (t) => {
  // Full-jitter backoff at its top: the send whose Metadata answer was lost waits almost the whole
  // retry backoff, long enough for the later send to find the metadata first.
  t.mock.method(Math, 'random', () => 0.99);
  const RETRY_BACKOFF_MS = 1_000;
  let metadataRequests = 0;
  let port = 0;
  const written: { value: string; sequence: number }[] = [];
  const metadata: FakeHandler = (h, r) => {
    MetadataApi.decodeRequest(h.apiVersion, r);
    // The second Metadata request (the first send after the cache aged) is never answered.
    if (++metadataRequests === 2) return null;
    return respond(MetadataApi, h.apiVersion, h.correlationId, {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 0, host: '127.0.0.1', port, rack: null }],
      clusterId: 'fake', controllerId: 0, clusterAuthorizedOperations: -2147483648,
      topics: [{
        errorCode: 0, name: 't', topicId: ZERO_UUID, isInternal: false, topicAuthorizedOperations: -2147483648,
        partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 0, leaderEpoch: 1, replicaNodes: [0], isrNodes: [0], offlineReplicas: [] }],
      }],
    });
  };
  const produce: FakeHandler = (h, r) => {
    const req = ProduceApi.decodeRequest(h.apiVersion, r);
    const baseOffset = written.length;
    for (const batch of decodeRecordBatches(req.topicData[0]!.partitionData[0]!.records!)) {
      batch.records.forEach((rec, i) => written.push({ value: rec.value?.toString() ?? '', sequence: batch.baseSequence + i }));
    }
    return respond(ProduceApi, h.apiVersion, h.correlationId, {
      throttleTimeMs: 0, nodeEndpoints: [],
      responses: [{ name: 't', partitionResponses: [{
        index: 0, errorCode: ErrorCode.NONE, baseOffset, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null,
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
      }] }],
    });
  };
  const initPid: FakeHandler = (h) => respond(InitProducerIdApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, errorCode: 0, producerId: 5, producerEpoch: 0 });
  const fake = await FakeBroker.start({ handlers: new Map([[MetadataApi.key, metadata], [ProduceApi.key, produce], [InitProducerIdApi.key, initPid]]) });
  port = fake.port;
  const producer = new Producer({
    brokers: [`127.0.0.1:${port}`], idempotent: true, lingerMs: 0, requestTimeoutMs: 200,
    retryBackoffMs: RETRY_BACKOFF_MS, metadataMaxAgeMs: 50, maxBlockMs: 10_000, deliveryTimeoutMs: 10_000,
  });
  try {
    await producer.connect();
    await producer.send('t', { partition: 0, value: 'first' });
    await sleep(100);
    const early = producer.send('t', { partition: 0, value: 'early' });
    // Past the lost answer's timeout, well inside the backoff that follows it.
    await sleep(400);
    const late = producer.send('t', { partition: 0, value: 'late' });
    const [e, l] = await Promise.all([early, late]);
    assert.equal(metadataRequests >= 3, true, `the lost answer was retried (${metadataRequests} Metadata requests)`);
    assert.deepEqual(written.map((w) => w.value), ['first', 'early', 'late'], 'records reach the partition in send order');
    assert.deepEqual(written.map((w) => w.sequence), [0, 1, 2]);
    assert.ok(e.offset < l.offset, `early at ${e.offset}, late at ${l.offset}`);
  } finally {
    await producer.close();
    await fake.stop();
  }
});
