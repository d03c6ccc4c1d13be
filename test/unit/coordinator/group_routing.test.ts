// How the coordinator routes KIP-848 calls to a ConsumerGroupPort (a small fake here), persists
// what the port returns before answering, and keeps classic and KIP-848 group ids apart.
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type {
  ConsumerDescribeReply, ConsumerGroupPort, ConsumerHeartbeatCall, ConsumerHeartbeatReply, GroupRecord, GroupStateName,
} from '../../../src/coordinator/groups/group_api.js';
import type { ConsumerGroupValue } from '../../../src/coordinator/groups/consumer_group_value.js';
import { Harness, commitCall, describe, fetched, joinCall, leaveCall, syncCall, testDeps } from './group_fixture.js';

interface FakeMember { epoch: number; topics: string[]; deadline: number }

/** Members join at epoch 0, leave at -1, expire after 45 s; every membership change is one record. */
class FakePort implements ConsumerGroupPort {
  readonly members = new Map<string, FakeMember>();
  epoch = 0;

  constructor(readonly groupId: string) {}

  heartbeat(call: ConsumerHeartbeatCall, now: number): { reply: ConsumerHeartbeatReply; records: GroupRecord[] } {
    if (call.memberEpoch === 0) {
      if ((call.subscribedTopicNames ?? []).length === 0) return { reply: this.answer(ErrorCode.INVALID_REQUEST, null, 0), records: [] };
      const id = call.memberId === '' ? `m${this.members.size + 1}` : call.memberId;
      this.members.set(id, { epoch: ++this.epoch, topics: call.subscribedTopicNames ?? [], deadline: now + 45_000 });
      return { reply: this.answer(ErrorCode.NONE, id, this.epoch), records: [this.record()] };
    }
    const m = this.members.get(call.memberId);
    if (m === undefined) return { reply: this.answer(ErrorCode.UNKNOWN_MEMBER_ID, null, 0), records: [] };
    if (call.memberEpoch === -1) {
      this.members.delete(call.memberId);
      this.epoch++;
      return { reply: this.answer(ErrorCode.NONE, call.memberId, -1), records: [this.record()] };
    }
    m.deadline = now + 45_000;
    return { reply: this.answer(ErrorCode.NONE, call.memberId, m.epoch), records: [] };
  }

  tick(now: number): { records: GroupRecord[]; rebalanced: string | null } {
    let expired = false;
    for (const [id, m] of this.members) {
      if (m.deadline > now) continue;
      this.members.delete(id);
      expired = true;
    }
    if (!expired) return { records: [], rebalanced: null };
    this.epoch++;
    return { records: [this.record()], rebalanced: 'session-timeout' };
  }

  nextDeadline(): number | null {
    let min: number | null = null;
    for (const m of this.members.values()) min = min === null ? m.deadline : Math.min(min, m.deadline);
    return min;
  }

  topicsChanged(): GroupRecord[] {
    return [];
  }

  describe(): ConsumerDescribeReply['groups'][number] {
    return {
      groupId: this.groupId, errorCode: 0, errorMessage: null, state: this.state(), groupEpoch: this.epoch,
      assignmentEpoch: this.epoch, assignorName: 'uniform', members: [],
    };
  }

  checkMemberEpoch(memberId: string, memberEpoch: number): number {
    const m = this.members.get(memberId);
    if (m === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    return m.epoch === memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
  }

  memberCount(): number {
    return this.members.size;
  }

  state(): GroupStateName {
    return this.members.size > 0 ? 'Stable' : 'Empty';
  }

  subscribedTopics(): ReadonlySet<string> {
    return new Set([...this.members.values()].flatMap((m) => m.topics));
  }

  replay(value: ConsumerGroupValue | null, now: number): void {
    this.epoch = value?.groupEpoch ?? 0;
    this.members.clear();
    for (const m of value?.members ?? []) {
      this.members.set(m.memberId, { epoch: m.memberEpoch, topics: m.subscribedTopicNames, deadline: now + 45_000 });
    }
  }

  private record(): GroupRecord {
    return {
      kind: 'consumerGroup', groupId: this.groupId,
      value: {
        groupEpoch: this.epoch, assignmentEpoch: this.epoch, subscribedTopics: [],
        members: [...this.members].map(([memberId, m]) => ({
          memberId, instanceId: null, rackId: null, clientId: 'c', clientHost: 'h', rebalanceTimeoutMs: 1000, serverAssignor: null,
          subscribedTopicNames: m.topics, subscribedTopicRegex: null, memberEpoch: m.epoch, previousMemberEpoch: m.epoch,
          state: 'stable' as const, assigned: [], pendingRevocation: [], target: [],
        })),
      },
    };
  }

  private answer(errorCode: number, memberId: string | null, memberEpoch: number): ConsumerHeartbeatReply {
    return { kind: 'consumerHeartbeat', errorCode, errorMessage: null, memberId, memberEpoch, heartbeatIntervalMs: 5000, assignment: null };
  }
}

function harness(): { h: Harness; ports: Map<string, FakePort> } {
  const ports = new Map<string, FakePort>();
  const h = new Harness(testDeps({}, (groupId) => {
    const p = new FakePort(groupId);
    ports.set(groupId, p);
    return p;
  }));
  return { h, ports };
}

function hb(o: Partial<ConsumerHeartbeatCall> = {}): ConsumerHeartbeatCall {
  return {
    kind: 'consumerHeartbeat', groupId: 'k', memberId: '', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['t'], subscribedTopicRegex: null, serverAssignor: null, ownedPartitions: [], clientId: 'c',
    clientHost: '/127.0.0.1', ...o,
  };
}

suite('KIP-848 routing', () => {
  it('persists the port\'s records before its reply; a failed append answers COORDINATOR_NOT_AVAILABLE', () => {
    const { h } = harness();
    h.autoAck = false;
    const ref = h.send(hb());
    assert.ok(!h.answered(ref));
    assert.equal(h.pending[0]!.records[0]!.kind, 'consumerGroup');
    h.settle(true);
    assert.deepEqual([h.reply(ref, 'consumerHeartbeat').memberId, h.reply(ref, 'consumerHeartbeat').memberEpoch], ['m1', 1]);
    const ref2 = h.send(hb({ memberId: 'm2' }));
    h.settle(false);
    assert.equal(h.reply(ref2, 'consumerHeartbeat').errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  it('a reply without records waits for the appends emitted before it', () => {
    const { h } = harness();
    h.autoAck = false;
    const join = h.send(hb());
    const beat = h.send(hb({ memberId: 'm1', memberEpoch: 1 }));
    assert.ok(!h.answered(beat), 'it may describe the join that is not durable yet');
    h.settle(true);
    assert.ok(h.answered(join) && h.answered(beat));
    const beat2 = h.send(hb({ memberId: 'm1', memberEpoch: 1 }));
    assert.equal(h.reply(beat2, 'consumerHeartbeat').errorCode, 0, 'nothing pending: answered at once');
  });

  it('an unknown group is created only by a join that the port accepts', () => {
    const { h } = harness();
    assert.equal(h.ask(hb({ memberEpoch: 3, memberId: 'x' })).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    assert.equal(h.ask(hb({ subscribedTopicNames: [] })).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(h.coord.stats().groups, 0);
  });

  it('keeps classic and KIP-848 ids apart', () => {
    const { h } = harness();
    h.ask(hb());
    assert.equal(h.ask(joinCall({ groupId: 'k' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(h.ask(syncCall('m1', 1, { groupId: 'k' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.deepEqual(h.ask(leaveCall([{ memberId: 'm1' }], 'k')).members[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.deepEqual([describe(h, 'k').state, describe(h, 'k').errorCode], ['Dead', ErrorCode.GROUP_ID_NOT_FOUND]);
    const j = h.reply(h.send(joinCall()), 'join');
    assert.equal(h.ask(hb({ groupId: 'g' })).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    const cd = h.ask({ kind: 'consumerDescribe', groupIds: ['k', 'g', 'none'] }).groups;
    assert.deepEqual(cd.map((g) => [g.groupId, g.errorCode, g.groupEpoch]), [['k', 0, 1], ['g', ErrorCode.GROUP_ID_NOT_FOUND, 0], ['none', ErrorCode.GROUP_ID_NOT_FOUND, 0]]);
    assert.deepEqual(h.ask({ kind: 'list', statesFilter: [], typesFilter: ['consumer'] }).groups, [{ groupId: 'k', protocolType: 'consumer', state: 'Stable', type: 'consumer' }]);
    h.ask(leaveCall([{ memberId: j.memberId }]));
    assert.equal(describe(h).state, 'Empty');
    assert.equal(h.ask(hb({ groupId: 'g' })).errorCode, ErrorCode.NONE, 'an empty classic group gives way');
    assert.ok(h.durable.some((r) => r.kind === 'classicGroup' && r.groupId === 'g' && r.value === null));
  });

  it('an empty KIP-848 group gives way to a classic join', () => {
    const { h } = harness();
    const id = h.ask(hb()).memberId!;
    h.ask(hb({ memberId: id, memberEpoch: -1 }));
    const j = h.reply(h.send(joinCall({ groupId: 'k' })), 'join');
    assert.equal(j.errorCode, ErrorCode.NONE);
    assert.deepEqual(h.durable.filter((r) => r.kind === 'consumerGroup').at(-1), { kind: 'consumerGroup', groupId: 'k', value: null });
    h.restart();
    assert.deepEqual([describe(h, 'k').state, describe(h, 'k').errorCode], ['Dead', 0], 'the tombstone keeps it from coming back');
    assert.equal(h.ask({ kind: 'consumerDescribe', groupIds: ['k'] }).groups[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('commits and fetches naming a member are checked against its epoch', () => {
    const { h } = harness();
    h.ask(hb());
    const c = (memberId: string, epoch: number) => h.ask(commitCall(memberId, epoch, { 't:0': epoch }, { groupId: 'k' })).topics[0]!.partitions[0]!.errorCode;
    assert.equal(c('m1', 1), ErrorCode.NONE);
    assert.equal(c('m1', 0), ErrorCode.STALE_MEMBER_EPOCH);
    assert.equal(c('zz', 1), ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(c('', -1), ErrorCode.UNKNOWN_MEMBER_ID, 'the group has members');
    const f = (memberId: string | null, memberEpoch: number) => h.ask({ kind: 'offsetFetch', groupId: 'k', topics: null, requireStable: false, memberId, memberEpoch });
    assert.equal(f('m1', 0).errorCode, ErrorCode.STALE_MEMBER_EPOCH);
    assert.deepEqual(f('m1', 1).topics[0]!.partitions[0]!.offset, 1);
    assert.equal(f(null, -1).errorCode, ErrorCode.NONE);
  });

  it('port timers: records persisted, rebalance announced; offsets age once the group is empty', () => {
    const { h, ports } = harness();
    h.ask(hb());
    h.ask(commitCall('m1', 1, { 't:0': 7 }, { groupId: 'k', retentionTimeMs: 1000 }));
    h.advance(45_000);
    assert.deepEqual(h.rebalances.map((r) => [r.groupId, r.reason, r.generationId, r.members]), [['k', 'session-timeout', 2, 0]]);
    assert.equal(ports.get('k')!.memberCount(), 0);
    assert.deepEqual(h.durable.filter((r) => r.kind === 'consumerGroup').length, 2);
    assert.deepEqual(fetched(h, ['t:0'], 'k'), { 't:0': 7 }, 'retention counts from when the group emptied');
    h.advance(1000);
    assert.deepEqual(fetched(h, ['t:0'], 'k'), { 't:0': -1 });
    assert.equal(h.ask({ kind: 'deleteGroups', groupIds: ['k'] }).results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(h.durable.at(-1), { kind: 'consumerGroup', groupId: 'k', value: null });
  });

  it('load rebuilds KIP-848 groups through the port', () => {
    const { h, ports } = harness();
    h.ask(hb());
    h.ask(hb({ memberId: 'm9' }));
    ports.clear();
    h.restart();
    assert.deepEqual([...ports.get('k')!.members.keys()], ['m1', 'm9']);
    assert.equal(h.ask(hb({ memberId: 'm9', memberEpoch: 2 })).errorCode, ErrorCode.NONE);
    assert.equal(h.coord.stats().members, 2);
  });

  it('a non-empty KIP-848 group cannot be deleted; its subscribed topics keep their offsets', () => {
    const { h } = harness();
    h.ask(hb({ subscribedTopicNames: ['t'] }));
    h.ask(commitCall('m1', 1, { 't:0': 1, 'u:0': 2 }, { groupId: 'k' }));
    assert.equal(h.ask({ kind: 'deleteGroups', groupIds: ['k'] }).results[0]!.errorCode, ErrorCode.NON_EMPTY_GROUP);
    const r = h.ask({ kind: 'offsetDelete', groupId: 'k', topics: [{ name: 't', partitions: [0] }, { name: 'u', partitions: [0] }] });
    assert.deepEqual(r.topics.map((t) => t.partitions[0]!.errorCode), [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, 0]);
    assert.equal(h.ask({ kind: 'resetOffsets', groupId: 'k', offsets: [] }).errorCode, ErrorCode.NON_EMPTY_GROUP);
  });
});
