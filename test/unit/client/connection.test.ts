// KafkaConnection against a tiny fake broker on 127.0.0.1 (fake_broker.ts) answering ApiVersions
// and Metadata with our codec: version negotiation (and the v0 fallback), pipelining with
// in-order answers and a bounded in-flight count, timeouts, and the protocol violations that
// must close the connection; requests sent with noResponse (acks=0 Produce) take no answer slot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError, KafkaConnection } from '../../../src/client/connection.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { CreateTopicsApi } from '../../../src/protocol/apis/create_topics.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import type { MetadataRequest, MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { FakeBroker, respond } from './fake_broker.js';
import type { FakeHandler, FakeOptions } from './fake_broker.js';

type Mode = 'answer' | 'ignore' | 'wrong-correlation';

/** A fake whose Metadata handler echoes the requested topic names. */
function fakeOptions(o: { apiVersionsMax?: number; metadataRange?: [number, number]; metadata?: Mode; answerDelayMs?: number }): FakeOptions {
  const metadata: FakeHandler = (h, r) => {
    if (o.metadata === 'ignore') return null;
    const req = MetadataApi.decodeRequest(h.apiVersion, r);
    const correlationId = o.metadata === 'wrong-correlation' ? h.correlationId + 1 : h.correlationId;
    return respond(MetadataApi, h.apiVersion, correlationId, metadataFor(req));
  };
  return {
    apiVersionsMax: o.apiVersionsMax,
    answerDelayMs: o.answerDelayMs,
    advertise: new Map([[MetadataApi.key, o.metadataRange ?? [0, 12]]]),
    handlers: new Map([[MetadataApi.key, metadata]]),
  };
}

function metadataFor(req: MetadataRequest): MetadataResponse {
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: 0, host: '127.0.0.1', port: 9092, rack: null }],
    clusterId: 'fake',
    controllerId: 0,
    topics: (req.topics ?? []).map((t) => ({
      errorCode: 0,
      name: t.name,
      topicId: '0123456789abcdef0123456789abcdef',
      isInternal: false,
      partitions: [],
      topicAuthorizedOperations: -2147483648,
    })),
    clusterAuthorizedOperations: -2147483648,
  };
}

function metadataRequest(...names: string[]): MetadataRequest {
  return {
    topics: names.map((name) => ({ topicId: '00000000000000000000000000000000', name })),
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  };
}

async function withFake(
  opts: Parameters<typeof fakeOptions>[0],
  body: (fake: FakeBroker, connect: (extra?: { requestTimeoutMs?: number; maxInflight?: number; maxResponseBytes?: number }) => Promise<KafkaConnection>) => Promise<void>,
): Promise<void> {
  const fake = await FakeBroker.start(fakeOptions(opts));
  const conns: KafkaConnection[] = [];
  try {
    await body(fake, async (extra = {}) => {
      const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: fake.port, clientId: 'test', ...extra });
      conns.push(conn);
      return conn;
    });
  } finally {
    await Promise.all(conns.map((c) => c.close()));
    await fake.stop();
  }
}

test('negotiates with ApiVersions v3 and uses min(our max, broker max)', async () => {
  await withFake({ metadataRange: [0, 5] }, async (fake, connect) => {
    const conn = await connect();
    assert.deepEqual(fake.seen.map((h) => [h.apiKey, h.apiVersion, h.clientId]), [[18, 3, 'test']]);
    assert.deepEqual(conn.brokerVersions.get(3), { minVersion: 0, maxVersion: 5 });
    assert.equal(conn.versionFor(MetadataApi), 5);
    const res = await conn.request(MetadataApi, metadataRequest('orders'));
    assert.equal(fake.seen[1]?.apiVersion, 5);
    assert.deepEqual(res.topics.map((t) => t.name), ['orders']);
    assert.equal(res.clusterId, 'fake');
  });
});

test('falls back to ApiVersions v0 when the broker rejects v3', async () => {
  await withFake({ apiVersionsMax: 2, metadataRange: [1, 9] }, async (fake, connect) => {
    const conn = await connect();
    assert.deepEqual(fake.seen.map((h) => h.apiVersion), [3, 0]);
    assert.deepEqual(conn.brokerVersions.get(3), { minVersion: 1, maxVersion: 9 });
    const res = await conn.request(MetadataApi, metadataRequest('a'));
    assert.equal(fake.seen[2]?.apiVersion, 9); // flexible Metadata, header v2 round trip
    assert.equal(res.topics[0]?.name, 'a');
  });
});

test('pipelined requests resolve in order with at most maxInflight on the wire', async () => {
  await withFake({ answerDelayMs: 5 }, async (fake, connect) => {
    const conn = await connect({ maxInflight: 4 });
    fake.maxOutstanding = 0;
    const names = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const order: number[] = [];
    const results = await Promise.all(
      names.map((n, i) => conn.request(MetadataApi, metadataRequest(n)).then((res) => {
        order.push(i);
        return res.topics[0]?.name;
      })),
    );
    assert.deepEqual(results, names);
    assert.deepEqual(order, names.map((_, i) => i));
    assert.equal(fake.maxOutstanding, 4);
    const ids = fake.seen.slice(1).map((h) => h.correlationId);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
  });
});

test('a request timeout fails that request and closes the connection', async () => {
  await withFake({ metadata: 'ignore' }, async (_fake, connect) => {
    const conn = await connect({ requestTimeoutMs: 1000 });
    const slow = conn.request(MetadataApi, metadataRequest('a'), undefined, { timeoutMs: 100 });
    const other = conn.request(MetadataApi, metadataRequest('b'));
    const started = Date.now();
    await assert.rejects(slow, (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.REQUEST_TIMED_OUT);
    assert.ok(Date.now() - started < 900);
    await assert.rejects(other, ConnectionError);
    await assert.rejects(conn.request(MetadataApi, metadataRequest('c')), ConnectionError);
  });
});

test('a response with the wrong correlation id closes the connection', async () => {
  await withFake({ metadata: 'wrong-correlation' }, async (_fake, connect) => {
    const conn = await connect();
    await assert.rejects(conn.request(MetadataApi, metadataRequest('a')), /correlation id/);
  });
});

test('a response frame above maxResponseBytes closes the connection', async () => {
  await withFake({}, async (_fake, connect) => {
    const conn = await connect({ maxResponseBytes: 200 });
    await assert.rejects(conn.request(MetadataApi, metadataRequest('x'.repeat(300))), /response frame of \d+ bytes/);
  });
});

test('APIs the broker lacks or shares no version of are refused locally', async () => {
  await withFake({ metadataRange: [13, 14] }, async (fake, connect) => {
    const conn = await connect();
    const unsupported = (err: unknown): boolean => err instanceof KafkaError && err.code === ErrorCode.UNSUPPORTED_VERSION;
    await assert.rejects(conn.request(MetadataApi, metadataRequest('a')), unsupported);
    await assert.rejects(
      conn.request(CreateTopicsApi, { topics: [], timeoutMs: 1, validateOnly: false }),
      unsupported,
    );
    await assert.rejects(conn.request(MetadataApi, metadataRequest('a'), 13), unsupported);
    assert.equal(fake.seen.length, 1); // nothing but the ApiVersions exchange went out
  });
});

test('connecting to a closed port fails with ConnectionError', async () => {
  const fake = await FakeBroker.start();
  const port = fake.port;
  await fake.stop();
  await assert.rejects(KafkaConnection.connect({ host: '127.0.0.1', port, requestTimeoutMs: 1000 }), ConnectionError);
});

test('noResponse requests resolve once written and take no response slot', async () => {
  const opts = fakeOptions({});
  const fake = await FakeBroker.start({
    ...opts,
    advertise: new Map([[MetadataApi.key, [0, 12]], [ProduceApi.key, [3, 11]]]),
    handlers: new Map([...(opts.handlers ?? []), [ProduceApi.key, () => null]]),
  });
  const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: fake.port, maxInflight: 1, requestTimeoutMs: 2000 });
  try {
    const produce = { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: null }] }] };
    const unanswered = [1, 2, 3].map(() => conn.request(ProduceApi, produce, undefined, { noResponse: true }));
    const answered = conn.request(MetadataApi, metadataRequest('after'));
    assert.deepEqual(await Promise.all(unanswered), [undefined, undefined, undefined]);
    // With one in-flight slot, the Metadata answer could only be matched if no Produce held it.
    assert.deepEqual((await answered).topics.map((t) => t.name), ['after']);
    assert.deepEqual(fake.seen.slice(1).map((h) => h.apiKey), [ProduceApi.key, ProduceApi.key, ProduceApi.key, MetadataApi.key]);
    assert.ok(conn.isOpen);
    await conn.close();
    await assert.rejects(conn.request(ProduceApi, produce, undefined, { noResponse: true }), ConnectionError);
  } finally {
    await conn.close();
    await fake.stop();
  }
});
