// Our producer when a partition's leader dies while the producer is idle: no request is in flight,
// so no answer can say NOT_LEADER_OR_FOLLOWER; the refused reconnection alone must send it back to
// Metadata, which names the new leader, and the next record is acknowledged there well within its
// delivery timeout. Two fake brokers on loopback; runs on the test's main thread.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Producer } from '../../../../src/client/producer/index.js';
import { InitProducerIdApi } from '../../../../src/protocol/apis/init_producer_id.js';
import { MetadataApi } from '../../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../../src/protocol/apis/produce.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ZERO_UUID } from '../../../../src/protocol/schema.js';
import { FakeBroker, respond } from '../fake_broker.js';
import type { FakeHandler } from '../fake_broker.js';

it('an idle producer whose leader died finds the new leader through Metadata, not by expiring its records', async () => {
  let leader = 0;
  const ports = [0, 0];
  const metadataHandler: FakeHandler = (h, r) => {
    MetadataApi.decodeRequest(h.apiVersion, r);
    return respond(MetadataApi, h.apiVersion, h.correlationId, {
      throttleTimeMs: 0,
      brokers: ports.map((port, nodeId) => ({ nodeId, host: '127.0.0.1', port, rack: null })),
      clusterId: 'fake', controllerId: 1, clusterAuthorizedOperations: -2147483648,
      topics: [{
        errorCode: 0, name: 't', topicId: ZERO_UUID, isInternal: false, topicAuthorizedOperations: -2147483648,
        partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: leader, leaderEpoch: leader + 1, replicaNodes: [0, 1], isrNodes: [leader], offlineReplicas: [] }],
      }],
    });
  };
  const acceptedBy: number[] = [];
  const produceOn = (node: number): FakeHandler => (h, r) => {
    ProduceApi.decodeRequest(h.apiVersion, r);
    acceptedBy.push(node);
    return respond(ProduceApi, h.apiVersion, h.correlationId, {
      throttleTimeMs: 0, nodeEndpoints: [],
      responses: [{ name: 't', partitionResponses: [{
        index: 0, errorCode: ErrorCode.NONE, baseOffset: acceptedBy.length - 1, logAppendTimeMs: -1, logStartOffset: 0,
        recordErrors: [], errorMessage: null, currentLeader: { leaderId: -1, leaderEpoch: -1 },
      }] }],
    });
  };
  const initPid: FakeHandler = (h) => respond(InitProducerIdApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, errorCode: 0, producerId: 5, producerEpoch: 0 });
  const fakes = await Promise.all([0, 1].map((node) => FakeBroker.start({
    handlers: new Map([[MetadataApi.key, metadataHandler], [ProduceApi.key, produceOn(node)], [InitProducerIdApi.key, initPid]]),
  })));
  fakes.forEach((f, i) => { ports[i] = f.port; });
  const producer = new Producer({
    brokers: fakes.map((f) => `127.0.0.1:${f.port}`), acks: 'all', retryBackoffMs: 100, deliveryTimeoutMs: 20_000, requestTimeoutMs: 5_000, lingerMs: 0,
  });
  try {
    await producer.connect();
    assert.equal((await producer.send('t', { partition: 0, value: Buffer.from('before') })).offset, 0);
    // Broker 0 dies between two sends; the cluster elects broker 1.
    await fakes[0]!.stop();
    leader = 1;
    // Idle long enough to see the connection close: the next record is not written to a dying socket.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const meta = await producer.send('t', { partition: 0, value: Buffer.from('after') });
    assert.equal(meta.offset, 1);
    assert.deepEqual(acceptedBy, [0, 1]);
    assert.ok(Date.now() - started < 5_000, `acknowledged by the new leader after ${Date.now() - started} ms`);
  } finally {
    await producer.close();
    await Promise.allSettled(fakes.map((f) => f.stop()));
  }
});
