// KIP-848 consumer group (ConsumerGroupHeartbeat server side): joins, epochs and their errors,
// revocation before reassignment, leaving, static members, timers, topic changes, describe,
// persistence. Behaviour under random member activity is in consumer_group_sim.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Assignor } from '../../../src/assignors/assignor.js';
import { RangeAssignor } from '../../../src/assignors/range.js';
import { UniformAssignor } from '../../../src/assignors/uniform.js';
import { ConsumerGroup } from '../../../src/coordinator/groups/consumer_group.js';
import {
  DEFAULT_GROUP_CONFIG, type ConsumerHeartbeatCall, type ConsumerHeartbeatReply, type GroupConfig, type GroupRecord, type TopicIndex, type TopicInfo,
} from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { ConsumerGroupValue } from '../../../src/coordinator/groups/consumer_group_value.js';
import { viaLog } from './group_fixture.js';

const CONFIG: GroupConfig = { ...DEFAULT_GROUP_CONFIG, maxGroupSize: 3 };
const SESSION = CONFIG.consumerSessionTimeoutMs;

function topicIndex(spec: Record<string, number>): TopicIndex {
  const infos: TopicInfo[] = Object.entries(spec).map(([name, partitions]) => ({ name, id: idOf(name), partitions }));
  return { byName: new Map(infos.map((i) => [i.name, i])), byId: new Map(infos.map((i) => [i.id, i])) };
}

function idOf(name: string): string {
  return Buffer.from(name).toString('hex').padEnd(32, '0').slice(0, 32);
}

function newGroup(config: GroupConfig = CONFIG): ConsumerGroup {
  let n = 0;
  const assignors = new Map<string, Assignor>([['uniform', new UniformAssignor()], ['range', new RangeAssignor()]]);
  return new ConsumerGroup('g', config, assignors, () => `generated-${++n}`);
}

function call(fields: Partial<ConsumerHeartbeatCall>): ConsumerHeartbeatCall {
  return {
    kind: 'consumerHeartbeat', groupId: 'g', memberId: '', memberEpoch: 0, instanceId: null, rackId: null,
    rebalanceTimeoutMs: 60_000, subscribedTopicNames: ['t'], subscribedTopicRegex: null, serverAssignor: null,
    ownedPartitions: [], clientId: 'client', clientHost: '/127.0.0.1', ...fields,
  };
}

/** A regular (not full) heartbeat reporting what the member owns. */
function beat(memberId: string, memberEpoch: number, owned: Record<string, number[]> | null, fields: Partial<ConsumerHeartbeatCall> = {}): ConsumerHeartbeatCall {
  return call({
    memberId, memberEpoch, rebalanceTimeoutMs: -1, subscribedTopicNames: null,
    ownedPartitions: owned === null ? null : Object.entries(owned).map(([name, partitions]) => ({ topicId: idOf(name), partitions })),
    ...fields,
  });
}

/** The reply's assignment as topic name → partitions (ids are hex-encoded names here). */
function named(reply: ConsumerHeartbeatReply): Record<string, number[]> | null {
  if (reply.assignment === null) return null;
  const out: Record<string, number[]> = {};
  for (const t of reply.assignment) out[Buffer.from(t.topicId, 'hex').toString().replace(/\0+$/, '')] = [...t.partitions].sort((a, b) => a - b);
  return out;
}

function ok(result: { reply: ConsumerHeartbeatReply }): ConsumerHeartbeatReply {
  assert.equal(result.reply.errorCode, ErrorCode.NONE, result.reply.errorMessage ?? '');
  return result.reply;
}

/** The group's one record, as a reload reads it back from the log. */
function latest(records: GroupRecord[]): ConsumerGroupValue | null {
  assert.equal(records.length, 1);
  const r = records[0]!;
  assert.equal(r.kind, 'consumerGroup');
  return viaLog(r.groupId, r.kind === 'consumerGroup' ? r.value : null);
}

const T4 = topicIndex({ t: 4 });

describe('ConsumerGroup joining', () => {
  it('creates a member id, bumps the epoch and hands out every partition to the first member', () => {
    const g = newGroup();
    const r = g.heartbeat(call({}), 0, T4);
    const reply = ok(r);
    assert.equal(reply.memberId, 'generated-1');
    assert.equal(reply.memberEpoch, 1);
    assert.equal(reply.heartbeatIntervalMs, CONFIG.consumerHeartbeatIntervalMs);
    assert.deepEqual(named(reply), { t: [0, 1, 2, 3] });
    assert.equal(r.records.length, 1);
    assert.equal(g.state(), 'Stable');
    assert.deepEqual([...g.subscribedTopics()], ['t']);
  });

  it('accepts a member id the client generated (KIP-1082)', () => {
    const g = newGroup();
    assert.equal(ok(g.heartbeat(call({ memberId: 'client-made' }), 0, T4)).memberId, 'client-made');
  });

  it('lets a known member rejoin with epoch 0 and sends it its assignment again', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    const reply = ok(g.heartbeat(call({ memberId: 'a' }), 1, T4));
    assert.equal(reply.memberEpoch, 1);
    assert.deepEqual(named(reply), { t: [0, 1, 2, 3] });
  });

  it('waits for a member to revoke before giving its partitions to a new member', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    const b1 = ok(g.heartbeat(call({ memberId: 'b' }), 1, T4));
    assert.equal(b1.memberEpoch, 2);
    assert.deepEqual(named(b1), {});
    assert.equal(g.state(), 'Reconciling');
    const a1 = ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 2, T4));
    assert.equal(a1.memberEpoch, 1, 'a stays at its epoch while revoking');
    assert.deepEqual(named(a1), { t: [0, 1] });
    assert.equal(ok(g.heartbeat(beat('b', 2, {}), 3, T4)).assignment, null, 'nothing is free yet');
    const a2 = ok(g.heartbeat(beat('a', 1, { t: [0, 1] }), 4, T4));
    assert.equal(a2.memberEpoch, 2);
    assert.equal(a2.assignment, null, 'a\'s assignment did not change again');
    assert.deepEqual(named(ok(g.heartbeat(beat('b', 2, {}), 5, T4))), { t: [2, 3] });
    assert.equal(g.state(), 'Stable');
  });

  it('answers with the assignment on a full request even when it did not change', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    assert.equal(ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 1, T4)).assignment, null);
    const full = beat('a', 1, { t: [0, 1, 2, 3] }, { rebalanceTimeoutMs: 60_000, subscribedTopicNames: ['t'] });
    assert.deepEqual(named(ok(g.heartbeat(full, 2, T4))), { t: [0, 1, 2, 3] });
  });

  it('accepts the previous epoch when the member owns only what it is assigned (lost response)', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b' }), 1, T4));
    ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 2, T4));
    ok(g.heartbeat(beat('a', 1, { t: [0, 1] }), 3, T4));
    // a is at epoch 2 now; it never saw that answer and comes back with epoch 1.
    const again = ok(g.heartbeat(beat('a', 1, { t: [0, 1] }, { rebalanceTimeoutMs: 60_000, subscribedTopicNames: ['t'] }), 4, T4));
    assert.equal(again.memberEpoch, 2);
    assert.equal(g.heartbeat(beat('a', 1, { t: [0, 1, 2] }), 5, T4).reply.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  });

  it('uses the assignor the members ask for', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', serverAssignor: 'range' }), 0, T4));
    assert.equal(g.describe(T4).assignorName, 'range');
    assert.equal(newGroup().describe(T4).assignorName, 'uniform');
  });

  it('subscribes by regex and picks up matching topics created later', () => {
    const g = newGroup();
    const before = topicIndex({ 'orders-eu': 2, other: 2 });
    assert.deepEqual(named(ok(g.heartbeat(call({ memberId: 'a', subscribedTopicNames: null, subscribedTopicRegex: 'orders-.*' }), 0, before))), { 'orders-eu': [0, 1] });
    const after = topicIndex({ 'orders-eu': 2, 'orders-us': 1, other: 2 });
    assert.equal(g.topicsChanged(1, after).length, 1);
    assert.deepEqual(named(ok(g.heartbeat(beat('a', 1, { 'orders-eu': [0, 1] }), 2, after))), { 'orders-eu': [0, 1], 'orders-us': [0] });
    assert.deepEqual([...g.subscribedTopics()].sort(), ['orders-eu', 'orders-us']);
  });
});

describe('ConsumerGroup errors', () => {
  const cases: [string, Partial<ConsumerHeartbeatCall>, number?][] = [
    ['no rebalance timeout on join', { rebalanceTimeoutMs: -1 }],
    ['owned partitions on join', { ownedPartitions: [{ topicId: idOf('t'), partitions: [0] }] }],
    ['null owned partitions on join', { ownedPartitions: null }],
    ['no subscription on join', { subscribedTopicNames: [] }],
    ['an empty member id with epoch > 0', { memberEpoch: 3, memberId: '' }],
    ['epoch -2 without instance id', { memberEpoch: -2, memberId: 'a' }],
    ['an epoch below -2', { memberEpoch: -3, memberId: 'a' }],
    ['an empty instance id', { instanceId: ' ' }],
    ['an invalid regex', { subscribedTopicNames: null, subscribedTopicRegex: 'orders-(' }, ErrorCode.INVALID_REGULAR_EXPRESSION],
  ];
  for (const [what, fields, code = ErrorCode.INVALID_REQUEST] of cases) {
    it(`answers ${code} with a message for ${what}, changing nothing`, () => {
      const g = newGroup();
      const r = g.heartbeat(call(fields), 0, T4);
      assert.equal(r.reply.errorCode, code);
      assert.ok((r.reply.errorMessage ?? '').length > 0);
      assert.deepEqual(r.records, []);
      assert.equal(g.memberCount(), 0);
    });
  }

  it('answers UNKNOWN_MEMBER_ID for an unknown member past its join, and for leaving', () => {
    const g = newGroup();
    assert.equal(g.heartbeat(beat('ghost', 3, null), 0, T4).reply.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(g.heartbeat(beat('ghost', -1, null), 0, T4).reply.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(g.heartbeat(beat('ghost', 3, null, { instanceId: 'i' }), 0, T4).reply.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('answers FENCED_MEMBER_EPOCH for an epoch ahead, or behind and not the previous one', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    const before = g.describe(T4);
    const ahead = g.heartbeat(beat('a', 2, null), 1, T4);
    assert.equal(ahead.reply.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
    assert.deepEqual(ahead.records, []);
    ok(g.heartbeat(call({ memberId: 'b' }), 2, T4));
    ok(g.heartbeat(beat('a', 1, {}), 3, T4));
    ok(g.heartbeat(call({ memberId: 'c' }), 4, T4));
    ok(g.heartbeat(beat('a', 2, {}), 5, T4));
    assert.equal(g.describe(T4).members.find((m) => m.memberId === 'a')!.memberEpoch, 3);
    assert.equal(g.heartbeat(beat('a', 1, {}), 6, T4).reply.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
    assert.notDeepEqual(g.describe(T4), before);
  });

  it('answers UNRELEASED_INSTANCE_ID while a live member holds the instance id', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', instanceId: 'i' }), 0, T4));
    const r = g.heartbeat(call({ memberId: 'b', instanceId: 'i' }), 1, T4);
    assert.equal(r.reply.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
    assert.equal(g.memberCount(), 1);
  });

  it('answers FENCED_INSTANCE_ID when another member id uses a held instance id', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', instanceId: 'i' }), 0, T4));
    assert.equal(g.heartbeat(beat('b', 1, null, { instanceId: 'i' }), 1, T4).reply.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  });

  it('answers UNSUPPORTED_ASSIGNOR for an assignor it does not have', () => {
    const r = newGroup().heartbeat(call({ serverAssignor: 'sticky' }), 0, T4);
    assert.equal(r.reply.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
    assert.match(r.reply.errorMessage ?? '', /uniform, range/);
  });

  it('answers GROUP_MAX_SIZE_REACHED to a new member of a full group, not to its members', () => {
    const g = newGroup();
    for (const id of ['a', 'b', 'c']) ok(g.heartbeat(call({ memberId: id }), 0, T4));
    assert.equal(g.heartbeat(call({ memberId: 'd' }), 1, T4).reply.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
    ok(g.heartbeat(call({ memberId: 'a' }), 1, T4));
    assert.equal(g.memberCount(), 3);
  });
});

describe('ConsumerGroup leaving and timers', () => {
  it('removes a leaving member, bumps the epoch and gives its partitions to the others', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b' }), 1, T4));
    const leave = g.heartbeat(beat('b', 2, null, { memberEpoch: -1 }), 2, T4);
    assert.deepEqual({ epoch: ok(leave).memberEpoch, members: g.memberCount(), groupEpoch: g.describe(T4).groupEpoch }, { epoch: -1, members: 1, groupEpoch: 3 });
    assert.equal(leave.records.length, 1);
    const a = ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 3, T4));
    assert.deepEqual({ epoch: a.memberEpoch, assignment: named(a) }, { epoch: 3, assignment: null });
    assert.equal(g.state(), 'Stable');
  });

  it('keeps a static member\'s partitions for its instance id until a new incarnation takes them over', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a1', instanceId: 'i' }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b' }), 1, T4));
    ok(g.heartbeat(beat('a1', 1, { t: [0, 1, 2, 3] }, { instanceId: 'i' }), 2, T4));
    ok(g.heartbeat(beat('a1', 1, { t: [0, 1] }, { instanceId: 'i' }), 3, T4));
    const epoch = g.describe(T4).groupEpoch;
    assert.equal(ok(g.heartbeat(beat('a1', 2, null, { memberEpoch: -2, instanceId: 'i' }), 4, T4)).memberEpoch, -2);
    assert.equal(g.memberCount(), 2);
    assert.equal(g.state(), 'Reconciling');
    const back = ok(g.heartbeat(call({ memberId: 'a2', instanceId: 'i' }), 5, T4));
    assert.deepEqual({ id: back.memberId, assignment: named(back), groupEpoch: g.describe(T4).groupEpoch }, { id: 'a2', assignment: { t: [0, 1] }, groupEpoch: epoch });
    assert.equal(g.heartbeat(beat('a1', 2, null, { instanceId: 'i' }), 6, T4).reply.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  });

  it('removes a member whose session expires and one that does not revoke in time', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', rebalanceTimeoutMs: 10_000 }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b' }), 1000, T4));
    ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 2000, T4));
    assert.equal(g.nextDeadline(), 12_000);
    assert.deepEqual(g.tick(11_999, T4), { records: [], rebalanced: null });
    const revoking = g.tick(12_000, T4);
    assert.match(revoking.rebalanced ?? '', /member a did not revoke/);
    assert.equal(revoking.records.length, 1);
    assert.deepEqual(g.describe(T4).members.map((m) => m.memberId), ['b']);
    assert.equal(g.nextDeadline(), 1000 + SESSION);
    assert.match(g.tick(1000 + SESSION, T4).rebalanced ?? '', /member b session expired/);
    assert.equal(g.state(), 'Empty');
    assert.equal(g.nextDeadline(), null);
  });

  it('recomputes the target when subscribed topics change, and only then', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    assert.deepEqual(g.topicsChanged(1, topicIndex({ t: 4, unrelated: 9 })), []);
    const grown = topicIndex({ t: 6 });
    assert.equal(g.topicsChanged(2, grown).length, 1);
    assert.equal(g.describe(grown).groupEpoch, 2);
    assert.deepEqual(named(ok(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 3, grown))), { t: [0, 1, 2, 3, 4, 5] });
  });
});

describe('ConsumerGroup describe, epochs and persistence', () => {
  it('describes members with current and target assignments by topic name', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', rackId: 'r1' }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b' }), 1, T4));
    const d = g.describe(T4);
    assert.deepEqual({ state: d.state, groupEpoch: d.groupEpoch, assignmentEpoch: d.assignmentEpoch, assignor: d.assignorName }, { state: 'Reconciling', groupEpoch: 2, assignmentEpoch: 2, assignor: 'uniform' });
    const a = d.members.find((m) => m.memberId === 'a')!;
    assert.deepEqual({ rack: a.rackId, epoch: a.memberEpoch, subscribed: a.subscribedTopicNames }, { rack: 'r1', epoch: 1, subscribed: ['t'] });
    assert.deepEqual(a.assignment, [{ topicId: idOf('t'), topicName: 't', partitions: [0, 1, 2, 3] }]);
    assert.deepEqual(a.targetAssignment, [{ topicId: idOf('t'), topicName: 't', partitions: [0, 1] }]);
  });

  it('checks member epochs for offset commits', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    assert.equal(g.checkMemberEpoch('a', 1), ErrorCode.NONE);
    assert.equal(g.checkMemberEpoch('a', 0), ErrorCode.STALE_MEMBER_EPOCH);
    assert.equal(g.checkMemberEpoch('x', 1), ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('rebuilds the same group from its latest record, and an empty one from a tombstone', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a', instanceId: 'i', serverAssignor: 'range', rebalanceTimeoutMs: 10_000 }), 0, T4));
    ok(g.heartbeat(call({ memberId: 'b', subscribedTopicNames: null, subscribedTopicRegex: 't.*' }), 1, T4));
    const value = latest(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }, { instanceId: 'i' }), 2, T4).records);
    const copy = newGroup();
    copy.replay(value, 100);
    assert.deepEqual(copy.describe(T4), g.describe(T4));
    assert.deepEqual([...copy.subscribedTopics()], ['t']);
    assert.equal(copy.nextDeadline(), 100 + 10_000, 'a is revoking: its deadline restarts at load');
    // The reloaded group carries on: a revokes, b gets the freed partitions.
    const revoked = latest(copy.heartbeat(beat('a', 1, { t: [0, 1] }, { instanceId: 'i' }), 101, T4).records);
    assert.deepEqual(named(ok(copy.heartbeat(beat('b', 2, {}), 102, T4))), { t: [2, 3] });
    // Epochs survive a reload too: a, now at epoch 2, may come back at 1 if it never saw that answer.
    const third = newGroup();
    third.replay(revoked, 103);
    const late = beat('a', 1, { t: [0, 1] }, { instanceId: 'i', rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['t'] });
    assert.equal(ok(third.heartbeat(late, 104, T4)).memberEpoch, 2);
    copy.replay(null, 200);
    assert.deepEqual({ state: copy.state(), members: copy.memberCount(), epoch: copy.describe(T4).groupEpoch }, { state: 'Empty', members: 0, epoch: 0 });
  });

  it('writes no record for a heartbeat that changes nothing', () => {
    const g = newGroup();
    ok(g.heartbeat(call({ memberId: 'a' }), 0, T4));
    assert.deepEqual(g.heartbeat(beat('a', 1, { t: [0, 1, 2, 3] }), 1, T4).records, []);
    assert.equal(g.heartbeat(beat('a', 1, null, { clientHost: '/10.0.0.1' }), 2, T4).records.length, 1);
  });
});
