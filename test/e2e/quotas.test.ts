// Client quotas against a real broker process, set with the `sluice quota` CLI: a kafkajs producer
// with a 1 MiB/s produce quota (its own client id) sending as fast as it can is held within ±20%
// of it, while a kafka-python producer under the default client-id quota produces at its own rate
// and is never throttled (its produce-throttle-time-max stays 0); the broker counts the
// throttle time it answered; AlterClientQuotas refuses bad entries one by one and validate_only
// changes nothing; quotas survive a restart.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaAdmin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { sluice } from '../helpers/cli_run.js';
import { PYTHON } from '../helpers/kafka_python.js';
import { Kafka, logLevel } from '../helpers/kafkajs_client.js';

const HOST = '127.0.0.1';
const TOPIC = 'quoted';
const QUOTA = 1_048_576;
/** Kafka's quota windows: 11 samples of 1 s. A greedy client's bytes come in bursts once per 11 s span. */
const SPAN_MS = 11_000;
/**
 * The greedy client's run: its first burst (ten windows' allowance), then three whole spans
 * measured, so a burst cut by either end of the measurement weighs little (seen: 0.85x over two).
 */
const MEASURE_FROM_MS = 5_000;
const MEASURE_MS = 3 * SPAN_MS;

let broker: BrokerProcess;

const brokers = (): string => `${HOST}:${broker.kafkaPort}`;

async function quotaCli(args: readonly string[]): Promise<string> {
  const r = await sluice(['quota', ...args, '--brokers', brokers()]);
  assert.equal(r.code, 0, `sluice quota ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// A producer at a steady `rate` bytes/s in 10 KiB messages; prints what it sent and the largest
// throttle time the broker answered it (kafka-python's produce-throttle-time-max).
const PYTHON_STEADY = `
import json, sys, time
from kafka import KafkaProducer
port, topic, client_id, rate, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
p = KafkaProducer(bootstrap_servers='127.0.0.1:' + port, client_id=client_id, acks=1, linger_ms=0)
payload = b'p' * 10240
sent = 0
start = time.time()
while time.time() - start < seconds:
    p.send(topic, payload, partition=0).get(timeout=30)
    sent += len(payload)
    ahead = start + sent / rate - time.time()
    if ahead > 0:
        time.sleep(ahead)
elapsed = time.time() - start
throttle = p.metrics()['producer-metrics']['produce-throttle-time-max']
p.close()
print(json.dumps({'sent': sent, 'elapsed': elapsed, 'throttleMax': throttle}))
`;

/** kafkajs sending 64 KiB requests back to back for `ms`; the time (since start) and bytes of each acknowledged one. */
async function greedyKafkajs(ms: number): Promise<Array<[number, number]>> {
  const kafka = new Kafka({ clientId: 'greedy', brokers: [brokers()], logLevel: logLevel.NOTHING, requestTimeout: 30_000, retry: { retries: 0 } });
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: 64 }, () => ({ value: Buffer.alloc(1024, 'g') }));
  const acks: Array<[number, number]> = [];
  const start = performance.now();
  try {
    while (performance.now() - start < ms) {
      await producer.send({ topic: TOPIC, acks: 1, messages });
      acks.push([performance.now() - start, 64 * 1024]);
    }
  } finally {
    await producer.disconnect();
  }
  return acks;
}

before(async () => {
  broker = await BrokerProcess.start({ shards: 1 });
  const admin = await KafkaAdmin.connect({ host: HOST, port: broker.kafkaPort });
  try {
    await admin.createTopics(TOPIC, 1, 1, {});
  } finally {
    await admin.close();
  }
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await broker?.dispose();
});

describe('client quotas', () => {
  it('sluice quota alter/describe set and show quotas by entity, with defaults', async () => {
    await quotaCli(['alter', '--client-id', 'greedy', '--add', `producer_byte_rate=${QUOTA}`]);
    await quotaCli(['alter', '--default', 'client-id', '--add', 'producer_byte_rate=10485760,consumer_byte_rate=10485760']);
    const described = JSON.parse(await quotaCli(['describe', '--format', 'json'])) as Array<{ entity: string; values: Record<string, number> }>;
    assert.deepEqual(described, [
      { entity: 'client-id=<default>', values: { producer_byte_rate: 10485760, consumer_byte_rate: 10485760 } },
      { entity: 'client-id=greedy', values: { producer_byte_rate: QUOTA } },
    ]);
    const one = JSON.parse(await quotaCli(['describe', '--client-id', 'greedy', '--format', 'json'])) as unknown[];
    assert.equal(one.length, 1);
  });

  it('AlterClientQuotas answers each entry, refuses bad ones as INVALID_REQUEST, and validate_only changes nothing', async () => {
    const admin = await KafkaAdmin.connect({ host: HOST, port: broker.kafkaPort });
    try {
      await assert.rejects(
        admin.alterClientQuotas([{ entity: [{ entityType: 'user', entityName: 'bob' }], ops: [{ key: 'no_such_quota', value: 1, remove: false }] }]),
        (err: { code?: number }) => err.code === ErrorCode.INVALID_REQUEST,
      );
      await assert.rejects(
        admin.alterClientQuotas([{ entity: [{ entityType: 'user', entityName: 'bob' }], ops: [{ key: 'producer_byte_rate', value: -5, remove: false }] }]),
        (err: { code?: number }) => err.code === ErrorCode.INVALID_REQUEST,
      );
      await admin.alterClientQuotas([{ entity: [{ entityType: 'user', entityName: 'bob' }], ops: [{ key: 'producer_byte_rate', value: 5000, remove: false }] }], true);
      assert.deepEqual(await admin.describeClientQuotas([{ entityType: 'user', matchType: 0, match: 'bob' }]), []);
    } finally {
      await admin.close();
    }
  });

  it('holds a greedy kafkajs producer to its quota within ±20% while a kafka-python producer is not throttled', async (t) => {
    const politeRate = 200 * 1024;
    const seconds = (MEASURE_FROM_MS + MEASURE_MS) / 1000;
    const [acks, polite] = await Promise.all([
      greedyKafkajs(MEASURE_FROM_MS + MEASURE_MS),
      run(PYTHON, ['-c', PYTHON_STEADY, String(broker.kafkaPort), TOPIC, 'polite', String(politeRate), String(seconds)], { timeoutMs: 120_000 }),
    ]);
    const measured = acks.filter(([t]) => t >= MEASURE_FROM_MS && t < MEASURE_FROM_MS + MEASURE_MS).reduce((n, [, b]) => n + b, 0);
    const rate = (measured * 1000) / MEASURE_MS;
    const total = acks.reduce((n, [, b]) => n + b, 0);
    t.diagnostic(`greedy: ${(rate / QUOTA).toFixed(3)}x its quota over ${MEASURE_MS} ms, ${total} bytes in all`);
    assert.ok(rate >= QUOTA * 0.8 && rate <= QUOTA * 1.2, `greedy producer at ${(rate / QUOTA).toFixed(2)}x its quota (${total} bytes in all)`);

    assert.equal(polite.code, 0, polite.stderr.toString());
    const p = JSON.parse(polite.stdout.toString()) as { sent: number; elapsed: number; throttleMax: number };
    t.diagnostic(`polite: ${(p.sent / p.elapsed).toFixed(0)} B/s of ${politeRate}, largest throttle ${p.throttleMax} ms`);
    assert.equal(p.throttleMax, 0, 'the client under its quota was never asked to back off');
    // Generous: a loaded 2-core host may slow it, but never to a throttled client's crawl.
    assert.ok(p.sent / p.elapsed >= politeRate * 0.5, `polite producer at ${(p.sent / p.elapsed).toFixed(0)} B/s of ${politeRate}`);

    assert.ok(await broker.metric('sluice_quota_throttle_time_ms_total{quota="produce"}') > 0, 'the broker answered throttle times');
  });

  it('keeps quotas across a restart', async () => {
    await broker.stop();
    await broker.restart();
    const described = JSON.parse(await quotaCli(['describe', '--client-id', 'greedy', '--format', 'json'])) as Array<{ values: Record<string, number> }>;
    assert.deepEqual(described.map((d) => d.values), [{ producer_byte_rate: QUOTA }]);
    await quotaCli(['alter', '--client-id', 'greedy', '--delete', 'producer_byte_rate']);
    assert.deepEqual(JSON.parse(await quotaCli(['describe', '--client-id', 'greedy', '--format', 'json'])), []);
  });
});
