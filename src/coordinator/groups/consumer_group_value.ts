// The persisted state of a KIP-848 group, as one 'consumerGroup' GroupRecord carries it: the
// whole group (epochs, the metadata its target was computed from, each member's subscription,
// epochs, current and target assignment). consumer_group_records.ts spreads it over Kafka's
// ConsumerGroup* records and gathers it back. Plain arrays and objects. Timers are not
// persisted: a replay starts them afresh; nor is the assignor in use, which a replay picks
// again from the members' preferences, as each new group epoch does.
// Pure; runs on the shard that owns the group (and wherever records are decoded).
import type { TopicInfo } from './group_api.js';
import type { MemberState } from './consumer_group_member.js';

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
  groupEpoch: number;
  assignmentEpoch: number;
  subscribedTopics: TopicInfo[];
  members: ConsumerMemberValue[];
}

export function toPartitionsValue(partitions: ReadonlyMap<string, readonly number[]>): TopicPartitionsValue[] {
  return [...partitions].map(([topicId, list]) => ({ topicId, partitions: [...list] }));
}

export function fromPartitionsValue(value: readonly TopicPartitionsValue[]): ReadonlyMap<string, readonly number[]> {
  return new Map(value.map((t) => [t.topicId, t.partitions]));
}

