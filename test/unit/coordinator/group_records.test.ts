// Byte form of the coordinator's records: every GroupRecord survives encode → decode, keys of
// different records never collide (compaction keeps the last record per key), and bytes it
// cannot read fail loudly instead of being misread. Plus Kafka's group → partition placement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { offsetsPartitionFor, type GroupRecord } from '../../../src/coordinator/groups/group_api.js';
import { decodeGroupRecord, encodeGroupRecord } from '../../../src/coordinator/groups/group_records.js';

const name = fc.string({ minLength: 0, maxLength: 20 });
// Decoded records are ordinary objects; generated ones must be too for a strict comparison.
const plain = { noNullPrototype: true } as const;
const int64 = fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER });

const offsetRecord: fc.Arbitrary<GroupRecord> = fc.record({
  kind: fc.constant('offset' as const),
  groupId: name,
  topic: name,
  partition: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  value: fc.oneof(fc.constant(null), fc.record({
    offset: int64, leaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }), metadata: fc.option(name),
    commitTimestamp: int64, expireTimestamp: int64,
  }, plain)),
}, plain);

const member = fc.record({
  memberId: name, groupInstanceId: fc.option(name), clientId: name, clientHost: name,
  sessionTimeoutMs: fc.nat(), rebalanceTimeoutMs: fc.nat(),
  subscription: fc.uint8Array({ maxLength: 30 }).map((u) => Buffer.from(u)),
  assignment: fc.uint8Array({ maxLength: 30 }).map((u) => Buffer.from(u)),
}, plain);

const classicRecord: fc.Arbitrary<GroupRecord> = fc.record({
  kind: fc.constant('classicGroup' as const),
  groupId: name,
  value: fc.oneof(fc.constant(null), fc.record({
    protocolType: name, generationId: fc.nat(), protocolName: fc.option(name), leader: fc.option(name),
    stateTimestamp: int64, members: fc.array(member, { maxLength: 4 }),
  }, plain)),
}, plain);

const consumerRecord: fc.Arbitrary<GroupRecord> = fc.record({
  kind: fc.constant('consumerGroup' as const),
  groupId: name,
  value: fc.oneof(fc.constant(null), fc.record({ epoch: fc.nat(), members: fc.array(name).map((ids) => new Map(ids.map((id, i) => [id, i]))) }, plain)),
}, plain);

const anyRecord = fc.oneof(offsetRecord, classicRecord, consumerRecord);

test('every group record round-trips through its bytes', () => {
  fc.assert(fc.property(anyRecord, (r) => {
    const { key, value } = encodeGroupRecord(r);
    assert.deepEqual(decodeGroupRecord(key, value), r);
    assert.equal(value === null, r.value === null, 'tombstones are null values');
  }));
});

test('distinct records never share a key, equal identities always do', () => {
  const identity = (r: GroupRecord): string => JSON.stringify(r.kind === 'offset' ? [r.kind, r.groupId, r.topic, r.partition] : [r.kind, r.groupId]);
  fc.assert(fc.property(anyRecord, anyRecord, (a, b) => {
    const same = encodeGroupRecord(a).key.equals(encodeGroupRecord(b).key);
    assert.equal(same, identity(a) === identity(b));
  }));
});

test('unreadable bytes throw instead of decoding to something else', () => {
  const { key, value } = encodeGroupRecord({ kind: 'classicGroup', groupId: 'g', value: { protocolType: 'consumer', generationId: 1, protocolName: 'range', leader: null, stateTimestamp: 0, members: [] } });
  assert.throws(() => decodeGroupRecord(key.subarray(0, key.length - 1), value));
  const future = Buffer.from(value!);
  future[0] = 9;
  assert.throws(() => decodeGroupRecord(key, future), /version 9/);
  const unknownKind = Buffer.from(key);
  unknownKind.writeInt16BE(77, 0);
  assert.throws(() => decodeGroupRecord(unknownKind, value), /key kind 77/);
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
