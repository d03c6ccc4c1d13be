// Byte form of the coordinator's records: Kafka's own schemas, checked against bytes built by
// hand from Kafka's record definitions; every GroupRecord survives encode → decode; keys of
// different records never collide (compaction keeps the last record per key); a KIP-848 group
// written again and again, with members coming and going, reads back as its last state from the
// whole log or from only its latest record per key; records in Sluice's previous layout still
// load; bytes nothing wrote fail loudly instead of being misread. Plus Kafka's group → partition
// placement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serialize } from 'node:v8';
import fc from 'fast-check';
import { offsetsPartitionFor, type ClassicGroupRecordValue, type GroupRecord } from '../../../src/coordinator/groups/group_api.js';
import { GroupRecordCodec, type RecordBytes } from '../../../src/coordinator/groups/group_records.js';
import type { ConsumerGroupValue, ConsumerMemberValue } from '../../../src/coordinator/groups/consumer_group_value.js';
import { Bytes } from '../protocol/golden_helpers.js';

const name = fc.string({ minLength: 0, maxLength: 20 });
// Decoded records are ordinary objects; generated ones must be too for a strict comparison.
const plain = { noNullPrototype: true } as const;
const int64 = fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER });
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((u) => Buffer.from(u).toString('hex'));

/** Stored metadata is never null (Kafka's field is not nullable): null reads back as "". */
const offsetRecord: fc.Arbitrary<GroupRecord> = fc.record({
  kind: fc.constant('offset' as const),
  groupId: name,
  topic: name,
  partition: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  value: fc.oneof(fc.constant(null), fc.record({
    offset: int64, leaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }), metadata: name,
    commitTimestamp: int64, expireTimestamp: fc.option(fc.nat({ max: Number.MAX_SAFE_INTEGER })),
  }, plain)),
}, plain).map((r) => (r.value?.expireTimestamp != null ? { ...r, value: { ...r.value, leaderEpoch: -1 } } : r));

const member = fc.record({
  memberId: name, groupInstanceId: fc.option(name), clientId: name, clientHost: name,
  sessionTimeoutMs: fc.nat(), rebalanceTimeoutMs: fc.nat(),
  subscription: fc.uint8Array({ maxLength: 30 }).map((u) => Buffer.from(u)),
  assignment: fc.uint8Array({ maxLength: 30 }).map((u) => Buffer.from(u)),
}, plain);

const classicValue: fc.Arbitrary<ClassicGroupRecordValue> = fc.record({
  protocolType: name, generationId: fc.nat(), protocolName: fc.option(name), leader: fc.option(name),
  stateTimestamp: int64, members: fc.array(member, { maxLength: 4 }),
}, plain);

const classicRecord: fc.Arbitrary<GroupRecord> = fc.tuple(name, fc.option(classicValue))
  .map(([groupId, value]) => ({ kind: 'classicGroup', groupId, value }));

const partitionsValue = fc.array(fc.record({ topicId: uuid, partitions: fc.array(fc.nat({ max: 1000 }), { maxLength: 5 }) }, plain), { maxLength: 3 });

const consumerMember: fc.Arbitrary<ConsumerMemberValue> = fc.record({
  memberId: name, instanceId: fc.option(name), rackId: fc.option(name), clientId: name, clientHost: name,
  rebalanceTimeoutMs: int32, serverAssignor: fc.option(name), subscribedTopicNames: fc.array(name, { maxLength: 3 }),
  subscribedTopicRegex: fc.option(name), memberEpoch: int32, previousMemberEpoch: int32,
  state: fc.constantFrom('stable' as const, 'unrevokedPartitions' as const, 'unreleasedPartitions' as const),
  assigned: partitionsValue, pendingRevocation: partitionsValue, target: partitionsValue,
}, plain);

const consumerValue: fc.Arbitrary<ConsumerGroupValue> = fc.record({
  groupEpoch: int32, assignmentEpoch: int32,
  subscribedTopics: fc.array(fc.record({ name, id: uuid, partitions: fc.nat({ max: 10_000 }) }, plain), { maxLength: 3 }),
  members: fc.uniqueArray(consumerMember, { selector: (m) => m.memberId, maxLength: 4 }),
}, plain);

/** Writes records with one codec and reads them back with a fresh one, as a restart does. */
function reload(records: readonly RecordBytes[]): GroupRecord[] {
  const codec = new GroupRecordCodec();
  const out: GroupRecord[] = [];
  for (const r of records) {
    const d = codec.decode(r.key, r.value);
    if (d !== null) out.push(d);
  }
  return out.concat(codec.finishLoad());
}

/** What compaction keeps: the latest record per key, tombstones gone. */
function compacted(records: readonly RecordBytes[]): RecordBytes[] {
  const latest = new Map<string, RecordBytes>();
  for (const r of records) {
    const k = r.key.toString('hex');
    latest.delete(k);
    if (r.value !== null) latest.set(k, r);
  }
  return [...latest.values()];
}

test('offsets and classic groups round-trip through their bytes', () => {
  fc.assert(fc.property(fc.oneof(offsetRecord, classicRecord), (r) => {
    const written = new GroupRecordCodec().encode(r);
    assert.equal(written.length, 1);
    assert.equal(written[0]!.value === null, r.value === null, 'tombstones are null values');
    assert.deepEqual(new GroupRecordCodec().decode(written[0]!.key, written[0]!.value), r);
  }));
});

test('a KIP-848 group round-trips through its records, and a tombstone deletes them all', () => {
  fc.assert(fc.property(name, consumerValue, (groupId, value) => {
    const codec = new GroupRecordCodec();
    const written = codec.encode({ kind: 'consumerGroup', groupId, value });
    assert.deepEqual(reload(written), [{ kind: 'consumerGroup', groupId, value }]);
    const deleted = written.concat(codec.encode({ kind: 'consumerGroup', groupId, value: null }));
    assert.deepEqual(reload(deleted), []);
    assert.deepEqual(compacted(deleted), [], 'every key the group wrote is deleted');
  }));
});

test('a KIP-848 group reads back as its last state, from the whole log or the compacted one', () => {
  const states = fc.array(fc.option(consumerValue, { freq: 5 }), { minLength: 1, maxLength: 6 });
  fc.assert(fc.property(states, (values) => {
    const codec = new GroupRecordCodec();
    const log = values.flatMap((value) => codec.encode({ kind: 'consumerGroup', groupId: 'g', value }));
    const last = values[values.length - 1]!;
    const expected = last === null ? [] : [{ kind: 'consumerGroup', groupId: 'g', value: last }];
    assert.deepEqual(reload(log), expected);
    assert.deepEqual(reload(compacted(log)), expected);
  }));
});

test('members deleted by an append that failed are deleted again by the next one', () => {
  const [a, b] = fc.sample(consumerMember, { numRuns: 2, seed: 7 }).map((m, i) => ({ ...m, memberId: `m${i}` }));
  const group = (members: ConsumerMemberValue[]): GroupRecord => ({
    kind: 'consumerGroup', groupId: 'g', value: { groupEpoch: 1, assignmentEpoch: 1, subscribedTopics: [], members },
  });
  const codec = new GroupRecordCodec();
  const durable = codec.encode(group([a!, b!]));
  codec.unwritten(codec.encode(group([a!])));
  const next = codec.encode(group([a!]));
  assert.deepEqual(reload(durable.concat(next)), [group([a!])]);
});

test('distinct records never share a key, equal identities always do', () => {
  const identity = (r: GroupRecord): string => JSON.stringify(r.kind === 'offset' ? [r.kind, r.groupId, r.topic, r.partition] : [r.kind, r.groupId]);
  const keyOf = (r: GroupRecord): Buffer => new GroupRecordCodec().encode(r)[0]!.key;
  fc.assert(fc.property(fc.oneof(offsetRecord, classicRecord), fc.oneof(offsetRecord, classicRecord), (a, b) => {
    assert.equal(keyOf(a).equals(keyOf(b)), identity(a) === identity(b));
  }));
});

// ---- Kafka's byte layout, built by hand from its record definitions ----

test('an offset is OffsetCommitKey v1 with OffsetCommitValue v3, or v1 with its own expiry', () => {
  const codec = new GroupRecordCodec();
  const key = new Bytes().i16(1).str('grp').str('orders').i32(7).build();
  const [v3] = codec.encode({
    kind: 'offset', groupId: 'grp', topic: 'orders', partition: 7,
    value: { offset: 42, leaderEpoch: 5, metadata: 'md', commitTimestamp: 1000, expireTimestamp: null },
  });
  assert.deepEqual(v3, { key, value: new Bytes().i16(3).i64(42).i32(5).str('md').i64(1000).build() });
  const [v1] = codec.encode({
    kind: 'offset', groupId: 'grp', topic: 'orders', partition: 7,
    value: { offset: 42, leaderEpoch: -1, metadata: 'md', commitTimestamp: 1000, expireTimestamp: 5000 },
  });
  assert.deepEqual(v1, { key, value: new Bytes().i16(1).i64(42).str('md').i64(1000).i64(5000).build() });
  // Kafka's flexible v4, which this code does not write, reads as v3 does.
  const v4 = new Bytes().i16(4).i64(42).i32(5).cstr('md').i64(1000).tags0().build();
  assert.deepEqual(codec.decode(key, v4), codec.decode(key, v3!.value));
});

test('a classic group is GroupMetadataKey with GroupMetadataValue v3', () => {
  const [r] = new GroupRecordCodec().encode({
    kind: 'classicGroup', groupId: 'grp',
    value: {
      protocolType: 'consumer', generationId: 4, protocolName: 'range', leader: 'm1', stateTimestamp: 99,
      members: [{
        memberId: 'm1', groupInstanceId: null, clientId: 'c', clientHost: '/h', sessionTimeoutMs: 10, rebalanceTimeoutMs: 20,
        subscription: Buffer.from([1, 2]), assignment: Buffer.from([3]),
      }],
    },
  });
  assert.deepEqual(r, {
    key: new Bytes().i16(2).str('grp').build(),
    value: new Bytes().i16(3).str('consumer').i32(4).str('range').str('m1').i64(99)
      .arr(1).str('m1').str(null).str('c').str('/h').i32(20).i32(10).bytes(Buffer.from([1, 2])).bytes(Buffer.from([3]))
      .build(),
  });
});

test('a KIP-848 group is Kafka\'s ConsumerGroup* records, flexible values at v0', () => {
  const topic = 'ab'.repeat(16);
  const written = new GroupRecordCodec().encode({
    kind: 'consumerGroup', groupId: 'grp',
    value: {
      groupEpoch: 5, assignmentEpoch: 4, subscribedTopics: [{ name: 'orders', id: topic, partitions: 3 }],
      members: [{
        memberId: 'm', instanceId: null, rackId: 'r1', clientId: 'c', clientHost: '/h', rebalanceTimeoutMs: 30_000,
        serverAssignor: 'uniform', subscribedTopicNames: ['orders'], subscribedTopicRegex: null, memberEpoch: 4, previousMemberEpoch: 3,
        state: 'unrevokedPartitions', assigned: [{ topicId: topic, partitions: [0] }], pendingRevocation: [{ topicId: topic, partitions: [1] }],
        target: [{ topicId: topic, partitions: [0, 2] }],
      }],
    },
  });
  const group = (type: number): Buffer => new Bytes().i16(type).str('grp').build();
  const member = (type: number): Buffer => new Bytes().i16(type).str('grp').str('m').build();
  const partitions = (p: number[]): Bytes => {
    const b = new Bytes().carr(1).uuid(topic).carr(p.length);
    for (const x of p) b.i32(x);
    return b.tags0();
  };
  assert.deepEqual(written, [
    { key: member(5), value: new Bytes().i16(0).cstr(null).cstr('r1').cstr('c').cstr('/h').carr(1).cstr('orders').cstr(null).i32(30_000).cstr('uniform').tags0().build() },
    { key: group(4), value: new Bytes().i16(0).i32(5).carr(1).uuid(topic).cstr('orders').i32(3).carr(0).tags0().tags0().build() },
    { key: group(3), value: new Bytes().i16(0).i32(5).tags0().build() },
    { key: member(7), value: new Bytes().i16(0).raw(partitions([0, 2]).build()).tags0().build() },
    { key: group(6), value: new Bytes().i16(0).i32(4).tags0().build() },
    { key: member(8), value: new Bytes().i16(0).i32(4).i32(3).i8(1).raw(partitions([0]).build()).raw(partitions([1]).build()).tags0().build() },
  ]);
});

// ---- Sluice's previous layout ----

test('records in the previous layout load: offsets, and V8-serialized groups', () => {
  const oldKey = (kind: number, group: string): Bytes => new Bytes().i16(kind).str(group);
  const classic: ClassicGroupRecordValue = {
    protocolType: 'consumer', generationId: 2, protocolName: 'range', leader: 'm1', stateTimestamp: 5,
    members: [{ memberId: 'm1', groupInstanceId: 'i', clientId: 'c', clientHost: 'h', sessionTimeoutMs: 1, rebalanceTimeoutMs: 2, subscription: Buffer.from([1]), assignment: Buffer.from([2]) }],
  };
  const consumer = {
    version: 0, groupEpoch: 3, assignmentEpoch: 3, assignorName: 'range',
    subscribedTopics: [{ name: 't', id: 'cd'.repeat(16), partitions: 2 }],
    members: [{
      memberId: 'x', instanceId: null, rackId: null, clientId: 'c', clientHost: 'h', rebalanceTimeoutMs: 100, serverAssignor: 'range',
      subscribedTopicNames: ['t'], subscribedTopicRegex: null, memberEpoch: 3, previousMemberEpoch: 2, state: 'stable',
      assigned: [{ topicId: 'cd'.repeat(16), partitions: [0, 1] }], pendingRevocation: [], target: [{ topicId: 'cd'.repeat(16), partitions: [0, 1] }],
    }],
  };
  const v8Value = (v: unknown): Buffer => Buffer.concat([Buffer.from([0]), serialize(v)]);
  const log: RecordBytes[] = [
    // With a leader epoch (OffsetCommit v6+: default retention) and without (v2-4 may have asked for its own).
    { key: oldKey(1, 'g').str('t').i32(1).build(), value: new Bytes().i16(0).i64(10).i32(4).str(null).i64(100).i64(200).build() },
    { key: oldKey(1, 'g').str('t').i32(2).build(), value: new Bytes().i16(0).i64(11).i32(-1).str('m').i64(100).i64(300).build() },
    { key: oldKey(2, 'g').build(), value: v8Value(classic) },
    { key: oldKey(3, 'k').build(), value: v8Value(consumer) },
  ];
  const { version: _v, assignorName: _a, ...consumerValue } = consumer;
  assert.deepEqual(reload(log), [
    { kind: 'offset', groupId: 'g', topic: 't', partition: 1, value: { offset: 10, leaderEpoch: 4, metadata: null, commitTimestamp: 100, expireTimestamp: null } },
    { kind: 'offset', groupId: 'g', topic: 't', partition: 2, value: { offset: 11, leaderEpoch: -1, metadata: 'm', commitTimestamp: 100, expireTimestamp: 300 } },
    { kind: 'classicGroup', groupId: 'g', value: classic },
    { kind: 'consumerGroup', groupId: 'k', value: consumerValue },
  ]);
  // Written again, each is in Kafka's schemas, under the same key (so it replaces the old record).
  const codec = new GroupRecordCodec();
  const again = reload(log).flatMap((r) => codec.encode(r));
  for (const r of again) assert.notEqual(r.value?.readInt16BE(0), 0x00ff, 'no V8 value left');
  assert.equal(again.filter((r) => log.some((o) => o.key.equals(r.key))).length, log.length);
  assert.deepEqual(reload(again), reload(log).map((r) => (r.kind === 'offset' && r.value ? { ...r, value: { ...r.value, metadata: r.value.metadata ?? '' } } : r)));
});

test('unreadable bytes throw instead of decoding to something else', () => {
  const codec = new GroupRecordCodec();
  const [{ key, value }] = codec.encode({ kind: 'classicGroup', groupId: 'g', value: { protocolType: 'consumer', generationId: 1, protocolName: 'range', leader: null, stateTimestamp: 0, members: [] } }) as [RecordBytes];
  assert.throws(() => codec.decode(key.subarray(0, key.length - 1), value));
  const future = Buffer.from(value!);
  future.writeInt16BE(9, 0);
  assert.throws(() => codec.decode(key, future), /v9/);
  const unknownType = Buffer.from(key);
  unknownType.writeInt16BE(77, 0);
  assert.throws(() => codec.decode(unknownType, value), /record type 77/);
});

test('groups land on the partition Kafka would pick', () => {
  // Java's String.hashCode: "group-1" → 293427299 (% 50 = 49); "polygenelubricants" hashes to
  // Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
  assert.equal(offsetsPartitionFor('group-1', 50), 49);
  assert.equal(offsetsPartitionFor('polygenelubricants', 50), 0);
  assert.equal(offsetsPartitionFor('', 50), 0);
  fc.assert(fc.property(fc.string(), fc.integer({ min: 1, max: 1000 }), (g, n) => {
    const p = offsetsPartitionFor(g, n);
    assert.ok(Number.isInteger(p) && p >= 0 && p < n);
  }));
});
