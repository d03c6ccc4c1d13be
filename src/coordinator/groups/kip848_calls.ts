// Routes KIP-848 ConsumerGroupHeartbeat calls and timers to the group's ConsumerGroupPort and
// persists what the port returns before its answer goes out. Group-id conflicts follow Kafka:
// an empty classic group gives way to a joining KIP-848 member, one with members does not.
// Pure; on the offsets partition's shard. Invariant: a port's reply is emitted only after its
// records (and every append emitted before them) are durable.
import type { ConsumerHeartbeatCall, ConsumerHeartbeatReply, GroupRecord } from './group_api.js';
import { ErrorCode } from '../../protocol/errors.js';
import { appendsFull, noteConsumerMembers, type CoordinatorState, type GroupEntry } from './coordinator_state.js';
import { consumerHeartbeatError } from './group_replies.js';
import type { GroupSink } from './group_sink.js';

type ConsumerEntry = Extract<GroupEntry, { kind: 'consumer' }>;

export function consumerHeartbeat(s: CoordinatorState, sink: GroupSink, ref: number, call: ConsumerHeartbeatCall, now: number): void {
  const fail = (code: number, message: string | null) => sink.reply(ref, consumerHeartbeatError(code, message));
  if (s.deleting.has(call.groupId) || appendsFull(s)) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
  const existing = s.groups.get(call.groupId);
  const joining = call.memberEpoch === 0;
  const replacesClassic = existing?.kind === 'classic' && joining && existing.group.state === 'Empty';
  if (existing?.kind === 'classic' && !replacesClassic) {
    return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${call.groupId} is not a consumer group.`);
  }
  let entry = existing?.kind === 'consumer' ? existing : undefined;
  if (entry === undefined) {
    if (!joining) return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${call.groupId} not found.`);
    if (!replacesClassic && s.groups.size >= s.deps.config.maxGroups) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
    entry = { kind: 'consumer', port: s.deps.createConsumerGroup(call.groupId), emptySince: now };
  }
  const { reply, records } = entry.port.heartbeat(call, now, s.topics);
  if (entry !== existing) {
    // Like Kafka, a group comes into being only with something to persist.
    if (records.length === 0 && entry.port.memberCount() === 0) return sink.reply(ref, reply);
    s.groups.set(call.groupId, entry);
  }
  noteConsumerMembers(entry, now);
  const all: GroupRecord[] = replacesClassic ? [{ kind: 'classicGroup', groupId: call.groupId, value: null }, ...records] : records;
  persistThenReply(s, sink, ref, all, reply);
}

function persistThenReply(s: CoordinatorState, sink: GroupSink, ref: number, records: GroupRecord[], reply: ConsumerHeartbeatReply): void {
  const failed = consumerHeartbeatError(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
  if (records.length > 0) return sink.append(records, { kind: 'reply', ref, ok: reply, failed });
  // The answer may reflect records still in flight (an earlier heartbeat's): it waits for them.
  if (!s.appends.defer({ ref, ok: reply, failed })) sink.reply(ref, reply);
}

export function tickConsumerGroup(s: CoordinatorState, sink: GroupSink, groupId: string, e: ConsumerEntry, now: number): void {
  const { records, rebalanced } = e.port.tick(now, s.topics);
  if (records.length > 0) sink.append(records, { kind: 'background' });
  noteConsumerMembers(e, now);
  if (rebalanced !== null) announceEpoch(s, sink, groupId, e, rebalanced);
}

export function topicsChanged(s: CoordinatorState, sink: GroupSink, e: ConsumerEntry, now: number): void {
  const records = e.port.topicsChanged(now, s.topics);
  if (records.length > 0) sink.append(records, { kind: 'background' });
}

function announceEpoch(s: CoordinatorState, sink: GroupSink, groupId: string, e: ConsumerEntry, reason: string): void {
  const epoch = e.port.describe(s.topics).groupEpoch;
  sink.rebalanced(groupId, reason, 0, epoch, e.port.memberCount());
}
