// Shrinking by decommission and growing without moves, with real processes: three `sluice start`
// nodes and brokers joined later. `cluster add-broker 4 --no-move` waits for it; `cluster
// remove-broker 4` is refused while broker 4 holds replicas, succeeds once `reassign plan --remove
// 4` and `apply` drained it, and the broker is then gone from `cluster status` and stays gone
// though its process still runs. New partitions of an existing topic go to a joined broker first
// while the old ones stay put.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { joinBroker, threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { sluice } from '../helpers/cli_run.js';
import type { TopicDescription } from '../../src/client/admin.js';
import { until } from '../helpers/until.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';

const brokers = threeBrokers({ sessionMs: 2000, heartbeatMs: 300 });

const describe = (topic: string): Promise<TopicDescription> => withAdmin(brokers[0]!, (admin) => admin.describeTopic(topic));
const bootstrap = (): string => `127.0.0.1:${brokers[0]!.kafkaPort}`;

it('a joined broker is removed only once drained: reassign plan --remove and apply drain it, remove-broker unregisters it for good', { timeout: 180_000 }, async () => {
  const topic = 'grow';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 3, 2));
  const before = await until('leaders for every partition', 20_000, () => describe(topic), (t) => t.partitionDetails.every((p) => p.leader > 0));
  await joinBroker(brokers, 4);
  const joined = await sluice(['cluster', 'add-broker', '4', '--no-move', '--brokers', bootstrap(), '--format', 'json', '--timeout-ms', '30000']);
  assert.equal(joined.code, 0, joined.stderr);
  assert.equal((JSON.parse(joined.stdout) as { movesHistory: boolean }).movesHistory, false);

  // Put two replicas on broker 4 by hand.
  const onto = before.partitionDetails.slice(0, 2).map((p) => ({ topic, partition: p.partition, replicas: [p.replicas[0]!, 4] }));
  assert.deepEqual((await withAdmin(brokers[0]!, (admin) => admin.alterPartitionReassignments(onto))).map((o) => o.error), ['NONE', 'NONE']);
  await until('broker 4 holds two replicas in sync', 60_000, () => describe(topic), (t) => t.partitionDetails.filter((p) => p.replicas.includes(4) && p.isr.includes(4)).length === 2);

  const refused = await sluice(['cluster', 'remove-broker', '4', '--brokers', bootstrap()]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /POLICY_VIOLATION.*2 replica\(s\).*sluice reassign plan --remove 4/);

  const planned = await sluice(['reassign', 'plan', '--remove', '4', '--topics', topic, '--sample-ms', '0', '--brokers', bootstrap(), '--format', 'json']);
  assert.equal(planned.code, 0, planned.stderr);
  const applied = await sluice(['reassign', 'apply', '--observation-ms', '0', '--baseline-ms', '1000', '--poll-ms', '200', '--brokers', bootstrap()], {}, 120_000);
  assert.equal(applied.code, 0, applied.stderr);
  const drained = await describe(topic);
  assert.ok(drained.partitionDetails.every((p) => !p.replicas.includes(4)), 'broker 4 holds nothing');

  const removed = await sluice(['cluster', 'remove-broker', '4', '--brokers', bootstrap(), '--format', 'json']);
  assert.equal(removed.code, 0, removed.stderr);
  const status = async (): Promise<number[]> => {
    const r = await sluice(['cluster', 'status', '--brokers', bootstrap(), '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { brokers: { id: number }[] }).brokers.map((b) => b.id);
  };
  assert.deepEqual(await status(), [1, 2, 3]);
  // Its process still runs; it must not register again by itself.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.deepEqual(await status(), [1, 2, 3]);
  const again = await sluice(['cluster', 'remove-broker', '4', '--brokers', bootstrap()]);
  assert.match(again.stderr, /BROKER_ID_NOT_REGISTERED/);
});

it('a joined broker takes the new partitions of CreatePartitions first (--no-move)', { timeout: 120_000 }, async () => {
  const topic = 'nomove';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 3, 2));
  const before = await until('leaders for every partition', 20_000, () => describe(topic), (t) => t.partitionDetails.every((p) => p.leader > 0));
  await joinBroker(brokers, 5);
  await until('broker 5 registered', 30_000, () => withAdmin(brokers[0]!, (a) => a.describeBrokers()), (bs) => bs.some((b) => b.id === 5 && b.state !== 'fenced'));
  const kadmin = kafkajsClient(bootstrap(), 'nomove', 5).admin();
  await kadmin.connect();
  try {
    await kadmin.createPartitions({ topicPartitions: [{ topic, count: 5 }] });
  } finally {
    await kadmin.disconnect();
  }
  const grown = await until('five partitions', 20_000, () => describe(topic), (t) => t.partitionDetails.length === 5);
  for (const p of before.partitionDetails) assert.deepEqual(grown.partitionDetails[p.partition]!.replicas, p.replicas, `partition ${p.partition} moved`);
  for (const p of grown.partitionDetails.slice(3)) assert.ok(p.replicas.includes(5), `new partition ${p.partition} is not on broker 5: [${p.replicas.join(', ')}]`);
});
