// The reply a call gets when it never reaches a coordinator (partition not open, shard gone,
// coordinator still loading): the same error for everything the call asked about, so every
// API answers in its own shape. Pure; used on both the main thread and shards.
import type { GroupCall, GroupReply, PartitionErrors } from './group_api.js';

function partitionErrors(topics: { name: string; partitions: readonly (number | { partition: number })[] }[], code: number): PartitionErrors['topics'] {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partition: typeof p === 'number' ? p : p.partition, errorCode: code })),
  }));
}

export function errorReply(call: GroupCall, code: number, message: string | null = null): GroupReply {
  switch (call.kind) {
    case 'join':
      return {
        kind: 'join', errorCode: code, generationId: -1, protocolType: null, protocolName: null, leader: '',
        skipAssignment: false, memberId: call.memberId, members: [],
      };
    case 'sync':
      return { kind: 'sync', errorCode: code, protocolType: null, protocolName: null, assignment: new Uint8Array(0) };
    case 'heartbeat':
      return { kind: 'heartbeat', errorCode: code };
    case 'leave':
      return { kind: 'leave', errorCode: code, members: call.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: code })) };
    case 'commit':
      return { kind: 'commit', topics: partitionErrors(call.topics, code) };
    case 'offsetFetch':
      return { kind: 'offsetFetch', errorCode: code, topics: [] };
    case 'describe':
      return {
        kind: 'describe',
        groups: call.groupIds.map((groupId) => ({ groupId, errorCode: code, state: 'Dead' as const, protocolType: '', protocol: '', members: [] })),
      };
    case 'list':
      return { kind: 'list', groups: [] };
    case 'deleteGroups':
      return { kind: 'deleteGroups', results: call.groupIds.map((groupId) => ({ groupId, errorCode: code })) };
    case 'offsetDelete':
      return { kind: 'offsetDelete', errorCode: code, topics: [] };
    case 'resetOffsets':
      return { kind: 'resetOffsets', errorCode: code };
    case 'consumerHeartbeat':
      return { kind: 'consumerHeartbeat', errorCode: code, errorMessage: message, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    case 'consumerDescribe':
      return {
        kind: 'consumerDescribe',
        groups: call.groupIds.map((groupId) => ({
          groupId, errorCode: code, errorMessage: message, state: 'Dead', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [],
        })),
      };
  }
}
