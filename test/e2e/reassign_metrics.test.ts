// The metrics a reassignment watches, end to end on three real `sluice start` processes: every
// broker advertises a working admin address through DescribeCluster (KafkaAdmin.describeBrokers),
// and the CLI's ClusterMetricsSampler, fed only those addresses, reads an idle cluster as produce
// p99 0 and a loaded one (acks=all to a replication-factor-3 topic) as a positive produce p99,
// CPU use in (0, 1], and NIC, disk and replication traffic.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { threeBrokers } from '../helpers/three_brokers.js';
import { KafkaAdmin } from '../../src/client/admin.js';
import { ClusterMetricsSampler, metricsEndpoints } from '../../src/cli/reassign_metrics.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';

const TOPIC = 'watched';
const brokers = threeBrokers({ sessionMs: 10_000, heartbeatMs: 1000 });

it('brokers advertise their admin addresses, and the sampler reads idle and loaded clusters from them', async (t) => {
  const admin = await KafkaAdmin.connect({ host: '127.0.0.1', port: brokers[0]!.kafkaPort });
  t.after(() => admin.close());
  const standing = await admin.describeBrokers();
  assert.deepStrictEqual(standing.map((b) => [b.id, b.adminAddress]), brokers.map((b, i) => [i + 1, `127.0.0.1:${b.adminPort}`]));
  for (const b of standing) {
    const res = await fetch(`http://${b.adminAddress}/v1/health`, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200, `broker ${b.id}'s advertised admin address answers`);
  }
  await admin.createTopics(TOPIC, 3, 3);

  const sampler = new ClusterMetricsSampler({
    endpoints: async () => metricsEndpoints(await admin.describeBrokers()),
    capacities: { nicBytesPerSec: 100 * 1024 ** 2, diskBytesPerSec: 100 * 1024 ** 2 },
    timeoutMs: 5000,
  });
  await sampler.sample();
  await new Promise((r) => setTimeout(r, 1000));
  const idle = await sampler.sample();
  assert.deepStrictEqual(sampler.unanswered, []);
  assert.equal(idle.produceP99Ms, 0, 'no produce in the window');
  assert.deepStrictEqual(idle.brokers.map((b) => b.id), [1, 2, 3]);

  const kafka = kafkajsClient(brokers[0]!.bootstrap);
  const producer = await connectedProducer(kafka);
  t.after(() => producer.disconnect());
  await sendRange(producer, TOPIC, 'load', 0, 3000, { batch: 100, acks: -1 });
  const loaded = await sampler.sample();
  assert.deepStrictEqual(sampler.unanswered, []);
  assert.ok(loaded.produceP99Ms > 0, `produce p99 under load: ${loaded.produceP99Ms}`);
  for (const b of loaded.brokers) {
    assert.ok(b.cpu > 0 && b.cpu <= 1, `broker ${b.id} cpu ${b.cpu}`);
    assert.ok(b.nic > 0, `broker ${b.id} nic ${b.nic}`);
    assert.ok(b.disk > 0, `broker ${b.id} wrote its replicas: disk ${b.disk}`);
    assert.ok(b.replicationBytesPerSec > 0, `broker ${b.id} replicates: ${b.replicationBytesPerSec}`);
    assert.ok(b.cpuBytesPerSec > 0);
  }
});
