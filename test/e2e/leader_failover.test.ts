// Leader election with real processes: three `sluice start` nodes form a cluster with a short
// broker session; a topic of three partitions, replication factor 3, has its preferred leaders on
// all three. After kill -9 of a broker that is not the active controller, every partition it led
// gets a leader from the other ISR members within the session timeout (as Metadata on the
// survivors shows), with a higher leader epoch. The broker restarts, registers again and, once it
// has caught up from its partitions' leaders, they bring it back into every ISR (AlterPartition);
// only then does ElectLeaders move its preferred partition back to it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import type { TopicDescription } from '../../src/client/admin.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';

const TOPIC = 'failover';
const SESSION_MS = 2000;
const brokers = threeBrokers({ sessionMs: SESSION_MS, heartbeatMs: 300 });


/** Polls `b`'s description of the topic until `ok` holds, within `ms`. */
async function until(b: BrokerProcess, ms: number, ok: (t: TopicDescription) => boolean): Promise<TopicDescription> {
  const deadline = Date.now() + ms;
  for (;;) {
    const t = await withAdmin(b, (admin) => admin.describeTopic(TOPIC));
    if (ok(t)) return t;
    if (Date.now() > deadline) assert.fail(`topic as ${b.kafkaPort} describes it after ${ms} ms: ${JSON.stringify(t.partitionDetails)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('elects leaders from the ISR left when a broker is killed, and ElectLeaders moves them back once it rejoined the ISR', async () => {
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(TOPIC, 3, 3));
  const start = await until(brokers[0]!, 20_000, (t) => t.partitionDetails.every((p) => p.leader > 0) && new Set(t.partitionDetails.map((p) => p.leader)).size === 3);
  // The victim is not the active controller, so no controller failover adds to the time.
  const res = await fetch(`http://127.0.0.1:${brokers[0]!.adminPort}/v1/quorum`, { signal: AbortSignal.timeout(5000) });
  const controllerId = ((await res.json()) as QuorumReport).leaderId;
  const victim = [1, 2, 3].find((id) => id !== controllerId)!;
  const survivor = brokers.find((_, i) => i + 1 !== victim)!;
  const led = start.partitionDetails.filter((p) => p.leader === victim);
  assert.equal(led.length, 1);

  const killedAt = Date.now();
  await brokers[victim - 1]!.kill9();
  const after = await until(survivor, SESSION_MS + 5000, (t) => t.partitionDetails.every((p) => p.leader > 0 && p.leader !== victim && !p.isr.includes(victim)));
  const tookMs = Date.now() - killedAt;
  assert.ok(tookMs < SESSION_MS + 3000, `new leaders after ${tookMs} ms`);
  for (const p of led) {
    const now = after.partitionDetails.find((q) => q.partition === p.partition)!;
    assert.ok(p.isr.includes(now.leader), `partition ${p.partition}'s new leader ${now.leader} was in its ISR ${p.isr}`);
    assert.ok(now.leaderEpoch > p.leaderEpoch);
  }

  await brokers[victim - 1]!.restart();
  const back = brokers[victim - 1]!;
  await until(survivor, 20_000, (t) => t.partitionDetails.every((p) => p.isr.length === 3));
  const results = await withAdmin(back, (admin) => admin.electLeaders(0, [{ topic: TOPIC, partitions: [0, 1, 2] }]));
  const byPartition = new Map(results.map((r) => [r.partition, r.error]));
  for (const p of start.partitionDetails) {
    assert.equal(byPartition.get(p.partition), p.leader === victim ? 'NONE' : 'ELECTION_NOT_NEEDED');
  }
  const again = await until(survivor, 10_000, (t) => t.partitionDetails.every((p, i) => p.leader === start.partitionDetails[i]!.leader));
  for (const p of led) assert.ok(again.partitionDetails[p.partition]!.leaderEpoch > after.partitionDetails[p.partition]!.leaderEpoch);
});
