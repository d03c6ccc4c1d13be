// Produce handler on the main thread: the messages-in metric is fed from the batch header's record
// count before the shard validates the batch, so client bytes must never make it throw (a
// negative count used to reject the handler with prom-client's "not possible to decrease a
// counter", closing the connection).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerContext } from '../../../../src/net/broker_context.js';
import type { HandlerContext } from '../../../../src/net/handler.js';
import type { ProduceItem, ProduceOutcome } from '../../../../src/actors/partition_router.js';
import type { ProduceRequest } from '../../../../src/protocol/apis/produce.js';
import { claimedRecordCount, produceHandler } from '../../../../src/net/handlers/produce.js';
import { BrokerMetrics } from '../../../../src/metrics/metrics.js';

const HEADER_BYTES = 61;

/** A record-batch header of `magic` whose records-count field holds `count` (rest zero). */
function batch(magic: number, count: number, length = HEADER_BYTES): Buffer {
  const b = Buffer.alloc(length);
  b[16] = magic;
  if (length >= HEADER_BYTES) b.writeInt32BE(count, 57);
  return b;
}

function fakeContext(metrics: BrokerMetrics, routed: ProduceItem[][]): HandlerContext {
  const broker = {
    metrics,
    topics: { table: { get: (name: string) => (name === 't' ? { name, partitions: 1 } : undefined) }, handle: () => 7 },
    router: {
      host: () => ({ toShard: { maxMessageBytes: 1 << 20 } }),
      produce: (items: ProduceItem[]): Promise<ProduceOutcome[]> => {
        routed.push(items);
        return Promise.resolve(items.map((_, i) => ({ errorCode: 0, baseOffset: i, logAppendTime: -1, logStartOffset: 0 })));
      },
    },
  } as unknown as BrokerContext;
  return { broker, header: { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: null }, version: 9, clientHost: '/127.0.0.1' } as unknown as HandlerContext;
}

function request(records: Buffer): ProduceRequest {
  return { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] };
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
  const ctx = fakeContext(metrics, routed);
  const res = await produceHandler.handle(ctx, request(batch(2, -1)));
  assert.equal(routed.length, 1, 'the batch reached the router (the shard validates it)');
  assert.ok(typeof res === 'object' && res !== null && 'responses' in res);
  await produceHandler.handle(ctx, request(batch(2, 4)));
  assert.equal(await messagesIn(metrics), 4);
});
