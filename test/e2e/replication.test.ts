// Partition replication with real processes: three `sluice start` nodes, a topic of replication
// factor 3 written by an idempotent kafkajs producer with acks=all. Every replica ends up with the
// same bytes (segment files compared after the followers caught up); after kill -9 of a partition
// leader that is not the active controller, the producer carries on through its retries and every
// acknowledged message is read back exactly once from the survivors; the restarted broker catches
// up and rejoins every ISR with byte-identical logs. A topic asking for more in-sync replicas than
// are left refuses acks=all with NOT_ENOUGH_REPLICAS while acks=1 still succeeds, and its leader's
// /metrics shows the partition under-replicated and the ISR shrink counted.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import type { TopicDescription } from '../../src/client/admin.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import { connectTo, readPartition } from '../helpers/read_back.js';
import { until } from '../helpers/until.js';

const TOPIC = 'replicated';
const PARTITIONS = 2;
const SESSION_MS = 2000;
const brokers = threeBrokers({ sessionMs: SESSION_MS, heartbeatMs: 300 });



const describe = (b: BrokerProcess, topic = TOPIC): Promise<TopicDescription> => withAdmin(b, (admin) => admin.describeTopic(topic));

/** A digest of each partition's segment files on one broker (equal digests: byte-identical replicas). */
function digests(b: BrokerProcess, topic: string, partitions: number): string[] {
  return Array.from({ length: partitions }, (_, p) => {
    const dir = join(b.dataDir, `${topic}-${p}`);
    const hash = createHash('sha256');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.log')).sort()) hash.update(f).update(readFileSync(join(dir, f)));
    return hash.digest('hex');
  });
}

async function activeController(b: BrokerProcess): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${b.adminPort}/v1/quorum`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as QuorumReport).leaderId;
}

function value(i: number): string {
  return `v-${i}`;
}

it('replicates acks=all writes to every replica, survives the kill of a leader and brings it back into the ISR', async () => {
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(TOPIC, PARTITIONS, 3));
  await until('leaders and full ISRs', 20_000, () => describe(brokers[0]!), (t) => t.partitionDetails.every((p) => p.leader > 0 && p.isr.length === 3));
  const kafka = kafkajsClient(`127.0.0.1:${brokers[0]!.kafkaPort}`, 'replication-e2e', 10);
  const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
  try {
    const send = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i += 20) {
        const messages = Array.from({ length: Math.min(20, to - i) }, (_, k) => ({ key: `k-${i + k}`, value: value(i + k) }));
        await producer.send({ topic: TOPIC, messages, acks: -1 });
      }
    };
    await send(0, 200);
    // Followers fetch what the leader has: every replica holds the same bytes.
    await until('identical replicas', 10_000, async () => brokers.map((b) => digests(b, TOPIC, PARTITIONS).join()), (d) => new Set(d).size === 1);

    const controllerId = await activeController(brokers[0]!);
    const before = await describe(brokers[0]!);
    const victim = before.partitionDetails.map((p) => p.leader).find((id) => id !== controllerId);
    assert.ok(victim !== undefined, 'some partition is led by a broker that is not the controller');
    const survivor = brokers.find((_, i) => i + 1 !== victim && i + 1 === controllerId)!;
    await brokers[victim - 1]!.kill9();
    await send(200, 400);
    const after = await describe(survivor);
    for (const p of after.partitionDetails) assert.notEqual(p.leader, victim);

    const values: string[] = [];
    for (const p of after.partitionDetails) {
      const conn = await connectTo(brokers[p.leader - 1]!.kafkaPort);
      try {
        for (const r of await readPartition(conn, TOPIC, p.partition)) values.push(r.value?.toString() ?? '');
      } finally {
        await conn.close();
      }
    }
    assert.equal(values.length, 400, 'each acknowledged message once');
    assert.deepEqual(new Set(values), new Set(Array.from({ length: 400 }, (_, i) => value(i))));

    await brokers[victim - 1]!.restart();
    await until('the restarted broker back in every ISR', 30_000, () => describe(survivor), (t) => t.partitionDetails.every((p) => p.isr.length === 3));
    await until('identical replicas after catch-up', 10_000, async () => brokers.map((b) => digests(b, TOPIC, PARTITIONS).join()), (d) => new Set(d).size === 1);
  } finally {
    await producer.disconnect();
  }
});

it('refuses acks=all with NOT_ENOUGH_REPLICAS while the ISR is below min.insync.replicas, and takes acks=1', async () => {
  const topic = 'strict';
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, 1, 3, { 'min.insync.replicas': '3' }));
  const t = await until('a full ISR', 20_000, () => describe(brokers[0]!, topic), (d) => d.partitionDetails[0]!.isr.length === 3);
  const controllerId = await activeController(brokers[0]!);
  const follower = t.partitionDetails[0]!.replicas.find((id) => id !== controllerId && id !== t.partitionDetails[0]!.leader)
    ?? t.partitionDetails[0]!.replicas.find((id) => id !== controllerId)!;
  const leader = brokers[t.partitionDetails[0]!.leader === follower ? controllerId - 1 : t.partitionDetails[0]!.leader - 1]!;
  await brokers[follower - 1]!.kill9();
  try {
    const shrunk = await until('the ISR without the killed broker', 20_000, () => describe(leader, topic), (d) => d.partitionDetails[0]!.leader > 0 && !d.partitionDetails[0]!.isr.includes(follower));
    const leading = brokers[shrunk.partitionDetails[0]!.leader - 1]!;
    assert.ok(await leading.waitMetric('sluice_under_replicated_partitions', (v) => v >= 1) >= 1, 'the leader reports the partition under-replicated');
    assert.ok(await leading.waitMetric('sluice_isr_shrinks_total', (v) => v >= 1) >= 1, 'and counts the shrink it proposed');
    assert.equal(await leading.metric('sluice_offline_partitions'), 0);
    const kafka = kafkajsClient(`127.0.0.1:${leader.kafkaPort}`, 'min-isr-e2e', 0);
    const producer = await connectedProducer(kafka);
    try {
      await assert.rejects(producer.send({ topic, messages: [{ value: 'all' }], acks: -1 }), (err: Error) => /fewer in-sync replicas than required/.test(err.message));
      await producer.send({ topic, messages: [{ value: 'one' }], acks: 1 });
    } finally {
      await producer.disconnect();
    }
  } finally {
    await brokers[follower - 1]!.restart();
  }
});
