// The CLI in-process (runCli with captured output): topic verbs through the admin client against a
// fake broker holding topics in memory, Kafka error names and exit codes, usage errors, config
// print, and the ready line of `start`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../../src/cli/main.js';
import { readyLine } from '../../../src/cli/start.js';
import type { CliIo } from '../../../src/cli/io.js';
import { resolveConfig } from '../../../src/config.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { CreateTopicsApi } from '../../../src/protocol/apis/create_topics.js';
import { DeleteTopicsApi } from '../../../src/protocol/apis/delete_topics.js';
import { DescribeConfigsApi } from '../../../src/protocol/apis/describe_configs.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataResponseTopic } from '../../../src/protocol/apis/metadata.js';
import { FakeBroker, respond } from '../client/fake_broker.js';
import type { FakeHandler } from '../client/fake_broker.js';

interface StoredTopic { partitions: number; rf: number; configs: Record<string, string> }

const NO_OPS = -2147483648;
const TOPIC_ID = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

/** A fake broker keeping topics in a map; -1 partitions/RF become 4/1 like broker defaults. */
function topicBroker(topics: Map<string, StoredTopic>): Map<number, FakeHandler> {
  const metadataTopic = (name: string): MetadataResponseTopic => {
    const t = topics.get(name);
    return {
      errorCode: t === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : 0, name, topicId: TOPIC_ID, isInternal: false,
      partitions: Array.from({ length: t?.partitions ?? 0 }, (_, i) => ({
        errorCode: 0, partitionIndex: i, leaderId: 0, leaderEpoch: 0, replicaNodes: [0], isrNodes: [0], offlineReplicas: [],
      })),
      topicAuthorizedOperations: NO_OPS,
    };
  };
  return new Map<number, FakeHandler>([
    [CreateTopicsApi.key, (h, r) => {
      const req = CreateTopicsApi.decodeRequest(h.apiVersion, r);
      return respond(CreateTopicsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => {
          const exists = topics.has(t.name);
          const stored = { partitions: t.numPartitions < 0 ? 4 : t.numPartitions, rf: t.replicationFactor < 0 ? 1 : t.replicationFactor, configs: Object.fromEntries(t.configs.map((c) => [c.name, c.value ?? ''])) };
          if (!exists) topics.set(t.name, stored);
          return {
            name: t.name, topicId: TOPIC_ID, errorCode: exists ? ErrorCode.TOPIC_ALREADY_EXISTS : 0,
            errorMessage: exists ? `Topic '${t.name}' already exists.` : null, topicConfigErrorCode: 0,
            numPartitions: stored.partitions, replicationFactor: stored.rf, configs: [],
          };
        }),
      });
    }],
    [DeleteTopicsApi.key, (h, r) => {
      const req = DeleteTopicsApi.decodeRequest(h.apiVersion, r);
      const names = h.apiVersion >= 6 ? req.topics.map((t) => t.name ?? '') : req.topicNames;
      return respond(DeleteTopicsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        responses: names.map((name) => ({
          name, topicId: TOPIC_ID, errorCode: topics.delete(name) ? 0 : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null,
        })),
      });
    }],
    [MetadataApi.key, (h, r) => {
      const req = MetadataApi.decodeRequest(h.apiVersion, r);
      const all = req.topics === null || (h.apiVersion === 0 && req.topics.length === 0);
      const names = all ? [...topics.keys()] : (req.topics ?? []).map((t) => t.name ?? '');
      return respond(MetadataApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0, brokers: [{ nodeId: 0, host: '127.0.0.1', port: 9092, rack: null }], clusterId: 'c',
        controllerId: 0, topics: names.map(metadataTopic), clusterAuthorizedOperations: NO_OPS,
      });
    }],
    [DescribeConfigsApi.key, (h, r) => {
      const req = DescribeConfigsApi.decodeRequest(h.apiVersion, r);
      return respond(DescribeConfigsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        results: req.resources.map((res) => ({
          errorCode: 0, errorMessage: null, resourceType: res.resourceType, resourceName: res.resourceName,
          configs: Object.entries(topics.get(res.resourceName)?.configs ?? {}).map(([name, value]) => ({
            name, value, readOnly: false, isDefault: false, configSource: 1, isSensitive: false, synonyms: [], configType: 0, documentation: null,
          })),
        })),
      });
    }],
  ]);
}

interface Run { code: number; out: string; err: string }

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, out: (t) => out.push(t), err: (t) => err.push(t) };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

test('topic verbs round-trip through the admin client', async () => {
  const topics = new Map<string, StoredTopic>();
  const fake = await FakeBroker.start({ handlers: topicBroker(topics) });
  const brokers = ['--brokers', `127.0.0.1:${fake.port}`];
  try {
    let r = await cli(['topic', 'create', 'orders', '--partitions', '3', '--config', 'retention.ms=1000', '--config', 'cleanup.policy=delete', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), { name: 'orders', topicId: TOPIC_ID, partitions: 3, replicationFactor: 1 });
    assert.deepEqual(topics.get('orders'), { partitions: 3, rf: 1, configs: { 'retention.ms': '1000', 'cleanup.policy': 'delete' } });

    r = await cli(['topic', 'create', 'logs', ...brokers]);
    assert.equal(r.out, 'created topic logs (4 partitions, replication factor 1)');

    r = await cli(['topic', 'create', 'orders', ...brokers]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^sluice: TOPIC_ALREADY_EXISTS .*already exists/);

    r = await cli(['topic', 'list', ...brokers]);
    assert.equal(r.code, 0);
    assert.deepEqual(r.out.split('\n').map((l) => l.split(/\s+/).slice(0, 3)), [['NAME', 'PARTITIONS', 'REPLICAS'], ['logs', '4', '1'], ['orders', '3', '1']]);

    r = await cli(['topic', 'describe', 'orders', ...brokers, '--format', 'json']);
    const d = JSON.parse(r.out) as { partitionDetails: { partition: number; isr: number[] }[]; configs: { name: string; value: string; source: string }[] };
    assert.deepEqual(d.partitionDetails.map((p) => p.partition), [0, 1, 2]);
    assert.deepEqual(d.configs.map((c) => [c.name, c.value, c.source]), [['cleanup.policy', 'delete', 'DYNAMIC_TOPIC_CONFIG'], ['retention.ms', '1000', 'DYNAMIC_TOPIC_CONFIG']]);

    r = await cli(['topic', 'describe', 'orders', ...brokers]);
    assert.match(r.out, /^partitions\s+3$/m);
    assert.match(r.out, /^PARTITION\s+LEADER\s+EPOCH\s+REPLICAS\s+ISR\s+OFFLINE\s+STATUS\n0\s+0\s+0\s+\[0\]\s+\[0\]\s+\[\]\s+ok$/m);
    assert.match(r.out, /^retention\.ms\s+1000\s+DYNAMIC_TOPIC_CONFIG\s+no$/m);

    r = await cli(['topic', 'describe', 'nope', ...brokers]);
    assert.equal(r.code, 1);
    assert.match(r.err, /UNKNOWN_TOPIC_OR_PARTITION/);

    r = await cli(['topic', 'delete', 'orders', ...brokers]);
    assert.equal(r.out, 'deleted topic orders');
    assert.ok(!topics.has('orders'));
    r = await cli(['topic', 'delete', 'orders', ...brokers]);
    assert.equal(r.code, 1);
    assert.match(r.err, /UNKNOWN_TOPIC_OR_PARTITION/);
  } finally {
    await fake.stop();
  }
});

test('old API versions (Metadata v0, CreateTopics v4, DeleteTopics v1, DescribeConfigs v0) work', async () => {
  const topics = new Map<string, StoredTopic>();
  const advertise = new Map<number, [number, number]>([
    [MetadataApi.key, [0, 0]], [CreateTopicsApi.key, [0, 4]], [DeleteTopicsApi.key, [0, 1]], [DescribeConfigsApi.key, [0, 0]],
  ]);
  const fake = await FakeBroker.start({ handlers: topicBroker(topics), advertise });
  const brokers = ['--brokers', `127.0.0.1:${fake.port}`];
  try {
    let r = await cli(['topic', 'create', 'a', '--partitions', '2', '--replication-factor', '1', '--config', 'x=1', ...brokers]);
    assert.equal(r.out, 'created topic a', r.err); // v4 answers carry no partition count
    r = await cli(['topic', 'list', ...brokers, '--format', 'json']);
    assert.deepEqual(JSON.parse(r.out), [{
      name: 'a', topicId: '00000000000000000000000000000000', internal: false, partitions: 2, replicationFactor: 1, underReplicated: 0, leaderless: 0,
    }]);
    r = await cli(['topic', 'describe', 'a', ...brokers, '--format', 'json']);
    assert.deepEqual((JSON.parse(r.out) as { configs: unknown }).configs, [{ name: 'x', value: '1', source: 'DYNAMIC_TOPIC_CONFIG', readOnly: false, sensitive: false }]);
    r = await cli(['topic', 'delete', 'a', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.equal(topics.size, 0);
    assert.deepEqual(fake.seen.filter((h) => h.apiKey !== 18).map((h) => [h.apiKey, h.apiVersion]).sort(), [[19, 4], [20, 1], [3, 0], [3, 0], [32, 0]].sort());
  } finally {
    await fake.stop();
  }
});

test('--brokers defaults to the resolved kafka-addr', async () => {
  const topics = new Map([['t', { partitions: 1, rf: 1, configs: {} }]]);
  const fake = await FakeBroker.start({ handlers: topicBroker(topics) });
  try {
    const r = await cli(['topic', 'list', '--format', 'json'], { SLUICE_KAFKA_ADDR: `127.0.0.1:${fake.port}` });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual((JSON.parse(r.out) as { name: string }[]).map((t) => t.name), ['t']);
  } finally {
    await fake.stop();
  }
});

test('usage errors exit 2 before any network traffic; unreachable brokers exit 1', async () => {
  for (const argv of [
    ['topic', 'create'],
    ['topic', 'create', 'a', '--partitions', 'x'],
    ['topic', 'create', 'a', '--config', 'novalue'],
    ['topic', 'list', '--format', 'xml'],
    ['topic', 'frobnicate'],
    ['start', '--bogus'],
    ['config', 'print', '--shards', '0'],
    ['nope'],
  ]) {
    const r = await cli([...argv, '--brokers', '127.0.0.1:1']);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
  }
  const r = await cli(['topic', 'list', '--brokers', '127.0.0.1:1']);
  assert.equal(r.code, 1);
  assert.match(r.err, /no broker at 127\.0\.0\.1:1: is `sluice start` running\? \(set --brokers HOST:PORT\)/);
});

test('help exits 0 for every command', async () => {
  for (const argv of [['--help'], ['start', '--help'], ['config', 'print', '-h'], ['topic', '--help'], ['topic', 'create', '--help']]) {
    const r = await cli(argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.match(r.out, /^Usage: sluice/);
  }
  assert.match((await cli(['start', '--help'])).out, /--max-inflight-requests-per-connection N/);
});

test('version and -V are --version', async () => {
  const expected = (await cli(['--version'])).out;
  for (const argv of [['version'], ['-V']]) assert.equal((await cli(argv)).out, expected, argv.join(' '));
});

test('config print shows values and sources', async () => {
  const env = { SLUICE_SHARDS: '3' };
  let r = await cli(['config', 'print', '--flush', '20', '--format', 'json'], env);
  assert.deepEqual(JSON.parse(r.out), { shards: { value: 3, source: 'env' }, flush: { value: '20', source: 'flag' } });
  r = await cli(['config', 'print', '--effective'], env);
  assert.match(r.out, /^data-dir\s+\.\/sluice-data\s+default$/m);
  assert.match(r.out, /^shards\s+3\s+env$/m);
});

test('boolean settings also take a separate true/false value', async () => {
  let r = await cli(['config', 'print', '--auto-create-topics', 'false', '--format', 'json'], {});
  assert.deepEqual(JSON.parse(r.out), { 'auto-create-topics': { value: false, source: 'flag' } });
  r = await cli(['config', 'print', '--no-auto-create-topics', '--auto-create-topics', 'true', '--format', 'json'], {});
  assert.deepEqual(JSON.parse(r.out), { 'auto-create-topics': { value: true, source: 'flag' } }, 'the later flag wins');
  r = await cli(['config', 'print', '--auto-create-topics', 'nope'], {});
  assert.equal(r.code, 2, 'any other word is still an unexpected argument');
});

test('the ready line names addresses, data dir, shards and flush policy', () => {
  const { config } = resolveConfig(['--kafka-addr', '127.0.0.1:0', '--data-dir', '/tmp/a b', '--shards', '2', '--flush', '5'], {});
  assert.equal(
    readyLine(config, { kafkaPort: 40001, adminPort: 9644 }),
    'sluice ready kafka=127.0.0.1:40001 admin=127.0.0.1:9644 data-dir="/tmp/a b" shards=2 flush=5ms',
  );
});
