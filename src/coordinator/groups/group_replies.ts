// Builders for the error-shaped replies several parts of the coordinator send, so each error
// looks the same wherever it comes from. Pure functions inside the coordinator.
import type { ConsumerHeartbeatReply, JoinReply, LeaveCall, LeaveReply, PartitionErrors, SyncReply } from './group_api.js';
import { EMPTY_BYTES } from './classic_member.js';

export function joinError(errorCode: number, memberId: string): JoinReply {
  return {
    kind: 'join', errorCode, generationId: -1, protocolType: null, protocolName: null,
    leader: '', skipAssignment: false, memberId, members: [],
  };
}

export function syncError(errorCode: number): SyncReply {
  return { kind: 'sync', errorCode, protocolType: null, protocolName: null, assignment: EMPTY_BYTES };
}

/** Every member of a LeaveGroup answered with the same code, at the top level and per member. */
export function leaveError(call: LeaveCall, errorCode: number): LeaveReply {
  return {
    kind: 'leave',
    errorCode,
    members: call.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode })),
  };
}

export function partitionErrors(
  topics: readonly { name: string; partitions: readonly (number | { partition: number })[] }[],
  errorCode: number,
): PartitionErrors['topics'] {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partition: typeof p === 'number' ? p : p.partition, errorCode })),
  }));
}

/** Replaces every NONE in a per-partition answer (what an append failure does to accepted partitions). */
export function failAccepted(topics: PartitionErrors['topics'], errorCode: number): PartitionErrors['topics'] {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: p.errorCode === 0 ? errorCode : p.errorCode })),
  }));
}

export function consumerHeartbeatError(errorCode: number, errorMessage: string | null): ConsumerHeartbeatReply {
  return {
    kind: 'consumerHeartbeat', errorCode, errorMessage, memberId: null, memberEpoch: 0,
    heartbeatIntervalMs: 0, assignment: null,
  };
}
