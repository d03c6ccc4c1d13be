// Cluster against the fake broker (fake_broker.ts), reached through a loopback proxy the test can
// cut to play a broker closing connections: metadata is cached and concurrent lookups share one
// Metadata request, markStale forces a new one, a closed connection is replaced on next use,
// reconnect delays grow with consecutive failures (between dials a listener that drops every
// connection sees, with Math.random pinned so the delays are their caps), and fullJitterDelay
// stays within its cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import fc from 'fast-check';
import { fullJitterDelay } from '../../../src/protocol/backoff.js';
import { Cluster } from '../../../src/client/cluster.js';
import { ConnectionError } from '../../../src/client/connection.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';
import { FakeBroker, respond } from './fake_broker.js';

/** Forwards loopback connections to `port`; cut() drops them all, as a broker closing them would. */
class Proxy {
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(port: number): Promise<Proxy> {
    const proxy = new Proxy(createServer((client) => {
      const upstream = netConnect({ host: '127.0.0.1', port });
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => proxy.sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    }));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A one-broker cluster (node 0 at the proxy) with topics `a` (3 partitions) and `b` (1); Metadata requests are counted. */
async function setup(): Promise<{ fake: FakeBroker; proxy: Proxy; cluster: Cluster; metadataRequests: () => number; dispose: () => Promise<void> }> {
  let requests = 0;
  let proxyPort = 0;
  const topics = new Map([['a', 3], ['b', 1]]);
  const fake = await FakeBroker.start({
    advertise: new Map([[MetadataApi.key, [0, 12]]]),
    answerDelayMs: 20,
    handlers: new Map([[MetadataApi.key, (h, r) => {
      requests++;
      const req = MetadataApi.decodeRequest(h.apiVersion, r);
      const res: MetadataResponse = {
        throttleTimeMs: 0,
        brokers: [{ nodeId: 0, host: '127.0.0.1', port: proxyPort, rack: null }],
        clusterId: 'fake',
        controllerId: 0,
        topics: (req.topics ?? []).map((t) => {
          const n = topics.get(t.name ?? '');
          return {
            errorCode: n === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE,
            name: t.name,
            topicId: ZERO_UUID,
            isInternal: false,
            partitions: Array.from({ length: n ?? 0 }, (_, i) => ({ errorCode: 0, partitionIndex: i, leaderId: 0, leaderEpoch: 1, replicaNodes: [0], isrNodes: [0], offlineReplicas: [] })),
            topicAuthorizedOperations: -2147483648,
          };
        }),
        clusterAuthorizedOperations: -2147483648,
      };
      return respond(MetadataApi, h.apiVersion, h.correlationId, res);
    }]]),
  });
  const proxy = await Proxy.start(fake.port);
  proxyPort = proxy.port;
  const cluster = new Cluster({ brokers: `127.0.0.1:${proxy.port}`, requestTimeoutMs: 2000, reconnectBackoff: { baseMs: 10, maxMs: 50 } });
  return {
    fake, proxy, cluster,
    metadataRequests: () => requests,
    dispose: async () => {
      await cluster.close();
      await proxy.stop();
      await fake.stop();
    },
  };
}

test('topic metadata is cached, and concurrent lookups share one Metadata request', async () => {
  const { cluster, metadataRequests, dispose } = await setup();
  try {
    const [a1, a2] = await Promise.all([cluster.topic('a'), cluster.topic('a')]);
    assert.equal(metadataRequests(), 1);
    assert.equal(a1, a2);
    assert.equal(a1.partitions.length, 3);
    assert.equal(cluster.leaderOf('a', 2), 0);
    assert.equal(cluster.leaderOf('a', 3), -1);
    assert.equal(await cluster.topic('a'), a1, 'served from the cache');
    assert.equal(cluster.cachedTopic('a'), a1);
    assert.equal(metadataRequests(), 1);
    await Promise.all([cluster.refresh(), cluster.refresh(), cluster.refresh()]);
    assert.equal(metadataRequests(), 2, 'concurrent refreshes share one request');
    await assert.rejects(cluster.topic('missing'), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  } finally {
    await dispose();
  }
});

test('markStale makes the next lookup ask the broker again', async () => {
  const { cluster, metadataRequests, dispose } = await setup();
  try {
    const before = await cluster.topic('b');
    cluster.markStale('b');
    assert.equal(cluster.cachedTopic('b'), undefined);
    assert.equal(cluster.leaderOf('b', 0), -1);
    const after = await cluster.topic('b');
    assert.equal(metadataRequests(), 2);
    assert.notEqual(after, before);
    assert.equal(cluster.leaderOf('b', 0), 0);
  } finally {
    await dispose();
  }
});

test('a connection the broker closed is replaced on next use', async () => {
  const { fake, proxy, cluster, dispose } = await setup();
  try {
    await cluster.topic('a');
    const first = await cluster.connection(0);
    assert.equal(await cluster.connection(0), first, 'an open connection is reused');
    const handshakes = (): number => fake.seen.filter((h) => h.apiKey === 18).length;
    const before = handshakes();
    proxy.cut();
    const deadline = Date.now() + 2000;
    while (first.isOpen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(first.isOpen, false);
    const second = await cluster.connection(0);
    assert.notEqual(second, first);
    assert.ok(second.isOpen);
    assert.ok(handshakes() > before, 'a new connection negotiated versions');
    cluster.markStale('a');
    assert.equal((await cluster.topic('a')).partitions.length, 3, 'requests flow on the new connection');
  } finally {
    await dispose();
  }
});

test('reconnect delays grow with consecutive failures, up to the cap', async () => {
  // A broker that accepts and at once drops every connection: each attempt fails, and its accept
  // time is when the client dialled. The gap between two dials is the client's backoff plus the
  // failure's own time, so it is measured where the client schedules it, not from the test.
  const dials: number[] = [];
  const dropper = createServer((s) => {
    dials.push(performance.now());
    s.destroy();
  });
  await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
  const port = (dropper.address() as AddressInfo).port;
  const cluster = new Cluster({ brokers: [`127.0.0.1:${port}`], requestTimeoutMs: 1000, reconnectBackoff: { baseMs: 50, maxMs: 400 } });
  const random = Math.random;
  Math.random = () => 0.999; // every delay is (almost) its cap: 50, 100, 200, 400, 400
  try {
    for (let i = 0; i < 6; i++) await assert.rejects(cluster.anyConnection(), ConnectionError);
  } finally {
    Math.random = random;
    await cluster.close();
    await new Promise((resolve) => dropper.close(resolve));
  }
  assert.equal(dials.length, 6);
  const caps = [50, 100, 200, 400, 400];
  caps.forEach((cap, i) => {
    const gap = (dials[i + 1] as number) - (dials[i] as number);
    const delay = Math.floor(cap * 0.999);
    // The client stamps a failure with Date.now() (up to 1 ms before the failure) and a timer
    // may fire up to 1 ms early, so a dial can come 2 ms before failure + delay, never sooner.
    assert.ok(gap >= delay - 3, `dial ${i + 1} came ${gap.toFixed(1)} ms after dial ${i}, before its ${delay} ms backoff`);
    // Slack for a loaded machine; still below the next doubling, so a backoff past its cap shows.
    assert.ok(gap < cap + 200, `dial ${i + 1} came ${gap.toFixed(1)} ms after dial ${i}, expected about ${delay} ms`);
  });
});

test('fullJitterDelay lies in [0, min(max, base * 2^attempt)) and grows with the attempt (property)', () => {
  fc.assert(fc.property(
    fc.integer({ min: -3, max: 80 }),
    fc.integer({ min: 1, max: 10_000 }),
    fc.integer({ min: 1, max: 1_000_000 }),
    fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    (attempt, baseMs, maxMs, r) => {
      const cap = Math.min(maxMs, baseMs * 2 ** Math.max(attempt, 0));
      const d = fullJitterDelay(attempt, { baseMs, maxMs }, () => r);
      assert.ok(Number.isInteger(d) && d >= 0 && d < cap, `${d} outside [0, ${cap})`);
      const next = fullJitterDelay(attempt + 1, { baseMs, maxMs }, () => r);
      assert.ok(next >= d && next <= maxMs, `attempt ${attempt + 1}: ${next} < ${d} or above ${maxMs}`);
    },
  ));
});
