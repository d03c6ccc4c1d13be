// Our producer through a leader move on three real `sluice start` processes (KIP-951 hints). An
// idempotent acks=1 producer learns a partition's leader, the leader is killed -9 and another ISR
// member is elected; the old leader restarts and, when the producer (whose cache still names it)
// sends again, answers NOT_LEADER_OR_FOLLOWER with the new leader and its endpoint. The producer
// goes straight there: no broker receives a Metadata request meanwhile (the brokers' request
// counters), and every acknowledged record is on the new leader exactly once, in send order, at
// the offset acknowledged, once the in-sync followers hold them (acks=1 records are readable at
// the high watermark). Only records acknowledged after the move are checked.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import type { TopicDescription } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer/index.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import { LATEST, connectTo, listOffset, readPartition } from '../helpers/read_back.js';

const TOPIC = 'hinted';
const SESSION_MS = 2000;
const COUNT = 300;
const METADATA = 'sluice_requests_total{api="Metadata"}';
const brokers = threeBrokers({ sessionMs: SESSION_MS, heartbeatMs: 300 });

function describe(b: BrokerProcess): Promise<TopicDescription> {
  return withAdmin(b, (admin) => admin.describeTopic(TOPIC));
}

async function until(b: BrokerProcess, ms: number, ok: (t: TopicDescription) => boolean): Promise<TopicDescription> {
  const deadline = Date.now() + ms;
  for (;;) {
    const t = await describe(b);
    if (ok(t)) return t;
    if (Date.now() > deadline) assert.fail(`topic after ${ms} ms: ${JSON.stringify(t.partitionDetails)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function metadataRequests(): Promise<number> {
  const counts = await Promise.all(brokers.map((b) => b.metric(METADATA)));
  return counts.reduce((a, b) => a + b, 0);
}

it('follows the old leader\'s hint to the new leader without a Metadata request and loses nothing acknowledged', async () => {
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(TOPIC, 3, 3));
  const start = await until(brokers[0]!, 20_000, (t) => t.partitionDetails.every((p) => p.leader > 0));
  const res = await fetch(`http://127.0.0.1:${brokers[0]!.adminPort}/v1/quorum`, { signal: AbortSignal.timeout(5000) });
  const controllerId = ((await res.json()) as QuorumReport).leaderId;
  const moved = start.partitionDetails.find((p) => p.leader !== controllerId)!;
  const victim = brokers[moved.leader - 1]!;
  const survivor = brokers.find((b) => b !== victim)!;

  const producer = new Producer({ brokers: brokers.map((b) => b.bootstrap), acks: 1, requestTimeoutMs: 10_000, retryBackoffMs: 3_000, lingerMs: 2 });
  try {
    await producer.connect();
    await producer.send(TOPIC, { partition: moved.partition, value: Buffer.from('warm-up') });

    await victim.kill9();
    const now = await until(survivor, SESSION_MS + 8000, (t) => {
      const p = t.partitionDetails.find((q) => q.partition === moved.partition)!;
      return p.leader > 0 && p.leader !== moved.leader;
    });
    const newLeader = now.partitionDetails.find((q) => q.partition === moved.partition)!;
    assert.ok(newLeader.leaderEpoch > moved.leaderEpoch);
    await victim.restart();
    // The restarted broker knows the new leader before it serves clients (registration gate).
    await until(victim, 10_000, (t) => t.partitionDetails.find((q) => q.partition === moved.partition)!.leader === newLeader.leader);

    const before = await metadataRequests();
    assert.ok(before > 0, `${METADATA} is counted`);
    const sentAt = Date.now();
    const acks = await Promise.all(Array.from({ length: COUNT }, (_, i) => producer.send(TOPIC, { partition: moved.partition, value: Buffer.from(`m-${i}`) })));
    const tookMs = Date.now() - sentAt;
    assert.equal(await metadataRequests(), before, 'no Metadata request while following the hint');
    // A metadata round trip would have waited out the 3 s retry backoff first.
    assert.ok(tookMs < 3000, `acknowledged after ${tookMs} ms`);

    const conn = await connectTo(brokers[newLeader.leader - 1]!.kafkaPort);
    try {
      // acks=1 records become readable once the in-sync followers hold them (the high watermark).
      const end = Math.max(...acks.map((a) => a.offset)) + 1;
      const deadline = Date.now() + 10_000;
      while ((await listOffset(conn, TOPIC, moved.partition, LATEST)).offset < end) {
        assert.ok(Date.now() < deadline, `the high watermark did not reach ${end}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const records = await readPartition(conn, TOPIC, moved.partition);
      const values = records.map((r) => r.value?.toString() ?? '');
      const sent = values.filter((v) => v.startsWith('m-'));
      assert.deepEqual(sent, Array.from({ length: COUNT }, (_, i) => `m-${i}`), 'every acknowledged record once, in send order');
      const offsetOf = new Map(records.map((r) => [r.value?.toString() ?? '', r.offset]));
      acks.forEach((a, i) => assert.equal(a.offset, offsetOf.get(`m-${i}`), `m-${i} at its acknowledged offset`));
    } finally {
      await conn.close();
    }
  } finally {
    await producer.close();
  }
});
