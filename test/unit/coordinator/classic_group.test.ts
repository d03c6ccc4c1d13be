// Classic group protocol through the coordinator: JoinGroup/SyncGroup/Heartbeat/LeaveGroup,
// rebalances and their timers, static membership, the pitfalls other Kafka-compatible brokers
// hit (tansu: per-member assignments, generation moves only on completion, MEMBER_ID_REQUIRED
// registers the member, a second member joining a Stable group).
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  Harness, describe, heartbeatCall, joinCall, joinNew, leaveCall, meta, syncCall, testDeps, text,
} from './group_fixture.js';

/** Two members A (leader) and B through one complete rebalance: returns their ids and the generation. */
function stableTwo(h: Harness): { a: string; b: string; gen: number } {
  const ra = h.send(joinCall({ clientId: 'a' }));
  const ja = h.reply(ra, 'join');
  const sa = h.send(syncCall(ja.memberId, ja.generationId, { assignments: [{ memberId: ja.memberId, assignment: meta('A0') }] }));
  assert.equal(h.reply(sa, 'sync').errorCode, ErrorCode.NONE);
  const rb = h.send(joinCall({ clientId: 'b' }));
  assert.equal(h.ask(heartbeatCall(ja.memberId, ja.generationId)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
  const ra2 = h.send(joinCall({ memberId: ja.memberId }));
  const a = h.reply(ra2, 'join');
  const b = h.reply(rb, 'join');
  const sb = h.send(syncCall(b.memberId, b.generationId));
  const sa2 = h.send(syncCall(a.memberId, a.generationId, {
    assignments: [{ memberId: a.memberId, assignment: meta('A') }, { memberId: b.memberId, assignment: meta('B') }],
  }));
  assert.equal(text(h.reply(sa2, 'sync').assignment), 'A');
  assert.equal(text(h.reply(sb, 'sync').assignment), 'B');
  return { a: a.memberId, b: b.memberId, gen: a.generationId };
}

suite('JoinGroup', () => {
  it('MEMBER_ID_REQUIRED hands out an id that the next join is accepted with', () => {
    const h = new Harness();
    const first = h.ask(joinCall({ requireKnownMemberId: true, clientId: 'cli' }));
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    assert.equal(first.memberId, 'cli-1');
    const join = h.reply(h.send(joinCall({ requireKnownMemberId: true, memberId: 'cli-1' })), 'join');
    assert.equal(join.errorCode, ErrorCode.NONE);
    assert.equal(join.memberId, 'cli-1');
    assert.equal(join.leader, 'cli-1');
    assert.equal(join.generationId, 1);
    assert.equal(join.protocolName, 'range');
    assert.deepEqual(join.members.map((m) => [m.memberId, text(m.metadata)]), [['cli-1', 't']]);
  });

  it('an unknown id is not accepted, nor one that was never handed out', () => {
    const h = new Harness();
    assert.equal(h.ask(joinCall({ memberId: 'ghost' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    h.send(joinCall());
    assert.equal(h.ask(joinCall({ memberId: 'ghost' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('a pending member id expires after its session timeout', () => {
    const h = new Harness();
    const first = h.ask(joinCall({ requireKnownMemberId: true, sessionTimeoutMs: 5000 }));
    h.advance(5000);
    assert.equal(h.ask(joinCall({ memberId: first.memberId })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('validates session timeout, protocol type and protocols', () => {
    const h = new Harness();
    assert.equal(h.ask(joinCall({ sessionTimeoutMs: 999 })).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(h.ask(joinCall({ sessionTimeoutMs: 300_001 })).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(h.ask(joinCall({ protocolType: '' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(h.ask(joinCall({ protocols: [] })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    h.send(joinCall());
    assert.equal(h.ask(joinCall({ protocolType: 'connect' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const other = joinCall({ protocols: [{ name: 'roundrobin', metadata: meta('t') }] });
    assert.equal(h.ask(other).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('bounds members per group and groups per coordinator', () => {
    const h = new Harness(testDeps({ maxGroupSize: 2, maxGroups: 2 }));
    const a = h.reply(h.send(joinCall({ clientId: 'a' })), 'join').memberId;
    h.send(joinCall({ clientId: 'b' }));
    h.send(joinCall({ memberId: a }));
    assert.equal(describe(h).members.length, 2);
    assert.equal(h.ask(joinCall({ clientId: 'c' })).errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
    h.send(joinCall({ groupId: 'g2' }));
    assert.equal(h.ask(joinCall({ groupId: 'g3' })).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  it('picks the protocol by vote among those every member supports', () => {
    const h = new Harness(testDeps({ initialRebalanceDelayMs: 1000 }));
    const p = (...names: string[]) => names.map((name) => ({ name, metadata: meta(name) }));
    const r1 = h.send(joinCall({ clientId: 'a', protocols: p('rr', 'range', 'sticky') }));
    const r2 = h.send(joinCall({ clientId: 'b', protocols: p('sticky', 'range') }));
    const r3 = h.send(joinCall({ clientId: 'c', protocols: p('sticky', 'rr', 'range') }));
    h.advance(1000);
    assert.ok(!h.answered(r1), 'members kept arriving: one more delay');
    h.advance(1000);
    const leader = h.reply(r1, 'join');
    assert.equal(leader.protocolName, 'sticky');
    assert.deepEqual(leader.members.map((m) => text(m.metadata)), ['sticky', 'sticky', 'sticky']);
    assert.equal(h.reply(r2, 'join').members.length, 0);
    assert.equal(h.reply(r3, 'join').protocolName, 'sticky');
  });

  it('the initial delay waits for more members, extending while they keep coming', () => {
    const h = new Harness(testDeps({ initialRebalanceDelayMs: 3000 }));
    const r1 = h.send(joinCall({ clientId: 'a' }));
    h.advance(2000);
    const r2 = h.send(joinCall({ clientId: 'b' }));
    h.advance(1000);
    assert.ok(!h.answered(r1), 'extended because b arrived');
    h.advance(2999);
    assert.ok(!h.answered(r1));
    h.advance(1);
    assert.equal(h.reply(r1, 'join').generationId, 1);
    assert.equal(h.reply(r2, 'join').generationId, 1);
    assert.equal(h.reply(r1, 'join').members.length, 2);
  });

  it('without requireKnownMemberId (v0-3) a new member is added at once', () => {
    const h = new Harness();
    const j = h.reply(h.send(joinCall({ clientId: 'old' })), 'join');
    assert.equal(j.errorCode, ErrorCode.NONE);
    assert.equal(j.memberId, 'old-1');
  });

  it('a newer join from the same member supersedes the parked one', () => {
    const h = new Harness();
    const { a, b } = stableTwo(h);
    const r1 = h.send(joinCall({ memberId: a }));
    const r2 = h.send(joinCall({ memberId: a }));
    assert.equal(h.reply(r1, 'join').errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    const rb = h.send(joinCall({ memberId: b }));
    assert.equal(h.reply(r2, 'join').errorCode, ErrorCode.NONE);
    assert.equal(h.reply(rb, 'join').errorCode, ErrorCode.NONE);
  });
});

suite('rebalancing', () => {
  it('a second member joining a Stable group: REBALANCE_IN_PROGRESS, then both in the new generation', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    assert.equal(gen, 2);
    assert.notEqual(a, b);
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.NONE);
    assert.equal(h.ask(heartbeatCall(b, gen)).errorCode, ErrorCode.NONE);
    assert.deepEqual(h.rebalances.map((r) => [r.generationId, r.reason, r.members]), [[1, 'join', 1], [2, 'join', 2]]);
  });

  it('the generation moves only when the join phase completes', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const rc = h.send(joinCall({ clientId: 'c' }));
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    assert.equal(h.ask(heartbeatCall(b, gen)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS, 'still generation 2');
    assert.equal(h.ask(syncCall(a, gen)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    h.send(joinCall({ memberId: a }));
    assert.ok(!h.answered(rc));
    h.send(joinCall({ memberId: b }));
    assert.equal(h.reply(rc, 'join').generationId, gen + 1);
  });

  it('an unchanged follower rejoining a Stable group gets the current generation; the leader triggers a rebalance', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const jb = h.reply(h.send(joinCall({ memberId: b })), 'join');
    assert.deepEqual([jb.errorCode, jb.generationId, jb.members.length, jb.leader], [ErrorCode.NONE, gen, 0, a]);
    assert.equal(describe(h).state, 'Stable');
    const ra = h.send(joinCall({ memberId: a }));
    assert.ok(!h.answered(ra));
    assert.equal(describe(h).state, 'PreparingRebalance');
    assert.equal(h.rebalances.length, 2);
    h.send(joinCall({ memberId: b }));
    assert.equal(h.reply(ra, 'join').generationId, gen + 1);
    assert.equal(h.rebalances.at(-1)!.reason, 'leader-rejoin');
  });

  it('changed metadata from a follower starts a rebalance', () => {
    const h = new Harness();
    const { a, b } = stableTwo(h);
    const rb = h.send(joinCall({ memberId: b, protocols: [{ name: 'range', metadata: meta('t,u') }] }));
    const ra = h.send(joinCall({ memberId: a }));
    assert.equal(h.reply(rb, 'join').generationId, 3);
    assert.deepEqual(h.reply(ra, 'join').members.map((m) => text(m.metadata)).sort(), ['t', 't,u']);
    assert.equal(h.rebalances.at(-1)!.reason, 'metadata-change');
  });

  it('members that do not rejoin by the rebalance deadline are removed; the generation still completes', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const ra = h.send(joinCall({ memberId: a, rebalanceTimeoutMs: 20_000 }));
    for (let t = 0; t < 4; t++) {
      h.advance(4000);
      h.ask(heartbeatCall(b, gen)); // keeps b's session alive, but b never rejoins
    }
    h.advance(3999);
    assert.ok(!h.answered(ra));
    h.advance(1);
    const j = h.reply(ra, 'join');
    assert.deepEqual([j.generationId, j.members.map((m) => m.memberId)], [gen + 1, [a]]);
    assert.equal(h.ask(heartbeatCall(b, gen)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(h.rebalances.at(-1)!.durationMs, 20_000);
  });

  it('a parked join gets UNKNOWN_MEMBER_ID when its member leaves; a departed leader is replaced', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const c = joinNew(h, { clientId: 'c' });
    h.ask(leaveCall([{ memberId: c.memberId }]));
    const rc = h.reply(c.ref, 'join');
    assert.deepEqual([rc.errorCode, rc.memberId], [ErrorCode.UNKNOWN_MEMBER_ID, '']);
    const rb = h.send(joinCall({ memberId: b }));
    h.ask(leaveCall([{ memberId: a }]));
    const j = h.reply(rb, 'join');
    assert.deepEqual([j.generationId, j.leader, j.members.map((m) => m.memberId)], [gen + 1, b, [b]]);
  });

  it('a new member parked too long is dropped with UNKNOWN_MEMBER_ID', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const rc = h.send(joinCall({ clientId: 'c', rebalanceTimeoutMs: 400_000 }));
    h.send(joinCall({ memberId: a }));
    for (let t = 0; t < 59; t++) {
      h.advance(5000);
      h.ask(heartbeatCall(b, gen)); // alive but never rejoining: the rebalance goes on
    }
    assert.ok(!h.answered(rc));
    h.advance(5000);
    const r = h.reply(rc, 'join');
    assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.UNKNOWN_MEMBER_ID, '']);
  });

  it('a group whose last member leaves goes Empty, bumps the generation and persists the record', () => {
    const h = new Harness();
    const j = h.reply(h.send(joinCall()), 'join');
    h.ask(syncCall(j.memberId, 1));
    const leave = h.ask(leaveCall([{ memberId: j.memberId }]));
    assert.deepEqual(leave, { kind: 'leave', errorCode: 0, members: [{ memberId: j.memberId, groupInstanceId: null, errorCode: 0 }] });
    assert.equal(describe(h).state, 'Empty');
    const last = h.durable.at(-1)!;
    assert.ok(last.kind === 'classicGroup' && last.value !== null);
    assert.deepEqual([last.value.generationId, last.value.members.length, last.value.protocolName], [2, 0, null]);
  });

  it('session expiry removes a silent member and rebalances the rest', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    for (let t = 0; t < 3; t++) {
      h.advance(3000);
      assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.NONE);
    }
    h.advance(1000);
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    assert.equal(h.ask(heartbeatCall(b, gen)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    const ja = h.reply(h.send(joinCall({ memberId: a })), 'join');
    assert.equal(ja.generationId, gen + 1);
    assert.equal(h.rebalances.at(-1)!.reason, 'session-timeout');
  });

  it('no group stays in PreparingRebalance when its members vanish', () => {
    const h = new Harness();
    const { a } = stableTwo(h);
    h.send(joinCall({ clientId: 'c' }));
    for (let t = 0; t < 60; t++) h.advance(1000);
    assert.equal(describe(h).state, 'Empty');
    assert.deepEqual(h.rebalances.slice(2).map((r) => [r.generationId, r.reason, r.members]),
      [[3, 'join', 1], [4, 'session-timeout', 0]]);
    assert.equal(h.ask(heartbeatCall(a, 2)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });
});

suite('SyncGroup', () => {
  it('followers wait for the leader; each gets its own assignment; missing ones are empty', () => {
    const h = new Harness(testDeps({ initialRebalanceDelayMs: 100 }));
    const r = ['a', 'b', 'c'].map((clientId) => h.send(joinCall({ clientId })));
    h.advance(200);
    const joins = r.map((ref) => h.reply(ref, 'join'));
    const [la, lb, lc] = joins as [typeof joins[0], typeof joins[0], typeof joins[0]];
    const sb = h.send(syncCall(lb.memberId, 1));
    const sc = h.send(syncCall(lc.memberId, 1));
    assert.ok(!h.answered(sb) && !h.answered(sc));
    assert.equal(h.ask(heartbeatCall(lb.memberId, 1)).errorCode, ErrorCode.NONE, 'CompletingRebalance heartbeats are fine');
    const sa = h.send(syncCall(la.memberId, 1, {
      assignments: [{ memberId: la.memberId, assignment: meta('pa') }, { memberId: lb.memberId, assignment: meta('pb') }],
    }));
    assert.equal(text(h.reply(sa, 'sync').assignment), 'pa');
    assert.equal(text(h.reply(sb, 'sync').assignment), 'pb');
    assert.equal(h.reply(sc, 'sync').assignment.length, 0);
    assert.equal(h.reply(sb, 'sync').protocolName, 'range');
    assert.equal(text(h.ask(syncCall(lb.memberId, 1)).assignment), 'pb', 'Stable: current assignment at once');
  });

  it('rejects unknown members, wrong generations and inconsistent protocols', () => {
    const h = new Harness();
    const { a, gen } = stableTwo(h);
    assert.equal(h.ask(syncCall('nobody', gen)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(h.ask(syncCall(a, gen - 1)).errorCode, ErrorCode.ILLEGAL_GENERATION);
    assert.equal(h.ask(syncCall(a, gen, { protocolName: 'roundrobin' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(h.ask(syncCall(a, gen, { protocolType: 'connect' })).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(h.ask(syncCall(a, gen, { protocolType: 'consumer', protocolName: 'range' })).errorCode, ErrorCode.NONE);
    assert.equal(h.ask(syncCall(a, gen, { groupId: 'other' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('the group becomes Stable only once the assignment is durable; a failed append sends everyone back', () => {
    const h = new Harness();
    h.autoAck = false;
    const ra = h.send(joinCall({ clientId: 'a' }));
    h.settleAll();
    const a = h.reply(ra, 'join').memberId;
    const sa = h.send(syncCall(a, 1, { assignments: [{ memberId: a, assignment: meta('x') }] }));
    assert.equal(h.pending.length, 1);
    assert.ok(!h.answered(sa));
    assert.equal(describe(h).state, 'CompletingRebalance');
    h.settle(false);
    assert.equal(h.reply(sa, 'sync').errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    assert.equal(describe(h).state, 'PreparingRebalance');
    const ra2 = h.send(joinCall({ memberId: a }));
    assert.equal(h.reply(ra2, 'join').generationId, 2);
    const sa2 = h.send(syncCall(a, 2, { assignments: [{ memberId: a, assignment: meta('y') }] }));
    h.settle(true);
    assert.equal(text(h.reply(sa2, 'sync').assignment), 'y');
    assert.equal(text(describe(h).members[0]!.assignment), 'y');
  });

  it('a rebalance starting while the assignment is being stored answers the parked syncs once', () => {
    const h = new Harness();
    h.autoAck = false;
    const a = h.reply(h.send(joinCall({ clientId: 'a' })), 'join').memberId;
    const sa = h.send(syncCall(a, 1, { assignments: [{ memberId: a, assignment: meta('x') }] }));
    const rb = h.send(joinCall({ clientId: 'b' }));
    assert.equal(h.reply(sa, 'sync').errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    h.settleAll(true);
    assert.equal(describe(h).state, 'PreparingRebalance');
    h.send(joinCall({ memberId: a }));
    assert.equal(h.reply(rb, 'join').generationId, 2);
  });

  it('members that never sync are removed after the rebalance timeout', () => {
    const h = new Harness(testDeps({ initialRebalanceDelayMs: 100 }));
    const ra = h.send(joinCall({ clientId: 'a', rebalanceTimeoutMs: 8000 }));
    const rb = h.send(joinCall({ clientId: 'b', rebalanceTimeoutMs: 8000 }));
    h.advance(200);
    const a = h.reply(ra, 'join').memberId;
    const b = h.reply(rb, 'join').memberId;
    const sb = h.send(syncCall(b, 1));
    h.advance(7999);
    assert.ok(!h.answered(sb));
    h.advance(1);
    assert.equal(h.reply(sb, 'sync').errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    assert.equal(h.ask(heartbeatCall(a, 1)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(h.ask(heartbeatCall(b, 1)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
    const jb = h.reply(h.send(joinCall({ memberId: b })), 'join');
    assert.deepEqual([jb.generationId, jb.leader], [2, b]);
    assert.equal(h.rebalances.at(-1)!.reason, 'sync-timeout');
  });
});

suite('Heartbeat and LeaveGroup', () => {
  it('heartbeat errors', () => {
    const h = new Harness();
    const { a, gen } = stableTwo(h);
    assert.equal(h.ask(heartbeatCall('nobody', gen)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(h.ask(heartbeatCall(a, gen + 1)).errorCode, ErrorCode.ILLEGAL_GENERATION);
    assert.equal(h.ask(heartbeatCall(a, gen, { groupId: 'nope' })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('leave: per-member errors, by instance id, fenced instance, unknown group', () => {
    const h = new Harness();
    const s = h.reply(h.send(joinCall({ clientId: 's', groupInstanceId: 'inst' })), 'join');
    h.ask(syncCall(s.memberId, 1, { groupInstanceId: 'inst' }));
    const r = h.ask(leaveCall([{ memberId: 'x' }, { memberId: 'other', groupInstanceId: 'inst' }]));
    assert.deepEqual(r.members.map((m) => m.errorCode), [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    const byInstance = h.ask(leaveCall([{ memberId: '', groupInstanceId: 'inst' }]));
    assert.deepEqual(byInstance.members.map((m) => m.errorCode), [ErrorCode.NONE]);
    assert.equal(describe(h).state, 'Empty');
    const unknown = h.ask(leaveCall([{ memberId: 'x' }], 'nogroup'));
    assert.deepEqual([unknown.errorCode, unknown.members[0]!.errorCode], [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID]);
  });

  it('a leave completes the pending rebalance when everyone else has rejoined', () => {
    const h = new Harness();
    const { a, b } = stableTwo(h);
    const ra = h.send(joinCall({ memberId: a }));
    h.ask(leaveCall([{ memberId: b }]));
    const j = h.reply(ra, 'join');
    assert.deepEqual([j.generationId, j.members.length], [3, 1]);
    assert.equal(h.rebalances.at(-1)!.reason, 'leader-rejoin');
  });

  it('a pending member id can leave', () => {
    const h = new Harness();
    const first = h.ask(joinCall({ requireKnownMemberId: true }));
    assert.equal(h.ask(leaveCall([{ memberId: first.memberId }])).members[0]!.errorCode, ErrorCode.NONE);
    assert.equal(h.ask(joinCall({ memberId: first.memberId })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  });
});

suite('static membership (KIP-345)', () => {
  function stableStatic(h: Harness) {
    const ra = h.send(joinCall({ clientId: 'a', groupInstanceId: 'ia' }));
    const rb = h.send(joinCall({ clientId: 'b', groupInstanceId: 'ib' }));
    const a = h.reply(ra, 'join');
    h.send(joinCall({ memberId: a.memberId, groupInstanceId: 'ia' }));
    h.send(joinCall({ memberId: h.reply(rb, 'join').memberId, groupInstanceId: 'ib' }));
    const gen = describeGen(h);
    const ids = describe(h).members.map((m) => m.memberId);
    const [ida, idb] = ids as [string, string];
    const sb = h.send(syncCall(idb, gen, { groupInstanceId: 'ib' }));
    h.ask(syncCall(ida, gen, {
      groupInstanceId: 'ia', assignments: [{ memberId: ida, assignment: meta('A') }, { memberId: idb, assignment: meta('B') }],
    }));
    assert.equal(text(h.reply(sb, 'sync').assignment), 'B');
    return { ida, idb, gen };
  }

  function describeGen(h: Harness): number {
    const last = h.rebalances.at(-1);
    return last === undefined ? 0 : last.generationId;
  }

  it('no MEMBER_ID_REQUIRED round for static members', () => {
    const h = new Harness();
    const j = h.reply(h.send(joinCall({ groupInstanceId: 'i1', requireKnownMemberId: true })), 'join');
    assert.equal(j.errorCode, ErrorCode.NONE);
    assert.equal(j.memberId, 'i1-1');
  });

  it('a restarted follower gets a new id without a rebalance and its previous assignment', () => {
    const h = new Harness();
    const { ida, idb, gen } = stableStatic(h);
    h.autoAck = false;
    const r = h.send(joinCall({ clientId: 'b2', groupInstanceId: 'ib' }));
    assert.ok(!h.answered(r), 'answered only once the new id is durable');
    h.settle(true);
    const j = h.reply(r, 'join');
    assert.deepEqual([j.errorCode, j.generationId, j.leader, j.skipAssignment, j.members.length], [0, gen, ida, false, 0]);
    assert.notEqual(j.memberId, idb);
    const rec = h.durable.at(-1)!;
    assert.ok(rec.kind === 'classicGroup' && rec.value !== null && rec.value.members.some((m) => m.memberId === j.memberId));
    assert.equal(text(h.ask(syncCall(j.memberId, gen, { groupInstanceId: 'ib' })).assignment), 'B');
    assert.equal(h.ask(heartbeatCall(idb, gen, { groupInstanceId: 'ib' })).errorCode, ErrorCode.FENCED_INSTANCE_ID);
    assert.equal(h.ask(heartbeatCall(ida, gen, { groupInstanceId: 'ia' })).errorCode, ErrorCode.NONE);
    assert.equal(h.ask(joinCall({ memberId: idb, groupInstanceId: 'ib' })).errorCode, ErrorCode.FENCED_INSTANCE_ID);
    assert.equal(describe(h).state, 'Stable');
  });

  it('a restarted leader is told to skip the assignment but still sees the members', () => {
    const h = new Harness();
    const { ida, gen } = stableStatic(h);
    const j = h.reply(h.send(joinCall({ clientId: 'a2', groupInstanceId: 'ia' })), 'join');
    assert.deepEqual([j.generationId, j.leader, j.skipAssignment, j.members.length], [gen, j.memberId, true, 2]);
    assert.notEqual(j.memberId, ida);
    assert.equal(text(h.ask(syncCall(j.memberId, gen, { groupInstanceId: 'ia' })).assignment), 'A');
  });

  it('failing to persist the new id undoes the replacement', () => {
    const h = new Harness();
    const { idb, gen } = stableStatic(h);
    h.autoAck = false;
    const r = h.send(joinCall({ clientId: 'b2', groupInstanceId: 'ib' }));
    h.settle(false);
    assert.equal(h.reply(r, 'join').errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    assert.equal(h.ask(heartbeatCall(idb, gen, { groupInstanceId: 'ib' })).errorCode, ErrorCode.NONE);
  });

  it('a restart that changes the selected protocol rebalances', () => {
    const h = new Harness();
    const { ida, idb, gen } = stableStatic(h);
    const protocols = [{ name: 'sticky', metadata: meta('t') }, { name: 'range', metadata: meta('t') }];
    const ra = h.send(joinCall({ memberId: ida, groupInstanceId: 'ia', protocols }));
    h.send(joinCall({ memberId: idb, groupInstanceId: 'ib' }));
    assert.equal(h.reply(ra, 'join').protocolName, 'range', 'b supports range only');
    h.ask(syncCall(ida, gen + 1, { groupInstanceId: 'ia' }));
    assert.equal(describe(h).state, 'Stable');
    const r = h.send(joinCall({ clientId: 'b2', groupInstanceId: 'ib', protocols }));
    assert.equal(describe(h).state, 'PreparingRebalance');
    h.send(joinCall({ memberId: ida, groupInstanceId: 'ia', protocols }));
    assert.deepEqual([h.reply(r, 'join').generationId, h.reply(r, 'join').protocolName], [gen + 2, 'sticky']);
  });

  it('static members that do not rejoin stay until their session ends', () => {
    const h = new Harness();
    const { ida, idb, gen } = stableStatic(h);
    const ra = h.send(joinCall({ memberId: ida, groupInstanceId: 'ia' }));
    for (let t = 0; t < 3; t++) {
      h.advance(5000);
      h.ask(heartbeatCall(idb, gen, { groupInstanceId: 'ib' }));
    }
    h.advance(5000);
    const j = h.reply(ra, 'join');
    assert.deepEqual([j.generationId, j.members.length], [gen + 1, 2], 'ib kept as a member');
    assert.equal(h.ask(heartbeatCall(idb, gen + 1, { groupInstanceId: 'ib' })).errorCode, ErrorCode.NONE);
  });
});

suite('describe, list and load', () => {
  it('describes members with metadata and assignment once Stable; unknown groups are Dead', () => {
    const h = new Harness();
    const { a } = stableTwo(h);
    const d = describe(h);
    assert.deepEqual([d.state, d.protocolType, d.protocol], ['Stable', 'consumer', 'range']);
    assert.equal(text(d.members.find((m) => m.memberId === a)!.assignment), 'A');
    assert.equal(text(d.members[0]!.metadata), 't');
    h.send(joinCall({ clientId: 'z' }));
    const p = describe(h);
    assert.deepEqual([p.state, p.protocol, p.members[0]!.assignment.length], ['PreparingRebalance', '', 0]);
    assert.deepEqual(describe(h, 'nope'), { groupId: 'nope', errorCode: 0, state: 'Dead', protocolType: '', protocol: '', members: [] });
  });

  it('lists groups with state and type filters', () => {
    const h = new Harness();
    stableTwo(h);
    h.send(joinCall({ groupId: 'other', protocolType: 'connect' }));
    const all = h.ask({ kind: 'list', statesFilter: [], typesFilter: [] }).groups;
    assert.deepEqual(all.map((g) => [g.groupId, g.state, g.protocolType, g.type]),
      [['g', 'Stable', 'consumer', 'classic'], ['other', 'CompletingRebalance', 'connect', 'classic']]);
    assert.deepEqual(h.ask({ kind: 'list', statesFilter: ['stable'], typesFilter: [] }).groups.map((g) => g.groupId), ['g']);
    assert.equal(h.ask({ kind: 'list', statesFilter: [], typesFilter: ['consumer'] }).groups.length, 0);
  });

  it('a reloaded group is Stable with fresh sessions and expires without heartbeats', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    h.now += 100_000;
    h.restart();
    assert.equal(describe(h).state, 'Stable');
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.NONE);
    assert.equal(text(h.ask(syncCall(b, gen)).assignment), 'B');
    h.advance(9_000);
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.NONE);
    h.advance(1_000);
    assert.equal(h.ask(heartbeatCall(a, gen)).errorCode, ErrorCode.REBALANCE_IN_PROGRESS, 'b expired');
  });

  it('a group that was rebalancing comes back at its last durable generation', () => {
    const h = new Harness();
    const { a, b, gen } = stableTwo(h);
    const c = joinNew(h, { clientId: 'c' });
    h.send(joinCall({ memberId: a }));
    h.send(joinCall({ memberId: b }));
    assert.equal(h.reply(c.ref, 'join').generationId, gen + 1);
    h.restart();
    assert.equal(h.ask(heartbeatCall(a, gen + 1)).errorCode, ErrorCode.ILLEGAL_GENERATION);
    assert.equal(h.ask(heartbeatCall(c.memberId, gen + 1)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(h.ask(heartbeatCall(b, gen)).errorCode, ErrorCode.NONE);
  });

  it('stats count groups, members and states', () => {
    const h = new Harness();
    stableTwo(h);
    h.send(joinCall({ groupId: 'x' }));
    assert.deepEqual(h.coord.stats(), { groups: 2, members: 3, byState: { Stable: 1, CompletingRebalance: 1 }, pendingAppends: 0 });
  });
});
