// Byte form of the coordinator's GroupRecords in the `__consumer_offsets` log, in Kafka's own
// record schemas (protocol/offsets_topic.ts), so Kafka's tools and lag monitors read the topic:
// - an offset is OffsetCommitKey v1 with OffsetCommitValue v3, or v1 when the commit asked for
//   its own retention (OffsetCommit v2-4), as Kafka writes them;
// - a classic group is GroupMetadataKey with GroupMetadataValue v3;
// - a KIP-848 group, which the coordinator hands over whole, becomes Kafka's ConsumerGroup*
//   records (consumer_group_records.ts), with tombstones for the records of members it no longer
//   has; on load they are gathered back into one group per id, handed over after every other
//   record (groups of either kind and offsets do not depend on each other's order).
// Records in the layout Sluice wrote before are read too (legacy_group_records.ts says how they
// are told apart); GroupRecordCodec.decode returns them as GroupRecords like any other, so a
// caller that re-encodes what it loaded holds them in Kafka's schemas from then on.
// A record is one key and a value; a null value is a tombstone. Runs on the shard that owns the
// offsets partition, one codec per partition.
import { Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';
import type { Message } from '../../protocol/schema.js';
import {
  ConsumerGroupCurrentMemberAssignmentValueMessage,
  ConsumerGroupMemberMetadataValueMessage,
  ConsumerGroupMetadataValueMessage,
  ConsumerGroupPartitionMetadataValueMessage,
  ConsumerGroupTargetAssignmentMemberValueMessage,
  ConsumerGroupTargetAssignmentMetadataValueMessage,
  GroupKeyMessage,
  GroupMetadataValueMessage,
  MemberKeyMessage,
  OffsetCommitKeyMessage,
  OffsetCommitValueMessage,
  RecordType,
} from '../../protocol/offsets_topic.js';
import type { ClassicGroupRecordValue, GroupRecord, OffsetRecordValue } from './group_api.js';
import type { ConsumerGroupValue } from './consumer_group_value.js';
import { emptyParts, partsOf, valueOf, type ConsumerGroupParts, type MemberParts } from './consumer_group_records.js';
import {
  LEGACY_OFFSET_VALUE_VERSION, decodeLegacyClassicGroup, decodeLegacyConsumerGroup, decodeLegacyOffsetValue, isLegacyGroupValue,
} from './legacy_group_records.js';

export interface RecordBytes {
  key: Buffer;
  value: Buffer | null;
}

const OFFSET_VALUE_VERSION = 3;
const OFFSET_VALUE_VERSION_WITH_EXPIRY = 1;
const GROUP_VALUE_VERSION = 3;
/** Kafka writes every KIP-848 record at value version 0. */
const KIP848_VALUE_VERSION = 0;

function keyBytes<T>(type: number, message: Message<T>, fields: T): Buffer {
  const w = new Writer(64);
  w.int16(type);
  message.encode(0, fields, w);
  return Buffer.concat(w.finish());
}

function valueBytes<T>(version: number, message: Message<T>, fields: T): Buffer {
  const w = new Writer(64);
  w.int16(version);
  message.encode(version, fields, w);
  return Buffer.concat(w.finish());
}

function groupKey(type: number, groupId: string): Buffer {
  return keyBytes(type, GroupKeyMessage, { groupId });
}

function memberKey(type: number, groupId: string, memberId: string): Buffer {
  return keyBytes(type, MemberKeyMessage, { groupId, memberId });
}

function encodeOffset(groupId: string, topic: string, partition: number, v: OffsetRecordValue | null): RecordBytes {
  const key = keyBytes(RecordType.offsetCommit, OffsetCommitKeyMessage, { group: groupId, topic, partition });
  if (v === null) return { key, value: null };
  const version = v.expireTimestamp === null ? OFFSET_VALUE_VERSION : OFFSET_VALUE_VERSION_WITH_EXPIRY;
  return {
    key,
    value: valueBytes(version, OffsetCommitValueMessage, {
      offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata ?? '', commitTimestamp: v.commitTimestamp,
      expireTimestamp: v.expireTimestamp ?? -1,
    }),
  };
}

function decodeOffsetValue(value: Buffer): OffsetRecordValue {
  const r = new Reader(value);
  const version = r.int16();
  if (version === LEGACY_OFFSET_VALUE_VERSION) return decodeLegacyOffsetValue(value);
  const v = OffsetCommitValueMessage.decode(version, r);
  return {
    offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata, commitTimestamp: v.commitTimestamp,
    expireTimestamp: version === OFFSET_VALUE_VERSION_WITH_EXPIRY && v.expireTimestamp >= 0 ? v.expireTimestamp : null,
  };
}

function encodeClassicGroup(groupId: string, v: ClassicGroupRecordValue | null): RecordBytes {
  const key = groupKey(RecordType.groupMetadata, groupId);
  if (v === null) return { key, value: null };
  return {
    key,
    value: valueBytes(GROUP_VALUE_VERSION, GroupMetadataValueMessage, {
      protocolType: v.protocolType, generation: v.generationId, protocol: v.protocolName, leader: v.leader,
      currentStateTimestamp: v.stateTimestamp,
      members: v.members.map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs, sessionTimeout: m.sessionTimeoutMs,
        subscription: m.subscription, assignment: m.assignment,
      })),
    }),
  };
}

function decodeClassicGroup(value: Buffer): ClassicGroupRecordValue {
  if (isLegacyGroupValue(value)) return decodeLegacyClassicGroup(value);
  const r = new Reader(value);
  const v = GroupMetadataValueMessage.decode(r.int16(), r);
  return {
    protocolType: v.protocolType, generationId: v.generation, protocolName: v.protocol, leader: v.leader,
    stateTimestamp: v.currentStateTimestamp,
    members: v.members.map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      sessionTimeoutMs: m.sessionTimeout, rebalanceTimeoutMs: m.rebalanceTimeout, subscription: m.subscription, assignment: m.assignment,
    })),
  };
}

function kip848Value<T>(value: Buffer, message: Message<T>): T {
  const r = new Reader(value);
  return message.decode(r.int16(), r);
}

/** The records of one member, tombstones when `m` is null. */
function memberRecords(groupId: string, memberId: string, m: MemberParts | null): { metadata: RecordBytes; target: RecordBytes; current: RecordBytes } {
  return {
    metadata: {
      key: memberKey(RecordType.consumerGroupMemberMetadata, groupId, memberId),
      value: m?.metadata ? valueBytes(KIP848_VALUE_VERSION, ConsumerGroupMemberMetadataValueMessage, m.metadata) : null,
    },
    target: {
      key: memberKey(RecordType.consumerGroupTargetAssignmentMember, groupId, memberId),
      value: m?.target ? valueBytes(KIP848_VALUE_VERSION, ConsumerGroupTargetAssignmentMemberValueMessage, { topicPartitions: m.target }) : null,
    },
    current: {
      key: memberKey(RecordType.consumerGroupCurrentMemberAssignment, groupId, memberId),
      value: m?.current ? valueBytes(KIP848_VALUE_VERSION, ConsumerGroupCurrentMemberAssignmentValueMessage, m.current) : null,
    },
  };
}

/**
 * A group's records in the order Kafka writes a new group: subscriptions, then the group epoch
 * with its topic metadata, then the target assignment, then the current assignments.
 */
function groupRecords(groupId: string, p: ConsumerGroupParts): RecordBytes[] {
  const members = [...p.members].map(([memberId, m]) => memberRecords(groupId, memberId, m));
  return [
    ...members.map((m) => m.metadata),
    {
      key: groupKey(RecordType.consumerGroupPartitionMetadata, groupId),
      value: p.partitionMetadata && valueBytes(KIP848_VALUE_VERSION, ConsumerGroupPartitionMetadataValueMessage, p.partitionMetadata),
    },
    {
      key: groupKey(RecordType.consumerGroupMetadata, groupId),
      value: p.epoch === null ? null : valueBytes(KIP848_VALUE_VERSION, ConsumerGroupMetadataValueMessage, { epoch: p.epoch }),
    },
    ...members.map((m) => m.target),
    {
      key: groupKey(RecordType.consumerGroupTargetAssignmentMetadata, groupId),
      value: p.assignmentEpoch === null ? null
        : valueBytes(KIP848_VALUE_VERSION, ConsumerGroupTargetAssignmentMetadataValueMessage, { assignmentEpoch: p.assignmentEpoch }),
    },
    ...members.map((m) => m.current),
  ];
}

/** Tombstones for a member's records, in the order Kafka deletes a member. */
function memberTombstones(groupId: string, memberId: string): RecordBytes[] {
  const t = memberRecords(groupId, memberId, null);
  return [t.current, t.target, t.metadata];
}

/**
 * Encodes and decodes one offsets partition's records. It remembers, per KIP-848 group, which
 * members may have records in the log, so that a group written without a member deletes that
 * member's records; the set is updated when records are encoded and restored for records that
 * did not become durable (`unwritten`). Groups in it are bounded by the groups the coordinator
 * holds; members by its group size limit.
 */
export class GroupRecordCodec {
  private readonly liveMembers = new Map<string, Set<string>>();
  /** KIP-848 records read by decode(), gathered per group until finishLoad(). */
  private readonly loading = new Map<string, ConsumerGroupParts>();

  encode(r: GroupRecord): RecordBytes[] {
    if (r.kind === 'offset') return [encodeOffset(r.groupId, r.topic, r.partition, r.value)];
    if (r.kind === 'classicGroup') return [encodeClassicGroup(r.groupId, r.value)];
    return this.encodeConsumerGroup(r.groupId, r.value);
  }

  /** Records of an append that failed: members they deleted may still have records, so they are deleted again next time. */
  unwritten(records: readonly RecordBytes[]): void {
    for (const r of records) {
      if (r.value !== null) continue;
      const k = new Reader(r.key);
      if (k.int16() !== RecordType.consumerGroupMemberMetadata) continue;
      const { groupId, memberId } = MemberKeyMessage.decode(0, k);
      let live = this.liveMembers.get(groupId);
      if (live === undefined) this.liveMembers.set(groupId, (live = new Set()));
      live.add(memberId);
    }
  }

  /**
   * One record of the log, in log order. Offsets and classic groups come back at once; KIP-848
   * records are gathered, and their groups come from finishLoad(), so this returns null for them.
   * Throws (ProtocolError or Error) on bytes it cannot read.
   */
  decode(key: Buffer, value: Buffer | null): GroupRecord | null {
    const k = new Reader(key);
    const type = k.int16();
    switch (type) {
      case RecordType.legacyOffsetCommit:
      case RecordType.offsetCommit: {
        const { group, topic, partition } = OffsetCommitKeyMessage.decode(0, k);
        return { kind: 'offset', groupId: group, topic, partition, value: value === null ? null : decodeOffsetValue(value) };
      }
      case RecordType.groupMetadata: {
        const { groupId } = GroupKeyMessage.decode(0, k);
        return { kind: 'classicGroup', groupId, value: value === null ? null : decodeClassicGroup(value) };
      }
      case RecordType.consumerGroupMetadata:
      case RecordType.consumerGroupPartitionMetadata:
      case RecordType.consumerGroupTargetAssignmentMetadata:
        this.gatherGroupRecord(type, GroupKeyMessage.decode(0, k).groupId, value);
        return null;
      case RecordType.consumerGroupMemberMetadata:
      case RecordType.consumerGroupTargetAssignmentMember:
      case RecordType.consumerGroupCurrentMemberAssignment: {
        const { groupId, memberId } = MemberKeyMessage.decode(0, k);
        this.gatherMemberRecord(type, groupId, memberId, value);
        return null;
      }
      default:
        throw new Error(`unknown __consumer_offsets record type ${type}`);
    }
  }

  /** The KIP-848 groups decode() gathered, whole; from here on their members count as written. */
  finishLoad(): GroupRecord[] {
    const out: GroupRecord[] = [];
    for (const [groupId, parts] of this.loading) {
      if (parts.members.size > 0) this.liveMembers.set(groupId, new Set(parts.members.keys()));
      const value = valueOf(parts);
      if (value !== null) out.push({ kind: 'consumerGroup', groupId, value });
    }
    this.loading.clear();
    return out;
  }

  private encodeConsumerGroup(groupId: string, value: ConsumerGroupValue | null): RecordBytes[] {
    const parts = value === null ? null : partsOf(value);
    const out: RecordBytes[] = [];
    for (const memberId of this.liveMembers.get(groupId) ?? []) {
      if (parts?.members.has(memberId) !== true) out.push(...memberTombstones(groupId, memberId));
    }
    if (parts === null) {
      this.liveMembers.delete(groupId);
      // Then the group's own records, the group epoch last, as Kafka deletes a group.
      const types = [RecordType.consumerGroupTargetAssignmentMetadata, RecordType.consumerGroupPartitionMetadata, RecordType.consumerGroupMetadata];
      return out.concat(types.map((type) => ({ key: groupKey(type, groupId), value: null })));
    }
    if (parts.members.size > 0) this.liveMembers.set(groupId, new Set(parts.members.keys()));
    else this.liveMembers.delete(groupId);
    return out.concat(groupRecords(groupId, parts));
  }

  private parts(groupId: string): ConsumerGroupParts {
    let p = this.loading.get(groupId);
    if (p === undefined) this.loading.set(groupId, (p = emptyParts()));
    return p;
  }

  private gatherGroupRecord(type: number, groupId: string, value: Buffer | null): void {
    if (type === RecordType.consumerGroupMetadata) {
      // The group epoch is deleted last: its tombstone ends the group. A whole group in one
      // record is the old layout, which wrote every change of the group that way.
      if (value === null) this.loading.delete(groupId);
      else if (isLegacyGroupValue(value)) this.loading.set(groupId, partsOf(decodeLegacyConsumerGroup(value)));
      else this.parts(groupId).epoch = kip848Value(value, ConsumerGroupMetadataValueMessage).epoch;
    } else if (type === RecordType.consumerGroupPartitionMetadata) {
      this.parts(groupId).partitionMetadata = value === null ? null : kip848Value(value, ConsumerGroupPartitionMetadataValueMessage);
    } else {
      this.parts(groupId).assignmentEpoch = value === null ? null
        : kip848Value(value, ConsumerGroupTargetAssignmentMetadataValueMessage).assignmentEpoch;
    }
  }

  private gatherMemberRecord(type: number, groupId: string, memberId: string, value: Buffer | null): void {
    const members = this.parts(groupId).members;
    const m = members.get(memberId) ?? { metadata: null, target: null, current: null };
    if (type === RecordType.consumerGroupMemberMetadata) {
      m.metadata = value === null ? null : kip848Value(value, ConsumerGroupMemberMetadataValueMessage);
    } else if (type === RecordType.consumerGroupTargetAssignmentMember) {
      m.target = value === null ? null : kip848Value(value, ConsumerGroupTargetAssignmentMemberValueMessage).topicPartitions;
    } else {
      m.current = value === null ? null : kip848Value(value, ConsumerGroupCurrentMemberAssignmentValueMessage);
    }
    // Members are listed in the order of their latest metadata records: each write of the group
    // lists them in its order, so a reload keeps the order of the group's last write.
    if (type === RecordType.consumerGroupMemberMetadata) members.delete(memberId);
    if (m.metadata === null && m.target === null && m.current === null) members.delete(memberId);
    else members.set(memberId, m);
  }
}
