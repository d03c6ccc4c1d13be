// The members of one classic group and the indexes kept over them: by member id, by static
// instance id, how many members support each protocol, how many have a JoinGroup parked, and
// the leader. Pure; part of the coordinator on the offsets partition's shard. Invariants:
// `byInstance` maps each instance id to its member's current id; `protocolCounts[p]` counts the
// members supporting p; `awaiting` counts members with a parked join; the leader is a member
// (or null when there are none); a member leaves only after its parked calls are answered.
import { ErrorCode } from '../../protocol/errors.js';
import type { JoinReply } from './group_api.js';
import type { ClassicMember, Protocol } from './classic_member.js';
import { joinError, syncError } from './group_replies.js';
import type { GroupSink } from './group_sink.js';

export class ClassicRoster {
  leaderId: string | null = null;
  private readonly members = new Map<string, ClassicMember>();
  private readonly byInstance = new Map<string, string>();
  private readonly protocolCounts = new Map<string, number>();
  private awaiting = 0;

  get size(): number {
    return this.members.size;
  }

  get awaitingJoin(): number {
    return this.awaiting;
  }

  get(memberId: string): ClassicMember | undefined {
    return this.members.get(memberId);
  }

  values(): IterableIterator<ClassicMember> {
    return this.members.values();
  }

  staticMemberId(instanceId: string): string | undefined {
    return this.byInstance.get(instanceId);
  }

  /** UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (an instance id now held by another member id) or NONE. */
  validate(memberId: string, instanceId: string | null): number {
    if (instanceId === null) return this.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
    const current = this.byInstance.get(instanceId);
    if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    return current === memberId ? ErrorCode.NONE : ErrorCode.FENCED_INSTANCE_ID;
  }

  add(m: ClassicMember): void {
    this.members.set(m.memberId, m);
    if (m.instanceId !== null) this.byInstance.set(m.instanceId, m.memberId);
    this.count(m, 1);
    this.leaderId ??= m.memberId;
  }

  /** Answers whatever the member has parked (UNKNOWN_MEMBER_ID), then forgets it. */
  remove(m: ClassicMember, sink: GroupSink): void {
    const joinRef = this.takeJoin(m);
    if (joinRef !== null) sink.reply(joinRef, joinError(ErrorCode.UNKNOWN_MEMBER_ID, ''));
    if (m.syncRef !== null) sink.reply(m.syncRef, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    m.syncRef = null;
    this.count(m, -1);
    this.members.delete(m.memberId);
    if (m.instanceId !== null && this.byInstance.get(m.instanceId) === m.memberId) this.byInstance.delete(m.instanceId);
    if (this.leaderId === m.memberId) this.leaderId = this.members.keys().next().value ?? null;
  }

  /** Moves a static member to a new id; calls parked under the old id are answered with `fenceCode`. */
  rename(m: ClassicMember, newId: string, fenceCode: number, sink: GroupSink): void {
    const oldId = m.memberId;
    const joinRef = this.takeJoin(m);
    if (joinRef !== null) sink.reply(joinRef, joinError(fenceCode, oldId));
    if (m.syncRef !== null) sink.reply(m.syncRef, syncError(fenceCode));
    m.syncRef = null;
    this.members.delete(oldId);
    m.memberId = newId;
    this.members.set(newId, m);
    this.byInstance.set(m.instanceId!, newId);
    if (this.leaderId === oldId) this.leaderId = newId;
  }

  setProtocols(m: ClassicMember, protocols: readonly Protocol[]): void {
    this.count(m, -1);
    m.protocols = protocols;
    this.count(m, 1);
  }

  /** A newer JoinGroup from the same member supersedes the parked one, which is told to rejoin. */
  parkJoin(m: ClassicMember, ref: number, sink: GroupSink): void {
    if (m.joinRef !== null) sink.reply(m.joinRef, joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId));
    else this.awaiting++;
    m.joinRef = ref;
  }

  takeJoin(m: ClassicMember): number | null {
    const ref = m.joinRef;
    if (ref !== null) {
      m.joinRef = null;
      this.awaiting--;
    }
    return ref;
  }

  /** Whether one of these protocols is supported by every member. */
  anySupportedByAll(protocols: readonly Protocol[]): boolean {
    return protocols.some((p) => this.protocolCounts.get(p.name) === this.members.size);
  }

  /** Each member votes for its first choice among the protocols all members support; most votes wins. */
  selectProtocol(): string | null {
    const candidates = new Set<string>();
    for (const [name, count] of this.protocolCounts) if (count === this.members.size) candidates.add(name);
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const v = m.vote(candidates);
      if (v !== null) votes.set(v, (votes.get(v) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = 0;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  /** Keeps the leader if it rejoined, else the first member that did; false if nobody rejoined. */
  electJoinedLeader(): boolean {
    const leader = this.leaderId === null ? undefined : this.members.get(this.leaderId);
    if (leader !== undefined && leader.joinRef !== null) return true;
    for (const m of this.members.values()) {
      if (m.joinRef === null) continue;
      this.leaderId = m.memberId;
      return true;
    }
    return false;
  }

  /** How long a rebalance may wait for members: the longest any member asked for. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** What the leader's JoinGroup answer lists: every member with its metadata for the protocol. */
  list(protocolName: string | null): JoinReply['members'] {
    return [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.instanceId, metadata: m.metadataFor(protocolName) }));
  }

  private count(m: ClassicMember, by: number): void {
    for (const p of m.protocols) {
      const n = (this.protocolCounts.get(p.name) ?? 0) + by;
      if (n > 0) this.protocolCounts.set(p.name, n);
      else this.protocolCounts.delete(p.name);
    }
  }
}
