// The offset calls: OffsetCommit, OffsetFetch, OffsetDelete, the admin offset reset and
// DeleteGroups. Validation follows Kafka's OffsetMetadataManager; every change is an append
// whose reply waits for durability, and the offsets themselves change only when the append
// takes effect (the coordinator applies offset records in emission order). Pure; on the offsets
// partition's shard.
import type {
  CommitCall, CommitReply, DeleteGroupsCall, GroupRecord, OffsetDeleteCall, OffsetFetchCall, OffsetFetchReply,
  ResetOffsetsCall,
} from './group_api.js';
import { ErrorCode } from '../../protocol/errors.js';
import { appendsFull, groupTombstone, hasRoomForGroup, memberCount, type CoordinatorState } from './coordinator_state.js';
import { failAccepted, partitionErrors } from './group_replies.js';
import type { AppendCompletion, GroupSink } from './group_sink.js';
import { offsetKey } from './offset_store.js';

/** Partitions one group may hold offsets for; the handler also refuses unknown topics, as Kafka does. */
export const MAX_OFFSETS_PER_GROUP = 100_000;

export function commitOffsets(s: CoordinatorState, sink: GroupSink, ref: number, call: CommitCall, now: number): void {
  const err = validateCommit(s, call, now);
  if (err !== ErrorCode.NONE) return sink.reply(ref, { kind: 'commit', topics: partitionErrors(call.topics, err) });
  const { offsetMetadataMaxBytes } = s.deps.config;
  const expireTimestamp = call.retentionTimeMs >= 0 ? now + call.retentionTimeMs : null;
  const records: GroupRecord[] = [];
  let room = MAX_OFFSETS_PER_GROUP - s.offsets.count(call.groupId);
  const topics = call.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => {
      const metadata = p.metadata ?? '';
      if (metadata.length > 0 && Buffer.byteLength(metadata, 'utf8') > offsetMetadataMaxBytes) {
        return { partition: p.partition, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE as number };
      }
      if (s.offsets.get(call.groupId, t.name, p.partition) === undefined && room-- <= 0) {
        return { partition: p.partition, errorCode: ErrorCode.INVALID_COMMIT_OFFSET_SIZE as number };
      }
      records.push({
        kind: 'offset', groupId: call.groupId, topic: t.name, partition: p.partition,
        value: { offset: p.offset, leaderEpoch: p.leaderEpoch, metadata, commitTimestamp: p.commitTimestamp >= 0 ? p.commitTimestamp : now, expireTimestamp },
      });
      return { partition: p.partition, errorCode: ErrorCode.NONE as number };
    }),
  }));
  const ok: CommitReply = { kind: 'commit', topics };
  if (records.length === 0) return sink.reply(ref, ok);
  const failed: CommitReply = { kind: 'commit', topics: failAccepted(topics, ErrorCode.COORDINATOR_NOT_AVAILABLE) };
  sink.append(records, { kind: 'reply', ref, ok, failed });
}

function validateCommit(s: CoordinatorState, call: CommitCall, now: number): number {
  if (s.deleting.has(call.groupId) || appendsFull(s)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  const entry = s.groups.get(call.groupId);
  if (entry === undefined) {
    if (call.generationId >= 0) return ErrorCode.ILLEGAL_GENERATION;
    // A commit from outside any generation: its offsets bring a "simple" group into being.
    return hasRoomForGroup(s) ? ErrorCode.NONE : ErrorCode.COORDINATOR_NOT_AVAILABLE;
  }
  if (entry.kind === 'classic') return entry.group.validateCommit(call.memberId, call.groupInstanceId, call.generationId, now);
  if (call.generationId < 0 && entry.port.memberCount() === 0) return ErrorCode.NONE;
  return entry.port.checkMemberEpoch(call.memberId, call.generationId);
}

export function fetchOffsets(s: CoordinatorState, call: OffsetFetchCall): OffsetFetchReply {
  const entry = s.groups.get(call.groupId);
  if (entry?.kind === 'consumer' && (call.memberId !== null || call.memberEpoch >= 0)) {
    const errorCode = entry.port.checkMemberEpoch(call.memberId ?? '', call.memberEpoch);
    if (errorCode !== ErrorCode.NONE) return { kind: 'offsetFetch', errorCode, topics: [] };
  }
  const none = { offset: -1, leaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE as number };
  if (call.topics === null) {
    const byTopic = new Map<string, OffsetFetchReply['topics'][number]>();
    for (const p of s.offsets.list(call.groupId)) {
      let t = byTopic.get(p.topic);
      if (t === undefined) byTopic.set(p.topic, (t = { name: p.topic, partitions: [] }));
      t.partitions.push({ ...none, partition: p.partition, offset: p.value.offset, leaderEpoch: p.value.leaderEpoch, metadata: p.value.metadata });
    }
    return { kind: 'offsetFetch', errorCode: ErrorCode.NONE, topics: [...byTopic.values()] };
  }
  const topics = call.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((partition) => {
      const v = s.offsets.get(call.groupId, t.name, partition);
      return v === undefined ? { ...none, partition } : { ...none, partition, offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata };
    }),
  }));
  return { kind: 'offsetFetch', errorCode: ErrorCode.NONE, topics };
}

export function deleteOffsets(s: CoordinatorState, sink: GroupSink, ref: number, call: OffsetDeleteCall): void {
  const reply = (errorCode: number) => sink.reply(ref, { kind: 'offsetDelete', errorCode, topics: [] });
  const entry = s.groups.get(call.groupId);
  if (entry === undefined || s.deleting.has(call.groupId)) return reply(ErrorCode.GROUP_ID_NOT_FOUND);
  if (appendsFull(s)) return reply(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  let subscribed: ReadonlySet<string> | null;
  if (entry.kind === 'consumer') {
    subscribed = entry.port.memberCount() > 0 ? entry.port.subscribedTopics() : new Set();
  } else {
    const g = entry.group;
    // Kafka only deletes offsets under a live group whose members' subscriptions it can read.
    if (g.memberCount() > 0 && g.protocolType !== 'consumer') return reply(ErrorCode.NON_EMPTY_GROUP);
    subscribed = g.subscribedTopics(s.deps.subscribedTopics);
  }
  const inFlight = s.appends.offsetsInFlight(call.groupId);
  const records: GroupRecord[] = [];
  const topics = call.topics.map((t) => {
    const refused = subscribed === null || subscribed.has(t.name);
    for (const partition of refused ? [] : t.partitions) {
      const present = s.offsets.get(call.groupId, t.name, partition) !== undefined || inFlight.has(offsetKey(t.name, partition));
      if (present) records.push({ kind: 'offset', groupId: call.groupId, topic: t.name, partition, value: null });
    }
    const errorCode = refused ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE;
    return { name: t.name, partitions: t.partitions.map((partition) => ({ partition, errorCode: errorCode as number })) };
  });
  const ok = { kind: 'offsetDelete' as const, errorCode: ErrorCode.NONE as number, topics };
  if (records.length === 0) return sink.reply(ref, ok);
  const failed = { kind: 'offsetDelete' as const, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE as number, topics: [] };
  sink.append(records, { kind: 'reply', ref, ok, failed });
}

export function resetOffsets(s: CoordinatorState, sink: GroupSink, ref: number, call: ResetOffsetsCall, now: number): void {
  const reply = (errorCode: number) => sink.reply(ref, { kind: 'resetOffsets', errorCode });
  const entry = s.groups.get(call.groupId);
  if (s.deleting.has(call.groupId) || appendsFull(s)) return reply(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (entry !== undefined && memberCount(entry) > 0) return reply(ErrorCode.NON_EMPTY_GROUP);
  if (entry === undefined && !hasRoomForGroup(s)) return reply(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (call.offsets.length === 0) return reply(ErrorCode.NONE);
  const records: GroupRecord[] = call.offsets.map((o) => ({
    kind: 'offset', groupId: call.groupId, topic: o.topic, partition: o.partition,
    value: { offset: o.offset, leaderEpoch: -1, metadata: '', commitTimestamp: now, expireTimestamp: null },
  }));
  sink.append(records, {
    kind: 'reply', ref,
    ok: { kind: 'resetOffsets', errorCode: ErrorCode.NONE },
    failed: { kind: 'resetOffsets', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE },
  });
}

export function deleteGroups(s: CoordinatorState, sink: GroupSink, ref: number, call: DeleteGroupsCall): void {
  const records: GroupRecord[] = [];
  const dropped: string[] = [];
  const results = call.groupIds.map((groupId) => {
    if (dropped.includes(groupId)) return { groupId, errorCode: ErrorCode.NONE as number };
    const entry = s.groups.get(groupId);
    if (entry === undefined || s.deleting.has(groupId)) return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND as number };
    const empty = entry.kind === 'classic' ? entry.group.state === 'Empty' : entry.port.state() === 'Empty';
    if (!empty) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP as number };
    if (appendsFull(s)) return { groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE as number };
    // Offsets still in flight are tombstoned too: they land before these tombstones.
    const partitions = new Map<string, { topic: string; partition: number }>(s.appends.offsetsInFlight(groupId));
    for (const p of s.offsets.list(groupId)) partitions.set(offsetKey(p.topic, p.partition), p);
    for (const { topic, partition } of partitions.values()) records.push({ kind: 'offset', groupId, topic, partition, value: null });
    records.push(groupTombstone(groupId, entry));
    dropped.push(groupId);
    s.deleting.add(groupId);
    return { groupId, errorCode: ErrorCode.NONE as number };
  });
  if (dropped.length === 0) return sink.reply(ref, { kind: 'deleteGroups', results });
  sink.append(records, { kind: 'deleteGroups', ref, groupIds: dropped, results });
}

export function finishDeleteGroups(
  s: CoordinatorState, sink: GroupSink, done: Extract<AppendCompletion, { kind: 'deleteGroups' }>, ok: boolean,
): void {
  for (const groupId of done.groupIds) {
    s.deleting.delete(groupId);
    if (ok) s.groups.delete(groupId);
  }
  const results = ok ? done.results : done.results.map((r) => (
    done.groupIds.includes(r.groupId) ? { groupId: r.groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE as number } : r
  ));
  sink.reply(done.ref, { kind: 'deleteGroups', results: [...results] });
}
