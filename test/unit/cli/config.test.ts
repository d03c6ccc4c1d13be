// Config resolution: precedence flag > env > file > default, per-key and cross-key validation,
// config-file parsing and reported sources.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ConfigError, CONFIG_FLAGS, advertisedAdminAddress, advertisedKafkaEndpoint, describeConfig, resolveConfig } from '../../../src/config.js';

// The config files' directories, removed once the file's tests are done.
const configDirs: string[] = [];
after(() => {
  for (const dir of configDirs) rmSync(dir, { recursive: true, force: true });
});

function configFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
  configDirs.push(dir);
  const path = join(dir, 'sluice.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function issuesOf(fn: () => unknown): ConfigError['issues'] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.issues;
  }
  assert.fail('expected a ConfigError');
}

test('defaults apply when nothing is set', () => {
  const { config, sources } = resolveConfig([], {});
  assert.equal(config.dataDir, './sluice-data');
  assert.equal(config.kafkaHost, '127.0.0.1');
  assert.equal(config.kafkaPort, 9092);
  assert.equal(config.adminPort, 9644);
  assert.deepEqual(config.flush, { kind: 'always' });
  assert.equal(config.messageMaxBytes, 1048588);
  assert.equal(config.logRetentionBytes, -1);
  assert.equal(config.autoCreateTopics, true);
  assert.ok(config.shards >= 1);
  assert.ok(Object.values(sources).every((s) => s === 'default'));
});

test('flag beats env beats file beats default, per key', () => {
  const file = configFile({ 'data-dir': '/from-file', 'node-id': 3, flush: '10', shards: 2 });
  const env = { SLUICE_DATA_DIR: '/from-env', SLUICE_NODE_ID: '4', SLUICE_CONFIG: file };
  const { config, sources } = resolveConfig(['--data-dir', '/from-flag'], env);
  assert.equal(config.dataDir, '/from-flag');
  assert.equal(sources.dataDir, 'flag');
  assert.equal(config.nodeId, 4);
  assert.equal(sources.nodeId, 'env');
  assert.deepEqual(config.flush, { kind: 'interval', ms: 10 });
  assert.equal(sources.flush, 'file');
  assert.equal(config.shards, 2);
  assert.equal(sources.logLevel, 'default');
});

test('--config flag names the file and wins over SLUICE_CONFIG', () => {
  const a = configFile({ 'node-id': 1 });
  const b = configFile({ 'node-id': 2 });
  const { config } = resolveConfig(['--config', b], { SLUICE_CONFIG: a });
  assert.equal(config.nodeId, 2);
});

test('flag forms: --k=v, --k v, bare and negated booleans, last one wins', () => {
  const { config, sources } = resolveConfig(
    ['--kafka-addr=10.0.0.5:19092', '--shards', '3', '--no-auto-create-topics', '--shards=4'],
    {},
  );
  assert.equal(config.kafkaHost, '10.0.0.5');
  assert.equal(config.kafkaPort, 19092);
  assert.equal(sources.kafkaPort, 'flag');
  assert.equal(config.shards, 4);
  assert.equal(config.autoCreateTopics, false);
  assert.equal(resolveConfig(['--auto-create-topics'], { SLUICE_AUTO_CREATE_TOPICS: 'false' }).config.autoCreateTopics, true);
});

test('flush policies and IPv6 addresses parse', () => {
  assert.deepEqual(resolveConfig(['--flush', 'never'], {}).config.flush, { kind: 'never' });
  assert.deepEqual(resolveConfig(['--flush', '250'], {}).config.flush, { kind: 'interval', ms: 250 });
  const { config } = resolveConfig(['--admin-addr', '[::1]:0'], {});
  assert.equal(config.adminHost, '::1');
  assert.equal(config.adminPort, 0);
  assert.equal(config.adminAddr, '[::1]:0');
});

test('every bad value is reported at once, naming key and origin', () => {
  const file = configFile({ 'log-level': 'loud' });
  const issues = issuesOf(() =>
    resolveConfig(['--kafka-addr', 'localhost', '--shards', '0', '--config', file], {
      SLUICE_FLUSH: 'sometimes',
      SLUICE_MAX_CONNECTIONS: '1.5',
    }),
  );
  const byKey = new Map(issues.map((i) => [i.key, i]));
  assert.equal(byKey.get('kafka-addr')?.source, 'flag');
  assert.equal(byKey.get('kafka-addr')?.origin, '--kafka-addr');
  assert.equal(byKey.get('shards')?.source, 'flag');
  assert.equal(byKey.get('flush')?.origin, 'SLUICE_FLUSH');
  assert.equal(byKey.get('max-connections')?.source, 'env');
  assert.equal(byKey.get('log-level')?.source, 'file');
  assert.match(byKey.get('log-level')?.origin ?? '', /sluice\.json/);
  assert.equal(issues.length, 5);
});

test('ports out of range, unknown flags and missing values are rejected', () => {
  assert.equal(issuesOf(() => resolveConfig(['--kafka-addr', '1.2.3.4:65536'], {}))[0]?.key, 'kafka-addr');
  assert.equal(issuesOf(() => resolveConfig(['--data-dri', 'x'], {}))[0]?.message, 'unknown flag');
  assert.equal(issuesOf(() => resolveConfig(['--shards'], {}))[0]?.message, 'missing value');
  assert.equal(issuesOf(() => resolveConfig(['stray'], {}))[0]?.message, 'unexpected argument');
  assert.equal(issuesOf(() => resolveConfig(['--no-shards'], {}))[0]?.message, 'unknown flag');
});

test('cross-key relations are checked and blame the key that was set', () => {
  const ring = issuesOf(() => resolveConfig(['--ring-bytes', '1048576'], {}));
  assert.equal(ring.length, 1);
  assert.equal(ring[0]?.key, 'ring-bytes');
  assert.match(ring[0]?.message ?? '', /message-max-bytes .* ring-bytes\/2/);

  const partial = issuesOf(() =>
    resolveConfig([], { SLUICE_MAX_PARTIAL_REQUEST_BYTES: '1000', SLUICE_MESSAGE_MAX_BYTES: '100' }),
  );
  assert.equal(partial[0]?.key, 'max-partial-request-bytes');
  assert.equal(partial[0]?.source, 'env');

  const same = issuesOf(() => resolveConfig(['--admin-addr', '127.0.0.1:9092'], {}));
  assert.equal(same[0]?.key, 'admin-addr');
  // Two ephemeral ports on one host do not collide.
  resolveConfig(['--kafka-addr', '127.0.0.1:0', '--admin-addr', '127.0.0.1:0'], {});
});

test('ring-bytes must be a power of two', () => {
  const issues = issuesOf(() => resolveConfig(['--ring-bytes', String(3 * 2 ** 24)], {}));
  assert.equal(issues[0]?.key, 'ring-bytes');
  assert.match(issues[0]?.message ?? '', /power of two/);
  assert.doesNotThrow(() => resolveConfig(['--ring-bytes', String(2 ** 26)], {}));
});

test('the relation messageMaxBytes < ringBytes/2 holds exactly at its boundary', () => {
  fc.assert(
    fc.property(fc.integer({ min: 16, max: 30 }).map((bits) => 2 ** bits), fc.integer({ min: 1, max: 2 ** 29 + 1 }), (ring, msg) => {
      const argv = ['--ring-bytes', String(ring), '--message-max-bytes', String(msg)];
      let ok = true;
      try {
        resolveConfig(argv, {});
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        ok = false;
      }
      assert.equal(ok, msg < ring / 2 && msg < 104857600);
    }),
  );
});

test('config file problems are reported', () => {
  assert.match(issuesOf(() => resolveConfig(['--config', '/nonexistent/x.json'], {}))[0]?.message ?? '', /cannot read/);
  assert.equal(issuesOf(() => resolveConfig(['--config', configFile('[1]')], {}))[0]?.key, 'config');
  assert.match(issuesOf(() => resolveConfig(['--config', configFile('{nope')], {}))[0]?.message ?? '', /cannot read/);
  const bad = issuesOf(() => resolveConfig(['--config', configFile({ dataDir: 'x', shards: [1] })], {}));
  assert.deepEqual(bad.map((i) => i.key).sort(), ['dataDir', 'shards']);
  // JSON booleans and numbers are accepted for the matching kinds.
  const { config } = resolveConfig(['--config', configFile({ 'auto-create-topics': false, 'num-partitions': 6 })], {});
  assert.equal(config.autoCreateTopics, false);
  assert.equal(config.numPartitions, 6);
});

test('empty env values count as unset', () => {
  const { sources } = resolveConfig([], { SLUICE_DATA_DIR: '', SLUICE_CONFIG: '' });
  assert.equal(sources.dataDir, 'default');
});

test('every flag has an env twin and a default that resolves to itself', () => {
  for (const f of CONFIG_FLAGS) {
    assert.equal(f.env, `SLUICE_${f.flag.replace(/-/g, '_').toUpperCase()}`);
  }
  const argv = CONFIG_FLAGS.map((f) => `--${f.flag}=${String(f.defaultValue)}`);
  const { sources } = resolveConfig(argv, {});
  assert.ok(Object.values(sources).every((s) => s === 'flag'));
});

test('describeConfig prints every key with value and source', () => {
  const { config, sources } = resolveConfig(['--flush', '5'], {});
  const { data: json, text } = describeConfig(config, sources);
  assert.deepEqual(json.flush, { value: '5', source: 'flag' });
  assert.deepEqual(json['kafka-addr'], { value: '127.0.0.1:9092', source: 'default' });
  assert.equal(Object.keys(json).length, CONFIG_FLAGS.length);
  assert.match(text, /^flush\s+5\s+flag$/m);
  assert.equal(text.split('\n').length, CONFIG_FLAGS.length);
});

test('cluster mode: voters parse, a voter defaults to broker,controller on its own voter address', () => {
  const voters = '1@127.0.0.1:9193,2@127.0.0.1:9293,3@[::1]:9393';
  const { config, sources } = resolveConfig(['--node-id', '2', '--controller-voters', voters, '--rack', 'r2'], {});
  assert.deepEqual(config.controllerVoters, [
    { id: 1, host: '127.0.0.1', port: 9193 },
    { id: 2, host: '127.0.0.1', port: 9293 },
    { id: 3, host: '::1', port: 9393 },
  ]);
  assert.deepEqual(config.roles, ['broker', 'controller']);
  assert.equal(sources.roles, 'default');
  assert.equal(config.controllerAddr, '127.0.0.1:9293');
  assert.equal(config.controllerPort, 9293);
  assert.equal(config.rack, 'r2');
  assert.equal(config.brokerHeartbeatIntervalMs, 500);
  assert.equal(config.brokerSessionTimeoutMs, 3000);
  assert.equal(config.metadataSnapshotRecords, 10000);
  const printed = describeConfig(config, sources).text;
  assert.match(printed, /^controller-voters\s+1@127\.0\.0\.1:9193,2@127\.0\.0\.1:9293,3@\[::1\]:9393\s+flag$/m);
  assert.match(printed, /^roles\s+broker,controller\s+default$/m);
});

test('cluster mode: a node outside the voters is a broker-only observer without a controller listener', () => {
  const { config } = resolveConfig(['--node-id', '7', '--controller-voters', '1@h1:9193'], {});
  assert.deepEqual(config.roles, ['broker']);
  assert.equal(config.controllerAddr, '');
  assert.equal(config.rack, null);
});

test('single node: no voters means a one-voter quorum with no controller listener unless one is named', () => {
  const { config } = resolveConfig([], {});
  assert.deepEqual(config.controllerVoters, []);
  assert.deepEqual(config.roles, ['broker', 'controller']);
  assert.equal(config.controllerAddr, '');
  assert.equal(config.controllerPort, -1);
  const named = resolveConfig(['--controller-addr', '127.0.0.1:0'], {}).config;
  assert.equal(named.controllerHost, '127.0.0.1');
  assert.equal(named.controllerPort, 0);
});

test('cluster mode: bad voter lists and inconsistent roles are refused with the key', () => {
  const cases: [string[], string, RegExp][] = [
    [['--controller-voters', '1@h:1,1@h:2'], 'controller-voters', /appears twice/],
    [['--controller-voters', '1@h'], 'controller-voters', /HOST:PORT/],
    [['--controller-voters', 'x@h:1'], 'controller-voters', /ID@HOST:PORT/],
    [['--controller-voters', '1@h:0'], 'controller-voters', /fixed port/],
    [['--node-id', '4', '--controller-voters', '1@h:1', '--roles', 'controller'], 'roles', /not in controller-voters/],
    [['--roles', 'broker'], 'roles', /single node must be broker,controller/],
    [['--roles', 'leader'], 'roles', /must be one of/],
    [['--node-id', '4', '--controller-voters', '1@h:1', '--controller-addr', '0.0.0.0:9'], 'controller-addr', /runs no controller/],
    [['--broker-heartbeat-interval-ms', '9000'], 'broker-heartbeat-interval-ms', /less than broker-session-timeout-ms/],
  ];
  for (const [argv, key, message] of cases) {
    const issues = issuesOf(() => resolveConfig(argv, {}));
    assert.equal(issues.length, 1, `${argv.join(' ')}: ${JSON.stringify(issues)}`);
    assert.equal(issues[0]!.key, key, argv.join(' '));
    assert.match(issues[0]!.message, message, argv.join(' '));
  }
});

test('cluster mode: an explicit controller-addr binds elsewhere than the advertised voter address', () => {
  const { config } = resolveConfig(['--node-id', '1', '--controller-voters', '1@10.0.0.1:9193', '--controller-addr', '0.0.0.0:9193', '--roles', 'controller'], {});
  assert.equal(config.controllerAddr, '0.0.0.0:9193');
  assert.deepEqual(config.roles, ['controller']);
});

test('advertised Kafka address: unset advertises the listener (its bound port), set replaces both host and port', () => {
  const unset = resolveConfig(['--kafka-addr', '10.0.0.7:0'], {}).config;
  assert.equal(unset.advertisedKafkaAddr, '');
  assert.deepEqual(advertisedKafkaEndpoint(unset, 41234), { host: '10.0.0.7', port: 41234 });
  const { config, sources } = resolveConfig(['--kafka-addr', '127.0.0.1:9092'], { SLUICE_ADVERTISED_KAFKA_ADDR: 'proxy.example:19092' });
  assert.equal(config.advertisedKafkaAddr, 'proxy.example:19092');
  assert.equal(sources.advertisedKafkaAddr, 'env');
  assert.deepEqual(advertisedKafkaEndpoint(config, 9092), { host: 'proxy.example', port: 19092 });
  assert.equal(config.kafkaPort, 9092, 'the listener still binds its own address');
  const v6 = resolveConfig(['--advertised-kafka-addr', '[::1]:9093'], {}).config;
  assert.deepEqual(advertisedKafkaEndpoint(v6, 9092), { host: '::1', port: 9093 });
});

test('advertised Kafka address: an empty host, a port outside 1..65535 or a wildcard host is refused with the key', () => {
  const cases: [string, RegExp][] = [
    [':9092', /HOST:PORT/],
    ['host', /HOST:PORT/],
    ['host:0', /\[1, 65535\]/],
    ['host:65536', /out of range/],
    ['host:-1', /HOST:PORT/],
    ['0.0.0.0:9092', /wildcard/],
    ['[::]:9092', /wildcard/],
  ];
  for (const [raw, message] of cases) {
    const issues = issuesOf(() => resolveConfig(['--advertised-kafka-addr', raw], {}));
    assert.equal(issues.length, 1, `${raw}: ${JSON.stringify(issues)}`);
    assert.equal(issues[0]!.key, 'advertised-kafka-addr', raw);
    assert.equal(issues[0]!.origin, '--advertised-kafka-addr', raw);
    assert.match(issues[0]!.message, message, raw);
  }
});

test('a listener bound to a wildcard needs an advertised address: refused at start naming the flag and the fix, as Kafka does', () => {
  const refused: [string[], string, RegExp][] = [
    [['--kafka-addr', '0.0.0.0:9092'], 'kafka-addr', /listener PLAINTEXT binds the wildcard 0\.0\.0\.0:9092.*--advertised-listeners PLAINTEXT:\/\/HOST:PORT \(or --advertised-kafka-addr HOST:PORT\)/],
    [['--listeners', 'PLAINTEXT://127.0.0.1:9092,SSL://[::]:9093', '--ssl-cert-file', 'c', '--ssl-key-file', 'k'], 'listeners', /listener SSL binds the wildcard \[::\]:9093.*--advertised-listeners SSL:\/\/HOST:PORT with/],
    [['--listeners', 'PLAINTEXT://127.0.0.1:9092,OPEN://0.0.0.0:9094', '--listener-security-protocol-map', 'OPEN:PLAINTEXT', '--advertised-listeners', 'PLAINTEXT://10.0.0.1:9092'], 'listeners', /listener OPEN binds the wildcard 0\.0\.0\.0:9094/],
  ];
  for (const [argv, key, message] of refused) {
    const issues = issuesOf(() => resolveConfig(argv, {}));
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]!.key, key);
    assert.match(issues[0]!.message, message);
  }
  const advertised = [
    ['--kafka-addr', '0.0.0.0:9092', '--advertised-kafka-addr', 'broker-1.example:9092'],
    ['--listeners', 'PLAINTEXT://0.0.0.0:9092,OPEN://[::]:9094', '--listener-security-protocol-map', 'OPEN:PLAINTEXT', '--advertised-listeners', 'PLAINTEXT://10.0.0.1:9092,OPEN://10.0.0.1:9094'],
  ];
  for (const argv of advertised) assert.doesNotThrow(() => resolveConfig(argv, {}), argv.join(' '));
});

test('the admin address a broker registers: the bound host, or the advertised Kafka host for a wildcard', () => {
  const at = (adminHost: string, advertisedKafkaAddr = ''): string => advertisedAdminAddress({ adminHost, advertisedKafkaAddr, kafkaHost: '10.1.2.3' }, 8088);
  assert.equal(at('127.0.0.1'), '127.0.0.1:8088');
  assert.equal(at('0.0.0.0'), '10.1.2.3:8088');
  assert.equal(at('::', 'kafka-1.example:19092'), 'kafka-1.example:8088');
  assert.equal(at('::1'), '[::1]:8088');
});
