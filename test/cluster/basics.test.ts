// Process-level cluster basics (issue 13, test a): three `sluice start` processes form a cluster
// that kcat sees as three brokers; a 12-partition topic gets leaders on all three; kafkajs and
// kcat produce through different bootstrap brokers and every acknowledged message reads back once,
// in order, from the partition it was acknowledged on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kafkajsMessage, testMessage } from '../helpers/messages.js';
import { kafkajsClient, connectedProducer } from '../helpers/kafkajs_client.js';
import { kcat, kcatInput, produceArgs } from '../helpers/kcat.js';
import { checkDelivery, describeDelivery, readBack } from '../helpers/delivery_check.js';
import type { AckedMessage } from '../helpers/delivery_check.js';
import { metadata } from '../helpers/read_back.js';
import { CLUSTER_UNAVAILABLE, ProcessCluster, waitSameMetadata } from './process_cluster.js';
import type { KafkaConnection } from '../../src/client/connection.js';

const PARTITIONS = 12;
let cluster: ProcessCluster | null = null;

before(async () => {
  if (CLUSTER_UNAVAILABLE === false) cluster = await ProcessCluster.start(3);
});
after(async () => {
  await cluster?.dispose();
});

test('kcat -L lists the three brokers of the cluster', { skip: CLUSTER_UNAVAILABLE }, async () => {
  const c = cluster as ProcessCluster;
  for (const id of c.ids) {
    const out = (await kcat(['-b', `127.0.0.1:${c.node(id).kafkaPort}`, '-L'])).stdout.toString();
    const brokers = [...out.matchAll(/broker (\d+) at 127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1])).sort();
    assert.deepEqual(brokers, [1, 2, 3], `kcat -L through node ${id}:\n${out}`);
  }
});

test('a 12-partition topic leads on all three brokers; kafkajs and kcat produce through any broker and everything reads back', { skip: CLUSTER_UNAVAILABLE, timeout: 120_000 }, async () => {
  const c = cluster as ProcessCluster;
  const topic = 'basics-12';
  const admin = await c.admin(1);
  try {
    await admin.createTopics(topic, PARTITIONS, 1);
  } finally {
    await admin.close();
  }
  await waitSameMetadata(c, c.ids);
  const conn = await c.connect(2);
  const leaders = new Map<number, number>();
  try {
    const t = (await metadata(conn, [topic])).topics[0];
    assert.ok(t !== undefined && t.errorCode === 0, `metadata of ${topic}`);
    for (const p of t.partitions) leaders.set(p.partitionIndex, p.leaderId);
  } finally {
    await conn.close();
  }
  assert.deepEqual([...new Set(leaders.values())].sort(), [1, 2, 3], 'leaders spread over all three brokers');

  const tag = 'basics';
  const acked: AckedMessage[] = [];
  // kafkajs through node 3's listener only (it finds the leaders from metadata): messages 0..599.
  const kafka = kafkajsClient(`127.0.0.1:${c.node(3).kafkaPort}`, 'cluster-basics');
  const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
  try {
    for (let i = 0; i < 600; i += 50) {
      const batch = Array.from({ length: 50 }, (_, k) => ({ ...kafkajsMessage(testMessage(tag, i + k)), partition: (i + k) % PARTITIONS }));
      await producer.send({ topic, messages: batch, acks: -1 });
      for (let k = 0; k < 50; k++) acked.push({ partition: (i + k) % PARTITIONS, index: i + k });
    }
  } finally {
    await producer.disconnect();
  }
  // kcat through node 1's listener: messages 600..719, ten per partition.
  for (let p = 0; p < PARTITIONS; p++) {
    const idx = Array.from({ length: 10 }, (_, k) => 600 + p * 10 + k);
    await kcat(produceArgs(`127.0.0.1:${c.node(1).kafkaPort}`, topic, ['-p', String(p), '-X', 'acks=all']), { input: kcatInput(idx.map((i) => testMessage(tag, i))) });
    for (const index of idx) acked.push({ partition: p, index });
  }

  const conns = new Map<number, KafkaConnection>();
  try {
    const leaderOf = async (p: number): Promise<KafkaConnection> => {
      const id = leaders.get(p) as number;
      const open = conns.get(id) ?? await c.connect(id);
      conns.set(id, open);
      return open;
    };
    const report = checkDelivery(acked, await readBack(leaderOf, topic, PARTITIONS, tag));
    assert.deepEqual([report.lost.length, report.duplicated, report.reordered, report.misplaced], [0, 0, 0, 0], describeDelivery(report));
    assert.equal(report.read, 720, describeDelivery(report));
  } finally {
    for (const open of conns.values()) await open.close();
  }
});
