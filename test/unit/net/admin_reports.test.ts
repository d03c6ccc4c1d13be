// AdminReports over a fixture cluster, fake group coordinators and fake shard figures: hosted
// partitions carry sizes, offsets and rates while others show null, the partition bound cuts the
// listing and says so, reassignments count the adding replicas in the ISR, and groups (classic
// and KIP-848) come with members, decoded assignments, owners and lag in records and seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PartitionSnapshot } from '../../../src/actors/shard_snapshot.js';
import type { GroupCalls } from '../../../src/actors/group_directory.js';
import type { GroupCall, GroupReply } from '../../../src/coordinator/groups/group_api.js';
import { OffsetHistory } from '../../../src/metrics/offset_history.js';
import { AdminReports, MAX_LISTED_PARTITIONS } from '../../../src/net/admin_reports.js';
import { encodeAssignment } from '../../../src/protocol/consumer_protocol.js';
import { clusterView, endpoint } from '../../helpers/cluster_fixture.js';

function snapshot(topic: string, partition: number, logEndOffset: number): PartitionSnapshot {
  return { topic, partition, sizeBytes: 100 * logEndOffset, logStartOffset: 0, logEndOffset, highWatermark: logEndOffset };
}

const noGroups: GroupCalls = {
  call: async () => { throw new Error('no group calls expected'); },
  callByGroup: async () => [],
  list: async () => [],
};

test('topics: hosted partitions carry figures and rates, others null; under the bound, all listed', async () => {
  const cluster = clusterView({
    brokers: [endpoint(1), endpoint(2)],
    topics: [
      { name: 'a', partitions: 2, replicas: [1, 2], isr: [1] },
      { name: 'b', partitions: 1, leader: 2, replicas: [2] },
    ],
  });
  let ends = [10, 0];
  let now = 0;
  const history = new OffsetHistory();
  // As broker.ts does: every read of the hosted partitions samples their log ends.
  const sampled = (list: PartitionSnapshot[]): PartitionSnapshot[] => (history.record(list, now), list);
  const reports = new AdminReports({ cluster, groups: noGroups, history, now: () => now, partitions: async () => sampled(ends.map((e, p) => snapshot('a', p, e))) });
  await reports.topics();
  now = 2000;
  ends = [30, 0];
  const r = await reports.topics();
  assert.equal(r.truncated, false);
  assert.equal(r.totalPartitions, 3);
  assert.deepEqual(r.topics.map((t) => t.name), ['a', 'b']);
  assert.deepEqual(r.topics[0]!.partitions[0], {
    partition: 0, leader: 1, leaderEpoch: 0, replicas: [1, 2], isr: [1], addingReplicas: [], removingReplicas: [],
    hosted: true, sizeBytes: 3000, logStartOffset: 0, logEndOffset: 30, highWatermark: 30, messagesPerSecond: 10,
  });
  assert.equal(r.topics[0]!.partitions[1]!.messagesPerSecond, 0);
  const b = r.topics[1]!.partitions[0]!;
  assert.deepEqual([b.hosted, b.sizeBytes, b.logEndOffset, b.messagesPerSecond], [false, null, null, null]);
});

test('topics: a topic past the partition bound is left out and the answer says so', async () => {
  const cluster = clusterView({ topics: [{ name: 'big', partitions: MAX_LISTED_PARTITIONS + 1 }, { name: 'small', partitions: 1 }] });
  const reports = new AdminReports({ cluster, groups: noGroups, history: new OffsetHistory(), now: () => 0, partitions: async () => [] });
  const r = await reports.topics();
  assert.deepEqual(r.topics.map((t) => t.name), ['small']);
  assert.equal(r.truncated, true);
  assert.equal(r.totalPartitions, MAX_LISTED_PARTITIONS + 2);
});

test('reassignments: partitions with adding or removing replicas, adding ones in the ISR counted', () => {
  const base = clusterView({ brokers: [endpoint(1), endpoint(2), endpoint(3)], topics: [{ name: 'm', partitions: 2, replicas: [1, 2] }] });
  const cluster = {
    ...base,
    partition: (topic: string, p: number) => {
      const r = base.partition(topic, p);
      return r === undefined || p !== 1 ? r : { ...r, replicas: [2, 3, 1], isr: [1, 2], addingReplicas: [2, 3], removingReplicas: [1] };
    },
  };
  const reports = new AdminReports({ cluster, groups: noGroups, history: new OffsetHistory(), now: () => 0, partitions: async () => [] });
  assert.deepEqual(reports.reassignments(), [
    { topic: 'm', partition: 1, replicas: [2, 3, 1], addingReplicas: [2, 3], removingReplicas: [1], isr: [1, 2], caughtUp: 1 },
  ]);
});

test('groups: members with decoded assignments, owners, lag in records and seconds', async () => {
  const cluster = clusterView({ topics: [{ name: 't', partitions: 2 }] });
  const assignment = encodeAssignment({ assignedPartitions: [{ topic: 't', partitions: [1, 0] }], userData: null });
  const offsets: Record<string, [number, number][]> = { classic: [[0, 24], [1, 5]], kip848: [[0, 30]] };
  const groups: GroupCalls = {
    list: async () => [
      { groupId: 'kip848', protocolType: 'consumer', state: 'Stable', type: 'consumer' },
      { groupId: 'classic', protocolType: 'consumer', state: 'Stable', type: 'classic' },
    ],
    callByGroup: async <T extends { groupId: string }>(call: GroupCall, pick: (reply: GroupReply) => T[]) => {
      if (call.kind === 'describe') {
        return pick({
          kind: 'describe',
          groups: [{
            groupId: 'classic', errorCode: 0, state: 'Stable', protocolType: 'consumer', protocol: 'range',
            members: [{ memberId: 'm1', groupInstanceId: null, clientId: '<b>c</b>', clientHost: '/10.0.0.1', metadata: new Uint8Array(), assignment }],
          }],
        });
      }
      return pick({
        kind: 'consumerDescribe',
        groups: [{
          groupId: 'kip848', errorCode: 0, errorMessage: null, state: 'Stable', groupEpoch: 3, assignmentEpoch: 3, assignorName: 'uniform',
          members: [{
            memberId: 'm2', instanceId: null, rackId: null, memberEpoch: 3, clientId: 'k', clientHost: '/10.0.0.2', subscribedTopicNames: ['t'],
            subscribedTopicRegex: null, assignment: [{ topicId: 'x', topicName: 't', partitions: [0] }], targetAssignment: [],
          }],
        }],
      });
    },
    call: async <C extends GroupCall>(groupId: string, call: C) => {
      assert.equal(call.kind, 'offsetFetch');
      const topics = [{ name: 't', partitions: (offsets[groupId] ?? []).map(([partition, offset]) => ({ partition, offset, leaderEpoch: -1, metadata: null, errorCode: 0 })) }];
      return { kind: 'offsetFetch', errorCode: 0, topics } as unknown as Extract<GroupReply, { kind: C['kind'] }>;
    },
  };
  const history = new OffsetHistory();
  let now = 0;
  // As broker.ts does: every read of the hosted partitions samples their log ends.
  const sampled = (list: PartitionSnapshot[]): PartitionSnapshot[] => (history.record(list, now), list);
  let ends = [10, 5];
  const reports = new AdminReports({ cluster, groups, history, now: () => now, partitions: async () => sampled(ends.map((e, p) => snapshot('t', p, e))) });
  await reports.topics();
  now = 1000;
  ends = [25, 5];
  await reports.topics();
  now = 3000;
  ends = [40, 5];
  const r = await reports.groups();
  assert.equal(r.truncated, false);
  assert.deepEqual(r.groups.map((g) => [g.groupId, g.groupType, g.protocol]), [['classic', 'classic', 'range'], ['kip848', 'consumer', 'uniform']]);
  const classic = r.groups[0]!;
  assert.deepEqual(classic.members, [{ memberId: 'm1', groupInstanceId: null, clientId: '<b>c</b>', clientHost: '/10.0.0.1', assignment: [{ topic: 't', partitions: [0, 1] }] }]);
  assert.deepEqual(classic.partitions, [
    // Offsets 10..24 were appended between 0 s and 1 s, 24 last (at 1 s); read at 3 s.
    { topic: 't', partition: 0, committedOffset: 24, logEndOffset: 40, lag: 16, lagSeconds: 2, lagSecondsAtLeast: false, memberId: 'm1' },
    { topic: 't', partition: 1, committedOffset: 5, logEndOffset: 5, lag: 0, lagSeconds: 0, lagSecondsAtLeast: false, memberId: 'm1' },
  ]);
  assert.deepEqual(r.groups[1]!.partitions, [
    // Offset 30, the 6th of the 15 appended between 1 s and 3 s: at about 1.8 s.
    { topic: 't', partition: 0, committedOffset: 30, logEndOffset: 40, lag: 10, lagSeconds: 1.2, lagSecondsAtLeast: false, memberId: 'm2' },
  ]);
});
