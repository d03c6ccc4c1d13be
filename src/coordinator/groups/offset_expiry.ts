// Offset retention and the removal of groups left with nothing: offsets of a group without
// members expire (tombstones appended on tick); a group with no members and no offsets is
// deleted after a grace period. Pure; on the offsets partition's shard. Invariants: partitions
// with an offset append in flight never expire (the in-flight write decides); a group whose
// deletion is in flight is in `deleting`, so no call can add members or offsets meanwhile.
import { groupTombstone, type CoordinatorState, type GroupEntry } from './coordinator_state.js';
import type { GroupRecord } from './group_api.js';
import type { AppendCompletion, GroupSink } from './group_sink.js';

/**
 * How long a group with no members and no offsets lingers before its tombstone: Kafka removes
 * such groups at its next cleanup pass (offsets.retention.check.interval.ms, 10 minutes).
 */
export const EMPTY_GROUP_GRACE_MS = 600_000;

/** No members, so its offsets age: an Empty classic group, or a KIP-848 group nobody is in. */
function idle(e: GroupEntry): boolean {
  return e.kind === 'classic' ? e.group.state === 'Empty' : e.port.memberCount() === 0;
}

function emptySince(e: GroupEntry, now: number): number {
  return e.kind === 'classic' ? e.group.emptySince : e.emptySince ?? now;
}

function droppable(e: GroupEntry): boolean {
  return e.kind === 'classic' ? !e.group.hasPendingMembers() : e.port.state() === 'Empty';
}

/** When tick() next has retention work for this group; null if none (it has members, or work in flight). */
export function housekeepingDeadline(s: CoordinatorState, groupId: string, e: GroupEntry, now: number): number | null {
  if (s.deleting.has(groupId) || s.expiring.has(groupId) || !idle(e)) return null;
  const since = emptySince(e, now);
  const inFlight = s.appends.offsetsInFlight(groupId);
  if (s.offsets.count(groupId) > 0) return s.offsets.nextExpiry(groupId, since, inFlight);
  return inFlight.size === 0 && droppable(e) ? since + EMPTY_GROUP_GRACE_MS : null;
}

export function expireIdleGroup(s: CoordinatorState, sink: GroupSink, groupId: string, now: number): void {
  const e = s.groups.get(groupId);
  if (e === undefined || s.deleting.has(groupId) || s.expiring.has(groupId) || !idle(e)) return;
  const since = emptySince(e, now);
  const inFlight = s.appends.offsetsInFlight(groupId);
  const expired = s.offsets.expired(groupId, now, since, inFlight);
  const dropGroup = s.offsets.count(groupId) === expired.length && inFlight.size === 0 && droppable(e)
    && now >= since + EMPTY_GROUP_GRACE_MS;
  if (expired.length === 0 && !dropGroup) return;
  const records: GroupRecord[] = expired.map((p) => ({ kind: 'offset', groupId, topic: p.topic, partition: p.partition, value: null }));
  if (dropGroup) {
    records.push(groupTombstone(groupId, e));
    s.deleting.add(groupId);
  }
  s.expiring.add(groupId);
  sink.append(records, { kind: 'expire', groupId, dropGroup });
}

export function finishExpiry(s: CoordinatorState, done: Extract<AppendCompletion, { kind: 'expire' }>, ok: boolean): void {
  s.expiring.delete(done.groupId);
  if (!done.dropGroup) return;
  s.deleting.delete(done.groupId);
  if (ok) s.groups.delete(done.groupId);
}
