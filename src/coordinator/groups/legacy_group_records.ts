// Reads what Sluice wrote to `__consumer_offsets` before it wrote Kafka's record schemas, so a
// data directory from then loads once; the coordinator's driver then holds it re-encoded in
// Kafka's schemas and writes it so when it next compacts the partition (or when the key is next
// written). Pure; on the shard that loads the offsets partition.
//
// The old keys are byte for byte Kafka's: an int16 kind (1 offset, 2 classic group, 3 KIP-848
// group) then the group id (and for offsets the topic and partition), as OffsetCommitKey v1,
// GroupMetadataKey and ConsumerGroupMetadataKey are. The old values are told apart from Kafka's
// by their first bytes, unambiguously because of what the new code never writes:
// - offset values: int16 version 0, then offset, leader epoch, nullable metadata, commit and
//   expire timestamps. Kafka's OffsetCommitValue v0 also starts with 0, but the group
//   coordinator writes only v1 and v3, so a version-0 offset value is always the old layout.
// - group values (classic and KIP-848): one byte 0, then a V8 serialization, whose first byte is
//   V8's version tag 0xFF. Kafka's values start with an int16 version of 0 to 4, so their
//   second byte is never 0xFF.
import { deserialize } from 'node:v8';
import { Reader } from '../../protocol/reader.js';
import type { ClassicGroupRecordValue, OffsetRecordValue } from './group_api.js';
import { MemberState } from './consumer_group_member.js';
import type { ConsumerGroupValue, ConsumerMemberValue, TopicPartitionsValue } from './consumer_group_value.js';

export const LEGACY_OFFSET_VALUE_VERSION = 0;
const LEGACY_GROUP_VALUE_VERSION = 0;
const V8_VERSION_TAG = 0xff;

/** A group value in the old layout: the version byte, then V8's header. */
export function isLegacyGroupValue(value: Buffer): boolean {
  return value.length >= 2 && value[0] === LEGACY_GROUP_VALUE_VERSION && value[1] === V8_VERSION_TAG;
}

/**
 * An old offset value; the caller has seen its version is LEGACY_OFFSET_VALUE_VERSION. The old
 * layout always held an expiry; one with a leader epoch came from OffsetCommit v6+, which has no
 * retention of its own, so its expiry was the default and is dropped (kept as Kafka's v3, with
 * the epoch). Only a commit without an epoch keeps its expiry (as v1, which has no epoch).
 */
export function decodeLegacyOffsetValue(value: Buffer): OffsetRecordValue {
  const v = new Reader(value, 2);
  const offset = v.int64();
  const leaderEpoch = v.int32();
  const metadata = v.nullableString();
  const commitTimestamp = v.int64();
  const expireTimestamp = v.int64();
  return { offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp: leaderEpoch >= 0 ? null : expireTimestamp };
}

function v8Body(value: Buffer): unknown {
  // Byte arrays come back as views of the input: a private copy keeps them from pinning (or
  // aliasing) the caller's larger buffer.
  return deserialize(Buffer.from(value.subarray(1)));
}

/** An old classic group value; its members' byte fields come back as Buffers of their own, as from Kafka's layout. */
export function decodeLegacyClassicGroup(value: Buffer): ClassicGroupRecordValue {
  const v = record(v8Body(value), 'classic group value');
  return {
    protocolType: str(v['protocolType'], 'protocolType'),
    generationId: int(v['generationId'], 'generationId'),
    protocolName: nullableStr(v['protocolName'], 'protocolName'),
    leader: nullableStr(v['leader'], 'leader'),
    stateTimestamp: int(v['stateTimestamp'], 'stateTimestamp'),
    members: list(v['members'], 'members').map((value) => {
      const m = record(value, 'member');
      return {
        memberId: str(m['memberId'], 'memberId'),
        groupInstanceId: nullableStr(m['groupInstanceId'], 'groupInstanceId'),
        clientId: str(m['clientId'], 'clientId'),
        clientHost: str(m['clientHost'], 'clientHost'),
        sessionTimeoutMs: int(m['sessionTimeoutMs'], 'sessionTimeoutMs'),
        rebalanceTimeoutMs: int(m['rebalanceTimeoutMs'], 'rebalanceTimeoutMs'),
        subscription: bytes(m['subscription'], 'subscription'),
        assignment: bytes(m['assignment'], 'assignment'),
      };
    }),
  };
}

/** An old KIP-848 group value: the whole group in one record. */
export function decodeLegacyConsumerGroup(value: Buffer): ConsumerGroupValue {
  return parseConsumerGroupValue(v8Body(value));
}

/** Checks a V8-decoded KIP-848 group's shape; throws on anything the old layout did not hold. */
function parseConsumerGroupValue(value: unknown): ConsumerGroupValue {
  const v = record(value, 'group value');
  if (v['version'] !== 0) throw new Error(`unknown consumer group value version ${String(v['version'])}`);
  return {
    groupEpoch: int(v['groupEpoch'], 'groupEpoch'),
    assignmentEpoch: int(v['assignmentEpoch'], 'assignmentEpoch'),
    subscribedTopics: list(v['subscribedTopics'], 'subscribedTopics').map((t) => {
      const topic = record(t, 'topic');
      return { name: str(topic['name'], 'topic name'), id: str(topic['id'], 'topic id'), partitions: int(topic['partitions'], 'partitions') };
    }),
    members: list(v['members'], 'members').map(parseMember),
  };
}

const STATES: ReadonlySet<unknown> = new Set(Object.values(MemberState));

function parseMember(value: unknown): ConsumerMemberValue {
  const m = record(value, 'member');
  const state = m['state'];
  if (!STATES.has(state)) throw new Error(`bad member state ${String(state)}`);
  return {
    memberId: str(m['memberId'], 'memberId'),
    instanceId: nullableStr(m['instanceId'], 'instanceId'),
    rackId: nullableStr(m['rackId'], 'rackId'),
    clientId: str(m['clientId'], 'clientId'),
    clientHost: str(m['clientHost'], 'clientHost'),
    rebalanceTimeoutMs: int(m['rebalanceTimeoutMs'], 'rebalanceTimeoutMs'),
    serverAssignor: nullableStr(m['serverAssignor'], 'serverAssignor'),
    subscribedTopicNames: list(m['subscribedTopicNames'], 'subscribedTopicNames').map((n) => str(n, 'topic name')),
    subscribedTopicRegex: nullableStr(m['subscribedTopicRegex'], 'subscribedTopicRegex'),
    memberEpoch: int(m['memberEpoch'], 'memberEpoch'),
    previousMemberEpoch: int(m['previousMemberEpoch'], 'previousMemberEpoch'),
    state: state as MemberState,
    assigned: partitionsList(m['assigned'], 'assigned'),
    pendingRevocation: partitionsList(m['pendingRevocation'], 'pendingRevocation'),
    target: partitionsList(m['target'], 'target'),
  };
}

function partitionsList(value: unknown, what: string): TopicPartitionsValue[] {
  return list(value, what).map((t) => {
    const topic = record(t, what);
    return { topicId: str(topic['topicId'], 'topicId'), partitions: list(topic['partitions'], what).map((p) => int(p, 'partition')) };
  });
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`bad ${what}`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`bad ${what}`);
  return value;
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`bad ${what}`);
  return value;
}

function nullableStr(value: unknown, what: string): string | null {
  return value === null ? null : str(value, what);
}

function int(value: unknown, what: string): number {
  if (!Number.isInteger(value)) throw new Error(`bad ${what}`);
  return value as number;
}

function bytes(value: unknown, what: string): Buffer {
  if (!(value instanceof Uint8Array)) throw new Error(`bad ${what}`);
  return Buffer.from(value);
}
