// Where the coordinator's parts put what they decide: replies, appends (with what to do once the
// driver reports the outcome) and rebalance notices. Runs inside the pure coordinator on the
// offsets partition's shard. Invariant: every append gets a fresh token from the AppendQueue and
// appears in the effects in the same order it entered the queue.
import type { GroupEffect, GroupRecord, GroupReply } from './group_api.js';
import type { AppendQueue } from './append_queue.js';
import type { StaticRejoin } from './classic_group.js';

/** What happens when an append's outcome is known (applied strictly in emission order). */
export type AppendCompletion =
  /** Nothing waits on it (a group record written as a consequence, e.g. a group turning Empty). */
  | { readonly kind: 'background' }
  /** A call's answer depends only on durability. */
  | { readonly kind: 'reply'; readonly ref: number; readonly ok: GroupReply; readonly failed: GroupReply }
  /** The leader's SyncGroup assignment for a generation. */
  | { readonly kind: 'syncAssignment'; readonly groupId: string; readonly generationId: number; readonly assignment: ReadonlyMap<string, Uint8Array> }
  /** A static member's new id, persisted before it gets its JoinGroup answer. */
  | { readonly kind: 'staticRejoin'; readonly groupId: string; readonly rejoin: StaticRejoin }
  /** DeleteGroups: the groups disappear once their tombstones are durable. */
  | { readonly kind: 'deleteGroups'; readonly ref: number; readonly groupIds: readonly string[]; readonly results: readonly { groupId: string; errorCode: number }[] }
  /** Offset expiry, possibly deleting the group with its last offsets. */
  | { readonly kind: 'expire'; readonly groupId: string; readonly dropGroup: boolean };

export interface GroupSink {
  reply(ref: number, reply: GroupReply): void;
  append(records: GroupRecord[], done: AppendCompletion): void;
  rebalanced(groupId: string, reason: string, durationMs: number, generationId: number, members: number): void;
}

export class EffectCollector implements GroupSink {
  readonly effects: GroupEffect[] = [];

  constructor(private readonly appends: AppendQueue) {}

  reply(ref: number, reply: GroupReply): void {
    this.effects.push({ kind: 'reply', ref, reply });
  }

  append(records: GroupRecord[], done: AppendCompletion): void {
    const token = this.appends.add(records, done);
    this.effects.push({ kind: 'append', token, records });
  }

  rebalanced(groupId: string, reason: string, durationMs: number, generationId: number, members: number): void {
    this.effects.push({ kind: 'rebalanced', groupId, reason, durationMs, generationId, members });
  }
}
