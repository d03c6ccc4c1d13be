// DescribeLogDirs end to end with three `sluice start` processes: every broker reports exactly
// the replicas the metadata places on it, each with the bytes of its segment files on that
// broker's disk; after replication every replica of a partition reports the same size, and the
// sizes grow with produce; the data dir's total and usable bytes come along (v4). A broker that is
// down is an error entry of KafkaAdmin.describeLogDirs, the others still answer.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BrokerLogDirs, TopicDescription } from '../../src/client/admin.js';
import { CLUSTER_UNAVAILABLE } from '../cluster/process_cluster.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { until } from '../helpers/until.js';

const brokers = threeBrokers({ sessionMs: 2000, heartbeatMs: 300 });
const TOPICS = ['sized-rf3', 'sized-rf2'] as const;

/** "topic/partition" -> size, per broker id. */
type Sizes = Map<number, Map<string, number>>;

function sizesOf(all: readonly BrokerLogDirs[]): Sizes {
  return new Map(all.map((b) => [b.broker, new Map(b.logDirs.flatMap((d) => d.partitions)
    .filter((p) => (TOPICS as readonly string[]).includes(p.topic))
    .map((p) => [`${p.topic}/${p.partition}`, p.sizeBytes]))]));
}

/** Every partition's replicas report one size (and the leader's size is not 0). */
function agreed(sizes: Sizes, topics: readonly TopicDescription[]): boolean {
  return topics.every((t) => t.partitionDetails.every((p) => {
    const seen = p.replicas.map((id) => sizes.get(id)?.get(`${t.name}/${p.partition}`));
    return seen[0] !== undefined && seen[0] > 0 && seen.every((s) => s === seen[0]);
  }));
}

/** Bytes of the partition's segment files on broker `id`'s disk. */
function segmentBytes(id: number, key: string): number {
  const [topic, partition] = key.split('/');
  const dir = join(brokers[id - 1]!.dataDir, `${topic}-${partition}`);
  return readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

it('every broker reports the replicas placed on it with their size on disk; replicas agree after replication and grow with produce', { skip: CLUSTER_UNAVAILABLE, timeout: 120_000 }, async () => {
  await withAdmin(brokers[0]!, async (admin) => {
    await admin.createTopics(TOPICS[0], 2, 3);
    await admin.createTopics(TOPICS[1], 3, 2);
  });
  const topics = await until('leaders and full ISRs', 20_000, () => withAdmin(brokers[1]!, (admin) => Promise.all(TOPICS.map((t) => admin.describeTopic(t)))),
    (ts) => ts.every((t) => t.partitionDetails.every((p) => p.leader > 0 && p.isr.length === p.replicas.length)));
  const producer = await connectedProducer(kafkajsClient(brokers[0]!.bootstrap, 'log-dirs', 20), { idempotent: true, maxInFlightRequests: 1 });
  try {
    for (const t of TOPICS) await sendRange(producer, t, 'first', 0, 300, { batch: 30 });

    const first = sizesOf(await until('every replica reports its partition at one size', 30_000,
      () => withAdmin(brokers[2]!, (admin) => admin.describeLogDirs()), (all) => agreed(sizesOf(all), topics)));
    const all = await withAdmin(brokers[0]!, (admin) => admin.describeLogDirs());
    assert.deepEqual(all.map((b) => [b.broker, b.error, b.logDirs.length]), [[1, null, 1], [2, null, 1], [3, null, 1]]);
    for (const b of all) {
      const dir = b.logDirs[0]!;
      assert.equal(dir.path, resolve(brokers[b.broker - 1]!.dataDir));
      assert.equal(dir.error, null);
      assert.ok(dir.totalBytes !== null && dir.usableBytes !== null && dir.totalBytes > 0 && dir.usableBytes <= dir.totalBytes, `broker ${b.broker}: ${dir.totalBytes} / ${dir.usableBytes}`);
      assert.ok(dir.partitions.every((p) => p.offsetLag === 0), `broker ${b.broker}: current replicas lag 0`);
    }
    for (const [id, held] of first) {
      const placed = topics.flatMap((t) => t.partitionDetails.filter((p) => p.replicas.includes(id)).map((p) => `${t.name}/${p.partition}`));
      assert.deepEqual([...held.keys()].sort(), placed.sort(), `broker ${id} reports exactly its replicas`);
      for (const [key, size] of held) assert.equal(size, segmentBytes(id, key), `broker ${id} ${key}: reported size = its segment files`);
    }

    for (const t of TOPICS) await sendRange(producer, t, 'second', 300, 600, { batch: 30 });
    const second = sizesOf(await until('the new records replicated', 30_000,
      () => withAdmin(brokers[1]!, (admin) => admin.describeLogDirs()),
      (all) => agreed(sizesOf(all), topics) && [...sizesOf(all)].every(([id, held]) => [...held].every(([key, size]) => size > first.get(id)!.get(key)!))));
    for (const [id, held] of second) for (const [key, size] of held) assert.ok(size > first.get(id)!.get(key)!, `broker ${id} ${key} grew`);
  } finally {
    await producer.disconnect();
  }
});

it('a broker that is down is an error entry; the others still answer', { skip: CLUSTER_UNAVAILABLE, timeout: 60_000 }, async () => {
  await brokers[2]!.kill9();
  const all = await withAdmin(brokers[0]!, (admin) => admin.describeLogDirs([1, 2, 3]));
  assert.deepEqual(all.map((b) => b.broker), [1, 2, 3]);
  assert.deepEqual(all.slice(0, 2).map((b) => [b.error, b.logDirs.length]), [[null, 1], [null, 1]]);
  assert.ok(all[2]!.error !== null && all[2]!.logDirs.length === 0, `broker 3: ${JSON.stringify(all[2])}`);
});
