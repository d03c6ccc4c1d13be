// The contract of the group coordinator: what a caller may ask it (GroupCall), what it answers
// (GroupReply), what it asks its driver to do (GroupEffect) and what it persists (GroupRecord).
// The coordinator is a pure state machine owned by the shard that owns the group's partition of
// `__consumer_offsets`; these types are all that crosses between the main thread's handlers,
// the shard's driver and the state machine. Calls are version-neutral: the handler on the main
// thread maps each API version onto them and back.

/** Where a group lives in the internal offsets topic: Kafka's `abs(javaHash(groupId)) % partitions`. */
export function offsetsPartitionFor(groupId: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (Math.imul(31, h) + groupId.charCodeAt(i)) | 0;
  // Kafka's Utils.abs maps Integer.MIN_VALUE to 0 via `& 0x7fffffff`.
  return (h & 0x7fffffff) % partitions;
}

export interface GroupConfig {
  /** group.min.session.timeout.ms (6000) / group.max.session.timeout.ms (1800000). */
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  /** group.initial.rebalance.delay.ms: wait this long for more members when an empty group first rebalances. */
  readonly initialRebalanceDelayMs: number;
  /** group.max.size: members per group (classic and consumer). */
  readonly maxGroupSize: number;
  /** Groups one coordinator (one offsets partition) may hold. */
  readonly maxGroups: number;
  /** offset.metadata.max.bytes (4096): larger commit metadata gets OFFSET_METADATA_TOO_LARGE. */
  readonly offsetMetadataMaxBytes: number;
  /** offsets.retention.ms (7 days): offsets of an empty group expire this long after its last commit. */
  readonly offsetsRetentionMs: number;
  /** KIP-848: group.consumer.heartbeat.interval.ms (5000) and group.consumer.session.timeout.ms (45000). */
  readonly consumerHeartbeatIntervalMs: number;
  readonly consumerSessionTimeoutMs: number;
  /** KIP-848 assignors by name; the first is the default ('uniform', 'range'). */
  readonly consumerAssignors: readonly string[];
}

export const DEFAULT_GROUP_CONFIG: GroupConfig = {
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1_800_000,
  initialRebalanceDelayMs: 3000,
  maxGroupSize: 1000,
  maxGroups: 100_000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 7 * 24 * 3600 * 1000,
  consumerHeartbeatIntervalMs: 5000,
  consumerSessionTimeoutMs: 45_000,
  consumerAssignors: ['uniform', 'range'],
};

/** Kafka's group state names as DescribeGroups/ListGroups spell them. */
export type GroupStateName = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead'
  | 'Assigning' | 'Reconciling';

/** Topic metadata the KIP-848 assignors need; pushed to the coordinator as it changes. */
import type { TopicIndex } from '../../assignors/assignor.js';
import type { ConsumerGroupValue } from './consumer_group_value.js';
export type { TopicIndex, TopicInfo } from '../../assignors/assignor.js';

// ---- calls ----

export interface JoinCall {
  kind: 'join';
  groupId: string;
  /** '' for a new member. */
  memberId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  /** v0 has none: the handler passes the session timeout. */
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Uint8Array }[];
  clientId: string;
  clientHost: string;
  /** JoinGroup v4+: a dynamic member with no id first gets MEMBER_ID_REQUIRED and its new id. */
  requireKnownMemberId: boolean;
  reason: string | null;
}

export interface SyncCall {
  kind: 'sync';
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  /** v5+: checked against the group's when not null. */
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Uint8Array }[];
}

export interface HeartbeatCall {
  kind: 'heartbeat';
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveCall {
  kind: 'leave';
  groupId: string;
  /** v0-2 send one member by id; v3+ a batch, each by member id and/or instance id. */
  members: { memberId: string; groupInstanceId: string | null; reason: string | null }[];
}

export interface CommitCall {
  kind: 'commit';
  groupId: string;
  /** Classic: generation id (-1 with memberId '' = a commit from outside any generation). KIP-848: member epoch. */
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  /** OffsetCommit v2-4; -1 = the broker default. */
  retentionTimeMs: number;
  /** commitTimestamp: OffsetCommit v1's client clock; -1 = now (every other version). */
  topics: { name: string; partitions: { partition: number; offset: number; leaderEpoch: number; metadata: string | null; commitTimestamp: number }[] }[];
}

export interface OffsetFetchCall {
  kind: 'offsetFetch';
  groupId: string;
  /** null = every partition the group has an offset for. */
  topics: { name: string; partitions: number[] }[] | null;
  requireStable: boolean;
  /** OffsetFetch v9 (KIP-848): when set, must name a current member at that epoch. */
  memberId: string | null;
  memberEpoch: number;
}

export interface DescribeCall {
  kind: 'describe';
  groupIds: string[];
}

export interface ListCall {
  kind: 'list';
  /** Empty = all. */
  statesFilter: string[];
  /** 'classic' | 'consumer'; empty = all. */
  typesFilter: string[];
}

export interface DeleteGroupsCall {
  kind: 'deleteGroups';
  groupIds: string[];
}

export interface OffsetDeleteCall {
  kind: 'offsetDelete';
  groupId: string;
  topics: { name: string; partitions: number[] }[];
}

/** An admin override of committed offsets (`sluice group seek`): only for a group with no members. */
export interface ResetOffsetsCall {
  kind: 'resetOffsets';
  groupId: string;
  offsets: { topic: string; partition: number; offset: number }[];
}

export interface ConsumerHeartbeatCall {
  kind: 'consumerHeartbeat';
  groupId: string;
  memberId: string;
  /** 0 = join, -1 = leave, -2 = static member leaving temporarily. */
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  /** -1 = unchanged. */
  rebalanceTimeoutMs: number;
  /** null = unchanged. */
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  /** null = unchanged. */
  ownedPartitions: { topicId: string; partitions: number[] }[] | null;
  /** From the request header and the socket; kept for ConsumerGroupDescribe. */
  clientId: string;
  clientHost: string;
}

export interface ConsumerDescribeCall {
  kind: 'consumerDescribe';
  groupIds: string[];
}

export type GroupCall =
  | JoinCall | SyncCall | HeartbeatCall | LeaveCall | CommitCall | OffsetFetchCall | DescribeCall
  | ListCall | DeleteGroupsCall | OffsetDeleteCall | ResetOffsetsCall | ConsumerHeartbeatCall
  | ConsumerDescribeCall;

// ---- replies (one per call, same kind) ----

export interface JoinReply {
  kind: 'join';
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  /** v9: a static leader rejoining a stable group must not reassign. */
  skipAssignment: boolean;
  memberId: string;
  /** Only the leader gets the members (with their metadata for the chosen protocol). */
  members: { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[];
}

export interface SyncReply {
  kind: 'sync';
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Uint8Array;
}

export interface HeartbeatReply { kind: 'heartbeat'; errorCode: number }

export interface LeaveReply {
  kind: 'leave';
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export interface PartitionErrors {
  topics: { name: string; partitions: { partition: number; errorCode: number }[] }[];
}

export interface CommitReply extends PartitionErrors { kind: 'commit' }

export interface OffsetFetchReply {
  kind: 'offsetFetch';
  errorCode: number;
  topics: {
    name: string;
    partitions: { partition: number; offset: number; leaderEpoch: number; metadata: string | null; errorCode: number }[];
  }[];
}

export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Classic: the member's metadata for the chosen protocol. */
  metadata: Uint8Array;
  assignment: Uint8Array;
}

export interface DescribeReply {
  kind: 'describe';
  groups: {
    groupId: string;
    errorCode: number;
    state: GroupStateName;
    protocolType: string;
    protocol: string;
    members: DescribedMember[];
  }[];
}

export interface ListReply {
  kind: 'list';
  groups: { groupId: string; protocolType: string; state: GroupStateName; type: 'classic' | 'consumer' }[];
}

export interface DeleteGroupsReply {
  kind: 'deleteGroups';
  results: { groupId: string; errorCode: number }[];
}

export interface OffsetDeleteReply extends PartitionErrors { kind: 'offsetDelete'; errorCode: number }

export interface ResetOffsetsReply { kind: 'resetOffsets'; errorCode: number }

export interface ConsumerHeartbeatReply {
  kind: 'consumerHeartbeat';
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** null = unchanged since the last answer. */
  assignment: { topicId: string; partitions: number[] }[] | null;
}

export interface ConsumerDescribedMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  memberEpoch: number;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  assignment: { topicId: string; topicName: string; partitions: number[] }[];
  targetAssignment: { topicId: string; topicName: string; partitions: number[] }[];
}

export interface ConsumerDescribeReply {
  kind: 'consumerDescribe';
  groups: {
    groupId: string;
    errorCode: number;
    errorMessage: string | null;
    state: string;
    groupEpoch: number;
    assignmentEpoch: number;
    assignorName: string;
    members: ConsumerDescribedMember[];
  }[];
}

export type GroupReply =
  | JoinReply | SyncReply | HeartbeatReply | LeaveReply | CommitReply | OffsetFetchReply
  | DescribeReply | ListReply | DeleteGroupsReply | OffsetDeleteReply | ResetOffsetsReply
  | ConsumerHeartbeatReply | ConsumerDescribeReply;

// ---- persistence ----

export interface ClassicMemberRecord {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /** Metadata for the group's chosen protocol. */
  subscription: Uint8Array;
  assignment: Uint8Array;
}

/** A classic group as of its last completed rebalance (what Kafka's GroupMetadataValue holds). */
export interface ClassicGroupRecordValue {
  protocolType: string;
  generationId: number;
  protocolName: string | null;
  leader: string | null;
  stateTimestamp: number;
  members: ClassicMemberRecord[];
}

/** A committed offset as recorded; expireTimestamp null = offsets.retention.ms after the commit (Kafka's value v3). */
export interface OffsetRecordValue {
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
  commitTimestamp: number;
  /** Set only by a commit that asked for its own retention (OffsetCommit v2-4), as Kafka's value v1. */
  expireTimestamp: number | null;
}

/**
 * What the coordinator writes to its offsets partition, keyed so the log can be compacted:
 * the last record per key wins and a null value (tombstone) deletes the key. Replaying a
 * partition's records in order rebuilds the coordinator's state.
 */
export type GroupRecord =
  | { kind: 'offset'; groupId: string; topic: string; partition: number; value: OffsetRecordValue | null }
  | { kind: 'classicGroup'; groupId: string; value: ClassicGroupRecordValue | null }
  /** KIP-848 group state, whole; its records in the log are Kafka's per-member ones (group_records.ts). */
  | { kind: 'consumerGroup'; groupId: string; value: ConsumerGroupValue | null };

// ---- effects ----

export type GroupEffect =
  /** Answer the call that came in with this ref (a reply may come long after its call: JoinGroup, SyncGroup). */
  | { kind: 'reply'; ref: number; reply: GroupReply }
  /**
   * Make these records durable in the offsets partition, then feed back `appended(token, ok)`.
   * Replies that depend on the records are emitted only then (ok) or as errors (not ok).
   */
  | { kind: 'append'; token: number; records: GroupRecord[] }
  /** A rebalance finished (a new generation / group epoch is in force): for metrics and logs. */
  | { kind: 'rebalanced'; groupId: string; reason: string; durationMs: number; generationId: number; members: number };

// ---- KIP-848 groups, plugged into the coordinator ----

/**
 * One KIP-848 consumer group: its members, epochs and server-side assignment. The coordinator
 * owns the map of groups and the offsets; it hands a group its calls and persists the records
 * a group returns before sending the reply it returned with them.
 */
export interface ConsumerGroupPort {
  readonly groupId: string;
  heartbeat(call: ConsumerHeartbeatCall, now: number, topics: TopicIndex): { reply: ConsumerHeartbeatReply; records: GroupRecord[] };
  /** Session and revocation deadlines; returns records for members it removed. */
  tick(now: number, topics: TopicIndex): { records: GroupRecord[]; rebalanced: string | null };
  nextDeadline(): number | null;
  /** Partition counts or topics changed: recompute the target assignment. */
  topicsChanged(now: number, topics: TopicIndex): GroupRecord[];
  describe(topics: TopicIndex): ConsumerDescribeReply['groups'][number];
  /** NONE, UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH for an OffsetCommit/OffsetFetch naming this member. */
  checkMemberEpoch(memberId: string, memberEpoch: number): number;
  memberCount(): number;
  state(): GroupStateName;
  /** Topics some member subscribes to (OffsetDelete refuses those). */
  subscribedTopics(): ReadonlySet<string>;
  /** Rebuild from this group's latest persisted value (load path). */
  replay(value: ConsumerGroupValue | null, now: number): void;
}
