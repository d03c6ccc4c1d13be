// A leader's log start reaches its followers, and a follower left behind it starts over there,
// with three `sluice start` nodes. Only node 1 runs retention often (every 200 ms; the others
// every hour), so a follower's log start can move only because its leader's did. A topic with
// 4 KiB segments and retention.bytes 8 KiB, one 3000-byte record per segment: on the partition
// node 1 leads, retention deletes old segments on the leader and each follower deletes the same
// ones (ListOffsets earliest of each replica, as its actor reports it, and its directory). Then a
// follower is killed, the leader's retention passes the follower's log end, and the follower
// restarts: its fetch is out of range, it starts its log over at the leader's log start, catches
// up, rejoins the ISR, and holds the leader's segment files byte for byte from there.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Producer } from 'kafkajs';
import type { ActorStats } from '../../src/actors/partition_actor.js';
import type { ShardIntrospection } from '../../src/actors/shard.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { until } from '../helpers/until.js';

const TOPIC = 'trimmed';
const PARTITIONS = 3;
const RECORD_BYTES = 3000;
const RETAINER = 1;
const brokers = threeBrokers({
  sessionMs: 2000,
  heartbeatMs: 300,
  argsOf: (id) => ['--log-retention-check-interval-ms', id === RETAINER ? '200' : '3600000'],
});


const node = (id: number): BrokerProcess => brokers[id - 1]!;

/** The replica of TOPIC-`partition` on node `id`, as its partition actor reports it. */
async function replica(id: number, partition: number): Promise<ActorStats | null> {
  const res = await fetch(`http://127.0.0.1:${node(id).adminPort}/v1/actors`, { signal: AbortSignal.timeout(5000) });
  const shards = (await res.json()) as ShardIntrospection[];
  return shards.flatMap((s) => s.actors).find((a) => a.topic === TOPIC && a.partition === partition) ?? null;
}

/** [log start, log end, high watermark] of each node's replica, in node order; -1s for a node that is down. */
async function offsets(partition: number): Promise<number[][]> {
  return Promise.all([1, 2, 3].map(async (id) => {
    const r = node(id).running ? await replica(id, partition) : null;
    return r === null ? [-1, -1, -1] : [r.logStartOffset, r.logEndOffset, r.highWatermark];
  }));
}

/** Segment base offsets in node `id`'s directory of the partition. */
function segmentBases(id: number, partition: number): number[] {
  return readdirSync(join(node(id).dataDir, `${TOPIC}-${partition}`)).filter((n) => n.endsWith('.log')).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
}

/** A digest of the partition's segment files on node `id` from offset `from` on. */
function digestFrom(id: number, partition: number, from: number): string {
  const dir = join(node(id).dataDir, `${TOPIC}-${partition}`);
  const hash = createHash('sha256');
  for (const base of segmentBases(id, partition).filter((b) => b >= from)) {
    const name = `${String(base).padStart(20, '0')}.log`;
    hash.update(name).update(readFileSync(join(dir, name)));
  }
  return hash.digest('hex');
}

async function activeController(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${node(RETAINER).adminPort}/v1/quorum`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as QuorumReport).leaderId;
}

async function send(producer: Producer, partition: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, value: Buffer.alloc(RECORD_BYTES, i) }] });
  }
}

let ledByRetainer = -1;
let producer: Producer;

it('a follower deletes what the leader\'s retention deleted: every replica\'s log start follows the leader\'s', async () => {
  await withAdmin(node(RETAINER), (admin) => admin.createTopics(TOPIC, PARTITIONS, 3, { 'segment.bytes': '4096', 'retention.bytes': '8192' }));
  const described = await until('leaders and full ISRs', 20_000, () => withAdmin(node(RETAINER), (admin) => admin.describeTopic(TOPIC)),
    (t) => t.partitionDetails.every((p) => p.leader > 0 && p.isr.length === 3));
  ledByRetainer = described.partitionDetails.find((p) => p.leader === RETAINER)?.partition ?? -1;
  assert.ok(ledByRetainer >= 0, `node ${RETAINER} leads none of ${JSON.stringify(described.partitionDetails)}`);
  producer = await connectedProducer(kafkajsClient(node(RETAINER).bootstrap, 'log-start-e2e', 10), { idempotent: true, maxInFlightRequests: 1 });
  await send(producer, ledByRetainer, 12);
  await until('retention on the leader', 15_000, () => offsets(ledByRetainer), ([l]) => l![0]! > 0 && l![2] === 12);
  // Followers run no retention of their own for an hour: only the leader's log start moves theirs.
  // The leader's retention may take more than one pass, so each probe compares with its start then.
  const all = await until('every replica at the leader\'s log start', 15_000, () => offsets(ledByRetainer), (o) => o.every(([s, e]) => s === o[0]![0] && e === 12));
  const start = all[0]![0]!;
  for (const id of [2, 3]) assert.equal(segmentBases(id, ledByRetainer)[0], start, `node ${id}'s oldest segment: ${JSON.stringify(all)}`);
});

it('a follower whose log the leader\'s retention passed while it was down starts over at the leader\'s log start, catches up and rejoins the ISR', async () => {
  assert.ok(ledByRetainer >= 0, 'the first test found the partition');
  const controller = await activeController();
  const victim = [2, 3].find((id) => id !== controller) ?? 3;
  await until('the victim caught up', 15_000, () => offsets(ledByRetainer), (o) => o[victim - 1]![1] === o[0]![1]);
  const [, victimEnd] = (await offsets(ledByRetainer))[victim - 1]!;
  await node(victim).kill9();
  await send(producer, ledByRetainer, 10);
  const [leader] = await until('the leader\'s retention past the victim\'s log end', 20_000, () => offsets(ledByRetainer), ([l]) => l![0]! > victimEnd!);
  await node(victim).restart();
  const leaderEnd = leader![1]!;
  const caughtUp = await until('the victim caught up from the leader\'s log start', 30_000, () => offsets(ledByRetainer),
    (o) => o[victim - 1]![1] === leaderEnd && o[victim - 1]![0] === o[0]![0]);
  const isr = await until('the victim back in the ISR', 30_000, () => withAdmin(node(RETAINER), (admin) => admin.describeTopic(TOPIC)),
    (t) => t.partitionDetails.find((p) => p.partition === ledByRetainer)?.isr.length === 3);
  assert.ok(isr.partitionDetails.find((p) => p.partition === ledByRetainer)!.isr.includes(victim));
  const start = caughtUp[0]![0]!;
  assert.ok(start > victimEnd!, `the leader's log start ${start} is past the victim's old end ${victimEnd}`);
  assert.equal(segmentBases(victim, ledByRetainer)[0], start, 'nothing of the old log is left');
  assert.equal(digestFrom(victim, ledByRetainer, start), digestFrom(RETAINER, ledByRetainer, start), 'the victim holds the leader\'s bytes');
  assert.equal((await replica(victim, ledByRetainer))?.lastError, null);
  await producer.disconnect();
});
