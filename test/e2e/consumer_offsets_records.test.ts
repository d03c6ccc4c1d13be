// What a lag monitor or a log dump tool sees in `__consumer_offsets`: after kafkajs commits
// (a consumer group and an admin reset) and an old client's (OffsetCommit v1 with a commit
// timestamp, v2 with its own retention), every record of the topic, consumed raw, decodes with Kafka's record
// schemas — decoded here by hand from Kafka's definitions, independently of the broker's codec —
// and the latest offset record per key is exactly what OffsetFetch answers.
import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import type { KafkaConnection } from '../../src/client/connection.js';
import { OffsetCommitApi } from '../../src/protocol/apis/offset_commit.js';
import { Reader } from '../../src/protocol/reader.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { connectTo, readPartition } from '../helpers/read_back.js';

const OFFSETS_PARTITIONS = 3;
const TOPIC = 'monitored';
const MESSAGES = 30;
const RETENTION_MS = 3_600_000;

let broker: BrokerProcess;
let admin: Admin;
let conn: KafkaConnection;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--offsets-topic-partitions', String(OFFSETS_PARTITIONS), '--group-initial-rebalance-delay-ms', '0'] });
  admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  conn = await connectTo(broker.kafkaPort);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await admin?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await broker?.dispose();
});

interface OffsetValue { version: number; offset: number; leaderEpoch: number; metadata: string; commitTimestamp: number; expireTimestamp: number }

/** Kafka's OffsetCommitValue: v0 offset, metadata, commit time; v1 adds an expire time; v3 a leader epoch before the metadata. */
function offsetValue(r: Reader): OffsetValue {
  const version = r.int16();
  assert.ok(version >= 0 && version <= 3, `offset value version ${version}`);
  const offset = r.int64();
  const leaderEpoch = version >= 3 ? r.int32() : -1;
  const metadata = r.string();
  const commitTimestamp = r.int64();
  const expireTimestamp = version === 1 ? r.int64() : -1;
  return { version, offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp };
}

/** Kafka's GroupMetadataValue v0-3 (non-flexible). */
function groupValue(r: Reader): { protocolType: string; generation: number; protocol: string | null; members: string[] } {
  const version = r.int16();
  assert.ok(version >= 0 && version <= 3, `group value version ${version}`);
  const protocolType = r.string();
  const generation = r.int32();
  const protocol = r.nullableString();
  r.nullableString(); // leader
  if (version >= 2) r.int64(); // current state timestamp
  const members: string[] = [];
  for (let n = r.int32(); n > 0; n--) {
    members.push(r.string());
    if (version >= 3) r.nullableString(); // group instance id
    r.string(); // client id
    r.string(); // client host
    if (version >= 1) r.int32(); // rebalance timeout
    r.int32(); // session timeout
    r.bytes(); // subscription
    r.bytes(); // assignment
  }
  return { protocolType, generation, protocol, members };
}

it('every record of __consumer_offsets decodes with Kafka\'s schemas and matches OffsetFetch', { timeout: 120_000 }, async () => {
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }], waitForLeaders: true });
  const kafka = kafkajsClient(broker.bootstrap);
  const producer = await connectedProducer(kafka);
  await producer.send({ topic: TOPIC, messages: Array.from({ length: MESSAGES }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  await producer.disconnect();

  // A kafkajs consumer group reads everything and commits as it goes.
  const consumer = kafka.consumer({ groupId: 'kjs-group', sessionTimeout: 10_000 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    consumer.run({
      autoCommitThreshold: 1,
      eachMessage: async () => {
        if (++seen === MESSAGES) resolve();
      },
    }).catch(reject);
  });
  await consumer.disconnect();

  // An admin reset, and an old client's commit with its own retention and commit timestamp.
  await admin.setOffsets({ groupId: 'kjs-admin', topic: TOPIC, partitions: [{ partition: 0, offset: '5' }, { partition: 2, offset: '7' }] });
  const committedAt = Date.now() - 60_000;
  const old = await conn.request(OffsetCommitApi, {
    groupId: 'old-client', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: RETENTION_MS,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, committedOffset: 9, committedLeaderEpoch: -1, commitTimestamp: committedAt, committedMetadata: 'x' }] }],
  }, 1);
  assert.equal(old.topics[0]!.partitions[0]!.errorCode, 0);
  const retained = await conn.request(OffsetCommitApi, {
    groupId: 'old-client', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: RETENTION_MS,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 2, committedOffset: 11, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: '' }] }],
  }, 2);
  assert.equal(retained.topics[0]!.partitions[0]!.errorCode, 0);

  // Read the whole topic raw, as a monitor does, and keep the latest record per key.
  const offsets = new Map<string, Map<string, OffsetValue>>();
  const groups = new Map<string, ReturnType<typeof groupValue>>();
  let records = 0;
  for (let p = 0; p < OFFSETS_PARTITIONS; p++) {
    for (const rec of await readPartition(conn, '__consumer_offsets', p)) {
      records++;
      assert.ok(rec.key !== null, 'every record is keyed');
      const k = new Reader(rec.key);
      const type = k.int16();
      const v = rec.value === null ? null : new Reader(rec.value);
      if (type === 0 || type === 1) {
        const group = k.string();
        const tp = `${k.string()}:${k.int32()}`;
        const byPartition = offsets.get(group) ?? new Map<string, OffsetValue>();
        offsets.set(group, byPartition);
        if (v === null) byPartition.delete(tp);
        else byPartition.set(tp, offsetValue(v));
      } else {
        assert.equal(type, 2, `record type ${type}: kafkajs groups are classic`);
        const group = k.string();
        if (v === null) groups.delete(group);
        else groups.set(group, groupValue(v));
      }
      assert.equal(k.remaining(), 0, 'the key is read to its end');
      assert.equal(v?.remaining() ?? 0, 0, 'the value is read to its end');
    }
  }
  assert.ok(records > 0);

  for (const groupId of ['kjs-group', 'kjs-admin', 'old-client']) {
    const [fetched] = await admin.fetchOffsets({ groupId, topics: [TOPIC] });
    const fromFetch = fetched!.partitions.filter((p) => p.offset !== '-1').map((p) => [`${TOPIC}:${p.partition}`, Number(p.offset), p.metadata ?? '']);
    const fromLog = [...(offsets.get(groupId) ?? [])].map(([tp, o]) => [tp, o.offset, o.metadata]);
    const sort = (rows: (string | number)[][]): (string | number)[][] => rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    assert.deepEqual(sort(fromLog), sort(fromFetch), `offsets of ${groupId}`);
  }
  const kjs = offsets.get('kjs-group')!;
  assert.equal([...kjs.values()].reduce((n, o) => n + o.offset, 0), MESSAGES, 'the group committed past every message');
  assert.ok([...kjs.values()].every((o) => o.version === 3), 'commits without their own retention are v3');
  // OffsetCommit v1 dates its commit (no retention of its own: v3); v2 asks for its own retention (v1, with the expiry).
  const oldClient = new Map(offsets.get('old-client'));
  assert.deepEqual(
    [oldClient.get(`${TOPIC}:1`)?.version, oldClient.get(`${TOPIC}:1`)?.commitTimestamp, oldClient.get(`${TOPIC}:1`)?.expireTimestamp],
    [3, committedAt, -1],
  );
  const withRetention = oldClient.get(`${TOPIC}:2`)!;
  assert.deepEqual([withRetention.version, withRetention.expireTimestamp - withRetention.commitTimestamp], [1, RETENTION_MS]);
  const group = groups.get('kjs-group');
  assert.deepEqual([group?.protocolType, group?.members], ['consumer', []], 'the group is empty after its consumer left');
});
