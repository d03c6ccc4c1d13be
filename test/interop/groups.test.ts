// Consumer groups (classic protocol) with the Debian clients: kcat 1.7 balanced consumers (-G,
// librdkafka eager rebalance, auto-commit on close) share a topic and a later member resumes
// from their commits; confluent-kafka (librdkafka 2.0.2) members with cooperative-sticky get
// incremental assignments while one joins and one leaves under load, committing on revoke;
// kafka-python members (eager, range assignor) split a topic and commit what they consumed.
// Each member is a separate process; the members print what they saw and this file asserts.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { committedOffsets, endOffsets } from '../helpers/group_offsets.js';
import { PYTHON } from '../helpers/kafka_python.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { KCAT, kcat, kcatInput, produceArgs } from '../helpers/kcat.js';
import { killAll } from '../helpers/line_child.js';
import { KCAT_GROUP_FORMAT, MemberLog, coversExactly } from '../helpers/member_log.js';
import type { RebalanceEvent } from '../helpers/member_log.js';
import { messageIndex, testMessage } from '../helpers/messages.js';
import { connectTo } from '../helpers/read_back.js';

const GROUP_SCRIPT = fileURLToPath(new URL('../../../test/interop/group_client.py', import.meta.url));
const GROUP_ARGS = ['--group-initial-rebalance-delay-ms', '0', '--group-min-session-timeout-ms', '1000'];
/** Hard bound on any member process; each test stays under a minute. */
const MEMBER_LIFETIME_MS = 90_000;
const JOIN_MS = 30_000;
const STOP_MS = 20_000;

let broker: BrokerProcess;
let conn: KafkaConnection;
let kafka: KafkaType;
let admin: Admin;
let producer: Producer;
let members: MemberLog[] = [];

before(async () => {
  broker = await BrokerProcess.start({ shards: 2, args: GROUP_ARGS });
  conn = await connectTo(broker.kafkaPort);
  kafka = kafkajsClient(broker.bootstrap);
  admin = kafka.admin();
  await admin.connect();
  producer = await connectedProducer(kafka);
});

afterEach(async (t) => {
  broker?.noteResult(t);
  if ((t as { passed?: boolean }).passed === false) {
    for (const m of members) process.stderr.write(`# ${m.child.name} stderr:\n${m.child.stderrTail()}\n# ${m.child.name} stdout tail:\n${m.child.out.lines.filter((l) => !l.startsWith('m ')).slice(-20).join('\n')}\n`);
    process.stderr.write(`# broker log tail:\n${broker?.logTail(60)}\n`);
  }
  await killAll(members.map((m) => m.child));
  members = [];
});

after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

async function createTopic(topic: string, numPartitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
}

function track(m: MemberLog): MemberLog {
  members.push(m);
  return m;
}

function pythonMember(name: string, args: readonly string[]): MemberLog {
  return track(MemberLog.python(name, PYTHON, GROUP_SCRIPT, args, MEMBER_LIFETIME_MS));
}

/** Polls `ok` (bounded) while `members` run; fails early if one exits. */
async function waitAll(what: string, group: readonly MemberLog[], ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const m of group) {
      m.update();
      if (!m.child.running) throw new Error(`${m.child.name} exited before ${what}:\n${m.child.stderrTail()}`);
    }
    if (ok()) return;
    if (Date.now() >= deadline) throw new Error(`no ${what} within ${timeoutMs} ms; holdings ${group.map((m) => `${m.child.name}=[${[...m.held].sort()}]`).join(' ')}`);
    await sleep(50);
  }
}

async function stopCleanly(m: MemberLog): Promise<void> {
  const status = await m.child.stop(STOP_MS);
  m.update();
  assert.equal(status.code, 0, `${m.child.name} exit ${status.code ?? status.signal}:\n${m.child.stderrTail()}`);
}

/** How often each message index was consumed, after checking every record's bytes. */
function indexCounts(group: readonly MemberLog[], tag: string, maxNoise?: number): Map<number, number> {
  const counts = new Map<number, number>();
  for (const m of group) {
    for (const r of m.consumed) {
      const i = messageIndex(tag, r.value);
      assert.ok(i >= 0 && r.value?.equals(testMessage(tag, i, maxNoise).value) === true, `${m.child.name}: unexpected record at ${r.partition}/${r.offset}`);
      counts.set(i, (counts.get(i) ?? 0) + 1);
    }
  }
  return counts;
}

const allIn = (counts: ReadonlyMap<number, number>, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) if (!counts.has(i)) return false;
  return true;
};

/** Every offset in [from[p], to[p]) of every partition was consumed by some member, and none outside. */
function assertOffsetsCovered(group: readonly MemberLog[], from: readonly number[], to: readonly number[]): void {
  const seen = to.map(() => new Set<number>());
  for (const m of group) {
    for (const r of m.consumed) {
      assert.ok(r.offset >= (from[r.partition] ?? 0) && r.offset < (to[r.partition] ?? 0), `${m.child.name}: offset ${r.partition}/${r.offset} outside [${from[r.partition]}, ${to[r.partition]})`);
      seen[r.partition]?.add(r.offset);
    }
  }
  assert.deepEqual(seen.map((s) => s.size), to.map((end, p) => end - (from[p] ?? 0)), 'consumed offsets per partition');
}

/** Every record a member consumed came from `held`, what it held before it was stopped (no rebalance while consuming). */
function assertConsumedFromHeld(m: MemberLog, held: ReadonlySet<number>): void {
  const foreign = m.consumed.filter((r) => !held.has(r.partition));
  assert.equal(foreign.length, 0, `${m.child.name} consumed from partitions it did not hold: ${foreign.slice(0, 5).map((r) => `${r.partition}/${r.offset}`)}`);
}

describe('consumer groups with the Debian clients', () => {
  it('kcat -G: two balanced members split 6 partitions; a third resumes from their commits', { timeout: 60_000 }, async () => {
    const topic = 'kcat-group';
    const group = 'kcat-g';
    const partitions = 6;
    const first = 3000;
    const more = 500;
    await createTopic(topic, partitions);
    const kcatMember = (name: string, extra: readonly string[]): MemberLog => track(MemberLog.kcat(name, KCAT, [
      '-b', broker.bootstrap, '-G', group, '-u', '-f', KCAT_GROUP_FORMAT,
      '-X', 'auto.offset.reset=earliest', '-X', 'session.timeout.ms=6000', '-X', 'heartbeat.interval.ms=500',
      '-X', 'auto.commit.interval.ms=200', ...extra, topic,
    ], MEMBER_LIFETIME_MS));
    // Text-only values (no noise): kcat prints them on one line each.
    const produce = (from: number, to: number) => kcat(produceArgs(broker.bootstrap, topic), {
      input: kcatInput(Array.from({ length: to - from }, (_, k) => testMessage(topic, from + k, 0))),
    });

    const a = kcatMember('kcat-a', []);
    const b = kcatMember('kcat-b', []);
    await waitAll('stable assignment of 6 partitions over kcat-a and kcat-b', [a, b], () => coversExactly([a, b], partitions), JOIN_MS);
    await produce(0, first);
    await waitAll(`all ${first} messages consumed`, [a, b], () => allIn(indexCounts([a, b], topic, 0), 0, first), 30_000);
    const held = [a, b].map((m) => new Set(m.held));
    await Promise.all([stopCleanly(a), stopCleanly(b)]);

    const ends = await endOffsets(conn, topic, partitions);
    assert.equal(ends.reduce((x, y) => x + y, 0), first);
    const counts = indexCounts([a, b], topic, 0);
    assert.equal(counts.size, first);
    assert.ok([...counts.values()].every((n) => n === 1), 'no message consumed twice (no rebalance while consuming)');
    assertOffsetsCovered([a, b], ends.map(() => 0), ends);
    [a, b].forEach((m, k) => {
      assert.ok(m.consumed.length > 0, `${m.child.name} consumed nothing`);
      assertConsumedFromHeld(m, held[k] as Set<number>);
      assert.deepEqual(m.errors, [], `${m.child.name} reported errors`);
    });
    assert.deepEqual(await committedOffsets(conn, group, topic, partitions), ends, 'auto-committed offsets at close = log end');

    await produce(first, first + more);
    const c = kcatMember('kcat-c', ['-e', '-X', 'enable.partition.eof=true']);
    await c.waitFor('exit at the end of every partition (-e)', (m) => !m.child.running, 30_000);
    const status = await c.child.exited;
    c.update();
    assert.equal(status.code, 0, `kcat-c exit ${status.code ?? status.signal}:\n${c.child.stderrTail()}`);
    const resumed = indexCounts([c], topic, 0);
    assert.deepEqual([...resumed.keys()].sort((x, y) => x - y), Array.from({ length: more }, (_, k) => first + k), 'kcat-c consumed exactly the newer messages');
    assertOffsetsCovered([c], ends, await endOffsets(conn, topic, partitions));
  });

  it('confluent-kafka cooperative-sticky: incremental rebalances while a member joins and one leaves under load', { timeout: 60_000 }, async (t) => {
    const topic = 'coop';
    const group = 'coop-g';
    const partitions = 6;
    const total = 6000;
    const batch = 100;
    await createTopic(topic, partitions);
    const member = (name: string) => pythonMember(name, ['confluent', broker.bootstrap, group, topic, 'cooperative-sticky']);

    const a = member('coop-a');
    const b = member('coop-b');
    await waitAll('stable assignment over coop-a and coop-b', [a, b], () => coversExactly([a, b], partitions), JOIN_MS);

    let produced = 0;
    const production = (async () => {
      for (; produced < total; produced += batch) {
        await sendRange(producer, topic, topic, produced, produced + batch, { batch });
        await sleep(120);
      }
    })();
    const untilProduced = async (n: number): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (produced < n && Date.now() < deadline) await sleep(20);
    };

    await untilProduced(total / 3);
    const c = member('coop-c');
    await waitAll('coop-c taking a share', [a, b, c], () => coversExactly([a, b, c], partitions), JOIN_MS);
    t.diagnostic(`coop-c holds its share after ${produced} of ${total} messages were produced`);
    await untilProduced((2 * total) / 3);
    await stopCleanly(a);
    t.diagnostic(`coop-a left after ${produced} of ${total} messages were produced`);
    await production;
    await waitAll(`all ${total} messages consumed by coop-b and coop-c holding all partitions`, [b, c],
      () => coversExactly([b, c], partitions) && allIn(indexCounts([a, b, c], topic), 0, total), 30_000);
    await Promise.all([stopCleanly(b), stopCleanly(c)]);

    const counts = indexCounts([a, b, c], topic);
    assert.ok(allIn(counts, 0, total) && counts.size === total, 'every message consumed at least once');
    const dupes = [...counts.values()].filter((n) => n > 1).length;
    t.diagnostic(`${dupes} messages consumed more than once (at-least-once across rebalances)`);
    const ends = await endOffsets(conn, topic, partitions);
    assertOffsetsCovered([a, b, c], ends.map(() => 0), ends);
    for (const m of [a, b, c]) {
      assert.deepEqual(m.errors.filter((e) => e !== 'commit-error _NO_OFFSET'), [], `${m.child.name} reported errors`);
      assertIncremental(m);
    }
    const partial = [a, b].flatMap((m) => m.events.filter((e) => e.kind === 'revoke' && !e.closing));
    assert.ok(partial.length > 0, 'coop-c joining made coop-a or coop-b give up partitions incrementally');
    assert.deepEqual(c.events.filter((e) => e.kind === 'revoke' && !e.closing), [], 'coop-c (joined last, sticky) never gave up a partition');
    assert.deepEqual(await committedOffsets(conn, group, topic, partitions), ends, 'offsets committed on revoke = log end');
  });

  it('kafka-python group (eager, range): two members split 4 partitions and commit what they consumed', { timeout: 60_000 }, async () => {
    const topic = 'kp-group';
    const group = 'kp-g';
    const partitions = 4;
    const total = 2000;
    await createTopic(topic, partitions);
    const a = pythonMember('kp-a', ['kafka-python', broker.bootstrap, group, topic]);
    const b = pythonMember('kp-b', ['kafka-python', broker.bootstrap, group, topic]);
    await waitAll('stable assignment over kp-a and kp-b', [a, b], () => coversExactly([a, b], partitions), JOIN_MS);
    // The range assignor gives each of two members a contiguous half.
    assert.deepEqual([a, b].map((m) => [...m.held].sort().join(',')).sort(), ['0,1', '2,3']);

    await sendRange(producer, topic, topic, 0, total, { batch: 200 });
    await waitAll(`all ${total} messages consumed`, [a, b], () => allIn(indexCounts([a, b], topic), 0, total), 30_000);
    const held = [a, b].map((m) => new Set(m.held));
    await Promise.all([stopCleanly(a), stopCleanly(b)]);

    const counts = indexCounts([a, b], topic);
    assert.equal(counts.size, total);
    assert.ok([...counts.values()].every((n) => n === 1), 'no message consumed twice (no rebalance while consuming)');
    const ends = await endOffsets(conn, topic, partitions);
    assertOffsetsCovered([a, b], ends.map(() => 0), ends);
    [a, b].forEach((m, k) => {
      assert.ok(m.consumed.length > 0, `${m.child.name} consumed nothing`);
      assertConsumedFromHeld(m, held[k] as Set<number>);
      assert.deepEqual(m.errors, [], `${m.child.name} reported errors`);
    });
    assert.deepEqual(await committedOffsets(conn, group, topic, partitions), ends, 'committed offsets = log end');
  });
});

describe('static membership (KIP-345) with librdkafka', () => {
  it('a SIGKILLed static member restarted within its session gets its partitions back with no rebalance', { timeout: 60_000 }, async () => {
    const topic = 'static-members';
    const group = 'g-static';
    const partitions = 4;
    await createTopic(topic, partitions);
    const member = (name: string, instance: string) => pythonMember(name, ['confluent', broker.bootstrap, group, topic, 'range', instance]);
    const a = member('static-a', 'instance-a');
    const b1 = member('static-b', 'instance-b');
    await waitAll('both static members to be assigned', [a, b1], () => a.held.size > 0 && b1.held.size > 0 && a.held.size + b1.held.size === partitions, 30_000);
    const heldByB = [...b1.held].sort();
    const eventsOfA = a.events.length;
    const memberCount = async (): Promise<number> => (await admin.describeGroups([group])).groups[0]!.members.length;
    assert.equal(await memberCount(), 2);

    await b1.child.stop(STOP_MS, 'SIGKILL');
    const b2 = member('static-b-again', 'instance-b');
    await waitAll('the restarted member to get its partitions', [a, b2], () => b2.held.size > 0, 30_000);
    assert.deepEqual([...b2.held].sort(), heldByB, 'the same partitions come back to the same instance');
    // Past the restart and a few heartbeats, the other member saw no revoke or new assignment.
    await sleep(2000);
    a.update();
    assert.equal(a.events.length, eventsOfA, `static-a saw a rebalance: ${a.events.map((e) => e.kind).join(',')}`);
    assert.equal(await memberCount(), 2, 'still two members: the restarted one replaced itself');
    await stopCleanly(b2);
    await stopCleanly(a);
  });
});

/**
 * The cooperative protocol's promise to a member, from its own event history: an assignment
 * only adds partitions it does not hold (eager re-hands the kept ones after revoking all), a
 * revoke while it stays in the group takes only some of its partitions, and a revoked partition
 * is not handed straight back; nothing is ever lost (no session timeouts here).
 */
function assertIncremental(m: MemberLog): void {
  const held = new Set<number>();
  let lastRevoked: readonly number[] = [];
  const show = (e: RebalanceEvent) => `${e.kind} [${e.partitions.join(',')}]`;
  const history = m.events.map(show).join('; ');
  for (const e of m.events) {
    assert.notEqual(e.kind, 'lost', `${m.child.name}: ${history}`);
    if (e.kind === 'assign') {
      assert.ok(e.partitions.every((p) => !held.has(p)), `${m.child.name} re-assigned a partition it held: ${history}`);
      assert.ok(e.partitions.every((p) => !lastRevoked.includes(p)), `${m.child.name} got back a partition just revoked: ${history}`);
      for (const p of e.partitions) held.add(p);
      lastRevoked = [];
      continue;
    }
    assert.ok(e.partitions.every((p) => held.has(p)), `${m.child.name} revoked a partition it did not hold: ${history}`);
    for (const p of e.partitions) held.delete(p);
    if (!e.closing) assert.ok(held.size > 0, `${m.child.name} had every partition revoked while staying: ${history}`);
    lastRevoked = e.partitions;
  }
}
