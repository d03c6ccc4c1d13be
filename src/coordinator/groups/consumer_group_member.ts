// One KIP-848 group member and its reconciliation step (what Kafka's CurrentAssignmentBuilder
// does): given the group's target assignment for the member, the partitions other members still
// hold and what the member reports owning, compute the member's next epoch, state and assignment.
// Pure; runs on the shard that owns the group.
// Invariants: a partition the member holds and its target keeps is never taken out of its
// assignment; a partition is added only when no other member holds it (assigned or pending
// revocation); while revocations are outstanding the member stays at its epoch and gets nothing
// it does not already hold.
import type { ConsumerHeartbeatCall } from './group_api.js';

/** Topic id → partitions, ascending. Immutable: replaced, never edited, so identity means "unchanged". */
export type TopicPartitions = ReadonlyMap<string, readonly number[]>;

export const EMPTY_PARTITIONS: TopicPartitions = new Map();

export const MemberState = {
  stable: 'stable',
  /** Must revoke partitionsPendingRevocation before getting anything new. */
  unrevokedPartitions: 'unrevokedPartitions',
  /** At the target epoch, but some target partitions are still held by others. */
  unreleasedPartitions: 'unreleasedPartitions',
} as const;
export type MemberState = (typeof MemberState)[keyof typeof MemberState];

/** A static member that left temporarily (epoch -2) keeps its partitions reserved. */
export const STATIC_LEFT_EPOCH = -2;
export const LEAVE_EPOCH = -1;

export interface ConsumerMember {
  readonly memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
  /** Sorted, without duplicates. */
  subscribedTopicNames: readonly string[];
  subscribedTopicRegex: string | null;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  assigned: TopicPartitions;
  pendingRevocation: TopicPartitions;
  // Not persisted:
  sessionDeadline: number;
  /** When an unrevokedPartitions member is removed if it has not revoked; null otherwise. */
  revocationDeadline: number | null;
  /** The assignment object last sent to the member; null = it must be sent again. */
  sentAssignment: TopicPartitions | null;
}

export interface Reconciled {
  memberEpoch: number;
  state: MemberState;
  assigned: TopicPartitions;
  pendingRevocation: TopicPartitions;
}

export type OwnedPartitions = ConsumerHeartbeatCall['ownedPartitions'];

/** Who holds a partition now (assigned or pending revocation), if anyone. */
export type OwnerOf = (topicId: string, partition: number) => string | undefined;

/**
 * The member's next state, or null when it stays as it is. What the member holds is its
 * assignment plus what it is still revoking, measured against the latest target: a partition
 * being revoked that is back in the target is simply kept (the member never lets go of anything
 * its target keeps), and new partitions come only once every revoked one is reported gone.
 */
export function reconcile(member: ConsumerMember, targetEpoch: number, target: TopicPartitions, ownerOf: OwnerOf, owned: OwnedPartitions): Reconciled | null {
  if (member.state === MemberState.stable && member.memberEpoch === targetEpoch) return null;
  const held = union(member.assigned, member.pendingRevocation);
  const kept = new Map<string, readonly number[]>();
  const revoked = new Map<string, readonly number[]>();
  const added = new Map<string, readonly number[]>();
  let unreleased = false;
  for (const topicId of new Set([...target.keys(), ...held.keys()])) {
    const wanted = target.get(topicId) ?? [];
    const current = held.get(topicId) ?? [];
    const wantedSet = new Set(wanted);
    const currentSet = new Set(current);
    put(kept, topicId, current.filter((p) => wantedSet.has(p)));
    put(revoked, topicId, current.filter((p) => !wantedSet.has(p)));
    put(added, topicId, wanted.filter((p) => {
      if (currentSet.has(p)) return false;
      const holder = ownerOf(topicId, p);
      if (holder === undefined || holder === member.memberId) return true;
      unreleased = true;
      return false;
    }));
  }
  const next: Reconciled = revoked.size > 0 && ownsAny(owned, revoked)
    ? { memberEpoch: member.memberEpoch, state: MemberState.unrevokedPartitions, assigned: kept, pendingRevocation: revoked }
    : {
      memberEpoch: targetEpoch,
      state: unreleased ? MemberState.unreleasedPartitions : MemberState.stable,
      assigned: union(kept, added),
      pendingRevocation: EMPTY_PARTITIONS,
    };
  return sameReconciled(member, next) ? null : next;
}

function put(map: Map<string, readonly number[]>, topicId: string, partitions: readonly number[]): void {
  if (partitions.length > 0) map.set(topicId, partitions);
}

/** Whether the member still owns any of `partitions`; an owned list left out (null) means it may. */
function ownsAny(owned: OwnedPartitions, partitions: TopicPartitions): boolean {
  if (partitions.size === 0) return false;
  if (owned === null) return true;
  for (const { topicId, partitions: list } of owned) {
    const pending = partitions.get(topicId);
    if (pending === undefined) continue;
    const pendingSet = new Set(pending);
    if (list.some((p) => pendingSet.has(p))) return true;
  }
  return false;
}

function union(a: TopicPartitions, b: TopicPartitions): TopicPartitions {
  if (b.size === 0) return a;
  const out = new Map(a);
  for (const [topicId, partitions] of b) {
    const mine = out.get(topicId);
    out.set(topicId, mine === undefined ? partitions : [...mine, ...partitions].sort((x, y) => x - y));
  }
  return out;
}

function sameReconciled(member: ConsumerMember, next: Reconciled): boolean {
  return member.memberEpoch === next.memberEpoch && member.state === next.state
    && samePartitions(member.assigned, next.assigned) && samePartitions(member.pendingRevocation, next.pendingRevocation);
}

export function samePartitions(a: TopicPartitions, b: TopicPartitions): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [topicId, list] of a) {
    const other = b.get(topicId);
    if (other === undefined || other.length !== list.length) return false;
    for (let i = 0; i < list.length; i++) if (list[i] !== other[i]) return false;
  }
  return true;
}

/** Lost-response rule: a member one epoch behind may go on if it owns nothing beyond its assignment. */
export function ownsOnlyAssigned(owned: OwnedPartitions, assigned: TopicPartitions): boolean {
  if (owned === null) return false;
  return owned.every(({ topicId, partitions }) => {
    if (partitions.length === 0) return true;
    const mine = new Set(assigned.get(topicId));
    return partitions.every((p) => mine.has(p));
  });
}
