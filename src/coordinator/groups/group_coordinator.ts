// The group coordinator of one offsets partition: a pure state machine over classic groups,
// KIP-848 groups (through ConsumerGroupPort) and committed offsets. Calls, append outcomes and
// ticks come in with the time; replies, appends and rebalance notices go out as effects. No I/O,
// no timers, no clock. Runs on the shard that owns the offsets partition; its driver must append
// records in effect order and report each append's outcome once.
// Invariants: every call gets exactly one reply; append outcomes take effect in emission order,
// so the offsets in memory always equal a replay of the durable records; `deadlines` holds each
// group's earliest timer work (it may be early, never late).
import type {
  ConsumerGroupPort, GroupCall, GroupConfig, GroupEffect, GroupRecord, TopicIndex,
} from './group_api.js';
import { AppendQueue, type PendingAppend } from './append_queue.js';
import { ClassicGroup } from './classic_group.js';
import { heartbeat, joinGroup, leaveGroup, syncGroup } from './classic_calls.js';
import { memberCount, noteConsumerMembers, type CoordinatorState, type GroupEntry } from './coordinator_state.js';
import { DeadlineQueue } from './deadline_queue.js';
import { EffectCollector, type GroupSink } from './group_sink.js';
import { describeConsumerGroups, describeGroups, listGroups } from './group_views.js';
import { consumerHeartbeat, tickConsumerGroup, topicsChanged } from './kip848_calls.js';
import {
  commitOffsets, deleteGroups, deleteOffsets, fetchOffsets, finishDeleteGroups, resetOffsets,
} from './offset_calls.js';
import { expireIdleGroup, finishExpiry, housekeepingDeadline } from './offset_expiry.js';
import { OffsetStore, type OffsetRecord } from './offset_store.js';

/** A group's committed offsets and how many members it has now. */
export interface GroupOffsets {
  readonly members: number;
  readonly offsets: { topic: string; partition: number; offset: number }[];
}

export interface CoordinatorDeps {
  config: GroupConfig;
  /** Fresh member ids: Kafka uses `${clientId}-${uuid}`. Injected so simulations are deterministic. */
  newMemberId(clientId: string): string;
  /** Topics a member subscribes to, from its protocol metadata (for OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC); null if unknown/undecodable. */
  subscribedTopics(protocolType: string, metadata: Uint8Array): readonly string[] | null;
  /** Creates a KIP-848 group object (the shard wires the real one; unit tests pass a minimal fake). */
  createConsumerGroup(groupId: string): ConsumerGroupPort;
}

const NO_TOPICS: TopicIndex = { byName: new Map(), byId: new Map() };

export class GroupCoordinator {
  private readonly s: CoordinatorState;
  private readonly deadlines = new DeadlineQueue();

  constructor(deps: CoordinatorDeps) {
    this.s = {
      deps, groups: new Map(), deleting: new Set(), expiring: new Set(), offsets: new OffsetStore(deps.config.offsetsRetentionMs),
      appends: new AppendQueue(), topics: NO_TOPICS,
    };
  }

  /** Rebuilds state from the offsets partition's records in log order, before any call. */
  load(records: Iterable<GroupRecord>, now: number): void {
    const { groups, offsets, deps } = this.s;
    for (const r of records) {
      if (r.kind === 'offset') {
        offsets.apply(r);
      } else if (r.value === null) {
        if (groups.get(r.groupId)?.kind === (r.kind === 'classicGroup' ? 'classic' : 'consumer')) groups.delete(r.groupId);
      } else if (r.kind === 'classicGroup') {
        groups.set(r.groupId, { kind: 'classic', group: ClassicGroup.fromRecord(r.groupId, r.value, deps, now) });
      } else {
        const e = groups.get(r.groupId);
        const port = e?.kind === 'consumer' ? e.port : deps.createConsumerGroup(r.groupId);
        port.replay(r.value, now);
        if (e?.kind !== 'consumer') groups.set(r.groupId, { kind: 'consumer', port, emptySince: null });
      }
    }
    // Offsets without a group record belong to a "simple" group, empty since long ago.
    for (const groupId of offsets.groupIds()) if (!groups.has(groupId)) groups.set(groupId, simpleGroup(this.s, groupId));
    for (const [groupId, e] of groups) {
      if (e.kind === 'consumer') noteConsumerMembers(e, now);
      this.schedule(groupId, now);
    }
  }

  handle(ref: number, call: GroupCall, now: number): GroupEffect[] {
    const sink = new EffectCollector(this.s.appends);
    this.dispatch(sink, ref, call, now);
    for (const groupId of touchedBy(call)) this.schedule(groupId, now);
    return sink.effects;
  }

  appended(token: number, ok: boolean, now: number): GroupEffect[] {
    const sink = new EffectCollector(this.s.appends);
    const touched = new Set<string>();
    for (const entry of this.s.appends.settle(token, ok)) this.finish(sink, entry, now, touched);
    for (const groupId of touched) this.schedule(groupId, now);
    return sink.effects;
  }

  tick(now: number): GroupEffect[] {
    const sink = new EffectCollector(this.s.appends);
    for (const groupId of this.deadlines.popDue(now)) {
      const e = this.s.groups.get(groupId);
      if (e?.kind === 'classic') e.group.tick(now, sink);
      else if (e?.kind === 'consumer') tickConsumerGroup(this.s, sink, groupId, e, now);
      expireIdleGroup(this.s, sink, groupId, now);
      this.schedule(groupId, now);
    }
    return sink.effects;
  }

  /** Earliest time tick() has work (session expiry, rebalance deadline, initial delay, offset expiry); null if none. */
  nextDeadline(): number | null {
    return this.deadlines.peek();
  }

  /** KIP-848 groups need topic metadata; store it and pass it to consumer groups. */
  setTopics(topics: TopicIndex, now: number): GroupEffect[] {
    this.s.topics = topics;
    const sink = new EffectCollector(this.s.appends);
    for (const [groupId, e] of this.s.groups) {
      if (e.kind !== 'consumer' || this.s.deleting.has(groupId)) continue;
      topicsChanged(this.s, sink, e, now);
      this.schedule(groupId, now);
    }
    return sink.effects;
  }

  stats(): { groups: number; members: number; byState: Record<string, number>; pendingAppends: number } {
    let members = 0;
    const byState: Record<string, number> = {};
    for (const [groupId, e] of this.s.groups) {
      const state = this.s.deleting.has(groupId) ? 'Dead' : e.kind === 'classic' ? e.group.state : e.port.state();
      byState[state] = (byState[state] ?? 0) + 1;
      members += memberCount(e);
    }
    return { groups: this.s.groups.size, members, byState, pendingAppends: this.s.appends.size };
  }

  /**
   * Per group with committed offsets, for lag metrics: its members now (0 for a group nobody
   * consumes in, whose lag only grows) and its offsets.
   */
  committedOffsets(): Map<string, GroupOffsets> {
    const out = new Map<string, GroupOffsets>();
    for (const groupId of this.s.offsets.groupIds()) {
      const e = this.s.groups.get(groupId);
      out.set(groupId, {
        members: e === undefined ? 0 : memberCount(e),
        offsets: this.s.offsets.list(groupId).map((p) => ({ topic: p.topic, partition: p.partition, offset: p.value.offset })),
      });
    }
    return out;
  }

  private dispatch(sink: GroupSink, ref: number, call: GroupCall, now: number): void {
    const s = this.s;
    switch (call.kind) {
      case 'join': return joinGroup(s, sink, ref, call, now);
      case 'sync': return syncGroup(s, sink, ref, call, now);
      case 'heartbeat': return heartbeat(s, sink, ref, call, now);
      case 'leave': return leaveGroup(s, sink, ref, call, now);
      case 'commit': return commitOffsets(s, sink, ref, call, now);
      case 'offsetFetch': return sink.reply(ref, fetchOffsets(s, call));
      case 'describe': return sink.reply(ref, describeGroups(s, call));
      case 'list': return sink.reply(ref, listGroups(s, call));
      case 'deleteGroups': return deleteGroups(s, sink, ref, call);
      case 'offsetDelete': return deleteOffsets(s, sink, ref, call);
      case 'resetOffsets': return resetOffsets(s, sink, ref, call, now);
      case 'consumerHeartbeat': return consumerHeartbeat(s, sink, ref, call, now);
      case 'consumerDescribe': return sink.reply(ref, describeConsumerGroups(s, call));
    }
  }

  /** One append took effect (durable or not): apply its offsets, then whatever waited on it. */
  private finish(sink: GroupSink, entry: PendingAppend, now: number, touched: Set<string>): void {
    const ok = entry.ok === true;
    for (const r of entry.records) {
      touched.add(r.groupId);
      if (ok && r.kind === 'offset') this.applyOffset(r);
    }
    const done = entry.done;
    switch (done.kind) {
      case 'background': break;
      case 'reply': sink.reply(done.ref, ok ? done.ok : done.failed); break;
      case 'syncAssignment': this.classic(done.groupId)?.onSyncStored(done.generationId, done.assignment, ok, now, sink); break;
      case 'staticRejoin': this.classic(done.groupId)?.onStaticRejoinStored(done.rejoin, ok, now, sink); break;
      case 'deleteGroups': finishDeleteGroups(this.s, sink, done, ok); break;
      case 'expire': finishExpiry(this.s, done, ok); break;
    }
    for (const d of entry.deferred ?? []) sink.reply(d.ref, ok ? d.ok : d.failed);
  }

  /** As on load: offsets for a group id nobody holds bring a simple group into being. */
  private applyOffset(r: OffsetRecord): void {
    this.s.offsets.apply(r);
    if (r.value !== null && !this.s.groups.has(r.groupId)) this.s.groups.set(r.groupId, simpleGroup(this.s, r.groupId));
  }

  private classic(groupId: string): ClassicGroup | undefined {
    const e = this.s.groups.get(groupId);
    return e?.kind === 'classic' ? e.group : undefined;
  }

  private schedule(groupId: string, now: number): void {
    const e = this.s.groups.get(groupId);
    if (e === undefined) return this.deadlines.set(groupId, null);
    const timers = e.kind === 'classic' ? e.group.deadline() : e.port.nextDeadline();
    const housekeeping = housekeepingDeadline(this.s, groupId, e, now);
    this.deadlines.set(groupId, timers === null ? housekeeping : housekeeping === null ? timers : Math.min(timers, housekeeping));
  }
}

function simpleGroup(s: CoordinatorState, groupId: string): GroupEntry {
  return { kind: 'classic', group: new ClassicGroup(groupId, s.deps, 0) };
}

/**
 * Groups whose deadlines a call may have brought forward. Heartbeats and commits only push
 * member sessions later (a commit's offsets reschedule when they land), so they need nothing.
 */
function touchedBy(call: GroupCall): readonly string[] {
  switch (call.kind) {
    case 'join': case 'sync': case 'leave': case 'offsetDelete': case 'resetOffsets': case 'consumerHeartbeat':
      return [call.groupId];
    case 'deleteGroups':
      return call.groupIds;
    default:
      return [];
  }
}
