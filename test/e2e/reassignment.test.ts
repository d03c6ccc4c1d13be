// Partition reassignment (KIP-455) with real processes: three `sluice start` nodes, a topic of
// replication factor 2 under idempotent acks=all kafkajs load. A move that takes the partition
// off its leader is listed while it runs, completes with the target as replicas and a full ISR,
// hands leadership to a target replica, deletes the dropped replica's directory, and loses,
// duplicates or reorders nothing acknowledged. A move onto a killed broker never catches up and
// is cancelled: the original replicas are back and nothing is lost.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import type { TopicDescription } from '../../src/client/admin.js';
import { connectTo, readPartition } from '../helpers/read_back.js';
import { until } from '../helpers/until.js';

const brokers = threeBrokers({ sessionMs: 2000, heartbeatMs: 300 });

const describe = (topic: string): Promise<TopicDescription> => withAdmin(brokers[0]!, (admin) => admin.describeTopic(topic));

/** Every value of partition 0 as its leader serves it, in offset order. */
async function values(topic: string, leader: number): Promise<string[]> {
  const conn = await connectTo(brokers[leader - 1]!.kafkaPort);
  try {
    return (await readPartition(conn, topic, 0)).map((r) => r.value?.toString() ?? '');
  } finally {
    await conn.close();
  }
}

const expected = (n: number): string[] => Array.from({ length: n }, (_, i) => `v-${i}`);

/** Sends v-from .. v-(to-1) in order, idempotent acks=all, 10 per request. */
async function produce(bootstrap: BrokerProcess, topic: string, from: number, to: number): Promise<void> {
  const producer = await connectedProducer(kafkajsClient(`127.0.0.1:${bootstrap.kafkaPort}`, `reassign-${topic}`, 20), { idempotent: true, maxInFlightRequests: 1 });
  try {
    for (let i = from; i < to; i += 10) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: Math.min(10, to - i) }, (_, k) => ({ key: 'k', value: `v-${i + k}` })) });
    }
  } finally {
    await producer.disconnect();
  }
}

it('moves a partition off its leader under acks=all load: listed while moving, target replicas and full ISR after, old directory gone, nothing lost', async () => {
  const topic = 'moving';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 1, 2));
  const before = (await until('a leader and a full ISR', 20_000, () => describe(topic), (t) => t.partitionDetails[0]!.leader > 0 && t.partitionDetails[0]!.isr.length === 2)).partitionDetails[0]!;
  const leaving = before.leader;
  const staying = before.replicas.find((id) => id !== leaving)!;
  const joining = [1, 2, 3].find((id) => !before.replicas.includes(id))!;
  const target = [joining, staying];
  await produce(brokers[0]!, topic, 0, 300);

  const load = produce(brokers[0]!, topic, 300, 900);
  const outcome = await withAdmin(brokers[1]!, (admin) => admin.alterPartitionReassignments([{ topic, partition: 0, replicas: target }]));
  assert.deepStrictEqual(outcome.map((o) => o.error), ['NONE']);
  const listed = await withAdmin(brokers[2]!, (admin) => admin.listPartitionReassignments());
  // Listed while the new replica catches up, unless it already finished.
  for (const r of listed) assert.deepStrictEqual([r.topic, r.replicas, r.addingReplicas, r.removingReplicas], [topic, [...target, leaving], [joining], [leaving]]);
  await load;

  const after = (await until('the move completed', 30_000, () => describe(topic), (t) => t.partitionDetails[0]!.replicas.join() === target.join() && t.partitionDetails[0]!.isr.length === 2)).partitionDetails[0]!;
  assert.ok(target.includes(after.leader), `leader ${after.leader} is a target replica`);
  assert.deepStrictEqual(await withAdmin(brokers[0]!, (admin) => admin.listPartitionReassignments()), []);
  await until('the dropped replica\'s directory gone', 10_000, async () => existsSync(join(brokers[leaving - 1]!.dataDir, `${topic}-0`)), (exists) => !exists);

  await produce(brokers[0]!, topic, 900, 1000);
  assert.deepStrictEqual(await values(topic, after.leader), expected(1000), 'every acknowledged value once, in order');
  assert.ok(existsSync(join(brokers[joining - 1]!.dataDir, `${topic}-0`)), 'the new replica has its directory');
});

it('cancels a move that cannot catch up: the original replicas are back and nothing is lost', async () => {
  const topic = 'cancelled';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 1, 2));
  const before = (await until('a leader and a full ISR', 20_000, () => describe(topic), (t) => t.partitionDetails[0]!.leader > 0 && t.partitionDetails[0]!.isr.length === 2)).partitionDetails[0]!;
  const down = [1, 2, 3].find((id) => !before.replicas.includes(id))!;
  const up = brokers.find((_, i) => i + 1 !== down)!;
  await produce(up, topic, 0, 200);
  await brokers[down - 1]!.kill9();
  try {
    const target = [before.replicas[0]!, down];
    await withAdmin(up, (admin) => admin.alterPartitionReassignments([{ topic, partition: 0, replicas: target }]));
    const moving = await withAdmin(up, (admin) => admin.listPartitionReassignments([{ topic, partitions: [0] }]));
    assert.deepStrictEqual(moving.map((r) => [r.addingReplicas, r.removingReplicas]), [[[down], [before.replicas[1]!]]]);
    await produce(up, topic, 200, 300);
    const cancel = await withAdmin(up, (admin) => admin.alterPartitionReassignments([{ topic, partition: 0, replicas: null }]));
    assert.deepStrictEqual(cancel.map((o) => o.error), ['NONE']);
    const again = await withAdmin(up, (admin) => admin.alterPartitionReassignments([{ topic, partition: 0, replicas: null }]));
    assert.deepStrictEqual(again.map((o) => o.error), ['NO_REASSIGNMENT_IN_PROGRESS']);
    const after = (await withAdmin(up, (admin) => admin.describeTopic(topic))).partitionDetails[0]!;
    assert.deepStrictEqual([...after.replicas].sort(), [...before.replicas].sort());
    assert.deepStrictEqual(await values(topic, after.leader), expected(300));
  } finally {
    await brokers[down - 1]!.restart();
  }
});
