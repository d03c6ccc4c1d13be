// Kafka's record schemas of the internal `__consumer_offsets` topic, transcribed from the group
// coordinator's message definitions (group-coordinator/src/main/resources/common/message), so
// the bytes the group coordinator writes are the bytes Kafka writes and Kafka's tools, lag
// monitors and log dumpers read them. Pure wire vocabulary; loaded on whichever thread decodes.
//
// A record's key starts with an int16 that names its type (the key "version"): 0 and 1 are an
// offset commit, 2 a classic group, 3-8 the KIP-848 consumer group records below. The rest of
// the key is that type's key struct, never flexible. A value starts with its own int16 version;
// the classic values are flexible from v4, the KIP-848 values are flexible (compact strings and
// arrays, tagged fields) from v0. A null value (tombstone) deletes the key.
import { defineMessage, type Field, type Message } from './schema.js';

export const RecordType = {
  /** OffsetCommitKey v0 (written by Kafka before 0.10; same fields as v1). */
  legacyOffsetCommit: 0,
  offsetCommit: 1,
  groupMetadata: 2,
  consumerGroupMetadata: 3,
  consumerGroupPartitionMetadata: 4,
  consumerGroupMemberMetadata: 5,
  consumerGroupTargetAssignmentMetadata: 6,
  consumerGroupTargetAssignmentMember: 7,
  consumerGroupCurrentMemberAssignment: 8,
} as const;

// ---- keys: the fields after the type, one schema version (0) each ----

export interface OffsetCommitKey { group: string; topic: string; partition: number }
export interface GroupKey { groupId: string }
export interface MemberKey { groupId: string; memberId: string }

/** OffsetCommitKey: types 0 and 1 have the same fields. */
export const OffsetCommitKeyMessage = defineMessage<OffsetCommitKey>({
  name: 'OffsetCommitKey', minVersion: 0, maxVersion: 0, flexibleVersions: 'none',
  fields: [
    { name: 'group', type: 'string', versions: '0' },
    { name: 'topic', type: 'string', versions: '0' },
    { name: 'partition', type: 'int32', versions: '0' },
  ],
});

/** GroupMetadataKey (type 2) and the KIP-848 keys of group-wide records (types 3, 4, 6). */
export const GroupKeyMessage = defineMessage<GroupKey>({
  name: 'GroupKey', minVersion: 0, maxVersion: 0, flexibleVersions: 'none',
  fields: [{ name: 'groupId', type: 'string', versions: '0' }],
});

/** The KIP-848 keys of per-member records (types 5, 7, 8). */
export const MemberKeyMessage = defineMessage<MemberKey>({
  name: 'MemberKey', minVersion: 0, maxVersion: 0, flexibleVersions: 'none',
  fields: [
    { name: 'groupId', type: 'string', versions: '0' },
    { name: 'memberId', type: 'string', versions: '0' },
  ],
});

// ---- classic values ----

export interface OffsetCommitValue {
  offset: number;
  /** v3+; -1 = unknown. */
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** v1 only; -1 = none. */
  expireTimestamp: number;
}

export const OffsetCommitValueMessage = defineMessage<OffsetCommitValue>({
  name: 'OffsetCommitValue', minVersion: 0, maxVersion: 4, flexibleVersions: '4+',
  fields: [
    { name: 'offset', type: 'int64', versions: '0+' },
    { name: 'leaderEpoch', type: 'int32', versions: '3+', default: -1 },
    { name: 'metadata', type: 'string', versions: '0+' },
    { name: 'commitTimestamp', type: 'int64', versions: '0+' },
    { name: 'expireTimestamp', type: 'int64', versions: '1', default: -1 },
  ],
});

export interface GroupMetadataMember {
  memberId: string;
  /** v3+. */
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** v1+. */
  rebalanceTimeout: number;
  sessionTimeout: number;
  /** Decoded as Buffers (views of the value); any byte array encodes. */
  subscription: Uint8Array;
  assignment: Uint8Array;
}

export interface GroupMetadataValue {
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  /** v2+; -1 = unknown. */
  currentStateTimestamp: number;
  members: GroupMetadataMember[];
}

export const GroupMetadataValueMessage = defineMessage<GroupMetadataValue>({
  name: 'GroupMetadataValue', minVersion: 0, maxVersion: 4, flexibleVersions: '4+',
  fields: [
    { name: 'protocolType', type: 'string', versions: '0+' },
    { name: 'generation', type: 'int32', versions: '0+' },
    { name: 'protocol', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'leader', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'currentStateTimestamp', type: 'int64', versions: '2+', default: -1 },
    {
      name: 'members', type: [
        { name: 'memberId', type: 'string', versions: '0+' },
        { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
        { name: 'clientId', type: 'string', versions: '0+' },
        { name: 'clientHost', type: 'string', versions: '0+' },
        { name: 'rebalanceTimeout', type: 'int32', versions: '1+' },
        { name: 'sessionTimeout', type: 'int32', versions: '0+' },
        { name: 'subscription', type: 'bytes', versions: '0+' },
        { name: 'assignment', type: 'bytes', versions: '0+' },
      ], array: true, versions: '0+',
    },
  ],
});

// ---- KIP-848 values (each at v0, flexible) ----

/** Topic ids are 32 hex characters, as everywhere in the wire vocabulary. */
export interface TopicPartitions { topicId: string; partitions: number[] }

const topicPartitions: readonly Field[] = [
  { name: 'topicId', type: 'uuid', versions: '0+' },
  { name: 'partitions', type: 'int32', array: true, versions: '0+' },
];

function kip848<T>(name: string, fields: readonly Field[]): Message<T> {
  return defineMessage<T>({ name, minVersion: 0, maxVersion: 0, flexibleVersions: '0+', fields });
}

export interface ConsumerGroupMetadataValue { epoch: number }
export const ConsumerGroupMetadataValueMessage = kip848<ConsumerGroupMetadataValue>('ConsumerGroupMetadataValue', [
  { name: 'epoch', type: 'int32', versions: '0+' },
]);

export interface ConsumerGroupPartitionMetadataValue {
  epoch: number;
  topics: { topicId: string; topicName: string; numPartitions: number; partitionRacks: { partition: number; racks: string[] }[] }[];
}
export const ConsumerGroupPartitionMetadataValueMessage = kip848<ConsumerGroupPartitionMetadataValue>('ConsumerGroupPartitionMetadataValue', [
  { name: 'epoch', type: 'int32', versions: '0+' },
  {
    name: 'topics', type: [
      { name: 'topicId', type: 'uuid', versions: '0+' },
      { name: 'topicName', type: 'string', versions: '0+' },
      { name: 'numPartitions', type: 'int32', versions: '0+' },
      {
        name: 'partitionRacks', type: [
          { name: 'partition', type: 'int32', versions: '0+' },
          { name: 'racks', type: 'string', array: true, versions: '0+' },
        ], array: true, versions: '0+',
      },
    ], array: true, versions: '0+',
  },
]);

export interface ConsumerGroupMemberMetadataValue {
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
}
/** The tagged ClassicMemberMetadata (tag 0) belongs to classic members of a consumer group, which Sluice does not host: never written, skipped on read. */
export const ConsumerGroupMemberMetadataValueMessage = kip848<ConsumerGroupMemberMetadataValue>('ConsumerGroupMemberMetadataValue', [
  { name: 'instanceId', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'rackId', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'clientId', type: 'string', versions: '0+' },
  { name: 'clientHost', type: 'string', versions: '0+' },
  { name: 'subscribedTopicNames', type: 'string', array: true, versions: '0+' },
  { name: 'subscribedTopicRegex', type: 'string', versions: '0+', nullableVersions: '0+' },
  { name: 'rebalanceTimeoutMs', type: 'int32', versions: '0+', default: -1 },
  { name: 'serverAssignor', type: 'string', versions: '0+', nullableVersions: '0+' },
]);

export interface ConsumerGroupTargetAssignmentMetadataValue { assignmentEpoch: number }
export const ConsumerGroupTargetAssignmentMetadataValueMessage = kip848<ConsumerGroupTargetAssignmentMetadataValue>(
  'ConsumerGroupTargetAssignmentMetadataValue', [{ name: 'assignmentEpoch', type: 'int32', versions: '0+' }],
);

export interface ConsumerGroupTargetAssignmentMemberValue { topicPartitions: TopicPartitions[] }
export const ConsumerGroupTargetAssignmentMemberValueMessage = kip848<ConsumerGroupTargetAssignmentMemberValue>(
  'ConsumerGroupTargetAssignmentMemberValue', [{ name: 'topicPartitions', type: topicPartitions, array: true, versions: '0+' }],
);

/** Kafka's MemberState codes (int8). */
export const MemberStateCode = { stable: 0, unrevokedPartitions: 1, unreleasedPartitions: 2 } as const;

export interface ConsumerGroupCurrentMemberAssignmentValue {
  memberEpoch: number;
  previousMemberEpoch: number;
  state: number;
  assignedPartitions: TopicPartitions[];
  partitionsPendingRevocation: TopicPartitions[];
}
export const ConsumerGroupCurrentMemberAssignmentValueMessage = kip848<ConsumerGroupCurrentMemberAssignmentValue>(
  'ConsumerGroupCurrentMemberAssignmentValue', [
    { name: 'memberEpoch', type: 'int32', versions: '0+' },
    { name: 'previousMemberEpoch', type: 'int32', versions: '0+' },
    { name: 'state', type: 'int8', versions: '0+' },
    { name: 'assignedPartitions', type: topicPartitions, array: true, versions: '0+' },
    { name: 'partitionsPendingRevocation', type: topicPartitions, array: true, versions: '0+' },
  ],
);
