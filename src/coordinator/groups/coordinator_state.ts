// The state one group coordinator (one offsets partition) shares between its call handlers: the
// groups by id (classic or KIP-848), the committed offsets, the appends in flight and the topic
// metadata. Pure; on the offsets partition's shard. Invariants: a group id is either classic or
// consumer, never both; the number of groups stays within config.maxGroups for groups created by
// calls; ids in `deleting` still have an entry until their tombstones are durable.
import type { ConsumerGroupPort, GroupRecord, TopicIndex } from './group_api.js';
import type { CoordinatorDeps } from './group_coordinator.js';
import type { AppendQueue } from './append_queue.js';
import type { OffsetStore } from './offset_store.js';
import { ClassicGroup } from './classic_group.js';

/** Appends (and replies waiting on them) calls may queue before they are told to retry (COORDINATOR_NOT_AVAILABLE). */
export const MAX_PENDING_APPENDS = 10_000;

export type GroupEntry =
  | { readonly kind: 'classic'; readonly group: ClassicGroup }
  /** emptySince: when the KIP-848 group last lost its last member; null while it has members. */
  | { readonly kind: 'consumer'; readonly port: ConsumerGroupPort; emptySince: number | null };

export interface CoordinatorState {
  readonly deps: CoordinatorDeps;
  readonly groups: Map<string, GroupEntry>;
  /** Groups whose tombstones are being made durable: calls find them gone or busy. */
  readonly deleting: Set<string>;
  /** Groups with an offset-expiry append in flight (not expired twice). */
  readonly expiring: Set<string>;
  readonly offsets: OffsetStore;
  readonly appends: AppendQueue;
  topics: TopicIndex;
}

export function memberCount(e: GroupEntry): number {
  return e.kind === 'classic' ? e.group.memberCount() : e.port.memberCount();
}

export function groupTombstone(groupId: string, e: GroupEntry): GroupRecord {
  return e.kind === 'classic' ? { kind: 'classicGroup', groupId, value: null } : { kind: 'consumerGroup', groupId, value: null };
}

export function appendsFull(s: CoordinatorState): boolean {
  return s.appends.backlog >= MAX_PENDING_APPENDS;
}

export function hasRoomForGroup(s: CoordinatorState): boolean {
  return s.groups.size < s.deps.config.maxGroups;
}

/** A new empty classic group, or null when the coordinator holds as many groups as it may. */
export function createClassicGroup(s: CoordinatorState, groupId: string, now: number): ClassicGroup | null {
  if (!hasRoomForGroup(s)) return null;
  const group = new ClassicGroup(groupId, s.deps, now);
  s.groups.set(groupId, { kind: 'classic', group });
  return group;
}

/** Keeps a KIP-848 group's emptySince current after the port may have gained or lost members. */
export function noteConsumerMembers(e: Extract<GroupEntry, { kind: 'consumer' }>, now: number): void {
  if (e.port.memberCount() > 0) e.emptySince = null;
  else e.emptySince ??= now;
}
