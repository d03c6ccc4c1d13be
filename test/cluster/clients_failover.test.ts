// Real clients through broker kills on a `sluice dev cluster up 3` (issue 14 items 5 and 7, and its
// "done when"), as a new user would run them: default broker settings but one shard per node.
// (1) kcat (librdkafka, acks=all, idempotent, paced through its stdin) and a kafkajs producer
// (acks -1, idempotent) send unique values to an RF 3 topic while a kafkajs consumer group reads;
// a broker leading some partitions is killed with SIGKILL mid-load and restarted: both producers
// go on through their own retries, the broker is back in every ISR (`sluice cluster health`
// exits 0), and the read-back holds every acknowledged value once, in per-producer order, with
// replicas that agree (queue_checker.ts). (2) Two groups, one of kafkajs and one of our client,
// commit offsets on a coordinator that is then killed: the group's `__consumer_offsets` partition
// gets a new leader whose coordinator answers OffsetFetch with what was committed and
// acknowledged before the kill, and both groups go on consuming without re-reading committed
// records. Runs on the test's main thread; every wait and every client's work is bounded.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import kafkajs from 'kafkajs';
import type { Consumer as KafkajsConsumer, Kafka as KafkajsKafka } from 'kafkajs';
import { Consumer } from '../../src/client/consumer/consumer.js';
import { Producer } from '../../src/client/producer/index.js';
import { fetchGroupOffsets } from '../../src/client/group_admin.js';
import { offsetsPartitionFor } from '../../src/coordinator/groups/group_api.js';
import { FindCoordinatorApi } from '../../src/protocol/apis/find_coordinator.js';
import type { MetadataResponsePartition } from '../../src/protocol/apis/metadata.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { sleep } from '../helpers/broker_process.js';
import { sluice } from '../helpers/cli_run.js';
import { run } from '../helpers/child.js';
import { KCAT } from '../helpers/kcat.js';
import { checkQueue, describeQueue, queueValue, totalAnomalies } from '../helpers/queue_checker.js';
import type { QueueAck, QueueRead } from '../helpers/queue_checker.js';
import { LATEST, listOffset, metadata } from '../helpers/read_back.js';
import { readAfterHeal, topicPartitions } from './fault_workload.js';
import { CLUSTER_UNAVAILABLE, ProcessCluster, retryUntil, waitUntil } from './process_cluster.js';

process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';
const { Kafka, logLevel } = kafkajs;

const PARTITIONS = 3;
/** Producer numbers in the queue values (`p<k>-<seq>`): one per client. */
const KCAT_PRODUCER = 0;
const KAFKAJS_PRODUCER = 1;
const OUR_PRODUCER = 2;
/** Bounds of the kill test's load: values per producer, and the pace of each. */
const MAX_VALUES = 4_000;
const KCAT_LINES_PER_TICK = 10;
const KAFKAJS_BATCH = 10;
const TICK_MS = 50;
/** Load before the kill and acknowledgements wanted after it, from each producer. */
const LOAD_BEFORE_KILL_MS = 3_000;
const ACKS_AFTER_KILL = 100;
/** Records per phase of the coordinator test (before and after the kill). */
const PHASE_RECORDS = 300;
const HEALTHY_WAIT_MS = 25_000;

let cluster: ProcessCluster | null = null;

before(async () => {
  // `sluice dev cluster up 3 -- --shards 1`: the machine's cores are shared by three nodes.
  if (CLUSTER_UNAVAILABLE === false) cluster = await ProcessCluster.start(3, ['--shards', '1', '--log-level', 'info']);
});
afterEach((t) => cluster?.noteResult(t));
after(async () => {
  await cluster?.dispose();
});

function kafkajsOf(c: ProcessCluster, clientId: string): KafkajsKafka {
  return new Kafka({
    clientId, brokers: c.bootstrap.split(','), logLevel: logLevel.NOTHING, connectionTimeout: 3_000, requestTimeout: 10_000,
    // Generous, as a producer's delivery timeout: a leader's failover must fit in its retries.
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

async function createTopic(c: ProcessCluster, topic: string): Promise<void> {
  const admin = await c.admin(c.ids[0] as number);
  try {
    await admin.createTopics(topic, PARTITIONS, 3);
  } finally {
    await admin.close();
  }
}

/** `sluice cluster health --wait-healthy` over the live brokers: every partition led and fully in sync; its exit code. */
async function healthExit(c: ProcessCluster): Promise<{ code: number; out: string }> {
  const brokers = c.ids.filter((id) => c.running(id)).map((id) => `127.0.0.1:${c.node(id).kafkaPort}`).join(',');
  const r = await sluice(['cluster', 'health', '--brokers', brokers, '--wait-healthy', '--timeout-ms', String(HEALTHY_WAIT_MS)]);
  return { code: r.code, out: `${r.stdout}${r.stderr}` };
}

async function assertHealthy(c: ProcessCluster, when: string): Promise<void> {
  const h = await healthExit(c);
  assert.equal(h.code, 0, `cluster health ${when}:\n${h.out}`);
}

/** The active controller as a running broker's Metadata names it. */
async function controllerId(c: ProcessCluster): Promise<number> {
  const conn = await c.connect(c.ids.find((id) => c.running(id)) as number, 5_000);
  try {
    return (await metadata(conn, [])).controllerId;
  } finally {
    await conn.close();
  }
}

/** A kafkajs group member that records every message it is handed and commits each batch's end once handled. */
class KafkajsReader {
  readonly consumed: (QueueRead & { at: number })[] = [];
  /** Per partition, the last offset a commit of which was acknowledged. */
  readonly committed = new Map<number, number>();
  commitFailures = 0;
  private constructor(private readonly consumer: KafkajsConsumer) {}

  static async start(kafka: KafkajsKafka, groupId: string, topic: string, commit: boolean): Promise<KafkajsReader> {
    // kafkajs's default retries: the consumer restarts (finding the coordinator again) once they are
    // spent, so the producers' generous ones would keep it on a dead coordinator for a minute.
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200, retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 30_000 } });
    const reader = new KafkajsReader(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: !commit,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        for (const m of batch.messages) {
          reader.consumed.push({ partition: batch.partition, offset: Number(m.offset), value: m.value?.toString() ?? '', at: performance.now() });
          resolveOffset(m.offset);
        }
        const last = batch.messages.at(-1);
        if (commit && last !== undefined) {
          const next = Number(last.offset) + 1;
          try {
            await consumer.commitOffsets([{ topic, partition: batch.partition, offset: String(next) }]);
            reader.committed.set(batch.partition, next);
          } catch {
            // Not acknowledged: the next batch's commit covers it.
            reader.commitFailures++;
          }
        }
        await heartbeat();
      },
    });
    return reader;
  }

  stop(): Promise<void> {
    return this.consumer.disconnect();
  }
}

/** Every partition's log end offset (the high watermark), asked of its leader. */
async function logEnds(c: ProcessCluster, topic: string): Promise<Map<number, number>> {
  const via = c.ids.find((id) => c.running(id)) as number;
  const ends = new Map<number, number>();
  for (const p of await topicPartitions(c, via, topic)) {
    const conn = await c.connect(p.leaderId, 5_000);
    try {
      ends.set(p.partitionIndex, (await listOffset(conn, topic, p.partitionIndex, LATEST)).offset);
    } finally {
      await conn.close();
    }
  }
  return ends;
}

test('kcat and kafkajs produce and a kafkajs group reads through a kill -9 of a leader and its restart: nothing acknowledged lost, duplicated or reordered', { skip: CLUSTER_UNAVAILABLE, timeout: 150_000 }, async () => {
  const c = cluster as ProcessCluster;
  const topic = 'clients-kill';
  await createTopic(c, topic);
  await assertHealthy(c, 'before the load');
  const kafka = kafkajsOf(c, 'clients-kill');
  const group = await KafkajsReader.start(kafka, `${topic}-readers`, topic, false);

  // kcat reads values from a pipe written at a steady pace, so its sends span the kill and restart.
  const kcatIn = new PassThrough();
  const kcatRun = run(KCAT, [
    '-b', c.bootstrap, '-P', '-t', topic, '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'linger.ms=5',
    '-X', 'message.timeout.ms=60000', '-X', 'topic.partitioner=murmur2_random',
  ], { input: kcatIn, timeoutMs: 120_000 });
  let stopping = false;
  let kcatSent = 0;
  const kcatWriter = (async (): Promise<void> => {
    while (!stopping && kcatSent < MAX_VALUES) {
      const lines: string[] = [];
      for (let i = 0; i < KCAT_LINES_PER_TICK && kcatSent < MAX_VALUES; i++) lines.push(queueValue(KCAT_PRODUCER, kcatSent++));
      kcatIn.write(`${lines.join('\n')}\n`);
      await sleep(TICK_MS);
    }
    kcatIn.end();
  })();

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  const kafkajsAcks: (QueueAck & { at: number })[] = [];
  let kafkajsSent = 0;
  let kafkajsFailed = 0;
  const kafkajsLoop = (async (): Promise<void> => {
    while (!stopping && kafkajsSent < MAX_VALUES) {
      // Explicit partitions, so each send's per-partition base offset places every value.
      const values = Array.from({ length: KAFKAJS_BATCH }, () => queueValue(KAFKAJS_PRODUCER, kafkajsSent++));
      const messages = values.map((value, i) => ({ value, partition: i % PARTITIONS }));
      try {
        const meta = await producer.send({ topic, acks: -1, messages });
        const at = performance.now();
        for (const m of meta) {
          const mine = messages.filter((x) => x.partition === m.partition);
          mine.forEach((x, i) => kafkajsAcks.push({ value: x.value, partition: m.partition, offset: Number(m.baseOffset) + i, at }));
        }
      } catch {
        kafkajsFailed += values.length;
      }
      await sleep(TICK_MS);
    }
  })();

  try {
    await sleep(LOAD_BEFORE_KILL_MS);
    assert.ok(kafkajsAcks.length > 0, 'kafkajs had acknowledgements before the kill');
    // A leader of some partitions that is not the active controller: the quorum's own failover has its row in the fault suite.
    const controller = await controllerId(c);
    const leaders = new Set((await topicPartitions(c, c.ids[0] as number, topic)).map((p) => p.leaderId));
    const victim = [...leaders].find((id) => id !== controller) ?? ([...leaders][0] as number);
    const killedAt = performance.now();
    await c.kill9(victim);
    await waitUntil(`${ACKS_AFTER_KILL} kafkajs acknowledgements after the kill`, () => kafkajsAcks.filter((a) => a.at > killedAt).length >= ACKS_AFTER_KILL, 45_000);
    const firstAfter = Math.min(...kafkajsAcks.filter((a) => a.at > killedAt).map((a) => a.at));
    process.stdout.write(`# broker ${victim} killed; kafkajs's first acknowledgement after it ${Math.round(firstAfter - killedAt)} ms later\n`);
    await c.restart(victim);
    await assertHealthy(c, `after broker ${victim} restarted`);
    await sleep(1_000);
  } finally {
    stopping = true;
    await kafkajsLoop;
    await kcatWriter;
    await producer.disconnect();
  }
  const kcatResult = await kcatRun;
  assert.equal(kcatResult.code, 0, `kcat: ${kcatResult.stderr.slice(-2000)}`);
  // Its delivery reports name only failures; connection errors while a broker is down are logged and retried.
  assert.doesNotMatch(kcatResult.stderr, /Delivery failed/, 'kcat delivered every message');
  assert.equal(kafkajsFailed, 0, 'no kafkajs send failed after its retries');

  const { final, replicas } = await readAfterHeal(c, topic);
  const kcatAcks: QueueAck[] = Array.from({ length: kcatSent }, (_, seq) => ({ value: queueValue(KCAT_PRODUCER, seq), partition: null, offset: null }));
  const acked = [...kcatAcks, ...kafkajsAcks.map(({ at: _, ...a }) => a)];
  // The group reads everything acknowledged (bounded), then is judged with the rest.
  await waitUntil('the kafkajs group read every acknowledged value', () => {
    const seen = new Set(group.consumed.map((r) => r.value));
    return acked.every((a) => seen.has(a.value));
  }, 30_000).catch(() => undefined);
  await group.stop();
  const attempted = [kcatSent, kafkajsSent, 0];
  const report = checkQueue({ acked, attempted, consumed: group.consumed, final, replicas });
  process.stdout.write(`# kcat ${kcatSent} sent, kafkajs ${kafkajsAcks.length} acknowledged; ${describeQueue(report)}\n`);
  // Where a lost value was acknowledged and what the log holds there, to tell a broker's false
  // acknowledgement (an offset later truncated) from a client's (an offset it never wrote).
  const finalAt = new Map(final.map((r) => [`${r.partition}@${r.offset}`, r.value]));
  const lostAt = report.lost.slice(0, 10).map((v) => {
    const a = acked.find((x) => x.value === v);
    return a?.partition === null || a === undefined ? `${v}@?` : `${v}@${a.partition}:${a.offset} (log holds ${finalAt.get(`${a.partition}@${a.offset}`) ?? 'nothing'})`;
  });
  assert.equal(totalAnomalies(report), 0, `${describeQueue(report)}${lostAt.length > 0 ? `; lost acknowledged at ${lostAt.join(', ')}` : ''}`);
  const groupSaw = new Set(group.consumed.map((r) => r.value));
  assert.deepEqual(acked.filter((a) => !groupSaw.has(a.value)).map((a) => a.value).slice(0, 10), [], 'the kafkajs group read every acknowledged value');
});

/**
 * The broker to kill as a coordinator: of those that lead some `__consumer_offsets` partition, one
 * other than the active controller if there is one (the quorum's own failover is the fault suite's).
 */
function coordinatorToKill(offsets: readonly MetadataResponsePartition[], controller: number): number {
  const leaders = [...new Set(offsets.map((p) => p.leaderId).filter((id) => id >= 0))];
  const victim = leaders.find((id) => id !== controller) ?? leaders[0];
  assert.ok(victim !== undefined, '__consumer_offsets has leaders');
  return victim;
}

/** Group ids of `prefix` whose coordinator (leader of its __consumer_offsets partition) is `broker`, `count` of them. */
function groupsCoordinatedBy(offsets: readonly MetadataResponsePartition[], broker: number, prefix: string, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count && i < 10_000; i++) {
    const id = `${prefix}-${i}`;
    if (offsets.find((p) => p.partitionIndex === offsetsPartitionFor(id, offsets.length))?.leaderId === broker) out.push(id);
  }
  assert.equal(out.length, count, `group ids coordinated by broker ${broker}`);
  return out;
}

/** FindCoordinator asked of a running broker; the coordinator's node id, or -1 with an error. */
async function findCoordinator(c: ProcessCluster, via: number, groupId: string): Promise<number> {
  const conn = await c.connect(via, 5_000);
  try {
    const res = await conn.request(FindCoordinatorApi, { key: groupId, keyType: 0, coordinatorKeys: [groupId] });
    const found = res.coordinators.find((x) => x.key === groupId) ?? res;
    return found.errorCode === ErrorCode.NONE ? found.nodeId : -1;
  } finally {
    await conn.close();
  }
}

/** The group's committed offsets of `topic` by partition, from its coordinator `coordinator`. */
async function committedOffsets(c: ProcessCluster, coordinator: number, groupId: string, topic: string): Promise<Map<number, number>> {
  const conn = await c.connect(coordinator, 5_000);
  try {
    return new Map((await fetchGroupOffsets(conn, groupId)).filter((o) => o.topic === topic).map((o) => [o.partition, o.offset]));
  } finally {
    await conn.close();
  }
}

/** Our client's group member: polls, records, and commits what each poll returned. */
class OurReader {
  readonly consumed: (QueueRead & { at: number })[] = [];
  readonly committed = new Map<number, number>();
  commitFailures = 0;
  private stopping = false;
  private readonly loop: Promise<void>;

  constructor(private readonly consumer: Consumer, topic: string) {
    this.loop = (async (): Promise<void> => {
      await consumer.subscribe([topic]);
      while (!this.stopping) {
        let batches;
        try {
          batches = await consumer.poll({ signal: AbortSignal.timeout(1_000) });
        } catch {
          // The coordinator or a leader went away: the consumer finds the new one on the next poll.
          await sleep(100);
          continue;
        }
        const ends = new Map<number, number>();
        for (const b of batches) {
          for (const m of b.messages) {
            this.consumed.push({ partition: m.partition, offset: m.offset, value: m.value?.toString() ?? '', at: performance.now() });
            ends.set(m.partition, m.offset + 1);
          }
        }
        if (ends.size === 0) continue;
        try {
          await consumer.commit([...ends].map(([partition, offset]) => ({ topic, partition, offset })));
          for (const [p, o] of ends) this.committed.set(p, o);
        } catch {
          this.commitFailures++;
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    await this.consumer.close();
  }
}

/** Values that `reader` read after `since` at an offset its group had committed past before then (a re-read). */
function rereads(consumed: readonly (QueueRead & { at: number })[], since: number, committed: ReadonlyMap<number, number>): number {
  return consumed.filter((r) => r.at > since && r.offset < (committed.get(r.partition) ?? 0)).length;
}

test('the group coordinator moves with its __consumer_offsets partition when its broker is killed: committed offsets survive and both groups go on without re-reading', { skip: CLUSTER_UNAVAILABLE, timeout: 150_000 }, async () => {
  const c = cluster as ProcessCluster;
  const topic = 'coordinator-failover';
  await createTopic(c, topic);
  await assertHealthy(c, 'before the groups start');
  // The coordinator to kill, coordinating both groups.
  const controller = await controllerId(c);
  const offsets = await topicPartitions(c, controller, '__consumer_offsets');
  const victim = coordinatorToKill(offsets, controller);
  const [ourGroup, kafkajsGroup] = groupsCoordinatedBy(offsets, victim, `${topic}-g`, 2) as [string, string];
  const survivor = c.ids.find((id) => id !== victim) as number;
  assert.equal(await findCoordinator(c, survivor, ourGroup), victim, 'FindCoordinator names the leader of the group\'s __consumer_offsets partition');

  const producer = new Producer({ brokers: c.bootstrap, clientId: 'coordinator-failover-p', acks: 'all', idempotent: true, requestTimeoutMs: 5_000, deliveryTimeoutMs: 60_000, retryBackoffMs: 50 });
  await producer.connect();
  const produce = async (from: number, to: number): Promise<void> => {
    await Promise.all(Array.from({ length: to - from }, (_, i) => producer.send(topic, { key: `k${(from + i) % 16}`, value: queueValue(OUR_PRODUCER, from + i) })));
  };
  const ours = new OurReader(new Consumer({
    brokers: c.bootstrap, clientId: 'coordinator-failover-ours', groupId: ourGroup, autoOffsetReset: 'earliest',
    requestTimeoutMs: 5_000, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 500, maxWaitMs: 200,
  }), topic);
  const theirs = await KafkajsReader.start(kafkajsOf(c, 'coordinator-failover-kafkajs'), kafkajsGroup, topic, true);
  const readers = [{ name: 'our client', group: ourGroup, r: ours }, { name: 'kafkajs', group: kafkajsGroup, r: theirs }];
  try {
    await produce(0, PHASE_RECORDS);
    const endsBefore = await logEnds(c, topic);
    const committedAll = (r: { committed: ReadonlyMap<number, number> }, ends: ReadonlyMap<number, number>): boolean =>
      [...ends].every(([p, end]) => r.committed.get(p) === end);
    for (const { name, r } of readers) await waitUntil(`${name} committed the first ${PHASE_RECORDS} records`, () => committedAll(r, endsBefore), 45_000);
    const before = new Map(readers.map(({ group, r }) => [group, new Map(r.committed)]));

    const killedAt = performance.now();
    await c.kill9(victim);
    // FindCoordinator through a survivor names the new leader of the partition, which answers OffsetFetch with what was acknowledged.
    for (const { name, group } of readers) {
      const moved = await retryUntil(30_000, async () => {
        const now = await findCoordinator(c, survivor, group);
        if (now < 0 || now === victim) throw new Error(`${name}'s group still coordinated by ${now}`);
        const offsets = await committedOffsets(c, now, group, topic);
        return { now, offsets };
      }, 100);
      process.stdout.write(`# ${name}'s group coordinated by ${moved.now} ${Math.round(performance.now() - killedAt)} ms after broker ${victim} was killed\n`);
      assert.deepEqual([...moved.offsets].sort((a, b) => a[0] - b[0]), [...(before.get(group) as Map<number, number>)].sort((a, b) => a[0] - b[0]), `${name}'s committed offsets on the new coordinator`);
    }

    await produce(PHASE_RECORDS, 2 * PHASE_RECORDS);
    const endsAfter = await logEnds(c, topic);
    for (const { name, r } of readers) await waitUntil(`${name} read and committed the records produced after the kill`, () => committedAll(r, endsAfter), 60_000);
    for (const { name, group, r } of readers) {
      assert.equal(rereads(r.consumed, killedAt, before.get(group) as Map<number, number>), 0, `${name} re-read nothing it had committed`);
      const coordinator = await findCoordinator(c, survivor, group);
      assert.deepEqual(await committedOffsets(c, coordinator, group, topic), endsAfter, `${name}'s offsets committed after the kill`);
    }
    await c.restart(victim);
    await assertHealthy(c, `after broker ${victim} restarted`);
  } finally {
    await Promise.allSettled([ours.stop(), theirs.stop(), producer.close()]);
  }
});
