// Admin HTTP: health status codes (503 too while something is failing, e.g. the quorum), metrics
// text fed by shard snapshots (and served even when snapshots fail), actor listing, /v1/quorum
// (404 on a node without the quorum), the reports (404 without them), /v1/traffic, the console's
// static files with their security headers (and a clear 404 when they are missing), 404/405,
// the bearer token (401 with WWW-Authenticate on data paths, a bare health status, the console's
// files public, reload), and closing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BearerToken } from '../../../src/net/listener_security.js';
import { createLogger } from '../../../src/common/logger.js';
import { BrokerMetrics } from '../../../src/metrics/metrics.js';
import type { ShardSnapshot } from '../../../src/actors/shard_snapshot.js';
import { BucketHistogram, DISK_FLUSH_BOUNDS } from '../../../src/common/bucket_histogram.js';
import { startAdminServer } from '../../../src/net/admin_http.js';
import type { AdminServerOptions, HealthStatus } from '../../../src/net/admin_http.js';

const snapshot: ShardSnapshot = {
  shard: 0,
  loopDelay: { samples: 100, meanMs: 1, p99Ms: 2, maxMs: 3, ownP99Ms: 1, ownMaxMs: 2, cpuWaitRatio: 0.1 },
  toShard: { capacity: 64, usedBytes: 0, messagesWritten: 0, messagesRead: 0, consumerWakeups: 0, producerWakeups: 0, consumerWaits: 0, producerWaits: 0 },
  toMain: { capacity: 64, usedBytes: 0, messagesWritten: 0, messagesRead: 0, consumerWakeups: 0, producerWakeups: 0, consumerWaits: 0, producerWaits: 0 },
  partitions: [{ topic: 't', partition: 0, sizeBytes: 1, logStartOffset: 0, logEndOffset: 12, highWatermark: 12 }],
  handled: 0,
  busyMs: 0,
  lastError: null,
  storageErrors: 0,
  rescannedSegments: 0,
  uncommittedProduceBytesPeak: 0,
  uncommittedProduceWaits: 0,
  groups: { byState: {}, members: 0, rebalances: {}, rebalanceMs: [], committed: [] },
  traffic: { linkBytesIn: 0, linkBytesOut: 0, replicaBytesFetched: 0, logBytesWritten: 0 },
  logFlush: { durations: new BucketHistogram(DISK_FLUSH_BOUNDS).take(), queueWait: new BucketHistogram(DISK_FLUSH_BOUNDS).take() },
  gcPauses: [],
};

async function withServer(
  overrides: { snapshots?: () => Promise<ShardSnapshot[]>; quorum?: () => unknown; reports?: AdminServerOptions['reports']; consoleDir?: string; token?: BearerToken },
  body: (base: string, setStatus: (s: HealthStatus, failing?: string[]) => void, reload: () => void) => Promise<void>,
): Promise<void> {
  let status: HealthStatus = 'starting';
  let failing: string[] = [];
  const metrics = new BrokerMetrics();
  const server = await startAdminServer({
    host: '127.0.0.1',
    port: 0,
    logger: createLogger('silent'),
    metrics,
    health: () => ({ status, failing, details: { shards: 2 } }),
    actors: async () => [{ topic: 't', partition: 0, shard: 0 }],
    snapshots: overrides.snapshots ?? (async () => [snapshot]),
    collectTimeoutMs: 200,
    ...(overrides.quorum === undefined ? {} : { quorum: overrides.quorum }),
    ...(overrides.reports === undefined ? {} : { reports: overrides.reports }),
    ...(overrides.consoleDir === undefined ? {} : { consoleDir: overrides.consoleDir }),
    ...(overrides.token === undefined ? {} : { token: overrides.token }),
  });
  try {
    await body(`http://127.0.0.1:${server.port}`, (s, f = []) => { status = s; failing = f; }, () => server.reload());
  } finally {
    await server.close();
    metrics.close();
  }
}

test('health answers 503 until ready and while draining', async () => {
  await withServer({}, async (base, setStatus) => {
    let res = await fetch(`${base}/v1/health`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: 'starting', shards: 2 });
    setStatus('ready');
    res = await fetch(`${base}/v1/health?verbose=1`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'ready');
    setStatus('draining');
    assert.equal((await fetch(`${base}/v1/health`)).status, 503);
  });
});

test('a ready node with something failing answers 503 and names it', async () => {
  await withServer({}, async (base, setStatus) => {
    setStatus('ready', ['quorum']);
    const res = await fetch(`${base}/v1/health`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: 'ready', failing: ['quorum'], shards: 2 });
  });
});

test('/v1/quorum serves the quorum report, or 404 with a reason on a node without the quorum', async () => {
  await withServer({}, async (base) => {
    const res = await fetch(`${base}/v1/quorum`);
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { error: string }).error, /does not run the metadata quorum/);
  });
  await withServer({ quorum: () => ({ nodeId: 1, role: 'leader' }) }, async (base) => {
    const res = await fetch(`${base}/v1/quorum`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { nodeId: 1, role: 'leader' });
  });
});

test('metrics applies fresh shard snapshots and serves Prometheus text', async () => {
  await withServer({}, async (base) => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /^sluice_partition_log_end_offset\{topic="t",partition="0"\} 12$/m);
    assert.match(text, /^# TYPE sluice_requests_total counter$/m);
  });
});

test('metrics still answers when shards do not', async () => {
  const never = () => new Promise<ShardSnapshot[]>(() => undefined);
  await withServer({ snapshots: never }, async (base) => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /^sluice_connections 0$/m);
    assert.doesNotMatch(text, /topic="t"/);
  });
});

test('actors are listed as JSON; unknown paths 404, other methods 405', async () => {
  await withServer({}, async (base) => {
    const res = await fetch(`${base}/v1/actors`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [{ topic: 't', partition: 0, shard: 0 }]);
    assert.equal((await fetch(`${base}/v1/nothing`)).status, 404);
    assert.equal((await fetch(`${base}/console/../package.json`)).status, 404);
    assert.equal((await fetch(`${base}/console/index.html`)).status, 404);
    const post = await fetch(`${base}/v1/health`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });
});

test('a busy port is reported as a startup error', async (t) => {
  await withServer({}, async (base) => {
    const port = Number(new URL(base).port);
    const metrics = new BrokerMetrics();
    t.after(() => metrics.close());
    await assert.rejects(
      startAdminServer({
        host: '127.0.0.1', port, logger: createLogger('silent'), metrics,
        health: () => ({ status: 'ready', failing: [], details: {} }), actors: async () => [], snapshots: async () => [],
      }),
      /EADDRINUSE/,
    );
  });
});

test('reports answer 404 without a source, JSON with one', async () => {
  await withServer({}, async (base) => {
    for (const path of ['/v1/cluster', '/v1/topics', '/v1/groups', '/v1/reassignments']) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 404, path);
      assert.match(((await res.json()) as { error: string }).error, /does not report/);
    }
  });
  const reports: AdminServerOptions['reports'] = {
    cluster: () => ({ clusterId: 'c', nodeId: 1, controllerId: 1, brokers: [] }),
    topics: async () => ({ topics: [], totalPartitions: 0, truncated: false }),
    groups: async () => ({ groups: [], truncated: false }),
    reassignments: () => [],
  };
  await withServer({ reports }, async (base) => {
    assert.deepEqual(await (await fetch(`${base}/v1/cluster`)).json(), { clusterId: 'c', nodeId: 1, controllerId: 1, brokers: [] });
    assert.deepEqual(await (await fetch(`${base}/v1/topics`)).json(), { topics: [], totalPartitions: 0, truncated: false });
    assert.deepEqual(await (await fetch(`${base}/v1/groups`)).json(), { groups: [], truncated: false });
    assert.deepEqual(await (await fetch(`${base}/v1/reassignments`)).json(), []);
  });
});

test('/v1/traffic gives cumulative totals and the produce latency buckets', async () => {
  await withServer({}, async (base) => {
    const body = (await (await fetch(`${base}/v1/traffic`)).json()) as {
      atMs: number; bytesIn: number; produceSeconds: { le: number[]; counts: number[]; count: number };
    };
    assert.equal(body.bytesIn, 0);
    assert.ok(body.atMs > 0);
    // prom-client reports a labelled histogram once it has observations.
    assert.deepEqual(body.produceSeconds, { le: [], counts: [], count: 0 });
  });
});

test('the console is served at / with a script-src self CSP; a missing file answers 404 naming it', async () => {
  await withServer({}, async (base) => {
    const res = await fetch(`${base}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self';/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(await res.text(), /<script type="module" src="\/console\/console.js">/);
    const uplot = await fetch(`${base}/console/vendor/uPlot.esm.js`);
    assert.equal(uplot.status, 200);
    assert.match(uplot.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(await uplot.text(), /export \{ uPlot as default \}/);
  });
  await withServer({ consoleDir: '/nonexistent-console' }, async (base) => {
    const res = await fetch(`${base}/console/console.js`);
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { error: string }).error, /console\/console.js is missing/);
  });
});

test('with a token: data paths answer 401 without it, health only its status, console files to anyone; reload takes a new token', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-admin-token-'));
  const file = join(dir, 'token');
  writeFileSync(file, 's3cret-token\n');
  try {
    await withServer({ token: new BearerToken(file) }, async (base, setStatus, reload) => {
      setStatus('ready');
      const bearer = (t: string): RequestInit => ({ headers: { authorization: `Bearer ${t}` } });
      for (const path of ['/metrics', '/v1/actors', '/v1/traffic', '/v1/quorum', '/v1/topics']) {
        for (const init of [{}, bearer('wrong'), bearer('s3cret-token-and-more'), { headers: { authorization: 'Basic czNjcmV0LXRva2Vu' } }]) {
          const res = await fetch(`${base}${path}`, init);
          assert.equal(res.status, 401, `${path} ${JSON.stringify(init)}`);
          assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
          assert.match(((await res.json()) as { error: string }).error, /Authorization: Bearer/);
        }
      }
      assert.equal((await fetch(`${base}/v1/actors`, bearer('s3cret-token'))).status, 200);
      assert.equal((await fetch(`${base}/metrics`, { headers: { authorization: 'bearer  s3cret-token' } })).status, 200, 'the scheme is case-insensitive');
      const bare = await fetch(`${base}/v1/health`);
      assert.equal(bare.status, 200);
      assert.deepEqual(await bare.json(), { status: 'ready' }, 'no details without the token');
      assert.deepEqual(await (await fetch(`${base}/v1/health`, bearer('s3cret-token'))).json(), { status: 'ready', shards: 2 });
      assert.notEqual((await fetch(`${base}/`)).status, 401, 'the console page loads, then asks for the token');

      writeFileSync(file, 'rotated\n');
      reload();
      assert.equal((await fetch(`${base}/v1/actors`, bearer('s3cret-token'))).status, 401);
      assert.equal((await fetch(`${base}/v1/actors`, bearer('rotated'))).status, 200);
      writeFileSync(file, '  \n');
      reload();
      assert.equal((await fetch(`${base}/v1/actors`, bearer('rotated'))).status, 200, 'an empty token file keeps the previous token');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
