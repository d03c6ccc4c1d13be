// `sluice group ...` against a running broker process, through the compiled CLI entry: records
// produced with known timestamps, offsets committed by our admin client, then group list,
// describe (lag in records and seconds), seek (earliest, offset, timestamp) and delete, and what
// a group with a live kafkajs member refuses (delete: NON_EMPTY_GROUP, seek: UNKNOWN_MEMBER_ID).

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Consumer, Kafka as KafkaType, Producer } from 'kafkajs';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { sluice as runCli, type CliRun } from '../helpers/cli_run.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';


interface PartitionRow {
  topic: string;
  partition: number;
  committedOffset: number | null;
  logEndOffset: number | null;
  lag: number | null;
  lagSeconds: number | null;
  memberId: string | null;
}

interface Described {
  state: string;
  members: { memberId: string; clientId: string; assignment: { topic: string; partitions: number[] }[] | null }[];
  partitions: PartitionRow[];
}

const TOPIC = 'gcli-orders';
/** Record i of partition 0 has timestamp T0 + i s (10 records), of partition 1 T0 + i s (4 records). */
const T0 = Date.now() - 60_000;
const CLIENT_ID = 'gcli-live-member';

let broker: BrokerProcess;
let brokers: string[];
let kafka: KafkaType;
let producer: Producer;
let admin: KafkaAdmin;

function sluice(args: readonly string[]): Promise<CliRun> {
  return runCli([...args, ...brokers]);
}

async function describeJson(group: string): Promise<Described> {
  const r = await sluice(['group', 'describe', group, '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Described;
}

/** Polls `probe` until it returns a value (bounded); the last error explains a timeout. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(200);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms${last === undefined ? '' : ` (${String(last)})`}`);
}

before(async () => {
  broker = await BrokerProcess.start({ args: ['--group-initial-rebalance-delay-ms', '0'] });
  brokers = ['--brokers', broker.bootstrap];
  kafka = kafkajsClient(broker.bootstrap);
  producer = await connectedProducer(kafka);
  admin = await KafkaAdmin.connect({ host: broker.host, port: broker.kafkaPort, clientId: 'gcli-test' });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await admin?.close().catch(() => undefined);
  await broker?.dispose();
});

describe('sluice group', () => {
  it('lists a group that committed offsets through the admin client', async () => {
    const created = await sluice(['topic', 'create', TOPIC, '--partitions', '2']);
    assert.equal(created.code, 0, created.stderr);
    const messages = (partition: number, n: number): { value: string; partition: number; timestamp: string }[] =>
      Array.from({ length: n }, (_, i) => ({ value: `p${partition}-${i}`, partition, timestamp: String(T0 + i * 1000) }));
    await producer.send({ topic: TOPIC, messages: messages(0, 10) });
    await producer.send({ topic: TOPIC, messages: messages(1, 4) });
    await admin.commitGroupOffsets('gcli-app', [{ topic: TOPIC, partition: 0, offset: 3 }, { topic: TOPIC, partition: 1, offset: 4 }]);

    const list = await sluice(['group', 'list', '--format', 'json']);
    assert.equal(list.code, 0, list.stderr);
    const groups = JSON.parse(list.stdout) as { groupId: string; state: string; members: number | null }[];
    assert.deepEqual(groups.find((g) => g.groupId === 'gcli-app'), { groupId: 'gcli-app', state: 'Empty', protocolType: '', groupType: 'classic', members: 0 });
    const text = await sluice(['group', 'list']);
    assert.match(text.stdout, /^GROUP\s+STATE\s+TYPE\s+PROTOCOL-TYPE\s+MEMBERS$/m);
    assert.match(text.stdout, /^gcli-app\s+Empty\s+classic\s+-\s+0$/m);
  });

  it('describes its lag in records and in seconds between the committed and the last record', async () => {
    const d = await describeJson('gcli-app');
    assert.equal(d.state, 'Empty');
    assert.deepEqual(d.members, []);
    assert.deepEqual(d.partitions, [
      { topic: TOPIC, partition: 0, committedOffset: 3, logEndOffset: 10, lag: 7, lagSeconds: 6, memberId: null },
      { topic: TOPIC, partition: 1, committedOffset: 4, logEndOffset: 4, lag: 0, lagSeconds: 0, memberId: null },
    ]);
    const text = await sluice(['group', 'describe', 'gcli-app']);
    assert.match(text.stdout, new RegExp(`^${TOPIC}\\s+0\\s+3\\s+10\\s+7\\s+6\\s+-$`, 'm'));
  });

  it('seeks to the earliest offsets, to an offset and to a timestamp', async () => {
    let r = await sluice(['group', 'seek', 'gcli-app', '--topic', TOPIC, '--to-earliest', '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      groupId: 'gcli-app', topic: TOPIC,
      partitions: [{ partition: 0, oldOffset: 3, newOffset: 0 }, { partition: 1, oldOffset: 4, newOffset: 0 }],
    });
    let d = await describeJson('gcli-app');
    assert.deepEqual(d.partitions.map((p) => [p.lag, p.lagSeconds]), [[10, 9], [4, 3]]);

    r = await sluice(['group', 'seek', 'gcli-app', '--topic', TOPIC, '--partition', '0', '--to-offset', '5']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${TOPIC}\\s+0\\s+0\\s+5$`, 'm'));
    d = await describeJson('gcli-app');
    assert.deepEqual(d.partitions.map((p) => p.committedOffset), [5, 0]);

    r = await sluice(['group', 'seek', 'gcli-app', '--topic', TOPIC, '--to-timestamp', String(T0 + 7500), '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const moved = JSON.parse(r.stdout) as { partitions: { oldOffset: number; newOffset: number }[] };
    // Partition 1's last record is at T0 + 3 s: nothing that recent, so the log end.
    assert.deepEqual(moved.partitions.map((p) => [p.oldOffset, p.newOffset]), [[5, 8], [0, 4]]);
  });

  it('refuses to delete or seek a group with a live member, and deletes it once the member left', async () => {
    const consumer: Consumer = kafkajsClient(broker.bootstrap, CLIENT_ID).consumer({
      groupId: 'gcli-live', sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await consumer.run({ autoCommitInterval: 100, eachMessage: async () => undefined });
      const d = await eventually('group gcli-live stable and caught up', async () => {
        const g = await describeJson('gcli-live');
        return g.state === 'Stable' && g.partitions.length === 2 && g.partitions.every((p) => p.lag === 0) ? g : undefined;
      });
      const member = d.members[0];
      assert.equal(d.members.length, 1);
      assert.equal(member?.clientId, CLIENT_ID);
      assert.deepEqual(member?.assignment, [{ topic: TOPIC, partitions: [0, 1] }]);
      assert.deepEqual(d.partitions.map((p) => [p.committedOffset, p.lagSeconds, p.memberId]), [[10, 0, member?.memberId], [4, 0, member?.memberId]]);

      const del = await sluice(['group', 'delete', 'gcli-live']);
      assert.equal(del.code, 1);
      assert.match(del.stderr, /^sluice: NON_EMPTY_GROUP \(delete groups\): group gcli-live still has active members/);
      const seek = await sluice(['group', 'seek', 'gcli-live', '--topic', TOPIC, '--to-earliest']);
      assert.equal(seek.code, 1);
      assert.match(seek.stderr, /UNKNOWN_MEMBER_ID .*group gcli-live has active members/);
    } finally {
      await consumer.disconnect();
    }
    await eventually('group gcli-live empty', async () => ((await describeJson('gcli-live')).state === 'Empty' ? true : undefined));
    const del = await sluice(['group', 'delete', 'gcli-live', '--format', 'json']);
    assert.equal(del.code, 0, del.stderr);
    assert.deepEqual(JSON.parse(del.stdout), { deleted: ['gcli-live'] });
  });

  it('deletes the inactive group; it is then gone from list and describe', async () => {
    const del = await sluice(['group', 'delete', 'gcli-app']);
    assert.equal(del.code, 0, del.stderr);
    assert.equal(del.stdout, 'deleted group gcli-app\n');
    const gone = await sluice(['group', 'describe', 'gcli-app']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /GROUP_ID_NOT_FOUND: group gcli-app does not exist/);
    const list = await sluice(['group', 'list', '--format', 'json']);
    assert.ok(!(JSON.parse(list.stdout) as { groupId: string }[]).some((g) => g.groupId === 'gcli-app'), list.stdout);
    const again = await sluice(['group', 'delete', 'gcli-app']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /GROUP_ID_NOT_FOUND/);
  });
});
