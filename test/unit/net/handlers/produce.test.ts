// Produce handler on the main thread, with plain-object dependencies.
// The messages-in metric is fed from the batch header's record count before the shard validates
// the batch, so client bytes must never make it throw (a negative count used to reject the
// handler with prom-client's "not possible to decrease a counter", closing the connection).
// Leadership comes from the cluster view: a partition another broker leads is refused with
// NOT_LEADER_OR_FOLLOWER and a KIP-951 hint naming that leader and its endpoint, also when the
// leadership moved while the batch was on its way to the partition (the actor refuses it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProduceItem, ProduceOutcome } from '../../../../src/actors/partition_router.js';
import type { ClusterView } from '../../../../src/cluster/cluster_view.js';
import type { ProduceRequest } from '../../../../src/protocol/apis/produce.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { claimedRecordCount, produceHandler, type ProduceDeps } from '../../../../src/net/handlers/produce.js';
import { BrokerMetrics } from '../../../../src/metrics/metrics.js';
import { clusterView, endpoint } from '../../../helpers/cluster_fixture.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

const HEADER_BYTES = 61;

/** A record-batch header of `magic` whose records-count field holds `count` (rest zero). */
function batch(magic: number, count: number, length = HEADER_BYTES): Buffer {
  const b = Buffer.alloc(length);
  b[16] = magic;
  if (length >= HEADER_BYTES) b.writeInt32BE(count, 57);
  return b;
}

function deps(
  metrics: BrokerMetrics, routed: ProduceItem[][], cluster: ClusterView = clusterView({ topics: [{ name: 't', partitions: 1 }] }),
  handover: Promise<unknown> | null = null,
): ProduceDeps {
  return {
    cluster,
    partitions: { handleOf: () => 7 },
    router: {
      produce: (items: readonly ProduceItem[]): Promise<ProduceOutcome[]> => {
        routed.push([...items]);
        return Promise.resolve(items.map((_, i) => ({ errorCode: 0, baseOffset: i, logAppendTime: -1, logStartOffset: 0 })));
      },
    },
    metrics,
    limits: { maxProduceBatchBytes: 1 << 20 },
    handover: () => handover,
  };
}

function request(records: Buffer, partition = 0): ProduceRequest {
  return { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: partition, records }] }] };
}

async function messagesIn(m: BrokerMetrics): Promise<number> {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith('sluice_messages_in_total '));
  return Number(line?.slice(line.lastIndexOf(' ') + 1));
}

test('claimedRecordCount reads only non-negative counts of magic-2 headers', () => {
  assert.equal(claimedRecordCount(batch(2, 5)), 5);
  assert.equal(claimedRecordCount(batch(2, -3)), 0);
  assert.equal(claimedRecordCount(batch(2, -0x80000000)), 0);
  assert.equal(claimedRecordCount(batch(1, 5)), 0);
  assert.equal(claimedRecordCount(batch(2, 5, HEADER_BYTES - 1)), 0);
});

test('a batch claiming a negative record count is routed and answered, not a handler failure', async () => {
  const metrics = new BrokerMetrics();
  const routed: ProduceItem[][] = [];
  const d = deps(metrics, routed);
  const res = answered(await produceHandler.handle(requestContext(0, 9), request(batch(2, -1)), d));
  assert.equal(routed.length, 1, 'the batch reached the router (the shard validates it)');
  assert.equal(res.responses?.[0]?.partitionResponses?.[0]?.errorCode, ErrorCode.NONE);
  await produceHandler.handle(requestContext(0, 9), request(batch(2, 4)), d);
  assert.equal(await messagesIn(metrics), 4);
});

test('a partition another broker leads is refused with the leader hint and its endpoint, and never routed', async () => {
  const routed: ProduceItem[][] = [];
  const cluster = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 2, byPartition: { 1: { leader: 2, leaderEpoch: 5 } } }] });
  const res = answered(await produceHandler.handle(requestContext(0, 10), request(batch(2, 1), 1), deps(new BrokerMetrics(), routed, cluster)));
  const p = res.responses?.[0]?.partitionResponses?.[0];
  assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.deepEqual(p?.currentLeader, { leaderId: 2, leaderEpoch: 5 });
  assert.deepEqual(res.nodeEndpoints, [{ nodeId: 2, host: 'broker-2.test', port: 9002, rack: null }]);
  assert.deepEqual(routed, [[]], 'nothing routed to a shard');
});

test('while the broker hands its leaderships over, a moved partition is answered only once the handover settled', async () => {
  const cluster = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 2, byPartition: { 1: { leader: 2, leaderEpoch: 5 } } }] });
  let letGo: () => void = () => undefined;
  const handover = new Promise<void>((resolve) => (letGo = resolve));
  let answeredYet = false;
  const pending = Promise.resolve(produceHandler.handle(requestContext(0, 10), request(batch(2, 1), 1), deps(new BrokerMetrics(), [], cluster, handover))).then((r) => {
    answeredYet = true;
    return r;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(answeredYet, false, 'held while the other brokers may not have applied the move');
  letGo();
  const p = answered(await pending).responses?.[0]?.partitionResponses?.[0];
  assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.deepEqual(p?.currentLeader, { leaderId: 2, leaderEpoch: 5 });
});

test('a batch its partition refused because the leadership moved meanwhile gets the new leader as hint, after the handover', async () => {
  const led = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 1, byPartition: { 0: { leader: 1, leaderEpoch: 4 } } }] });
  const moved = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 1, byPartition: { 0: { leader: 2, leaderEpoch: 5 } } }] });
  let view = led;
  // The view the handler reads is whichever image main holds when it reads it.
  const cluster = new Proxy(led, { get: (_target, key: keyof ClusterView) => Reflect.get(view, key) });
  let letGo: () => void = () => undefined;
  const handover = new Promise<void>((resolve) => (letGo = resolve));
  const d: ProduceDeps = {
    ...deps(new BrokerMetrics(), [], cluster, handover),
    router: {
      produce: (items: readonly ProduceItem[]): Promise<ProduceOutcome[]> => {
        view = moved; // the move is applied while the batch is on the ring
        return Promise.resolve(items.map(() => ({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, logAppendTime: -1, logStartOffset: 0 })));
      },
    },
  };
  let answeredYet = false;
  const pending = Promise.resolve(produceHandler.handle(requestContext(0, 10), request(batch(2, 1)), d)).then((r) => {
    answeredYet = true;
    return r;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(answeredYet, false, 'held until the handover settled');
  letGo();
  const res = answered(await pending);
  const p = res.responses?.[0]?.partitionResponses?.[0];
  assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.deepEqual(p?.currentLeader, { leaderId: 2, leaderEpoch: 5 });
  assert.deepEqual(res.nodeEndpoints, [{ nodeId: 2, host: 'broker-2.test', port: 9002, rack: null }]);
});

test('partitions this broker leads carry no leader hint; unknown partitions are UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const routed: ProduceItem[][] = [];
  const d = deps(new BrokerMetrics(), routed);
  const ok = answered(await produceHandler.handle(requestContext(0, 10), request(batch(2, 1)), d));
  assert.equal(ok.responses?.[0]?.partitionResponses?.[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual(ok.nodeEndpoints, []);
  const unknown = answered(await produceHandler.handle(requestContext(0, 10), request(batch(2, 1), 3), d));
  assert.equal(unknown.responses?.[0]?.partitionResponses?.[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('a batch larger than the ring limit is MESSAGE_TOO_LARGE', async () => {
  const d = { ...deps(new BrokerMetrics(), []), limits: { maxProduceBatchBytes: HEADER_BYTES - 1 } };
  const res = answered(await produceHandler.handle(requestContext(0, 9), request(batch(2, 1)), d));
  assert.equal(res.responses?.[0]?.partitionResponses?.[0]?.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
});
