// Offset calls through the coordinator: OffsetCommit validation and durability, OffsetFetch,
// retention and expiry, DeleteGroups, OffsetDelete, the admin reset, and reloading from the log.
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { EMPTY_GROUP_GRACE_MS } from '../../../src/coordinator/groups/offset_expiry.js';
import { MAX_PENDING_APPENDS } from '../../../src/coordinator/groups/coordinator_state.js';
import {
  Harness, commitCall, describe, fetched, heartbeatCall, joinCall, leaveCall, meta, syncCall, testDeps,
} from './group_fixture.js';

function codes(r: { topics: { partitions: { errorCode: number }[] }[] }): number[] {
  return r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
}

/** One member in a Stable group `g` subscribed to topic t; returns its id and generation. */
function stableOne(h: Harness): { m: string; gen: number } {
  const j = h.reply(h.send(joinCall()), 'join');
  h.ask(syncCall(j.memberId, j.generationId));
  return { m: j.memberId, gen: j.generationId };
}

suite('OffsetCommit', () => {
  it('a commit from outside any generation creates a simple group; offsets count once durable', () => {
    const h = new Harness();
    h.autoAck = false;
    const ref = h.send(commitCall('', -1, { 't:0': 5, 't:1': 7 }));
    assert.ok(!h.answered(ref));
    assert.deepEqual(fetched(h, ['t:0', 't:1']), { 't:0': -1, 't:1': -1 }, 'not durable yet');
    h.settle(true);
    assert.deepEqual(codes(h.reply(ref, 'commit')), [0, 0]);
    assert.deepEqual(fetched(h, ['t:0', 't:1', 't:2']), { 't:0': 5, 't:1': 7, 't:2': -1 });
    const d = describe(h);
    assert.deepEqual([d.state, d.protocolType], ['Empty', '']);
    assert.deepEqual(h.ask({ kind: 'list', statesFilter: [], typesFilter: [] }).groups, [{ groupId: 'g', protocolType: '', state: 'Empty', type: 'classic' }]);
  });

  it('a failed append answers COORDINATOR_NOT_AVAILABLE and changes nothing', () => {
    const h = new Harness();
    h.send(commitCall('', -1, { 't:0': 5 }));
    h.autoAck = false;
    const ref = h.send(commitCall('', -1, { 't:0': 9 }));
    h.settle(false);
    assert.deepEqual(codes(h.reply(ref, 'commit')), [ErrorCode.COORDINATOR_NOT_AVAILABLE]);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 5 });
  });

  it('commits take effect in the order they were made, whatever order the outcomes arrive in', () => {
    const h = new Harness();
    h.autoAck = false;
    const r1 = h.send(commitCall('', -1, { 't:0': 1 }));
    const r2 = h.send(commitCall('', -1, { 't:0': 2 }));
    h.settle(true, 1);
    assert.ok(!h.answered(r1) && !h.answered(r2), 'the second waits for the first');
    h.settle(true, 0);
    assert.ok(h.answered(r1) && h.answered(r2));
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 2 });
  });

  it('validates the committer against the group', () => {
    const h = new Harness();
    assert.deepEqual(codes(h.ask(commitCall('x', 0, { 't:0': 1 }))), [ErrorCode.ILLEGAL_GENERATION], 'no group, generation >= 0');
    const { m, gen } = stableOne(h);
    assert.deepEqual(codes(h.ask(commitCall('', -1, { 't:0': 1 }))), [ErrorCode.UNKNOWN_MEMBER_ID], 'group has members');
    assert.deepEqual(codes(h.ask(commitCall('nobody', gen, { 't:0': 1 }))), [ErrorCode.UNKNOWN_MEMBER_ID]);
    assert.deepEqual(codes(h.ask(commitCall(m, gen + 1, { 't:0': 1 }))), [ErrorCode.ILLEGAL_GENERATION]);
    assert.deepEqual(codes(h.ask(commitCall(m, gen, { 't:0': 1 }, { groupInstanceId: 'i' }))), [ErrorCode.UNKNOWN_MEMBER_ID]);
    assert.deepEqual(codes(h.ask(commitCall(m, gen, { 't:0': 1 }))), [ErrorCode.NONE]);
    h.send(joinCall({ clientId: 'other' }));
    assert.deepEqual(codes(h.ask(commitCall(m, gen, { 't:0': 2 }))), [ErrorCode.NONE], 'allowed while PreparingRebalance');
    h.send(joinCall({ memberId: m }));
    assert.equal(describe(h).state, 'CompletingRebalance');
    assert.deepEqual(codes(h.ask(commitCall(m, gen + 1, { 't:0': 3 }))), [ErrorCode.REBALANCE_IN_PROGRESS]);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 2 });
  });

  it('a fenced static instance cannot commit', () => {
    const h = new Harness();
    const j = h.reply(h.send(joinCall({ groupInstanceId: 'i' })), 'join');
    h.ask(syncCall(j.memberId, 1, { groupInstanceId: 'i' }));
    const k = h.reply(h.send(joinCall({ groupInstanceId: 'i' })), 'join');
    assert.notEqual(k.memberId, j.memberId);
    assert.deepEqual(codes(h.ask(commitCall(j.memberId, 1, { 't:0': 1 }, { groupInstanceId: 'i' }))), [ErrorCode.FENCED_INSTANCE_ID]);
    assert.deepEqual(codes(h.ask(commitCall(k.memberId, 1, { 't:0': 1 }, { groupInstanceId: 'i' }))), [ErrorCode.NONE]);
  });

  it('a commit keeps its member alive', () => {
    const h = new Harness();
    const { m, gen } = stableOne(h);
    for (let i = 0; i < 5; i++) {
      h.advance(8000);
      assert.deepEqual(codes(h.ask(commitCall(m, gen, { 't:0': i }))), [ErrorCode.NONE]);
    }
    assert.equal(h.ask(heartbeatCall(m, gen)).errorCode, ErrorCode.NONE);
  });

  it('metadata over the limit fails only its partition; null metadata is stored as ""', () => {
    const h = new Harness(testDeps({ offsetMetadataMaxBytes: 4 }));
    const call = commitCall('', -1, {});
    call.topics = [{
      name: 't',
      partitions: [
        { partition: 0, offset: 1, leaderEpoch: 2, metadata: 'ééé', commitTimestamp: -1 },
        { partition: 1, offset: 2, leaderEpoch: 2, metadata: null, commitTimestamp: -1 },
        { partition: 2, offset: 3, leaderEpoch: 2, metadata: 'abcd', commitTimestamp: -1 },
      ],
    }];
    assert.deepEqual(codes(h.ask(call)), [ErrorCode.OFFSET_METADATA_TOO_LARGE, ErrorCode.NONE, ErrorCode.NONE]);
    const r = h.ask({ kind: 'offsetFetch', groupId: 'g', topics: null, requireStable: true, memberId: null, memberEpoch: -1 });
    assert.deepEqual(r.topics, [{
      name: 't',
      partitions: [
        { partition: 1, offset: 2, leaderEpoch: 2, metadata: '', errorCode: 0 },
        { partition: 2, offset: 3, leaderEpoch: 2, metadata: 'abcd', errorCode: 0 },
      ],
    }]);
  });
});

suite('bounds', () => {
  it('calls are told to retry once too many appends are waiting', () => {
    const h = new Harness();
    h.autoAck = false;
    for (let i = 0; i < MAX_PENDING_APPENDS; i++) h.send(commitCall('', -1, { 't:0': i }));
    assert.deepEqual(codes(h.ask(commitCall('', -1, { 't:0': -5 }))), [ErrorCode.COORDINATOR_NOT_AVAILABLE]);
    assert.equal(h.ask({ kind: 'resetOffsets', groupId: 'x', offsets: [] }).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    h.settle(true);
    assert.equal(h.coord.stats().pendingAppends, MAX_PENDING_APPENDS - 1);
    const ref = h.send(commitCall('', -1, { 't:0': -6 }));
    assert.ok(!h.answered(ref), 'room again');
    h.settleAll(true);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': -6 });
  });
});

suite('OffsetFetch', () => {
  it('an unknown group has -1, empty metadata and no error; null topics lists nothing', () => {
    const h = new Harness();
    const r = h.ask({ kind: 'offsetFetch', groupId: 'nope', topics: [{ name: 't', partitions: [3] }], requireStable: false, memberId: null, memberEpoch: -1 });
    assert.deepEqual(r, { kind: 'offsetFetch', errorCode: 0, topics: [{ name: 't', partitions: [{ partition: 3, offset: -1, leaderEpoch: -1, metadata: '', errorCode: 0 }] }] });
    const all = h.ask({ kind: 'offsetFetch', groupId: 'nope', topics: null, requireStable: false, memberId: null, memberEpoch: -1 });
    assert.deepEqual(all.topics, []);
  });

  it('works in every group state', () => {
    const h = new Harness();
    const { m, gen } = stableOne(h);
    h.ask(commitCall(m, gen, { 'a:0': 10, 'b:1': 20 }));
    h.send(joinCall({ clientId: 'x' }));
    assert.equal(describe(h).state, 'PreparingRebalance');
    assert.deepEqual(fetched(h, ['a:0', 'b:1', 'b:0']), { 'a:0': 10, 'b:1': 20, 'b:0': -1 });
    assert.deepEqual(h.coord.committedOffsets().get('g')?.offsets, [{ topic: 'a', partition: 0, offset: 10 }, { topic: 'b', partition: 1, offset: 20 }]);
  });
});

suite('retention', () => {
  it('offsets of an empty group expire, counted from when it became empty; then the group goes', () => {
    const h = new Harness(testDeps({ offsetsRetentionMs: 60_000 }));
    const { m, gen } = stableOne(h);
    h.ask(commitCall(m, gen, { 't:0': 1 }));
    for (let i = 0; i < 30; i++) {
      h.advance(5000);
      h.ask(heartbeatCall(m, gen));
    }
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 1 }, 'a live group keeps its offsets');
    h.ask(leaveCall([{ memberId: m }]));
    const emptyAt = h.now;
    h.advance(60_000 - 1);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 1 }, 'retention counts from when the group became empty');
    h.advance(1);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': -1 });
    assert.deepEqual(h.durable.at(-1), { kind: 'offset', groupId: 'g', topic: 't', partition: 0, value: null });
    assert.equal(describe(h).state, 'Empty');
    assert.equal(h.coord.nextDeadline(), emptyAt + EMPTY_GROUP_GRACE_MS);
    h.advance(EMPTY_GROUP_GRACE_MS);
    assert.equal(describe(h).state, 'Dead');
    assert.deepEqual(h.durable.at(-1), { kind: 'classicGroup', groupId: 'g', value: null });
    assert.equal(h.coord.nextDeadline(), null);
  });

  it('an explicit retention time applies to a simple group', () => {
    const h = new Harness();
    h.ask(commitCall('', -1, { 't:0': 1 }, { retentionTimeMs: 5000 }));
    h.ask(commitCall('', -1, { 't:1': 2 }, { retentionTimeMs: 60_000 }));
    h.advance(5000);
    assert.deepEqual(fetched(h, ['t:0', 't:1']), { 't:0': -1, 't:1': 2 });
    h.advance(55_000);
    assert.deepEqual(fetched(h, ['t:0', 't:1']), { 't:0': -1, 't:1': -1 });
    assert.equal(describe(h).state, 'Dead');
  });

  it('an empty group without offsets lingers for the grace period', () => {
    const h = new Harness();
    const { m } = stableOne(h);
    h.ask(leaveCall([{ memberId: m }]));
    h.advance(EMPTY_GROUP_GRACE_MS - 1);
    assert.equal(describe(h).state, 'Empty');
    h.advance(1);
    assert.equal(describe(h).state, 'Dead');
  });

  it('a failed expiry is retried; a commit in flight is never expired under it', () => {
    const h = new Harness();
    h.ask(commitCall('', -1, { 't:0': 1 }, { retentionTimeMs: 1000 }));
    h.autoAck = false;
    h.advance(1000);
    assert.equal(h.pending.length, 1);
    h.settle(false);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 1 });
    const ref = h.send(commitCall('', -1, { 't:0': 2 }, { retentionTimeMs: 1000 }));
    h.runTimers();
    assert.equal(h.pending.length, 1, 'no expiry while the new commit is in flight');
    h.settle(true);
    assert.equal(h.reply(ref, 'commit').topics[0]!.partitions[0]!.errorCode, 0);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 2 });
  });
});

suite('DeleteGroups, OffsetDelete, reset', () => {
  it('DeleteGroups: unknown, non-empty, and deletion of an empty group with its offsets', () => {
    const h = new Harness();
    h.ask(commitCall('', -1, { 't:0': 1, 'u:3': 4 }));
    stableOne(h);
    h.ask(commitCall('', -1, { 'v:0': 1 }, { groupId: 'e' }));
    h.autoAck = false;
    const ref = h.send({ kind: 'deleteGroups', groupIds: ['nope', 'g', 'e'] });
    assert.ok(!h.answered(ref));
    assert.deepEqual(h.pending[0]!.records, [
      { kind: 'offset', groupId: 'e', topic: 'v', partition: 0, value: null },
      { kind: 'classicGroup', groupId: 'e', value: null },
    ]);
    assert.equal(describe(h, 'e').state, 'Dead', 'looks gone while the deletion is in flight');
    h.settle(true);
    assert.deepEqual(h.reply(ref, 'deleteGroups').results, [
      { groupId: 'nope', errorCode: ErrorCode.GROUP_ID_NOT_FOUND },
      { groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP },
      { groupId: 'e', errorCode: ErrorCode.NONE },
    ]);
    assert.deepEqual(fetched(h, ['v:0'], 'e'), { 'v:0': -1 });
    assert.equal(h.coord.stats().groups, 1);
  });

  it('a failed deletion leaves the group as it was', () => {
    const h = new Harness();
    h.ask(commitCall('', -1, { 't:0': 1 }));
    h.autoAck = false;
    const ref = h.send({ kind: 'deleteGroups', groupIds: ['g'] });
    assert.deepEqual(codes(h.ask(commitCall('', -1, { 't:0': 2 }))), [ErrorCode.COORDINATOR_NOT_AVAILABLE], 'busy meanwhile');
    h.settle(false);
    assert.deepEqual(h.reply(ref, 'deleteGroups').results, [{ groupId: 'g', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }]);
    assert.deepEqual(fetched(h, ['t:0']), { 't:0': 1 });
    assert.equal(describe(h).state, 'Empty');
  });

  it('a commit in flight when its group is deleted is deleted with it', () => {
    const h = new Harness();
    h.ask(commitCall('', -1, { 't:0': 1 }));
    h.autoAck = false;
    const c = h.send(commitCall('', -1, { 't:9': 2 }));
    const d = h.send({ kind: 'deleteGroups', groupIds: ['g'] });
    h.settleAll(true);
    assert.deepEqual(codes(h.reply(c, 'commit')), [0]);
    assert.equal(h.reply(d, 'deleteGroups').results[0]!.errorCode, 0);
    assert.equal(h.coord.committedOffsets().size, 0);
    h.restart();
    assert.equal(h.coord.committedOffsets().size, 0);
  });

  it('reset: only without members; creates the group; values as given', () => {
    const h = new Harness();
    assert.equal(h.ask({ kind: 'resetOffsets', groupId: 'r', offsets: [{ topic: 't', partition: 0, offset: 42 }] }).errorCode, 0);
    assert.deepEqual(fetched(h, ['t:0'], 'r'), { 't:0': 42 });
    assert.equal(describe(h, 'r').state, 'Empty');
    stableOne(h);
    assert.equal(h.ask({ kind: 'resetOffsets', groupId: 'g', offsets: [{ topic: 't', partition: 0, offset: 1 }] }).errorCode, ErrorCode.NON_EMPTY_GROUP);
  });

  it('OffsetDelete: unknown group; subscribed topics refused; others tombstoned', () => {
    const h = new Harness();
    assert.equal(h.ask({ kind: 'offsetDelete', groupId: 'g', topics: [] }).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    const j = h.reply(h.send(joinCall({ protocols: [{ name: 'range', metadata: meta('t,u') }] })), 'join');
    h.ask(syncCall(j.memberId, 1));
    h.ask(commitCall(j.memberId, 1, { 't:0': 1, 'v:0': 2, 'v:1': 3 }));
    const r = h.ask({ kind: 'offsetDelete', groupId: 'g', topics: [{ name: 't', partitions: [0] }, { name: 'v', partitions: [0, 5] }] });
    assert.equal(r.errorCode, 0);
    assert.deepEqual(codes(r), [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, 0, 0]);
    assert.deepEqual(fetched(h, ['t:0', 'v:0', 'v:1']), { 't:0': 1, 'v:0': -1, 'v:1': 3 });
  });

  it('OffsetDelete refuses a live group whose subscriptions it cannot read', () => {
    const h = new Harness();
    h.send(joinCall({ protocolType: 'connect' }));
    assert.equal(h.ask({ kind: 'offsetDelete', groupId: 'g', topics: [] }).errorCode, ErrorCode.NON_EMPTY_GROUP);
  });
});

suite('load', () => {
  it('acknowledged commits survive a restart; offsets without a group record come back with a simple group', () => {
    const h = new Harness();
    const { m, gen } = stableOne(h);
    h.ask(commitCall(m, gen, { 't:0': 11 }));
    h.ask(commitCall('', -1, { 't:0': 5 }, { groupId: 'simple' }));
    h.ask(commitCall(m, gen, { 't:0': 12, 't:1': 1 }));
    h.restart();
    assert.deepEqual(fetched(h, ['t:0', 't:1']), { 't:0': 12, 't:1': 1 });
    assert.deepEqual(fetched(h, ['t:0'], 'simple'), { 't:0': 5 });
    assert.equal(describe(h, 'simple').state, 'Empty');
    assert.equal(h.ask(heartbeatCall(m, gen)).errorCode, ErrorCode.NONE);
  });

  it('replays in log order: the last record per key wins, tombstones delete', () => {
    const h = new Harness();
    h.coord.load([
      { kind: 'offset', groupId: 'a', topic: 't', partition: 0, value: { offset: 1, leaderEpoch: -1, metadata: null, commitTimestamp: 0, expireTimestamp: 1e15 } },
      { kind: 'offset', groupId: 'a', topic: 't', partition: 0, value: { offset: 2, leaderEpoch: -1, metadata: 'x', commitTimestamp: 0, expireTimestamp: 1e15 } },
      { kind: 'offset', groupId: 'a', topic: 't', partition: 1, value: { offset: 3, leaderEpoch: -1, metadata: null, commitTimestamp: 0, expireTimestamp: 1e15 } },
      { kind: 'offset', groupId: 'a', topic: 't', partition: 1, value: null },
      { kind: 'classicGroup', groupId: 'b', value: { protocolType: 'consumer', generationId: 4, protocolName: 'range', leader: null, stateTimestamp: 0, members: [] } },
      { kind: 'classicGroup', groupId: 'c', value: { protocolType: 'consumer', generationId: 1, protocolName: null, leader: null, stateTimestamp: 0, members: [] } },
      { kind: 'classicGroup', groupId: 'c', value: null },
    ], h.now);
    assert.deepEqual(h.coord.committedOffsets(), new Map([['a', { members: 0, offsets: [{ topic: 't', partition: 0, offset: 2 }] }]]));
    assert.deepEqual(h.ask({ kind: 'list', statesFilter: [], typesFilter: [] }).groups.map((g) => g.groupId).sort(), ['a', 'b']);
    const j = h.reply(h.send(joinCall({ groupId: 'b' })), 'join');
    assert.equal(j.generationId, 5);
  });
});
