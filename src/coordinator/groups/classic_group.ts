// One classic-protocol group (JoinGroup/SyncGroup/Heartbeat/LeaveGroup, KIP-345 static members):
// the Empty -> PreparingRebalance -> CompletingRebalance -> Stable state machine, its timers
// (sessions, join and initial-delay deadlines, pending-sync deadline, ids handed out with
// MEMBER_ID_REQUIRED) and the group record it persists; the members themselves live in its
// ClassicRoster. Pure; runs inside the coordinator on the offsets partition's shard; time comes
// in as `now`.
// Invariants: a parked JoinGroup/SyncGroup ref is answered exactly once (join completion, sync
// completion, removal, fencing, supersession or a new rebalance); the generation moves only when
// a join phase completes; in PreparingRebalance there is always a join deadline, so no group
// waits forever; `pendingSync` holds members of this generation that have not synced yet.
import type {
  ClassicGroupRecordValue, DescribeReply, GroupConfig, HeartbeatCall, JoinCall, JoinReply, LeaveCall,
  LeaveReply, SyncCall, SyncReply,
} from './group_api.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ClassicMember, EMPTY_BYTES, NEW_MEMBER_JOIN_TIMEOUT_MS, uniqueProtocols, type Protocol } from './classic_member.js';
import { ClassicRoster } from './classic_roster.js';
import { joinError, syncError } from './group_replies.js';
import type { GroupSink } from './group_sink.js';

export type ClassicState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable';

export interface ClassicEnv {
  readonly config: GroupConfig;
  newMemberId(clientId: string): string;
}

/** A static member's replacement, to answer or undo once the group record naming it is durable. */
export interface StaticRejoin {
  readonly ref: number;
  readonly instanceId: string;
  readonly oldId: string;
  readonly newId: string;
  readonly generationId: number;
  readonly leaderBefore: string | null;
  readonly protocols: readonly Protocol[];
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
}

interface InitialDelay {
  stepMs: number;
  remainingMs: number;
  newMemberAdded: boolean;
}

export class ClassicGroup {
  state: ClassicState = 'Empty';
  generationId = 0;
  /** null for a group created by a commit from outside any generation (a "simple" group). */
  protocolType: string | null = null;
  protocolName: string | null = null;
  /** When the group last became Empty; offset retention counts from here. */
  emptySince: number;

  private readonly roster = new ClassicRoster();
  /** Ids handed out with MEMBER_ID_REQUIRED, with their expiry (the requested session timeout). */
  private readonly pendingMembers = new Map<string, number>();
  private readonly pendingSync = new Set<string>();
  private joinDeadline: number | null = null;
  private syncDeadline: number | null = null;
  /** Set while the first rebalance out of Empty waits for more members. */
  private initial: InitialDelay | null = null;
  /** Why and since when the group is rebalancing; set whenever it is in PreparingRebalance. */
  private rebalance: { startedAt: number; reason: string } | null = null;
  private assignmentInFlight = false;

  constructor(readonly groupId: string, private readonly env: ClassicEnv, now: number) {
    this.emptySince = now;
  }

  /** A group as its last record left it: Stable with fresh sessions if it has members, else Empty. */
  static fromRecord(groupId: string, value: ClassicGroupRecordValue, env: ClassicEnv, now: number): ClassicGroup {
    const g = new ClassicGroup(groupId, env, value.stateTimestamp);
    g.generationId = value.generationId;
    g.protocolType = value.protocolType === '' ? null : value.protocolType;
    g.protocolName = value.protocolName;
    for (const r of value.members) {
      const protocols = value.protocolName === null ? [] : [{ name: value.protocolName, metadata: r.subscription }];
      const m = new ClassicMember(r.memberId, r.groupInstanceId, r.clientId, r.clientHost, r.sessionTimeoutMs,
        r.rebalanceTimeoutMs, protocols, now + r.sessionTimeoutMs);
      m.assignment = r.assignment;
      g.roster.add(m);
    }
    if (g.roster.size > 0) {
      g.state = 'Stable';
      if (value.leader !== null && g.roster.get(value.leader) !== undefined) g.roster.leaderId = value.leader;
    }
    return g;
  }

  memberCount(): number {
    return this.roster.size;
  }

  hasPendingMembers(): boolean {
    return this.pendingMembers.size > 0;
  }

  // ---- JoinGroup ----

  join(ref: number, call: JoinCall, now: number, sink: GroupSink): void {
    if (!this.acceptsJoin(call)) return this.refuseJoin(ref, call.memberId, now, sink);
    const protocols = uniqueProtocols(call.protocols);
    if (call.memberId === '') this.joinNewMember(ref, call, protocols, now, sink);
    else this.joinKnownMember(ref, call, protocols, now, sink);
  }

  /**
   * Kafka's acceptJoiningMember: while rebalancing, rejoining members count against the bound
   * too (the last ones to rejoin an over-full group are turned away); otherwise only new members
   * do, and a static member taking over its instance does not grow the group.
   */
  private acceptsJoin(call: JoinCall): boolean {
    const max = this.env.config.maxGroupSize;
    const m = this.roster.get(call.memberId);
    switch (this.state) {
      case 'Empty': return true;
      case 'PreparingRebalance': return m?.joinRef != null || this.roster.awaitingJoin < max;
      default:
        return m !== undefined || this.roster.size < max
          || (call.groupInstanceId !== null && this.roster.staticMemberId(call.groupInstanceId) !== undefined);
    }
  }

  /** GROUP_MAX_SIZE_REACHED; a member turned away while rebalancing leaves the group (as in Kafka). */
  private refuseJoin(ref: number, memberId: string, now: number, sink: GroupSink): void {
    sink.reply(ref, joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, ''));
    const m = this.roster.get(memberId);
    if (m === undefined) return;
    this.removeMember(m, sink);
    this.maybeCompleteJoin(now, sink);
  }

  private joinNewMember(ref: number, call: JoinCall, protocols: Protocol[], now: number, sink: GroupSink): void {
    if (!this.supports(call.protocolType, protocols)) return sink.reply(ref, joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''));
    const instanceId = call.groupInstanceId;
    if (instanceId === null && call.requireKnownMemberId && this.pendingMembers.size >= this.env.config.maxGroupSize) {
      return sink.reply(ref, joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, ''));
    }
    const newId = this.env.newMemberId(instanceId ?? call.clientId);
    if (instanceId !== null) {
      const existing = this.roster.staticMemberId(instanceId);
      if (existing !== undefined) return this.replaceStatic(ref, call, protocols, existing, newId, now, sink);
    } else if (call.requireKnownMemberId) {
      this.pendingMembers.set(newId, now + call.sessionTimeoutMs);
      return sink.reply(ref, joinError(ErrorCode.MEMBER_ID_REQUIRED, newId));
    }
    this.addJoiningMember(ref, newId, call, protocols, now, sink);
  }

  private joinKnownMember(ref: number, call: JoinCall, protocols: Protocol[], now: number, sink: GroupSink): void {
    const id = call.memberId;
    if (!this.supports(call.protocolType, protocols)) return sink.reply(ref, joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, id));
    if (call.groupInstanceId === null && this.pendingMembers.has(id)) return this.addJoiningMember(ref, id, call, protocols, now, sink);
    const err = this.roster.validate(id, call.groupInstanceId);
    if (err !== ErrorCode.NONE) return sink.reply(ref, joinError(err, id));
    const m = this.roster.get(id)!;
    this.touch(m, now);
    const isLeader = id === this.roster.leaderId;
    if (this.state === 'PreparingRebalance') {
      this.updateMember(m, call, protocols, ref, sink);
      this.maybeCompleteJoin(now, sink);
    } else if (this.state === 'CompletingRebalance' && m.matches(protocols)) {
      // It missed its JoinGroup answer: the current generation's answer again.
      sink.reply(ref, this.joinReply(m, isLeader, false));
    } else if (this.state === 'Stable' && !isLeader && m.matches(protocols)) {
      sink.reply(ref, this.joinReply(m, false, false));
    } else {
      this.updateMember(m, call, protocols, ref, sink);
      this.prepareRebalance(isLeader && m.matches(protocols) ? 'leader-rejoin' : 'metadata-change', now, sink);
    }
  }

  private addJoiningMember(ref: number, id: string, call: JoinCall, protocols: Protocol[], now: number, sink: GroupSink): void {
    const m = new ClassicMember(id, call.groupInstanceId, call.clientId, call.clientHost, call.sessionTimeoutMs,
      call.rebalanceTimeoutMs, protocols, now + NEW_MEMBER_JOIN_TIMEOUT_MS);
    m.isNew = true;
    if (this.initial !== null) this.initial.newMemberAdded = true;
    if (this.roster.size === 0) this.protocolType = call.protocolType;
    this.pendingMembers.delete(id);
    this.roster.add(m);
    this.roster.parkJoin(m, ref, sink);
    this.rebalanceOrCompleteJoin('join', now, sink);
  }

  /** KIP-345: a known instance id with a new process takes over the member under a new id. */
  private replaceStatic(ref: number, call: JoinCall, protocols: Protocol[], oldId: string, newId: string, now: number, sink: GroupSink): void {
    const m = this.roster.get(oldId)!;
    const rejoin: StaticRejoin = {
      ref, instanceId: call.groupInstanceId!, oldId, newId, generationId: this.generationId, leaderBefore: this.roster.leaderId,
      protocols: m.protocols, sessionTimeoutMs: m.sessionTimeoutMs, rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    };
    this.rename(m, newId, ErrorCode.FENCED_INSTANCE_ID, sink);
    this.updateMember(m, call, protocols, ref, sink);
    m.deadline = now + m.sessionTimeoutMs;
    if (this.state === 'Stable' && this.roster.selectProtocol() === this.protocolName) {
      // Nothing the assignment depends on changed: persist the new id, no rebalance.
      sink.append([{ kind: 'classicGroup', groupId: this.groupId, value: this.record(now) }],
        { kind: 'staticRejoin', groupId: this.groupId, rejoin });
    } else if (this.state === 'PreparingRebalance') {
      this.maybeCompleteJoin(now, sink);
    } else {
      this.prepareRebalance('static-member-replaced', now, sink);
    }
  }

  onStaticRejoinStored(s: StaticRejoin, ok: boolean, now: number, sink: GroupSink): void {
    const m = this.roster.get(s.newId);
    // A rebalance that started meanwhile answers the parked join itself.
    if (m === undefined || m.joinRef !== s.ref || this.state !== 'Stable' || this.generationId !== s.generationId) return;
    this.roster.takeJoin(m);
    if (ok) {
      const isLeader = m.memberId === this.roster.leaderId;
      sink.reply(s.ref, this.joinReply(m, isLeader, isLeader));
      return;
    }
    this.roster.setProtocols(m, s.protocols);
    m.sessionTimeoutMs = s.sessionTimeoutMs;
    m.rebalanceTimeoutMs = s.rebalanceTimeoutMs;
    this.rename(m, s.oldId, ErrorCode.FENCED_INSTANCE_ID, sink);
    m.deadline = now + m.sessionTimeoutMs;
    sink.reply(s.ref, {
      ...joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, ''),
      generationId: this.generationId, protocolType: this.protocolType, protocolName: this.protocolName, leader: s.leaderBefore ?? '',
    });
  }

  // ---- SyncGroup / Heartbeat / LeaveGroup ----

  sync(ref: number, call: SyncCall, now: number, sink: GroupSink): void {
    let err = this.roster.validate(call.memberId, call.groupInstanceId);
    if (err === ErrorCode.NONE && call.generationId !== this.generationId) err = ErrorCode.ILLEGAL_GENERATION;
    if (err === ErrorCode.NONE && (differs(call.protocolType, this.protocolType) || differs(call.protocolName, this.protocolName))) {
      err = ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    }
    if (err !== ErrorCode.NONE) return sink.reply(ref, syncError(err));
    const m = this.roster.get(call.memberId)!;
    this.touch(m, now);
    if (this.state === 'PreparingRebalance') return sink.reply(ref, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    this.syncReceived(m.memberId);
    if (this.state === 'Stable') return sink.reply(ref, this.syncReply(m));
    // CompletingRebalance: park until the leader's assignment is durable.
    if (m.syncRef !== null) sink.reply(m.syncRef, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    m.syncRef = ref;
    if (m.memberId === this.roster.leaderId && !this.assignmentInFlight) this.storeAssignment(call, now, sink);
  }

  private storeAssignment(call: SyncCall, now: number, sink: GroupSink): void {
    const assignment = new Map<string, Uint8Array>();
    for (const a of call.assignments) if (this.roster.get(a.memberId) !== undefined) assignment.set(a.memberId, a.assignment);
    this.assignmentInFlight = true;
    sink.append([{ kind: 'classicGroup', groupId: this.groupId, value: this.record(now, assignment) }],
      { kind: 'syncAssignment', groupId: this.groupId, generationId: this.generationId, assignment });
  }

  onSyncStored(generationId: number, assignment: ReadonlyMap<string, Uint8Array>, ok: boolean, now: number, sink: GroupSink): void {
    // A rebalance that started meanwhile already answered every parked sync.
    if (this.state !== 'CompletingRebalance' || generationId !== this.generationId) return;
    this.assignmentInFlight = false;
    if (!ok) {
      this.failSyncs(ErrorCode.COORDINATOR_NOT_AVAILABLE, sink);
      return this.prepareRebalance('sync-failed', now, sink);
    }
    this.state = 'Stable';
    for (const m of this.roster.values()) {
      m.assignment = assignment.get(m.memberId) ?? EMPTY_BYTES;
      const ref = m.syncRef;
      if (ref === null) continue;
      m.syncRef = null;
      m.deadline = now + m.sessionTimeoutMs;
      sink.reply(ref, this.syncReply(m));
    }
  }

  heartbeat(call: HeartbeatCall, now: number): number {
    let err = this.roster.validate(call.memberId, call.groupInstanceId);
    if (err === ErrorCode.NONE && call.generationId !== this.generationId) err = ErrorCode.ILLEGAL_GENERATION;
    if (err !== ErrorCode.NONE) return err;
    this.touch(this.roster.get(call.memberId)!, now);
    return this.state === 'PreparingRebalance' ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  leave(call: LeaveCall, now: number, sink: GroupSink): LeaveReply {
    let removed = false;
    const members = call.members.map((who) => {
      let errorCode: number = ErrorCode.NONE;
      if (who.memberId === '') {
        const id = who.groupInstanceId === null ? undefined : this.roster.staticMemberId(who.groupInstanceId);
        if (id === undefined) errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
        else this.removeMember(this.roster.get(id)!, sink);
        removed ||= id !== undefined;
      } else if (!this.pendingMembers.delete(who.memberId)) {
        errorCode = this.roster.validate(who.memberId, who.groupInstanceId);
        if (errorCode === ErrorCode.NONE) {
          this.removeMember(this.roster.get(who.memberId)!, sink);
          removed = true;
        }
      }
      return { memberId: who.memberId, groupInstanceId: who.groupInstanceId, errorCode };
    });
    if (removed) this.afterRemoval('leave', now, sink);
    else if (this.state === 'PreparingRebalance') this.maybeCompleteJoin(now, sink);
    return { kind: 'leave', errorCode: ErrorCode.NONE, members };
  }

  /** OffsetCommit's checks for this group (Kafka's ClassicGroup.validateOffsetCommit). */
  validateCommit(memberId: string, instanceId: string | null, generationId: number, now: number): number {
    if (generationId < 0 && this.state === 'Empty') return ErrorCode.NONE;
    if (generationId >= 0 || memberId !== '' || instanceId !== null) {
      const err = this.roster.validate(memberId, instanceId);
      if (err !== ErrorCode.NONE) return err;
      if (generationId !== this.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else if (this.state !== 'Empty') {
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    if (this.state === 'CompletingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
    const m = this.roster.get(memberId);
    if (m !== undefined) this.touch(m, now);
    return ErrorCode.NONE;
  }

  // ---- timers ----

  deadline(): number | null {
    let min = minOf(this.joinDeadline, this.syncDeadline);
    for (const at of this.pendingMembers.values()) min = minOf(min, at);
    for (const m of this.roster.values()) min = minOf(min, m.deadline);
    return min;
  }

  tick(now: number, sink: GroupSink): void {
    this.expirePendingMembers(now, sink);
    this.expireSessions(now, sink);
    if (this.joinDeadline !== null && now >= this.joinDeadline) this.onJoinDeadline(now, sink);
    if (this.syncDeadline !== null && now >= this.syncDeadline) this.onSyncDeadline(now, sink);
  }

  private expirePendingMembers(now: number, sink: GroupSink): void {
    let expired = false;
    for (const [id, at] of this.pendingMembers) {
      if (at > now) continue;
      this.pendingMembers.delete(id);
      expired = true;
    }
    if (expired) this.maybeCompleteJoin(now, sink);
  }

  private expireSessions(now: number, sink: GroupSink): void {
    let removed = false;
    for (const m of [...this.roster.values()]) {
      if (m.deadline > now) continue;
      if (!m.isNew && (m.joinRef !== null || m.syncRef !== null)) {
        // Parked in a rebalance: the join or sync deadline decides about it, not the session.
        m.deadline = now + m.sessionTimeoutMs;
        continue;
      }
      this.removeMember(m, sink);
      removed = true;
    }
    if (removed) this.afterRemoval('session-timeout', now, sink);
  }

  private onJoinDeadline(now: number, sink: GroupSink): void {
    const init = this.initial;
    if (init !== null && init.newMemberAdded && init.remainingMs > 0) {
      // Members keep arriving: wait one more step (from when this one was due), never beyond the rebalance timeout.
      const stepMs = Math.min(this.env.config.initialRebalanceDelayMs, init.remainingMs);
      this.initial = { stepMs, remainingMs: Math.max(init.remainingMs - init.stepMs, 0), newMemberAdded: false };
      this.joinDeadline = this.joinDeadline! + stepMs;
      return;
    }
    this.completeJoin(now, sink);
  }

  private onSyncDeadline(now: number, sink: GroupSink): void {
    this.syncDeadline = null;
    for (const id of [...this.pendingSync]) this.removeMember(this.roster.get(id)!, sink);
    this.prepareRebalance('sync-timeout', now, sink);
  }

  // ---- rebalance ----

  private rebalanceOrCompleteJoin(reason: string, now: number, sink: GroupSink): void {
    if (this.state === 'PreparingRebalance') this.maybeCompleteJoin(now, sink);
    else this.prepareRebalance(reason, now, sink);
  }

  private afterRemoval(reason: string, now: number, sink: GroupSink): void {
    if (this.state === 'Stable' || this.state === 'CompletingRebalance') this.prepareRebalance(reason, now, sink);
    else this.maybeCompleteJoin(now, sink);
  }

  private prepareRebalance(reason: string, now: number, sink: GroupSink): void {
    if (this.state === 'CompletingRebalance') this.failSyncs(ErrorCode.REBALANCE_IN_PROGRESS, sink);
    this.pendingSync.clear();
    this.syncDeadline = null;
    this.assignmentInFlight = false;
    const fromEmpty = this.state === 'Empty';
    this.state = 'PreparingRebalance';
    this.rebalance = { startedAt: now, reason };
    const delayMs = this.env.config.initialRebalanceDelayMs;
    if (fromEmpty && delayMs > 0) {
      this.initial = { stepMs: delayMs, remainingMs: Math.max(this.roster.rebalanceTimeoutMs() - delayMs, 0), newMemberAdded: false };
      this.joinDeadline = now + delayMs;
    } else if (fromEmpty || this.allJoined()) {
      this.completeJoin(now, sink);
    } else {
      this.joinDeadline = now + this.roster.rebalanceTimeoutMs();
    }
  }

  private maybeCompleteJoin(now: number, sink: GroupSink): void {
    if (this.state === 'PreparingRebalance' && this.initial === null && this.allJoined()) this.completeJoin(now, sink);
  }

  private allJoined(): boolean {
    return this.roster.awaitingJoin === this.roster.size && this.pendingMembers.size === 0;
  }

  private completeJoin(now: number, sink: GroupSink): void {
    this.joinDeadline = null;
    this.initial = null;
    // Dynamic members that did not rejoin are gone; static ones get until their session ends.
    for (const m of [...this.roster.values()]) if (m.joinRef === null && m.instanceId === null) this.removeMember(m, sink);
    if (this.roster.size > 0 && !this.roster.electJoinedLeader()) {
      this.joinDeadline = now + this.roster.rebalanceTimeoutMs();
      return;
    }
    this.generationId++;
    const started = this.rebalance!;
    this.rebalance = null;
    if (this.roster.size === 0) {
      this.state = 'Empty';
      this.protocolName = null;
      this.emptySince = now;
      sink.append([{ kind: 'classicGroup', groupId: this.groupId, value: this.record(now) }], { kind: 'background' });
    } else {
      this.state = 'CompletingRebalance';
      this.protocolName = this.roster.selectProtocol();
      for (const m of this.roster.values()) {
        const ref = this.roster.takeJoin(m);
        if (ref !== null) sink.reply(ref, this.joinReply(m, m.memberId === this.roster.leaderId, false));
        m.isNew = false;
        m.deadline = now + m.sessionTimeoutMs;
        this.pendingSync.add(m.memberId);
      }
      this.syncDeadline = now + this.roster.rebalanceTimeoutMs();
    }
    sink.rebalanced(this.groupId, started.reason, now - started.startedAt, this.generationId, this.roster.size);
  }

  private failSyncs(errorCode: number, sink: GroupSink): void {
    for (const m of this.roster.values()) {
      m.assignment = EMPTY_BYTES;
      const ref = m.syncRef;
      if (ref === null) continue;
      m.syncRef = null;
      sink.reply(ref, syncError(errorCode));
    }
  }

  // ---- membership ----

  private supports(protocolType: string, protocols: readonly Protocol[]): boolean {
    if (this.state === 'Empty') return protocolType !== '' && protocols.length > 0;
    return protocolType === this.protocolType && this.roster.anySupportedByAll(protocols);
  }

  private touch(m: ClassicMember, now: number): void {
    if (!m.isNew) m.deadline = now + m.sessionTimeoutMs;
  }

  private removeMember(m: ClassicMember, sink: GroupSink): void {
    this.roster.remove(m, sink);
    this.syncReceived(m.memberId);
  }

  private rename(m: ClassicMember, newId: string, fenceCode: number, sink: GroupSink): void {
    const oldId = m.memberId;
    this.roster.rename(m, newId, fenceCode, sink);
    if (this.pendingSync.delete(oldId)) this.pendingSync.add(newId);
  }

  private updateMember(m: ClassicMember, call: JoinCall, protocols: Protocol[], ref: number, sink: GroupSink): void {
    this.roster.setProtocols(m, protocols);
    m.rebalanceTimeoutMs = call.rebalanceTimeoutMs;
    m.sessionTimeoutMs = call.sessionTimeoutMs;
    this.roster.parkJoin(m, ref, sink);
  }

  private syncReceived(memberId: string): void {
    this.pendingSync.delete(memberId);
    if (this.pendingSync.size === 0) this.syncDeadline = null;
  }

  // ---- views ----

  private joinReply(m: ClassicMember, withMembers: boolean, skipAssignment: boolean): JoinReply {
    return {
      kind: 'join',
      errorCode: ErrorCode.NONE,
      generationId: this.generationId,
      protocolType: this.protocolType,
      protocolName: this.protocolName,
      leader: this.roster.leaderId ?? '',
      skipAssignment,
      memberId: m.memberId,
      members: withMembers ? this.roster.list(this.protocolName) : [],
    };
  }

  private syncReply(m: ClassicMember): SyncReply {
    return { kind: 'sync', errorCode: ErrorCode.NONE, protocolType: this.protocolType, protocolName: this.protocolName, assignment: m.assignment };
  }

  /** The group as of now; `assignment` (from a leader's SyncGroup) replaces the members' current ones. */
  record(now: number, assignment?: ReadonlyMap<string, Uint8Array>): ClassicGroupRecordValue {
    return {
      protocolType: this.protocolType ?? '',
      generationId: this.generationId,
      protocolName: this.protocolName,
      leader: this.roster.leaderId,
      stateTimestamp: now,
      members: [...this.roster.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.instanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        sessionTimeoutMs: m.sessionTimeoutMs,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        subscription: m.metadataFor(this.protocolName),
        assignment: assignment === undefined ? m.assignment : assignment.get(m.memberId) ?? EMPTY_BYTES,
      })),
    };
  }

  /** DescribeGroups: metadata, assignments and the protocol only once Stable (as Kafka does). */
  describe(): DescribeReply['groups'][number] {
    const stable = this.state === 'Stable';
    return {
      groupId: this.groupId,
      errorCode: ErrorCode.NONE,
      state: this.state,
      protocolType: this.protocolType ?? '',
      protocol: stable ? this.protocolName ?? '' : '',
      members: [...this.roster.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.instanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable ? m.metadataFor(this.protocolName) : EMPTY_BYTES,
        assignment: stable ? m.assignment : EMPTY_BYTES,
      })),
    };
  }

  /** Topics the members consume (OffsetDelete refuses them); null when some member's subscription is unknown. */
  subscribedTopics(decode: (protocolType: string, metadata: Uint8Array) => readonly string[] | null): Set<string> | null {
    const topics = new Set<string>();
    if (this.roster.size === 0) return topics;
    if (this.protocolType === null || this.protocolName === null) return null;
    for (const m of this.roster.values()) {
      const t = decode(this.protocolType, m.metadataFor(this.protocolName));
      if (t === null) return null;
      for (const name of t) topics.add(name);
    }
    return topics;
  }
}

function differs(asked: string | null, actual: string | null): boolean {
  return asked !== null && actual !== null && asked !== actual;
}

function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
