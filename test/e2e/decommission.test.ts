// Growing without moves and shrinking by decommission, with real processes: three `sluice start`
// nodes and a fourth joined later. `cluster add-broker 4 --no-move` waits for it; new partitions
// of an existing topic go to it first while the old ones stay put. `cluster remove-broker 4` is
// refused while broker 4 holds replicas, succeeds once `topic reassign` moved them away, and the
// broker is then gone from `cluster status` and stays gone though its process still runs.
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

it('a joined broker takes new partitions first with --no-move, and is removed only once drained', {
  timeout: 180_000,
  // Fails today: the broker's TopicAdmin places new partitions itself, round robin (placeReplicas),
  // and forwards explicit assignments, so the controller's load-aware placement is bypassed.
  todo: 'TopicAdmin must forward CreatePartitions/CreateTopics without an assignment in cluster mode',
}, async () => {
  const topic = 'grow';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 3, 2));
  const before = await until('leaders for every partition', 20_000, () => describe(topic), (t) => t.partitionDetails.every((p) => p.leader > 0));
  await joinBroker(brokers, 4);

  const joined = await sluice(['cluster', 'add-broker', '4', '--no-move', '--brokers', bootstrap(), '--format', 'json', '--timeout-ms', '30000']);
  assert.equal(joined.code, 0, joined.stderr);
  assert.equal((JSON.parse(joined.stdout) as { movesHistory: boolean }).movesHistory, false);

  const kadmin = kafkajsClient(bootstrap(), 'decommission', 5).admin();
  await kadmin.connect();
  try {
    await kadmin.createPartitions({ topicPartitions: [{ topic, count: 5 }] });
  } finally {
    await kadmin.disconnect();
  }
  const grown = await until('five partitions', 20_000, () => describe(topic), (t) => t.partitionDetails.length === 5);
  for (const p of before.partitionDetails) assert.deepEqual(grown.partitionDetails[p.partition]!.replicas, p.replicas, `partition ${p.partition} moved`);
  for (const p of grown.partitionDetails.slice(3)) assert.ok(p.replicas.includes(4), `new partition ${p.partition} is not on broker 4: [${p.replicas.join(', ')}]`);

  const refused = await sluice(['cluster', 'remove-broker', '4', '--brokers', bootstrap()]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /POLICY_VIOLATION.*2 replica\(s\).*sluice reassign plan --remove 4/);

  // Drain broker 4 by hand: each of its partitions onto the old brokers it does not use yet.
  const moves = grown.partitionDetails.filter((p) => p.replicas.includes(4)).map((p) => ({
    topic, partition: p.partition, replicas: [...p.replicas.filter((id) => id !== 4), [1, 2, 3].find((id) => !p.replicas.includes(id))!],
  }));
  const outcome = await withAdmin(brokers[0]!, (admin) => admin.alterPartitionReassignments(moves));
  assert.deepEqual(outcome.map((o) => o.error), moves.map(() => 'NONE'));
  await until('broker 4 drained', 60_000, () => describe(topic), (t) => t.partitionDetails.every((p) => !p.replicas.includes(4) && p.isr.length === 2));

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
