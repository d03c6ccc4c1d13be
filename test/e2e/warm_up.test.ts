// A broker joining a loaded cluster warms up before it leads (issue 15 item 1), end to end with
// real processes: brokers 1-3 hold a topic; broker 4 joins and `sluice cluster status` shows it
// warming. A topic created with broker 4 as every partition's preferred replica is led by warm
// brokers at first; once broker 4's replicas are in sync and it has read their tails, the status
// shows it running and it leads them, while a kafkajs producer (acks=all, idempotent) kept
// sending through the handover: every acknowledged message is read back once, in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Producer } from 'kafkajs';
import { CLUSTER_UNAVAILABLE } from '../cluster/process_cluster.js';
import { sluice } from '../helpers/cli_run.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { messageIndex } from '../helpers/messages.js';
import { connectTo, metadata, readPartition } from '../helpers/read_back.js';
import { joinBroker, threeBrokers } from '../helpers/three_brokers.js';
import { until } from '../helpers/until.js';

const brokers = threeBrokers({ sessionMs: 3000, heartbeatMs: 200 });
const TOPIC = 'warm';
const PER_ROUND = 50;

interface StatusJson {
  brokers: { id: number; state: string; replicas: number; inSync: number; leads: number }[];
}

async function status(bootstrap: string): Promise<StatusJson> {
  const r = await sluice(['cluster', 'status', '--brokers', bootstrap, '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as StatusJson;
}

test('a joining broker warms up, then leads the partitions that prefer it, without a lost or duplicated acknowledged message', { skip: CLUSTER_UNAVAILABLE, timeout: 120_000 }, async () => {
  const bootstrap = brokers[0]!.bootstrap;
  const kafka = kafkajsClient(bootstrap, 'warm-up', 20);
  const admin = kafka.admin();
  await admin.connect();
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic: 'base', numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true }), true);
    const fourth = await joinBroker(brokers, 4, ['--warm-up-bytes', '65536']);
    const joined = await until('broker 4 registered', 20_000, () => status(bootstrap), (s) => s.brokers.some((b) => b.id === 4));
    assert.deepEqual(joined.brokers.map((b) => [b.id, b.state]), [[1, 'running'], [2, 'running'], [3, 'running'], [4, 'warming']]);

    // Broker 4 first in every replica list: the preferred leader, but not warm yet.
    await admin.createTopics({
      topics: [{ topic: TOPIC, replicaAssignment: [{ partition: 0, replicas: [4, 1, 2] }, { partition: 1, replicas: [4, 2, 3] }] }],
      waitForLeaders: true,
    });
    const conn = await connectTo(fourth.kafkaPort);
    let producer: Producer | null = null;
    try {
      // Right after creation warm brokers lead (broker 4 may have warmed already: it only reads two empty replicas).
      const first = await metadata(conn, [TOPIC]);
      for (const p of first.topics[0]!.partitions) assert.ok(p.leaderId !== 4 || p.leaderEpoch > 0, `partition ${p.partitionIndex} created led by warming broker 4`);

      producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
      let sent = 0;
      const round = async (): Promise<void> => {
        for (const partition of [0, 1]) await sendRange(producer!, TOPIC, `p${partition}`, sent, sent + PER_ROUND, { batch: 10, partition });
        sent += PER_ROUND;
      };
      await round();
      const done = await until('broker 4 warm and leading both partitions', 30_000, async () => {
        await round();
        return status(bootstrap);
      }, (s) => {
        const b4 = s.brokers.find((b) => b.id === 4);
        return b4?.state === 'running' && b4.leads === 2 && b4.inSync === 2;
      });
      assert.equal(done.brokers.find((b) => b.id === 4)!.replicas, 2);
      await round();
      // One handover each: created led by broker 1 and 2 (epoch 0), then broker 4 (epoch 1).
      const last = await metadata(conn, [TOPIC]);
      assert.deepEqual(last.topics[0]!.partitions.map((p) => [p.leaderId, p.leaderEpoch]), [[4, 1], [4, 1]]);

      const health = await (await fetch(`http://${fourth.host}:${fourth.adminPort}/v1/health`)).json() as { warmUp: { state: string } };
      assert.equal(health.warmUp.state, 'warm');
      for (const partition of [0, 1]) {
        const read = (await readPartition(conn, TOPIC, partition)).map((r) => messageIndex(`p${partition}`, r.value));
        assert.deepEqual(read, Array.from({ length: sent }, (_, i) => i), `partition ${partition}: every acknowledged message once, in order`);
      }
    } finally {
      await producer?.disconnect();
      await conn.close();
    }
  } finally {
    await admin.disconnect();
  }
});
