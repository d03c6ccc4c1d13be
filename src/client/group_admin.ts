// Consumer-group side of the admin client (KafkaAdmin delegates here): list, describe, delete
// groups, fetch and set their committed offsets, and what lag needs (log end offsets, record
// timestamps). Runs wherever its KafkaConnection lives (the CLI, tests); every function is one
// or a few requests on that connection and nothing retries.
// Invariants: broker-side failures surface as KafkaError with the broker's code; versions are the
// highest both sides speak, except Fetch, capped at v12 so partitions are named rather than
// identified by topic id. Timestamp lookups fetch one partition per request (so the first batch
// always comes whole, KIP-74) with at most FETCH_CONCURRENCY in flight.
// Limitation (as for topics): everything goes to the connected broker; routing to the group's
// coordinator or a partition's leader is for when there is more than one broker.

import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { ConsumerGroupDescribeApi } from '../protocol/apis/consumer_group_describe.js';
import type { ConsumerGroupDescribeGroup } from '../protocol/apis/consumer_group_describe.js';
import { DeleteGroupsApi } from '../protocol/apis/delete_groups.js';
import { DescribeGroupsApi } from '../protocol/apis/describe_groups.js';
import type { DescribeGroupsResponseGroup } from '../protocol/apis/describe_groups.js';
import { FetchApi } from '../protocol/apis/fetch.js';
import { ListGroupsApi } from '../protocol/apis/list_groups.js';
import { ListOffsetsApi } from '../protocol/apis/list_offsets.js';
import { OffsetCommitApi } from '../protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../protocol/apis/offset_fetch.js';
import { decodeAssignment } from '../protocol/consumer_protocol.js';
import { ProtocolError } from '../protocol/reader.js';
import { ZERO_UUID, decodedRecords } from '../protocol/schema.js';
import { brokerError, missingFrom } from './broker_errors.js';
import type { KafkaConnection } from './connection.js';
import { RecordBatchError, decodeRecords } from '../protocol/records.js';

export interface GroupSummary {
  groupId: string;
  /** '' when the broker's ListGroups predates states (before v4). */
  state: string;
  /** 'consumer' for consumer groups, '' for groups that only commit offsets. */
  protocolType: string;
  /** 'classic' (JoinGroup/SyncGroup) or 'consumer' (KIP-848); 'classic' before ListGroups v5. */
  groupType: string;
}

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface GroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** null when the protocol type is not 'consumer' or the bytes do not decode; [] while rebalancing. */
  assignment: TopicPartitions[] | null;
}

export interface GroupDescription {
  groupId: string;
  /** Kafka's state name; 'Dead' for a group the broker does not know. */
  state: string;
  protocolType: string;
  /** Classic: the chosen protocol (assignor); KIP-848: the server-side assignor. */
  protocol: string;
  groupType: 'classic' | 'consumer';
  members: GroupMember[];
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface PartitionOffset extends TopicPartition {
  offset: number;
}

export interface CommittedOffset extends PartitionOffset {
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string | null;
}

/** Where ListOffsets looks: the log start, the log end, or the first record at or after a time (ms). */
export type OffsetSpec = 'earliest' | 'latest' | { timestamp: number };

export interface ListedOffset extends PartitionOffset {
  /** For a timestamp lookup, the found record's timestamp; otherwise -1. Offset -1 = no such record. */
  timestamp: number;
}

export interface PartitionLag extends TopicPartition {
  /** null when the group has committed nothing for the partition. */
  committedOffset: number | null;
  /** null when the broker could not say (e.g. the topic is gone). */
  logEndOffset: number | null;
  /** logEndOffset - committedOffset, or null when either is unknown. */
  lag: number | null;
  /**
   * Time between the record at the committed offset and the last record, in seconds (ms
   * precision, never negative); 0 when caught up; null when unknown.
   */
  lagSeconds: number | null;
  /** The member the partition is assigned to, or null. */
  memberId: string | null;
}

const LATEST = -1;
const EARLIEST = -2;
/** Fetch v13+ names topics by id; v12 is the last that takes names. */
const FETCH_MAX_VERSION = 12;
/** Bytes asked per timestamp lookup; a larger first batch still comes whole (KIP-74). */
const FETCH_PARTITION_BYTES = 16 * 1024;
/** Below the connection's in-flight limit, so lookups never queue behind each other. */
const FETCH_CONCURRENCY = 16;

const tpKey = (topic: string, partition: number): string => `${partition}:${topic}`;

const byTopicPartition = (a: TopicPartition, b: TopicPartition): number =>
  (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition);

function byTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.topic);
    if (list === undefined) out.set(item.topic, [item]);
    else list.push(item);
  }
  return out;
}

/** What a group-level error code means for `groupId`, in words a CLI user can act on. */
export function groupErrorText(groupId: string, code: number): string {
  switch (code) {
    case ErrorCode.NON_EMPTY_GROUP:
      return `group ${groupId} still has active members; stop its consumers first`;
    case ErrorCode.UNKNOWN_MEMBER_ID:
      return `group ${groupId} has active members; its offsets can only be set while it has none (stop its consumers first)`;
    case ErrorCode.GROUP_ID_NOT_FOUND:
      return `group ${groupId} does not exist`;
    default:
      return `group ${groupId}: ${errorName(code)}`;
  }
}

/** Every group the broker knows, sorted by id. */
export async function listGroups(conn: KafkaConnection): Promise<GroupSummary[]> {
  const version = conn.versionFor(ListGroupsApi);
  const res = await conn.request(ListGroupsApi, { statesFilter: [], typesFilter: [] }, version);
  if (res.errorCode !== 0) throw brokerError(res.errorCode, 'list groups', null);
  return res.groups
    .map((g) => ({
      groupId: g.groupId,
      state: version >= 4 ? g.groupState : '',
      protocolType: g.protocolType,
      groupType: version >= 5 ? g.groupType : 'classic',
    }))
    .sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}

const deadGroup = (groupId: string): GroupDescription =>
  ({ groupId, state: 'Dead', protocolType: '', protocol: '', groupType: 'classic', members: [] });

function sortedAssignment(list: readonly TopicPartitions[]): TopicPartitions[] {
  return list
    .map((t) => ({ topic: t.topic, partitions: [...t.partitions].sort((a, b) => a - b) }))
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
}

function classicAssignment(protocolType: string, bytes: Buffer): TopicPartitions[] | null {
  if (protocolType !== 'consumer') return null;
  // Members of a group that is not Stable have no assignment yet.
  if (bytes.length === 0) return [];
  try {
    return sortedAssignment(decodeAssignment(bytes).assignedPartitions);
  } catch (err) {
    if (err instanceof ProtocolError) return null;
    throw err;
  }
}

function classicDescription(g: DescribeGroupsResponseGroup): GroupDescription {
  return {
    groupId: g.groupId,
    state: g.groupState,
    protocolType: g.protocolType,
    protocol: g.protocolData,
    groupType: 'classic',
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: classicAssignment(g.protocolType, m.memberAssignment),
    })),
  };
}

function consumerDescription(g: ConsumerGroupDescribeGroup): GroupDescription {
  return {
    groupId: g.groupId,
    state: g.groupState,
    protocolType: 'consumer',
    protocol: g.assignorName,
    groupType: 'consumer',
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: sortedAssignment(m.assignment.topicPartitions.map((t) => ({ topic: t.topicName, partitions: t.partitions }))),
    })),
  };
}

/** KIP-848 groups, which DescribeGroups reports as Dead (v0-5) or GROUP_ID_NOT_FOUND (v6+). */
async function describeConsumerGroups(conn: KafkaConnection, ids: readonly string[]): Promise<GroupDescription[]> {
  if (ids.length === 0) return [];
  if (!conn.brokerVersions.has(ConsumerGroupDescribeApi.key)) return ids.map(deadGroup);
  const res = await conn.request(ConsumerGroupDescribeApi, { groupIds: [...ids], includeAuthorizedOperations: false });
  return ids.map((id) => {
    const g = res.groups.find((x) => x.groupId === id);
    if (g === undefined) throw missingFrom('ConsumerGroupDescribe', `group ${id}`);
    if (g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return deadGroup(id);
    if (g.errorCode !== 0) throw brokerError(g.errorCode, `group ${id}`, g.errorMessage);
    return consumerDescription(g);
  });
}

/**
 * Describes groups in the order asked (duplicates collapse). Classic groups come from one
 * DescribeGroups; the ones it does not know are asked of ConsumerGroupDescribe (KIP-848) in one
 * more request; a group neither knows is described as Dead with no members.
 */
export async function describeGroups(conn: KafkaConnection, ids: readonly string[]): Promise<GroupDescription[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const res = await conn.request(DescribeGroupsApi, { groups: unique, includeAuthorizedOperations: false });
  const found = new Map<string, GroupDescription>();
  const unknown: string[] = [];
  for (const id of unique) {
    const g = res.groups.find((x) => x.groupId === id);
    if (g === undefined) throw missingFrom('DescribeGroups', `group ${id}`);
    if (g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND || (g.errorCode === 0 && g.groupState === 'Dead')) unknown.push(id);
    else if (g.errorCode !== 0) throw brokerError(g.errorCode, `group ${id}`, null);
    else found.set(id, classicDescription(g));
  }
  for (const d of await describeConsumerGroups(conn, unknown)) found.set(d.groupId, d);
  return unique.map((id) => found.get(id) as GroupDescription);
}

/** The group's committed offsets on every partition it has one for, sorted. */
export async function fetchGroupOffsets(conn: KafkaConnection, groupId: string): Promise<CommittedOffset[]> {
  const version = conn.versionFor(OffsetFetchApi);
  // v1 cannot ask for "all partitions" (null topics arrive in v2).
  if (version < 2) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'listing all of a group\'s offsets needs OffsetFetch v2+');
  const res = await conn.request(OffsetFetchApi, {
    groupId,
    topics: null,
    groups: [{ groupId, memberId: null, memberEpoch: -1, topics: null }],
    requireStable: false,
  }, version);
  const group = version >= 8 ? res.groups.find((g) => g.groupId === groupId) : res;
  if (group === undefined) throw missingFrom('OffsetFetch', `group ${groupId}`);
  if (group.errorCode !== 0) throw brokerError(group.errorCode, `offsets of group ${groupId}`, null);
  const out: CommittedOffset[] = [];
  for (const t of group.topics) {
    for (const p of t.partitions) {
      if (p.errorCode !== 0) throw brokerError(p.errorCode, `offset of group ${groupId} on ${t.name}-${p.partitionIndex}`, null);
      if (p.committedOffset < 0) continue;
      out.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata });
    }
  }
  return out.sort(byTopicPartition);
}

/**
 * Commits offsets from outside any generation (generation -1, no member id), as an admin does.
 * The broker accepts that only while the group has no members (UNKNOWN_MEMBER_ID otherwise).
 */
export async function commitGroupOffsets(conn: KafkaConnection, groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
  if (offsets.length === 0) return;
  const res = await conn.request(OffsetCommitApi, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    topics: [...byTopic(offsets)].map(([name, ps]) => ({
      name,
      partitions: ps.map((p) => ({ partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: '' })),
    })),
  });
  const failed = res.topics.flatMap((t) => t.partitions.filter((p) => p.errorCode !== 0).map((p) => ({ ...p, topic: t.name })));
  const first = failed[0];
  if (first === undefined) return;
  const context = `commit offsets of group ${groupId}`;
  if (failed.every((p) => p.errorCode === ErrorCode.UNKNOWN_MEMBER_ID)) {
    throw brokerError(first.errorCode, context, groupErrorText(groupId, first.errorCode));
  }
  throw brokerError(first.errorCode, context, failed.map((p) => `${p.topic}-${p.partitionIndex}: ${errorName(p.errorCode)}`).join(', '));
}

/** Deletes empty groups with their offsets; any failure throws, naming what was deleted anyway. */
export async function deleteGroups(conn: KafkaConnection, ids: readonly string[]): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  const res = await conn.request(DeleteGroupsApi, { groupsNames: unique });
  const failed: [string, number][] = [];
  const deleted: string[] = [];
  for (const id of unique) {
    const r = res.results.find((x) => x.groupId === id);
    if (r === undefined) throw missingFrom('DeleteGroups', `group ${id}`);
    if (r.errorCode === 0) deleted.push(id);
    else failed.push([id, r.errorCode]);
  }
  const first = failed[0];
  if (first === undefined) return;
  const detail = failed.map(([id, code]) => groupErrorText(id, code)).join('; ');
  throw brokerError(first[1], 'delete groups', deleted.length === 0 ? detail : `${detail} (deleted: ${deleted.join(', ')})`);
}

type RawListed = ListedOffset & { errorCode: number };

async function listOffsetsRaw(conn: KafkaConnection, partitions: readonly TopicPartition[], spec: OffsetSpec): Promise<RawListed[]> {
  if (partitions.length === 0) return [];
  const timestamp = spec === 'earliest' ? EARLIEST : spec === 'latest' ? LATEST : spec.timestamp;
  const res = await conn.request(ListOffsetsApi, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [...byTopic(partitions)].map(([name, ps]) => ({
      name,
      partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp })),
    })),
  });
  return partitions.map(({ topic, partition }) => {
    const p = res.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
    if (p === undefined) throw missingFrom('ListOffsets', `${topic}-${partition}`);
    const found = typeof spec === 'object';
    return { topic, partition, errorCode: p.errorCode, offset: p.offset, timestamp: found ? p.timestamp : -1 };
  });
}

/** One ListOffsets for all `partitions`, in the order given; a partition's error throws. */
export async function listOffsets(conn: KafkaConnection, partitions: readonly TopicPartition[], spec: OffsetSpec): Promise<ListedOffset[]> {
  const listed = await listOffsetsRaw(conn, partitions, spec);
  const bad = listed.find((p) => p.errorCode !== 0);
  if (bad !== undefined) throw brokerError(bad.errorCode, `list offsets of ${bad.topic}-${bad.partition}`, null);
  return listed.map(({ topic, partition, offset, timestamp }) => ({ topic, partition, offset, timestamp }));
}

async function timestampAt(conn: KafkaConnection, version: number, at: PartitionOffset): Promise<number | null> {
  const res = await conn.request(FetchApi, {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1 },
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: FETCH_PARTITION_BYTES,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic: at.topic,
      topicId: ZERO_UUID,
      partitions: [{
        partition: at.partition, currentLeaderEpoch: -1, fetchOffset: at.offset, lastFetchedEpoch: -1,
        logStartOffset: -1, partitionMaxBytes: FETCH_PARTITION_BYTES, replicaDirectoryId: ZERO_UUID,
      }],
    }],
    forgottenTopicsData: [],
    rackId: '',
  }, version);
  const p = res.responses.find((t) => t.topic === at.topic)?.partitions.find((x) => x.partitionIndex === at.partition);
  if (p === undefined || p.errorCode !== 0 || p.records === null) return null;
  try {
    return decodeRecords(decodedRecords(p.records), at.offset)[0]?.timestamp ?? null;
  } catch (err) {
    // Codecs this client cannot read (snappy, lz4, zstd) leave the time unknown.
    if (err instanceof RecordBatchError) return null;
    throw err;
  }
}

/**
 * The timestamp of the first record at or after each position (in the order given), or null when
 * there is none or it cannot be read (offset out of range, unreadable codec).
 */
export async function recordTimestamps(conn: KafkaConnection, positions: readonly PartitionOffset[]): Promise<(number | null)[]> {
  if (positions.length === 0) return [];
  const version = Math.min(FETCH_MAX_VERSION, conn.versionFor(FetchApi));
  const out: (number | null)[] = [];
  for (let i = 0; i < positions.length; i += FETCH_CONCURRENCY) {
    const chunk = positions.slice(i, i + FETCH_CONCURRENCY);
    out.push(...await Promise.all(chunk.map((at) => timestampAt(conn, version, at))));
  }
  return out;
}

/** Which member each assigned partition belongs to. */
function partitionOwners(members: readonly GroupMember[]): Map<string, TopicPartition & { memberId: string }> {
  const owners = new Map<string, TopicPartition & { memberId: string }>();
  for (const m of members) {
    for (const t of m.assignment ?? []) {
      for (const partition of t.partitions) owners.set(tpKey(t.topic, partition), { topic: t.topic, partition, memberId: m.memberId });
    }
  }
  return owners;
}

/** Seconds between two record timestamps, ms precision, never negative (CreateTime may go back). */
function secondsBetween(from: number, to: number): number {
  return Math.max(0, to - from) / 1000;
}

/** Sets lagSeconds of rows that are behind from the records at their committed offset and at the log end. */
async function fillLagSeconds(conn: KafkaConnection, behind: PartitionLag[]): Promise<void> {
  const [from, to] = await Promise.all([
    recordTimestamps(conn, behind.map((r) => ({ topic: r.topic, partition: r.partition, offset: r.committedOffset as number }))),
    recordTimestamps(conn, behind.map((r) => ({ topic: r.topic, partition: r.partition, offset: (r.logEndOffset as number) - 1 }))),
  ]);
  behind.forEach((r, i) => {
    const a = from[i];
    const b = to[i];
    r.lagSeconds = a === null || a === undefined || b === null || b === undefined ? null : secondsBetween(a, b);
  });
}

/**
 * Per partition the group has committed on or is assigned: committed offset, log end offset, lag
 * in records and in seconds, owner. Requests: OffsetFetch, ListOffsets, then two Fetches per
 * partition that is behind.
 */
export async function groupLag(conn: KafkaConnection, group: GroupDescription): Promise<PartitionLag[]> {
  const committed = await fetchGroupOffsets(conn, group.groupId);
  const owners = partitionOwners(group.members);
  const offsets = new Map(committed.map((c) => [tpKey(c.topic, c.partition), c.offset]));
  const partitions = new Map<string, TopicPartition>();
  for (const { topic, partition } of [...committed, ...owners.values()]) partitions.set(tpKey(topic, partition), { topic, partition });
  const ends = await listOffsetsRaw(conn, [...partitions.values()].sort(byTopicPartition), 'latest');
  const rows = ends.map(({ topic, partition, errorCode, offset }): PartitionLag => {
    const key = tpKey(topic, partition);
    const committedOffset = offsets.get(key) ?? null;
    const logEndOffset = errorCode === 0 ? offset : null;
    const lag = committedOffset === null || logEndOffset === null ? null : logEndOffset - committedOffset;
    // Caught up (or past the end after a truncation): nothing to wait for.
    const lagSeconds = lag !== null && lag <= 0 ? 0 : null;
    return { topic, partition, committedOffset, logEndOffset, lag, lagSeconds, memberId: owners.get(key)?.memberId ?? null };
  });
  await fillLagSeconds(conn, rows.filter((r) => r.lag !== null && r.lag > 0));
  return rows;
}
