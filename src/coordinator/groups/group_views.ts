// Read-only views over the groups: DescribeGroups, ListGroups and ConsumerGroupDescribe, with
// Kafka's answers for ids that are unknown or of the other protocol. Pure; on the offsets
// partition's shard. Groups whose deletion is in flight already look gone.
import type {
  ConsumerDescribeCall, ConsumerDescribeReply, DescribeCall, DescribeReply, GroupStateName, ListCall, ListReply,
} from './group_api.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { CoordinatorState, GroupEntry } from './coordinator_state.js';

function deadGroup(groupId: string, errorCode: number): DescribeReply['groups'][number] {
  return { groupId, errorCode, state: 'Dead', protocolType: '', protocol: '', members: [] };
}

/**
 * An unknown id is Dead with no error (Kafka); a KIP-848 group answers GROUP_ID_NOT_FOUND as
 * DescribeGroups v6 does (handlers for older versions send NONE, which is what Kafka does there).
 */
export function describeGroups(s: CoordinatorState, call: DescribeCall): DescribeReply {
  const groups = call.groupIds.map((groupId) => {
    const e = live(s, groupId);
    if (e === undefined) return deadGroup(groupId, ErrorCode.NONE);
    return e.kind === 'classic' ? e.group.describe() : deadGroup(groupId, ErrorCode.GROUP_ID_NOT_FOUND);
  });
  return { kind: 'describe', groups };
}

/** Filters compare case-insensitively, as Kafka's ListGroups does. */
export function listGroups(s: CoordinatorState, call: ListCall): ListReply {
  const states = new Set(call.statesFilter.map((x) => x.trim().toLowerCase()));
  const types = new Set(call.typesFilter.map((x) => x.trim().toLowerCase()));
  const groups: ListReply['groups'] = [];
  for (const [groupId, e] of s.groups) {
    if (s.deleting.has(groupId)) continue;
    const type = e.kind === 'classic' ? 'classic' : 'consumer';
    const state: GroupStateName = e.kind === 'classic' ? e.group.state : e.port.state();
    if (states.size > 0 && !states.has(state.toLowerCase())) continue;
    if (types.size > 0 && !types.has(type)) continue;
    const protocolType = e.kind === 'classic' ? e.group.protocolType ?? '' : 'consumer';
    groups.push({ groupId, protocolType, state, type });
  }
  return { kind: 'list', groups };
}

export function describeConsumerGroups(s: CoordinatorState, call: ConsumerDescribeCall): ConsumerDescribeReply {
  const groups = call.groupIds.map((groupId) => {
    const e = live(s, groupId);
    if (e?.kind === 'consumer') return e.port.describe(s.topics);
    const errorMessage = e === undefined ? `Group ${groupId} not found.` : `Group ${groupId} is not a consumer group.`;
    return {
      groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage, state: '', groupEpoch: 0, assignmentEpoch: 0,
      assignorName: '', members: [],
    };
  });
  return { kind: 'consumerDescribe', groups };
}

function live(s: CoordinatorState, groupId: string): GroupEntry | undefined {
  return s.deleting.has(groupId) ? undefined : s.groups.get(groupId);
}
