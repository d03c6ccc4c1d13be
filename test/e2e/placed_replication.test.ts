// Followers' Fetches served on the leader's shard (--connection-placement shards, issue 16): three
// `sluice start` nodes placing every connection on their shard. kafkajs writes a replication
// factor 3 topic with acks=all, one message a request: each acknowledgement needs both followers
// to fetch it, so the leader sees at least two follower Fetches a produce. They are served on the
// shard, not forwarded to main (/v1/health placedRequests), and the high watermark passes every
// message with the ISR still whole. A connection's first request still meets main's admission gate:
// the followers' fetchers were admitted as brokers'.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { placedRequests, sum, waitServed } from '../helpers/placed_requests.js';
import { LATEST, connectTo, listOffset } from '../helpers/read_back.js';
import { until } from '../helpers/until.js';

const TOPIC = 'placed-rf3';
const SENDS = 50;
const brokers = threeBrokers({ sessionMs: 2000, heartbeatMs: 300, argsOf: () => ['--connection-placement', 'shards'] });

it('serves the followers\' Fetches of an acks=all topic on the leader\'s shard', { timeout: 90_000 }, async () => {
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(TOPIC, 1, 3));
  const topic = await until('a leader and a full ISR', 20_000, () => withAdmin(brokers[0]!, (admin) => admin.describeTopic(TOPIC)),
    (t) => t.partitionDetails.every((p) => p.leader > 0 && p.isr.length === 3));
  const leader = brokers[topic.partitionDetails[0]!.leader - 1]!;
  const kafka = kafkajsClient(`127.0.0.1:${leader.kafkaPort}`, 'placed-replication-e2e', 10);
  const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
  // The producer's own setup (metadata, producer id) is forwarded; count from its first produce on.
  await producer.send({ topic: TOPIC, messages: [{ value: 'warm-up' }], acks: -1 });
  const before = await placedRequests(leader);
  try {
    for (let i = 0; i < SENDS; i++) await producer.send({ topic: TOPIC, messages: [{ key: `k-${i}`, value: `v-${i}` }], acks: -1 });
  } finally {
    await producer.disconnect();
  }
  // Each produce, and at least two follower Fetches answering its record.
  const after = await waitServed(leader, sum(before.served) + 3 * SENDS);
  const served = sum(after.served) - sum(before.served);
  const forwarded = sum(after.forwarded) - sum(before.forwarded);
  assert.ok(served >= 3 * SENDS, `served on the leader's shard: ${served}`);
  assert.ok(forwarded < SENDS, `forwarded to main: ${forwarded} (a follower's Fetch forwarded would make it at least ${2 * SENDS})`);
  // The high watermark passed every message with all three replicas still in sync: both followers hold them.
  const conn = await connectTo(leader.kafkaPort);
  try {
    assert.equal((await listOffset(conn, TOPIC, 0, LATEST)).offset, SENDS + 1);
  } finally {
    await conn.close();
  }
  const isr = (await withAdmin(leader, (admin) => admin.describeTopic(TOPIC))).partitionDetails[0]!.isr;
  assert.deepEqual([...isr].sort(), [1, 2, 3]);
  // The followers' fetchers opened their connections with a replica Fetch, which main's admission gate saw.
  assert.ok(await leader.metric('sluice_broker_connections_admitted_total') >= 2, 'the followers\' fetchers were admitted as brokers');
});
