// Cross-check of the group APIs and the embedded consumer protocol against two real clients, in
// process (no sockets): kafkajs 2.2.4 (classic versions: JoinGroup v5, SyncGroup v3, Heartbeat
// v3, LeaveGroup v3, OffsetCommit v5, OffsetFetch v4, DescribeGroups v2, and its
// MemberMetadata / MemberAssignment payloads) and @platformatic/kafka (flexible versions:
// JoinGroup v9, SyncGroup v5, LeaveGroup v5, OffsetCommit v9, OffsetFetch v9, ListGroups v5,
// ConsumerGroupHeartbeat v1). Their request encoders feed our decoders; our response encoders
// feed their parsers.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bytesOf, decodeRequest, kjsRequest, kjsResponse, TOPIC_ID, TOPIC_ID_DASHED, load } from './kafkajs_codecs.js';
import {
  consumerGroupHeartbeatV1, joinGroupV9, leaveGroupV5, listGroupsV5, offsetCommitV9, offsetFetchV9, syncGroupV5,
  Reader as PlatReader, Writer as PlatWriter,
} from '@platformatic/kafka';
import { ProtocolError } from '../../../src/protocol/reader.js';
import { JoinGroupApi } from '../../../src/protocol/apis/join_group.js';
import { SyncGroupApi } from '../../../src/protocol/apis/sync_group.js';
import { HeartbeatApi } from '../../../src/protocol/apis/heartbeat.js';
import { LeaveGroupApi } from '../../../src/protocol/apis/leave_group.js';
import { OffsetCommitApi } from '../../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../../src/protocol/apis/offset_fetch.js';
import { ListGroupsApi } from '../../../src/protocol/apis/list_groups.js';
import { DescribeGroupsApi } from '../../../src/protocol/apis/describe_groups.js';
import { ConsumerGroupHeartbeatApi } from '../../../src/protocol/apis/consumer_group_heartbeat.js';
import {
  decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription,
} from '../../../src/protocol/consumer_protocol.js';

// kafkajs's consumer-protocol helpers (CommonJS, untyped): what we use of them.
interface KjsAssignerProtocol {
  MemberMetadata: {
    encode(m: { version: number; topics: string[]; userData?: Buffer }): Buffer;
    decode(b: Buffer): { version: number; topics: string[]; userData: Buffer };
  };
  MemberAssignment: {
    encode(a: { version: number; assignment: Record<string, number[]>; userData?: Buffer }): Buffer;
    decode(b: Buffer): { version: number; assignment: Record<string, number[]>; userData: Buffer } | null;
  };
}

const { MemberMetadata, MemberAssignment } = load('kafkajs/src/consumer/assignerProtocol.js') as KjsAssignerProtocol;

describe('kafkajs 2.2.4 (classic versions)', () => {
  it('JoinGroup v5 carrying a MemberMetadata subscription', async () => {
    const metadata = MemberMetadata.encode({ version: 0, topics: ['orders', 'audit'] });
    const req = await kjsRequest('joinGroup/v5')({
      groupId: 'g', sessionTimeout: 30000, rebalanceTimeout: 60000, memberId: '', protocolType: 'consumer',
      groupProtocols: [{ name: 'RoundRobinAssigner', metadata }],
    }).encode();
    const decoded = decodeRequest(JoinGroupApi, 5, req.buffer);
    assert.deepEqual({ ...decoded, protocols: [] }, {
      groupId: 'g', sessionTimeoutMs: 30000, rebalanceTimeoutMs: 60000, memberId: '', groupInstanceId: null,
      protocolType: 'consumer', protocols: [], reason: null,
    });
    assert.equal(decoded.protocols[0]!.name, 'RoundRobinAssigner');
    assert.deepEqual(decodeSubscription(decoded.protocols[0]!.metadata), {
      topics: ['orders', 'audit'], userData: Buffer.alloc(0), ownedPartitions: [], generationId: -1, rackId: null,
    });

    const ours = encodeSubscription({ topics: ['orders'], userData: null, ownedPartitions: [], generationId: -1, rackId: null }, 0);
    const res = await kjsResponse('joinGroup/v5').decode(bytesOf(JoinGroupApi, 5, {
      throttleTimeMs: 0, errorCode: 0, generationId: 2, protocolType: null, protocolName: 'RoundRobinAssigner',
      leader: 'm1', skipAssignment: false, memberId: 'm1', members: [{ memberId: 'm1', groupInstanceId: 'i1', metadata: ours }],
    }));
    assert.equal(res.generationId, 2);
    assert.equal(res.groupProtocol, 'RoundRobinAssigner');
    const [member] = res.members as { memberId: string; groupInstanceId: string | null; memberMetadata: Buffer }[];
    assert.equal(member!.groupInstanceId, 'i1');
    assert.deepEqual(MemberMetadata.decode(member!.memberMetadata).topics, ['orders']);
  });

  it('SyncGroup v3 carrying a MemberAssignment', async () => {
    const memberAssignment = MemberAssignment.encode({ version: 0, assignment: { orders: [0, 2], audit: [1] } });
    const req = await kjsRequest('syncGroup/v3')({
      groupId: 'g', generationId: 2, memberId: 'm1', groupAssignment: [{ memberId: 'm1', memberAssignment }],
    }).encode();
    const decoded = decodeRequest(SyncGroupApi, 3, req.buffer);
    assert.equal(decoded.groupInstanceId, null);
    assert.deepEqual(decodeAssignment(decoded.assignments[0]!.assignment), {
      assignedPartitions: [{ topic: 'orders', partitions: [0, 2] }, { topic: 'audit', partitions: [1] }], userData: Buffer.alloc(0),
    });

    const assignment = encodeAssignment({ assignedPartitions: [{ topic: 'orders', partitions: [1] }], userData: null });
    const res = await kjsResponse('syncGroup/v3').decode(bytesOf(SyncGroupApi, 3, {
      throttleTimeMs: 0, errorCode: 0, protocolType: null, protocolName: null, assignment,
    }));
    assert.deepEqual(MemberAssignment.decode(res.memberAssignment as Buffer)!.assignment, { orders: [1] });
  });

  it('Heartbeat v3, LeaveGroup v3 requests; LeaveGroup v3 response', async () => {
    const hb = await kjsRequest('heartbeat/v3')({ groupId: 'g', groupGenerationId: 4, memberId: 'm', groupInstanceId: null }).encode();
    assert.deepEqual(decodeRequest(HeartbeatApi, 3, hb.buffer), { groupId: 'g', generationId: 4, memberId: 'm', groupInstanceId: null });
    const leave = await kjsRequest('leaveGroup/v3')({ groupId: 'g', members: [{ memberId: 'm' }] }).encode();
    assert.deepEqual(decodeRequest(LeaveGroupApi, 3, leave.buffer), {
      groupId: 'g', memberId: '', members: [{ memberId: 'm', groupInstanceId: null, reason: null }],
    });
    const res = await kjsResponse('leaveGroup/v3').decode(bytesOf(LeaveGroupApi, 3, {
      throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm', groupInstanceId: null, errorCode: 0 }],
    }));
    assert.deepEqual(res.members, [{ memberId: 'm', groupInstanceId: null, errorCode: 0 }]);
  });

  it('OffsetCommit v5 and OffsetFetch v4 requests', async () => {
    const commit = await kjsRequest('offsetCommit/v5')({
      groupId: 'g', groupGenerationId: 3, memberId: 'm',
      topics: [{ topic: 'orders', partitions: [{ partition: 1, offset: '42' }] }],
    }).encode();
    assert.deepEqual(decodeRequest(OffsetCommitApi, 5, commit.buffer), {
      groupId: 'g', generationIdOrMemberEpoch: 3, memberId: 'm', groupInstanceId: null, retentionTimeMs: -1,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 42, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
    });
    const fetch = await kjsRequest('offsetFetch/v4')({ groupId: 'g', topics: [{ topic: 'orders', partitions: [{ partition: 0 }] }] }).encode();
    assert.deepEqual(decodeRequest(OffsetFetchApi, 4, fetch.buffer), {
      groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }], groups: [], requireStable: false,
    });
  });

  it('DescribeGroups v2 response', async () => {
    const res = await kjsResponse('describeGroups/v2').decode(bytesOf(DescribeGroupsApi, 2, {
      throttleTimeMs: 0,
      groups: [{
        errorCode: 0, groupId: 'g', groupState: 'Stable', protocolType: 'consumer', protocolData: 'RoundRobinAssigner',
        members: [{
          memberId: 'm', groupInstanceId: null, clientId: 'c', clientHost: '/127.0.0.1',
          memberMetadata: Buffer.from([1]), memberAssignment: Buffer.from([2]),
        }],
        authorizedOperations: -2147483648,
      }],
    }));
    const [group] = res.groups as Record<string, unknown>[];
    assert.equal(group!.state, 'Stable');
    assert.equal(group!.protocol, 'RoundRobinAssigner');
    assert.deepEqual(group!.members, [{
      memberId: 'm', clientId: 'c', clientHost: '/127.0.0.1', memberMetadata: Buffer.from([1]), memberAssignment: Buffer.from([2]),
    }]);
  });
});

describe('@platformatic/kafka (flexible versions)', () => {
  const parse = (fn: (c: number, k: number, v: number, r: PlatReader) => unknown, key: number, version: number, bytes: Buffer) =>
    fn(1, key, version, PlatReader.from(bytes)) as Record<string, unknown>;

  it('JoinGroup v9', () => {
    const metadata = encodeSubscription({ topics: ['t'], userData: null, ownedPartitions: [], generationId: -1, rackId: null }, 0);
    const req = joinGroupV9.createRequest('g', 45000, 300000, 'm', null, 'consumer', [{ name: 'roundrobin', metadata }], 'joining').buffer;
    const decoded = decodeRequest(JoinGroupApi, 9, req);
    assert.equal(decoded.reason, 'joining');
    assert.equal(decoded.rebalanceTimeoutMs, 300000);
    assert.deepEqual(decodeSubscription(decoded.protocols[0]!.metadata).topics, ['t']);
    const res = parse(joinGroupV9.parseResponse, 11, 9, bytesOf(JoinGroupApi, 9, {
      throttleTimeMs: 0, errorCode: 0, generationId: 5, protocolType: 'consumer', protocolName: 'roundrobin',
      leader: 'm', skipAssignment: true, memberId: 'm', members: [{ memberId: 'm', groupInstanceId: null, metadata }],
    }));
    assert.equal(res.protocolType, 'consumer');
    assert.equal(res.skipAssignment, true);
    assert.deepEqual((res.members as { metadata: Buffer }[])[0]!.metadata, metadata);
  });

  it('SyncGroup v5 and LeaveGroup v5', () => {
    const sync = syncGroupV5.createRequest('g', 5, 'm', null, 'consumer', 'roundrobin', [{ memberId: 'm', assignment: Buffer.from([0, 0]) }]).buffer;
    assert.deepEqual(decodeRequest(SyncGroupApi, 5, sync), {
      groupId: 'g', generationId: 5, memberId: 'm', groupInstanceId: null, protocolType: 'consumer', protocolName: 'roundrobin',
      assignments: [{ memberId: 'm', assignment: Buffer.from([0, 0]) }],
    });
    const syncRes = parse(syncGroupV5.parseResponse, 14, 5, bytesOf(SyncGroupApi, 5, {
      throttleTimeMs: 0, errorCode: 0, protocolType: 'consumer', protocolName: 'roundrobin', assignment: Buffer.from([7]),
    }));
    assert.deepEqual(syncRes.assignment, Buffer.from([7]));
    const leave = leaveGroupV5.createRequest('g', [{ memberId: 'm', groupInstanceId: null, reason: 'bye' }]).buffer;
    assert.deepEqual(decodeRequest(LeaveGroupApi, 5, leave).members, [{ memberId: 'm', groupInstanceId: null, reason: 'bye' }]);
    const leaveRes = parse(leaveGroupV5.parseResponse, 13, 5, bytesOf(LeaveGroupApi, 5, {
      throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm', groupInstanceId: null, errorCode: 0 }],
    }));
    assert.deepEqual(leaveRes.members, [{ memberId: 'm', groupInstanceId: null, errorCode: 0 }]);
  });

  it('OffsetCommit v9 and OffsetFetch v9', () => {
    const commit = offsetCommitV9.createRequest('g', 7, 'm', null, [{
      name: 't', partitions: [{ partitionIndex: 0, committedOffset: 99n, committedLeaderEpoch: 2, committedMetadata: null }],
    }]).buffer;
    assert.deepEqual(decodeRequest(OffsetCommitApi, 9, commit).topics, [{
      name: 't', partitions: [{ partitionIndex: 0, committedOffset: 99, committedLeaderEpoch: 2, commitTimestamp: -1, committedMetadata: null }],
    }]);
    const commitRes = parse(offsetCommitV9.parseResponse, 8, 9, bytesOf(OffsetCommitApi, 9, {
      throttleTimeMs: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }] }],
    }));
    assert.deepEqual(commitRes.topics, [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }] }]);
    const fetch = offsetFetchV9.createRequest([{ groupId: 'g', memberId: 'm', memberEpoch: 7, topics: [{ name: 't', partitionIndexes: [0, 1] }] }], true).buffer;
    assert.deepEqual(decodeRequest(OffsetFetchApi, 9, fetch), {
      groupId: '', topics: null, requireStable: true,
      groups: [{ groupId: 'g', memberId: 'm', memberEpoch: 7, topics: [{ name: 't', partitionIndexes: [0, 1] }] }],
    });
    const fetchRes = parse(offsetFetchV9.parseResponse, 9, 9, bytesOf(OffsetFetchApi, 9, {
      throttleTimeMs: 0, topics: [], errorCode: 0,
      groups: [{ groupId: 'g', errorCode: 0, topics: [{ name: 't', partitions: [
        { partitionIndex: 0, committedOffset: 99, committedLeaderEpoch: 2, metadata: null, errorCode: 0 },
      ] }] }],
    }));
    assert.deepEqual(fetchRes.groups, [{ groupId: 'g', errorCode: 0, topics: [{ name: 't', partitions: [
      { partitionIndex: 0, committedOffset: 99n, committedLeaderEpoch: 2, metadata: null, errorCode: 0 },
    ] }] }]);
  });

  it('ListGroups v5 (it sends states upper-case; Kafka matches them case-insensitively)', () => {
    assert.deepEqual(decodeRequest(ListGroupsApi, 5, listGroupsV5.createRequest(['STABLE'], ['classic']).buffer),
      { statesFilter: ['STABLE'], typesFilter: ['classic'] });
    const res = parse(listGroupsV5.parseResponse, 16, 5, bytesOf(ListGroupsApi, 5, {
      throttleTimeMs: 0, errorCode: 0, groups: [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }],
    }));
    assert.deepEqual(res.groups, [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }]);
  });

  it('ConsumerGroupHeartbeat v1', () => {
    const req = consumerGroupHeartbeatV1.createRequest('g', 'member-uuid', 0, null, null, 45000, ['t'], null, null, []).buffer;
    assert.deepEqual(decodeRequest(ConsumerGroupHeartbeatApi, 1, req), {
      groupId: 'g', memberId: 'member-uuid', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 45000,
      subscribedTopicNames: ['t'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [],
    });
    const res = parse(consumerGroupHeartbeatV1.parseResponse, 68, 1, bytesOf(ConsumerGroupHeartbeatApi, 1, {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: 'member-uuid', memberEpoch: 1, heartbeatIntervalMs: 5000,
      assignment: { topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 1] }] },
    }));
    assert.equal(res.memberEpoch, 1);
    assert.deepEqual(res.assignment, { topicPartitions: [{ topicId: TOPIC_ID_DASHED, partitions: [0, 1] }] });
  });

  it('its default subscription claims v1 but omits ownedPartitions: rejected, as Kafka rejects it', () => {
    // @platformatic/kafka's default protocol is { name: 'roundrobin', version: 1 } and it writes
    // only the v0 fields. Kafka's ConsumerProtocol fails on it too; callers that look inside
    // JoinGroup metadata must treat an undecodable subscription as opaque.
    const payload = PlatWriter.create().appendInt16(1)
      .appendArray(['t'], (w, t) => w.appendString(t, false), false, false)
      .appendBytes(undefined, false).buffer;
    assert.throws(() => decodeSubscription(payload), ProtocolError);
  });
});
