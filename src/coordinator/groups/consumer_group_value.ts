// The persisted form of a KIP-848 group: the value of its one 'consumerGroup' record, holding the
// whole group (epochs, the metadata its target was computed from, each member's subscription,
// epochs, current and target assignment). Plain arrays and objects, so V8 and JSON serialization
// both round-trip it. Timers are not persisted: a replay starts them afresh.
// Pure; runs on the shard that owns the group (and wherever records are decoded).
import type { TopicInfo } from './group_api.js';
import { MemberState } from './consumer_group_member.js';

export interface TopicPartitionsValue {
  topicId: string;
  partitions: number[];
}

export interface ConsumerMemberValue {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  assigned: TopicPartitionsValue[];
  pendingRevocation: TopicPartitionsValue[];
  target: TopicPartitionsValue[];
}

export interface ConsumerGroupValue {
  version: 0;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  subscribedTopics: TopicInfo[];
  members: ConsumerMemberValue[];
}

export function toPartitionsValue(partitions: ReadonlyMap<string, readonly number[]>): TopicPartitionsValue[] {
  return [...partitions].map(([topicId, list]) => ({ topicId, partitions: [...list] }));
}

export function fromPartitionsValue(value: readonly TopicPartitionsValue[]): ReadonlyMap<string, readonly number[]> {
  return new Map(value.map((t) => [t.topicId, t.partitions]));
}

/** Checks a decoded value's shape; throws on anything this module did not write. */
export function parseConsumerGroupValue(value: unknown): ConsumerGroupValue {
  const v = record(value, 'group value');
  if (v['version'] !== 0) throw new Error(`unknown consumer group value version ${String(v['version'])}`);
  return {
    version: 0,
    groupEpoch: int(v['groupEpoch'], 'groupEpoch'),
    assignmentEpoch: int(v['assignmentEpoch'], 'assignmentEpoch'),
    assignorName: str(v['assignorName'], 'assignorName'),
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
