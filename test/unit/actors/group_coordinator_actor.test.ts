// The group coordinator's driver over a real offsets partition written in Sluice's previous
// record layout: it replays the offsets, the classic group and the KIP-848 group those records
// hold, keeps serving them, and its first compaction rewrites them in Kafka's record schemas, from
// which a restart rebuilds the same state.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { serialize } from 'node:v8';
import { GroupCoordinatorActor } from '../../../src/actors/group_coordinator_actor.js';
import { DeadlineWheel } from '../../../src/actors/deadline_wheel.js';
import { PartitionActor, type ActorPorts, type Expirable } from '../../../src/actors/partition_actor.js';
import { coordinatorDeps } from '../../../src/coordinator/groups/coordinator_deps.js';
import { DEFAULT_GROUP_CONFIG, type GroupCall, type GroupReply } from '../../../src/coordinator/groups/group_api.js';
import { decodeRecordBatches, encodeRecordBatch } from '../../../src/protocol/records.js';
import { Bytes } from '../protocol/golden_helpers.js';
import { soleLeader, testReplicaContext } from '../../helpers/replica_roles.js';
import { Clock, logConfig, openHarness, readAll, waitFor, type LogHarness } from '../log/log_fixture.js';

const CONFIG = logConfig({ segmentBytes: 64 << 10 });
const TOPIC_ID = 'cd'.repeat(16);
const ROUNDS = 150;
const PARTITIONS = 8;
/** About 1 KiB per record, so the old history passes the 1 MiB below which no rewrite happens. */
const METADATA = 'm'.repeat(1000);
/** Just before the harness clock's time, so the offsets are far from expiring. */
const COMMITTED_AT = new Clock().t - 1000;
const WEEK = 7 * 24 * 3600 * 1000;

let h: LogHarness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

interface Record { key: Buffer; value: Buffer | null }

/** Sluice's previous layout: int16 kind, group id (and topic, partition); offsets at value version 0; groups as a 0 byte and V8. */
function legacyLog(): Record[] {
  const out: Record[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (let p = 0; p < PARTITIONS; p++) {
      out.push({
        key: new Bytes().i16(1).str('old').str('t').i32(p).build(),
        value: new Bytes().i16(0).i64(round * 10 + p).i32(round).str(METADATA).i64(COMMITTED_AT).i64(COMMITTED_AT + WEEK).build(),
      });
    }
  }
  const v8 = (v: unknown): Buffer => Buffer.concat([Buffer.from([0]), serialize(v)]);
  out.push({
    key: new Bytes().i16(2).str('classic').build(),
    value: v8({
      protocolType: 'consumer', generationId: 3, protocolName: 'range', leader: 'm1', stateTimestamp: 5,
      members: [{ memberId: 'm1', groupInstanceId: null, clientId: 'c', clientHost: '/h', sessionTimeoutMs: 45_000, rebalanceTimeoutMs: 60_000, subscription: new Uint8Array([1]), assignment: new Uint8Array([2]) }],
    }),
  });
  out.push({
    key: new Bytes().i16(3).str('kip848').build(),
    value: v8({
      version: 0, groupEpoch: 4, assignmentEpoch: 4, assignorName: 'range', subscribedTopics: [{ name: 't', id: TOPIC_ID, partitions: PARTITIONS }],
      members: [{
        memberId: 'x', instanceId: null, rackId: null, clientId: 'c', clientHost: '/h', rebalanceTimeoutMs: 60_000, serverAssignor: 'range',
        subscribedTopicNames: ['t'], subscribedTopicRegex: null, memberEpoch: 4, previousMemberEpoch: 3, state: 'stable',
        assigned: [{ topicId: TOPIC_ID, partitions: [0, 1] }], pendingRevocation: [], target: [{ topicId: TOPIC_ID, partitions: [0, 1] }],
      }],
    }),
  });
  return out;
}

/** The ports of a partition actor the coordinator appends through; produce results and fetch wake-ups never happen here. */
function actorPorts(harness: LogHarness): ActorPorts {
  return {
    committer: harness.committer,
    deadlines: new DeadlineWheel<Expirable>(10, (e) => e.expire(Date.now())),
    sendProduceResult: () => assert.fail('no produce requests in this test'),
    fetchMayProceed: () => undefined,
    sendAlterPartition: () => assert.fail('a sole replica proposes no ISR change'),
    followingChanged: () => undefined,
  };
}

class Driver {
  readonly actor: GroupCoordinatorActor;
  readonly badRecords: unknown[] = [];
  private ref = 0;
  private readonly waiting = new Map<number, (r: GroupReply) => void>();

  constructor(harness: LogHarness) {
    const partition = new PartitionActor(0, '__consumer_offsets', 0, harness.log, CONFIG, actorPorts(harness), testReplicaContext());
    partition.setRole(soleLeader());
    const deps = coordinatorDeps({ ...DEFAULT_GROUP_CONFIG, initialRebalanceDelayMs: 0 });
    this.actor = new GroupCoordinatorActor(partition, harness.committer, deps, {
      reply: (ref, reply) => this.waiting.get(ref)?.(reply),
      rebalanced: () => undefined,
      badRecord: (_offset, err) => this.badRecords.push(err),
    }, () => harness.clock.t);
  }

  ask<K extends GroupReply['kind']>(call: GroupCall & { kind: K }): Promise<Extract<GroupReply, { kind: K }>> {
    const ref = ++this.ref;
    return new Promise((resolve) => {
      this.waiting.set(ref, (r) => resolve(r as Extract<GroupReply, { kind: K }>));
      this.actor.call(ref, call);
    });
  }
}

/** What the driver serves of the three groups the old records hold. */
async function state(d: Driver): Promise<unknown> {
  const fetched = await d.ask({ kind: 'offsetFetch', groupId: 'old', topics: null, requireStable: false, memberId: null, memberEpoch: -1 });
  const classic = await d.ask({ kind: 'describe', groupIds: ['classic'] });
  const kip848 = await d.ask({ kind: 'consumerDescribe', groupIds: ['kip848'] });
  return {
    offsets: fetched.topics.map((t) => t.partitions.map((p) => [p.partition, p.offset, p.leaderEpoch])),
    classic: classic.groups.map((g) => [g.state, g.protocol, g.members.map((m) => [m.memberId, [...m.assignment]])]),
    kip848: kip848.groups.map((g) => [g.state, g.groupEpoch, g.assignorName, g.members.map((m) => [m.memberId, m.memberEpoch, m.assignment.map((a) => a.partitions)])]),
  };
}

function storedRecords(harness: LogHarness): Record[] {
  return decodeRecordBatches(Buffer.concat(readAll(harness.log).map((b) => b.bytes)))
    .flatMap((b) => b.records.map((r) => ({ key: Buffer.from(r.key!), value: r.value === null ? null : Buffer.from(r.value) })));
}

/** A value in the old layout: offset value version 0, or a group value of a 0 byte and V8's 0xFF tag. */
function isLegacy(r: Record): boolean {
  if (r.value === null) return false;
  const type = r.key.readInt16BE(0);
  return type <= 1 ? r.value.readInt16BE(0) === 0 : r.value[0] === 0 && r.value[1] === 0xff;
}

test('a log in the previous layout replays, and its first compaction rewrites it in Kafka\'s schemas', { timeout: 60_000 }, async () => {
  h = openHarness(CONFIG);
  const harness = h;
  const old = new PartitionActor(0, '__consumer_offsets', 0, harness.log, CONFIG, actorPorts(harness), testReplicaContext());
  const log = legacyLog();
  for (let i = 0; i < log.length; i += 50) {
    const batch = encodeRecordBatch(log.slice(i, i + 50).map((r) => ({ ...r, timestamp: 1_000 })));
    assert.equal(old.append(batch).kind, 'appended');
  }
  await harness.committer.commit(harness.log);
  assert.ok(harness.log.segmentCount >= 2);

  const first = new Driver(harness);
  const expected = {
    offsets: [Array.from({ length: PARTITIONS }, (_, p) => [p, ROUNDS * 10 + p, ROUNDS])],
    classic: [['Stable', 'range', [['m1', [2]]]]],
    kip848: [['Stable', 4, 'range', [['x', 4, [[0, 1]]]]]],
  };
  assert.deepEqual(await state(first), expected);
  assert.deepEqual(first.badRecords, []);

  // Any append lets the driver compact: the old history is over 1 MiB and spans several segments.
  const commit = await first.ask({
    kind: 'commit', groupId: 'fresh', generationId: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 't', partitions: [{ partition: 0, offset: 7, leaderEpoch: -1, metadata: null, commitTimestamp: -1 }] }],
  });
  assert.equal(commit.topics[0]!.partitions[0]!.errorCode, 0);
  await waitFor(() => harness.log.logStartOffset > 0, 'old segments deleted after the rewrite');
  // The segment the rewrite began in may still hold old records, but each is superseded.
  const latest = new Map(storedRecords(harness).map((r) => [r.key.toString('hex'), r]));
  assert.deepEqual([...latest.values()].filter(isLegacy), [], 'no key\'s latest record in the old layout');
  assert.ok(latest.size >= PARTITIONS + 2);
  first.actor.close();

  harness.log.close();
  harness.reopen();
  const second = new Driver(harness);
  assert.deepEqual(await state(second), expected);
  assert.deepEqual(second.badRecords, []);
  second.actor.close();
});
