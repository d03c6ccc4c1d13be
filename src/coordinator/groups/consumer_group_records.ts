// A KIP-848 group's state spread over Kafka's ConsumerGroup* records, and gathered back: the
// group's epoch (type 3), the topic metadata its target was computed from (4), per member its
// subscription (5), target assignment (7) and current assignment (8), and the assignment epoch
// (6). ConsumerGroupParts is that set of records for one group, decoded; a group's
// ConsumerGroupValue converts to parts (to write) and parts back to a value (on load). Pure; on
// the shard that owns the offsets partition.
import type { MemberState } from './consumer_group_member.js';
import type { ConsumerGroupValue, ConsumerMemberValue } from './consumer_group_value.js';
import {
  MemberStateCode,
  type ConsumerGroupCurrentMemberAssignmentValue,
  type ConsumerGroupMemberMetadataValue,
  type ConsumerGroupPartitionMetadataValue,
  type TopicPartitions,
} from '../../protocol/offsets_topic.js';

export interface MemberParts {
  metadata: ConsumerGroupMemberMetadataValue | null;
  target: TopicPartitions[] | null;
  current: ConsumerGroupCurrentMemberAssignmentValue | null;
}

/** One group's live KIP-848 records; null = that record is absent (never written, or deleted). */
export interface ConsumerGroupParts {
  epoch: number | null;
  partitionMetadata: ConsumerGroupPartitionMetadataValue | null;
  assignmentEpoch: number | null;
  members: Map<string, MemberParts>;
}

export function emptyParts(): ConsumerGroupParts {
  return { epoch: null, partitionMetadata: null, assignmentEpoch: null, members: new Map() };
}

const STATE_OF_CODE = new Map<number, MemberState>(
  Object.entries(MemberStateCode).map(([state, code]) => [code, state as MemberState]),
);

export function partsOf(v: ConsumerGroupValue): ConsumerGroupParts {
  const members = new Map<string, MemberParts>();
  for (const m of v.members) {
    members.set(m.memberId, {
      metadata: {
        instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost,
        subscribedTopicNames: m.subscribedTopicNames, subscribedTopicRegex: m.subscribedTopicRegex,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs, serverAssignor: m.serverAssignor,
      },
      target: m.target,
      current: {
        memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: MemberStateCode[m.state],
        assignedPartitions: m.assigned, partitionsPendingRevocation: m.pendingRevocation,
      },
    });
  }
  return {
    epoch: v.groupEpoch,
    partitionMetadata: {
      epoch: v.groupEpoch,
      topics: v.subscribedTopics.map((t) => ({ topicId: t.id, topicName: t.name, numPartitions: t.partitions, partitionRacks: [] })),
    },
    assignmentEpoch: v.assignmentEpoch,
    members,
  };
}

/**
 * The group the parts describe; null if it has no ConsumerGroupMetadata record (it was deleted,
 * or never completely written). A member needs its metadata and current assignment records, in
 * a state Sluice knows; any other is left out, as if it had left (it rejoins with epoch 0).
 */
export function valueOf(p: ConsumerGroupParts): ConsumerGroupValue | null {
  if (p.epoch === null) return null;
  const members: ConsumerMemberValue[] = [];
  for (const [memberId, { metadata, target, current }] of p.members) {
    if (metadata === null || current === null) continue;
    const state = STATE_OF_CODE.get(current.state);
    if (state === undefined) continue;
    members.push({
      memberId, instanceId: metadata.instanceId, rackId: metadata.rackId, clientId: metadata.clientId, clientHost: metadata.clientHost,
      rebalanceTimeoutMs: metadata.rebalanceTimeoutMs, serverAssignor: metadata.serverAssignor,
      subscribedTopicNames: metadata.subscribedTopicNames, subscribedTopicRegex: metadata.subscribedTopicRegex,
      memberEpoch: current.memberEpoch, previousMemberEpoch: current.previousMemberEpoch, state,
      assigned: current.assignedPartitions, pendingRevocation: current.partitionsPendingRevocation,
      target: target ?? [],
    });
  }
  return {
    groupEpoch: p.epoch,
    assignmentEpoch: p.assignmentEpoch ?? 0,
    subscribedTopics: (p.partitionMetadata?.topics ?? []).map((t) => ({ name: t.topicName, id: t.topicId, partitions: t.numPartitions })),
    members,
  };
}
