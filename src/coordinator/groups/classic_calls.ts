// Routes the classic group calls (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) to their group:
// creates groups on a first join, refuses ids held by a KIP-848 group with members and lets an
// empty KIP-848 group give way, as Kafka's GroupMetadataManager does. Pure; on the offsets
// partition's shard. Invariant: every call gets exactly one reply, now or from its group later.
import type { HeartbeatCall, JoinCall, LeaveCall, SyncCall } from './group_api.js';
import { ErrorCode } from '../../protocol/errors.js';
import { createClassicGroup, type CoordinatorState } from './coordinator_state.js';
import { joinError, leaveError, syncError } from './group_replies.js';
import type { GroupSink } from './group_sink.js';

export function joinGroup(s: CoordinatorState, sink: GroupSink, ref: number, call: JoinCall, now: number): void {
  const { minSessionTimeoutMs, maxSessionTimeoutMs } = s.deps.config;
  if (call.sessionTimeoutMs < minSessionTimeoutMs || call.sessionTimeoutMs > maxSessionTimeoutMs) {
    return sink.reply(ref, joinError(ErrorCode.INVALID_SESSION_TIMEOUT, call.memberId));
  }
  if (s.deleting.has(call.groupId)) return sink.reply(ref, joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, call.memberId));
  const entry = s.groups.get(call.groupId);
  if (entry?.kind === 'classic') return entry.group.join(ref, call, now, sink);
  if (entry !== undefined && entry.port.memberCount() > 0) {
    return sink.reply(ref, joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''));
  }
  // A new group: only a member without an id may create it, with something to agree on.
  if (call.memberId !== '') return sink.reply(ref, joinError(ErrorCode.UNKNOWN_MEMBER_ID, call.memberId));
  if (call.protocolType === '' || call.protocols.length === 0) {
    return sink.reply(ref, joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''));
  }
  if (entry !== undefined) {
    s.groups.delete(call.groupId);
    sink.append([{ kind: 'consumerGroup', groupId: call.groupId, value: null }], { kind: 'background' });
  }
  const group = createClassicGroup(s, call.groupId, now);
  if (group === null) return sink.reply(ref, joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, ''));
  group.join(ref, call, now, sink);
}

export function syncGroup(s: CoordinatorState, sink: GroupSink, ref: number, call: SyncCall, now: number): void {
  if (s.deleting.has(call.groupId)) return sink.reply(ref, syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
  const entry = s.groups.get(call.groupId);
  if (entry?.kind === 'classic') entry.group.sync(ref, call, now, sink);
  else sink.reply(ref, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
}

export function heartbeat(s: CoordinatorState, sink: GroupSink, ref: number, call: HeartbeatCall, now: number): void {
  const entry = s.groups.get(call.groupId);
  let errorCode: number = ErrorCode.UNKNOWN_MEMBER_ID;
  if (s.deleting.has(call.groupId)) errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
  else if (entry?.kind === 'classic') errorCode = entry.group.heartbeat(call, now);
  sink.reply(ref, { kind: 'heartbeat', errorCode });
}

export function leaveGroup(s: CoordinatorState, sink: GroupSink, ref: number, call: LeaveCall, now: number): void {
  const entry = s.groups.get(call.groupId);
  if (s.deleting.has(call.groupId)) return sink.reply(ref, leaveError(call, ErrorCode.COORDINATOR_NOT_AVAILABLE));
  if (entry === undefined) return sink.reply(ref, leaveError(call, ErrorCode.UNKNOWN_MEMBER_ID));
  if (entry.kind === 'classic') return sink.reply(ref, entry.group.leave(call, now, sink));
  // Classic members never belong to a KIP-848 group.
  sink.reply(ref, { ...leaveError(call, ErrorCode.UNKNOWN_MEMBER_ID), errorCode: ErrorCode.NONE });
}
