// The consumer-group handlers over the real group directory with plain-object dependencies:
// a group whose `__consumer_offsets` partition another broker leads is answered NOT_COORDINATOR
// in each API's own shape without reaching a coordinator; a group this broker coordinates is
// sent to the coordinator of its partition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupDirectory } from '../../../../src/actors/group_directory.js';
import { OFFSETS_TOPIC, type ClusterView } from '../../../../src/cluster/cluster_view.js';
import { resolveConfig } from '../../../../src/config.js';
import { errorReply } from '../../../../src/coordinator/groups/error_reply.js';
import { offsetsPartitionFor, type GroupCall, type GroupReply } from '../../../../src/coordinator/groups/group_api.js';
import { consumerGroupDescribeHandler } from '../../../../src/net/handlers/consumer_group_describe.js';
import { consumerGroupHeartbeatHandler } from '../../../../src/net/handlers/consumer_group_heartbeat.js';
import { deleteGroupsHandler } from '../../../../src/net/handlers/delete_groups.js';
import { describeGroupsHandler } from '../../../../src/net/handlers/describe_groups.js';
import { heartbeatHandler } from '../../../../src/net/handlers/heartbeat.js';
import { joinGroupHandler } from '../../../../src/net/handlers/join_group.js';
import { leaveGroupHandler } from '../../../../src/net/handlers/leave_group.js';
import { listGroupsHandler } from '../../../../src/net/handlers/list_groups.js';
import { offsetCommitHandler } from '../../../../src/net/handlers/offset_commit.js';
import { offsetDeleteHandler } from '../../../../src/net/handlers/offset_delete.js';
import { offsetFetchHandler } from '../../../../src/net/handlers/offset_fetch.js';
import { syncGroupHandler } from '../../../../src/net/handlers/sync_group.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { clusterView, endpoint } from '../../../helpers/cluster_fixture.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

const OFFSETS_PARTITIONS = 4;
const GROUP = 'payments';
/** The handle of offsets partition p is 100 + p. */
const handleOf = (_topic: string, p: number): number => 100 + p;

interface Setup {
  readonly cluster: ClusterView;
  readonly groups: GroupDirectory;
  readonly sent: Array<[number, GroupCall['kind']]>;
}

/** A directory over a view where broker `leader` leads every offsets partition; this broker is 1. */
async function setup(leader: number): Promise<Setup> {
  const cluster = clusterView({
    localId: 1, brokers: [endpoint(1), endpoint(2)],
    topics: [{ name: OFFSETS_TOPIC, partitions: OFFSETS_PARTITIONS, leader }, { name: 'orders', partitions: 2 }],
  });
  const sent: Array<[number, GroupCall['kind']]> = [];
  const groups = new GroupDirectory({
    config: resolveConfig([], {}).config,
    cluster,
    topics: { createInternal: () => Promise.resolve(cluster.topic(OFFSETS_TOPIC)!) },
    partitions: { handleOf },
    router: {
      groupCall: (handle: number, call: GroupCall): Promise<GroupReply> => {
        sent.push([handle, call.kind]);
        return Promise.resolve(errorReply(call, ErrorCode.NONE));
      },
    },
  });
  await groups.start();
  return { cluster, groups, sent };
}

/** Each group API: a request about GROUP, and the error code its answer carries. */
const cases: Array<[string, (s: Setup) => Promise<number | undefined>]> = [
  ['JoinGroup', async (s) => answered(await joinGroupHandler.handle(requestContext(11, 9), {
    groupId: GROUP, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [], reason: null,
  }, s)).errorCode],
  ['SyncGroup', async (s) => answered(await syncGroupHandler.handle(requestContext(14, 5), {
    groupId: GROUP, generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [],
  }, s)).errorCode],
  ['Heartbeat', async (s) => answered(await heartbeatHandler.handle(requestContext(12, 4), { groupId: GROUP, generationId: 1, memberId: 'm', groupInstanceId: null }, s)).errorCode],
  ['LeaveGroup', async (s) => answered(await leaveGroupHandler.handle(requestContext(13, 3), {
    groupId: GROUP, memberId: '', members: [{ memberId: 'm', groupInstanceId: null, reason: null }],
  }, s)).errorCode],
  ['OffsetCommit', async (s) => answered(await offsetCommitHandler.handle(requestContext(8, 8), {
    groupId: GROUP, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null, commitTimestamp: -1 }] }],
  }, s)).topics?.[0]?.partitions?.[0]?.errorCode],
  ['OffsetFetch', async (s) => answered(await offsetFetchHandler.handle(requestContext(9, 8), {
    groupId: '', topics: null, requireStable: false, groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: null }],
  }, s)).groups?.[0]?.errorCode],
  ['OffsetDelete', async (s) => answered(await offsetDeleteHandler.handle(requestContext(47, 0), {
    groupId: GROUP, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }],
  }, s)).errorCode],
  ['DescribeGroups', async (s) => answered(await describeGroupsHandler.handle(requestContext(15, 5), { groups: [GROUP], includeAuthorizedOperations: false }, s)).groups?.[0]?.errorCode],
  ['DeleteGroups', async (s) => answered(await deleteGroupsHandler.handle(requestContext(42, 2), { groupsNames: [GROUP] }, s)).results?.[0]?.errorCode],
  ['ConsumerGroupHeartbeat', async (s) => answered(await consumerGroupHeartbeatHandler.handle(requestContext(68, 0), {
    groupId: GROUP, memberId: '', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 10_000,
    subscribedTopicNames: ['orders'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [],
  }, s)).errorCode],
  ['ConsumerGroupDescribe', async (s) => answered(await consumerGroupDescribeHandler.handle(requestContext(69, 0), { groupIds: [GROUP], includeAuthorizedOperations: false }, s)).groups?.[0]?.errorCode],
];

describe('group handlers', () => {
  for (const [api, run] of cases) {
    it(`${api}: NOT_COORDINATOR when another broker leads the group's partition; its coordinator otherwise`, async () => {
      const elsewhere = await setup(2);
      assert.equal(await run(elsewhere), ErrorCode.NOT_COORDINATOR);
      assert.deepEqual(elsewhere.sent, [], 'no coordinator was asked');
      const here = await setup(1);
      assert.equal(await run(here), ErrorCode.NONE);
      assert.deepEqual(here.sent.map(([h]) => h), [100 + offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS)]);
    });
  }

  it('ListGroups asks only the coordinators this broker hosts', async () => {
    const elsewhere = await setup(2);
    const none = answered(await listGroupsHandler.handle(requestContext(16, 4), { statesFilter: [], typesFilter: [] }, elsewhere));
    assert.deepEqual([none.errorCode, none.groups, elsewhere.sent], [ErrorCode.NONE, [], []]);
    const here = await setup(1);
    await listGroupsHandler.handle(requestContext(16, 4), { statesFilter: [], typesFilter: [] }, here);
    assert.equal(here.sent.length, OFFSETS_PARTITIONS);
  });
});
