// `sluice/testing` end to end: startBroker() in this process serves kafkajs (a group consumes
// what was produced, Metadata advertises the port really bound), two brokers run at once each
// with its own data, stop() removes the temp dir it made (and keeps a given one), a failed start
// (bad options or a taken port) leaves no temp dir, a process that started and stopped brokers
// exits on its own, and the README example passes under `node --test` in a package of its own
// that depends on sluice by `file:`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kafka as KafkaType } from 'kafkajs';
import { ConfigError, startBroker, type TestBroker } from '../../src/testing/index.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';

/** The package root, from this compiled file (dist/test/e2e/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TESTING_ENTRY = new URL('../../src/testing/index.js', import.meta.url).href;
const CHILD_TIMEOUT_MS = 120_000;

interface ChildRun {
  code: number | null;
  signal: string | null;
  output: string;
}

/** Runs node with `args` in `cwd`, outside this test runner's context; the timeout kills it. */
function runNode(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<ChildRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  // A nested `node --test` would otherwise report to this runner instead of printing its results.
  delete childEnv['NODE_TEST_CONTEXT'];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, env: childEnv, timeout: CHILD_TIMEOUT_MS, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, signal: err?.signal ?? null, output: `${stdout}\n${stderr}` });
    });
  });
}

/** Produces `values` to `topic`, then reads them back through consumer group `group`. */
async function roundTrip(kafka: KafkaType, topic: string, group: string, values: readonly string[]): Promise<string[]> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value?.toString() ?? '');
          if (seen.length >= values.length) resolve();
        },
      });
    });
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

const tempDirs = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('sluice-test-'));

describe('startBroker', () => {
  let broker: TestBroker;
  let kafka: KafkaType;

  before(async () => {
    broker = await startBroker();
    kafka = kafkajsClient(broker.bootstrap, 'sluice-testing');
  });

  after(() => broker?.stop());

  it('serves kafkajs: a group consumes what was produced, and Metadata advertises the bound port', { timeout: 60_000 }, async () => {
    const port = Number(broker.bootstrap.split(':')[1]);
    assert.ok(port > 0, broker.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      assert.deepEqual(cluster.brokers.map((b) => `${b.host}:${b.port}`), [broker.bootstrap]);
    } finally {
      await admin.disconnect();
    }
    const values = Array.from({ length: 20 }, (_, i) => `order-${i}`);
    assert.deepEqual(await roundTrip(kafka, 'orders', 'billing', values), values);
    const health = await fetch(`${broker.adminUrl}/v1/health`);
    assert.equal(health.status, 200);
  });
});

describe('two brokers in one process', () => {
  let a: TestBroker;
  let b: TestBroker;

  before(async () => {
    [a, b] = await Promise.all([startBroker(), startBroker()]);
  });

  after(() => Promise.all([a?.stop(), b?.stop()]));

  it('run at once, each on its own ports with its own data and metrics', { timeout: 90_000 }, async () => {
    assert.notEqual(a.bootstrap, b.bootstrap);
    assert.notEqual(a.adminUrl, b.adminUrl);
    assert.notEqual(a.dataDir, b.dataDir);
    const [fromA, fromB] = await Promise.all([
      roundTrip(kafkajsClient(a.bootstrap, 'client-a'), 'events', 'g', ['a0', 'a1', 'a2']),
      roundTrip(kafkajsClient(b.bootstrap, 'client-b'), 'events', 'g', ['b0']),
    ]);
    assert.deepEqual(fromA, ['a0', 'a1', 'a2']);
    assert.deepEqual(fromB, ['b0']);
    // Each registry counts only its own broker's produced messages.
    const produced = async (t: TestBroker): Promise<number> => {
      const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => /^sluice_messages_in_total(\{[^}]*topic="events"[^}]*\})? /.test(l));
      return line === undefined ? -1 : Number(line.split(' ').at(-1));
    };
    assert.deepEqual([await produced(a), await produced(b)], [3, 1]);
  });
});

describe('stop', () => {
  it('removes the temp dir it made, keeps a given data dir, and may be called twice', { timeout: 60_000 }, async () => {
    const owned = await startBroker();
    assert.ok(existsSync(join(owned.dataDir, 'meta')));
    const first = owned.stop();
    assert.equal(owned.stop(), first);
    await first;
    assert.equal(existsSync(owned.dataDir), false);

    const given = mkdtempSync(join(tmpdir(), 'sluice-given-'));
    try {
      const kept = await startBroker({ dataDir: given });
      assert.equal(kept.dataDir, given);
      await kept.stop();
      assert.ok(existsSync(join(given, 'meta', 'cluster_id')));
    } finally {
      rmSync(given, { recursive: true, force: true });
    }
  });

  it('bad options fail with ConfigError, a taken port with EADDRINUSE; neither leaves its temp dir', { timeout: 60_000 }, async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const before = tempDirs();
    try {
      await assert.rejects(startBroker({ partitions: 0 }), (err: unknown) => err instanceof ConfigError && err.issues[0]?.key === 'num-partitions');
      await assert.rejects(startBroker({ port }), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
      assert.deepEqual(tempDirs().filter((d) => !before.includes(d)), []);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('leaves no handles: a process that started, failed to start and stopped brokers exits by itself', { timeout: CHILD_TIMEOUT_MS + 10_000 }, async () => {
    const script = `
      import { createServer } from 'node:net';
      import { startBroker } from ${JSON.stringify(TESTING_ENTRY)};
      const one = await startBroker();
      const two = await startBroker({ shards: 2 });
      await Promise.all([one.stop(), two.stop()]);
      const blocker = createServer();
      await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      await startBroker({ port: blocker.address().port }).then(() => { throw new Error('started on a taken port'); }, () => undefined);
      blocker.close();
      console.log('stopped');
    `;
    // A file, not `-e`: shard workers inherit the process's execArgv, and `--input-type` is refused there.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-handles-'));
    const file = join(dir, 'start_stop.mjs');
    writeFileSync(file, script);
    const run = await runNode([file], ROOT).finally(() => rmSync(dir, { recursive: true, force: true }));
    assert.equal(run.signal, null, `killed at the timeout (handles left open):\n${run.output}`);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /stopped/);
  });
});

describe('the README example, in a package of its own', () => {
  let pkg: string;

  before(() => {
    pkg = mkdtempSync(join(tmpdir(), 'sluice-embedder-'));
  });

  after(() => rmSync(pkg, { recursive: true, force: true }));

  it('passes under node --test, importing sluice/testing through a file: dependency', { timeout: CHILD_TIMEOUT_MS + 10_000 }, async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const example = /<!-- sluice\/testing example:[^\n]*-->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example !== undefined, 'README.md holds the marked sluice/testing example');
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({
      name: 'orders-app', version: '1.0.0', private: true, type: 'module',
      dependencies: { sluice: `file:${ROOT}` }, devDependencies: { kafkajs: '^2.2.4' },
    }, null, 2));
    // What `npm install` makes of those dependencies, without a registry: links into node_modules.
    mkdirSync(join(pkg, 'node_modules'));
    symlinkSync(ROOT, join(pkg, 'node_modules', 'sluice'), 'dir');
    const kafkajsDir = dirname(realpathSync(join(ROOT, 'node_modules', 'kafkajs', 'package.json')));
    symlinkSync(kafkajsDir, join(pkg, 'node_modules', 'kafkajs'), 'dir');
    mkdirSync(join(pkg, 'test'));
    writeFileSync(join(pkg, 'test', 'orders.test.js'), example);
    const run = await runNode(['--test', 'test/'], pkg);
    assert.equal(run.signal, null, `killed at the timeout:\n${run.output}`);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /# pass 1\b/);
    assert.match(run.output, /# fail 0\b/);
  });
});
