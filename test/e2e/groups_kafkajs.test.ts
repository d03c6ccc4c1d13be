// Consumer groups end to end with kafkajs 2.2.4 (classic protocol, eager rebalances): a group of
// three member processes consumes a 12-partition topic while one member is SIGKILLed (its
// session expires) and another joins. Every message is consumed, none is skipped, and the
// committed offsets survive a broker restart. Also the admin side kafkajs drives: describe,
// list, fetch/reset offsets and delete of groups.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';

const MEMBER = fileURLToPath(new URL('../helpers/group_member.js', import.meta.url));
const GROUP_ARGS = ['--group-initial-rebalance-delay-ms', '0', '--group-min-session-timeout-ms', '1000'];

let broker: BrokerProcess;
let kafka: KafkaType;
let admin: Admin;
let producer: Producer;

before(async () => {
  broker = await BrokerProcess.start({ args: GROUP_ARGS });
  kafka = kafkajsClient(broker.bootstrap);
  admin = kafka.admin();
  await admin.connect();
  producer = await connectedProducer(kafka);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await broker?.dispose();
});

/** A member process and the (partition, offset) pairs it reported. */
class Member {
  readonly seen: string[] = [];
  private readonly child: ChildProcess;
  private rest = '';
  readonly exited: Promise<void>;

  constructor(bootstrap: string, group: string, topic: string) {
    this.child = spawn(process.execPath, [MEMBER, bootstrap, group, topic], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      const lines = (this.rest + d).split('\n');
      this.rest = lines.pop()!;
      this.seen.push(...lines);
    });
    this.child.stderr!.resume();
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  kill(signal: NodeJS.Signals): Promise<void> {
    this.child.kill(signal);
    return this.exited;
  }
}

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('kafkajs consumer group', () => {
  it('consumes everything across a member crash and a join; commits survive kill -9 and restart', { timeout: 120_000 }, async () => {
    const topic = 'group-e2e';
    const partitions = 12;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    await sendRange(producer, topic, 'g', 0, 3000, { batch: 200 });
    const members = [0, 1, 2].map(() => new Member(broker.bootstrap, 'g1', topic));
    const all = new Set<string>();
    const union = (): number => {
      for (const m of members) for (const s of m.seen) all.add(s);
      return all.size;
    };
    await waitFor('the first half to be consumed', () => union() >= 3000, 60_000);
    await waitFor('a stable group of 3', async () => {
      const g = (await admin.describeGroups(['g1'])).groups[0]!;
      return g.state === 'Stable' && g.members.length === 3;
    }, 30_000);

    await members[0]!.kill('SIGKILL');
    await sendRange(producer, topic, 'g', 3000, 4500, { batch: 200 });
    members.push(new Member(broker.bootstrap, 'g1', topic));
    await sendRange(producer, topic, 'g', 4500, 6000, { batch: 200 });
    await waitFor('every message to be consumed', () => union() >= 6000, 60_000);

    const ends = await admin.fetchTopicOffsets(topic);
    const expected = new Set<string>();
    for (const p of ends) for (let o = 0; o < Number(p.high); o++) expected.add(`${p.partition} ${o}`);
    assert.equal(expected.size, 6000);
    assert.deepEqual([...all].filter((s) => !expected.has(s)), [], 'reported offsets that do not exist');
    assert.deepEqual([...expected].filter((s) => !all.has(s)), [], 'messages never consumed');

    await Promise.all(members.slice(1).map((m) => m.kill('SIGTERM')));
    await broker.kill9();
    await broker.restart();
    const restarted = kafkajsClient(broker.bootstrap).admin();
    await restarted.connect();
    try {
      const committed = await restarted.fetchOffsets({ groupId: 'g1', topics: [topic] });
      const byPartition = new Map(committed[0]!.partitions.map((p) => [p.partition, Number(p.offset)]));
      for (const p of ends) assert.equal(byPartition.get(p.partition), Number(p.high), `committed offset of partition ${p.partition}`);
      const after = await restarted.describeGroups(['g1']);
      assert.equal(after.groups[0]!.state, 'Empty');
    } finally {
      await restarted.disconnect();
    }
  });

  it('lists, resets and deletes groups through the admin API', { timeout: 60_000 }, async () => {
    const topic = 'group-admin';
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    await admin.setOffsets({ groupId: 'g-admin', topic, partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '7' }] });
    const fetched = await admin.fetchOffsets({ groupId: 'g-admin', topics: [topic] });
    assert.deepEqual(fetched[0]!.partitions.map((p) => [p.partition, p.offset]).sort(), [[0, '5'], [1, '7']]);
    const listed = await admin.listGroups();
    assert.ok(listed.groups.some((g) => g.groupId === 'g-admin'), 'the group is listed');
    await admin.deleteGroups(['g-admin']);
    const gone = await admin.describeGroups(['g-admin']);
    assert.equal(gone.groups[0]!.state, 'Dead');
    await assert.rejects(admin.deleteGroups(['g-admin']), (err: { groups?: { error?: { type?: string } }[] }) => {
      assert.equal(err.groups?.[0]?.error?.type, 'GROUP_ID_NOT_FOUND');
      return true;
    });
  });
});
