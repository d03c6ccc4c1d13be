// One KIP-848 consumer group: the server side of ConsumerGroupHeartbeat (Kafka's
// GroupMetadataManager.consumerGroupHeartbeat). Members join, heartbeat, leave or time out; any
// change of membership, subscriptions, subscribed topics' metadata or the group's assignor bumps
// the group epoch and recomputes the target assignment at once (so the assignment epoch catches up
// within the same call); each member then converges to its target on its own heartbeats.
// A pure state machine owned by the shard that owns the group's offsets partition: no I/O, no
// clock (callers pass `now`), no randomness but the injected member-id source.
// Invariants: no partition is held (assigned or pending revocation) by two members; members ≤
// config.maxGroupSize; every change to persisted state yields one 'consumerGroup' record holding
// the whole group, and replaying the latest one rebuilds the same group (timers restart).
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { Assignor, AssignorMember } from '../../assignors/assignor.js';
import {
  EMPTY_PARTITIONS, LEAVE_EPOCH, MemberState, STATIC_LEFT_EPOCH, ownsOnlyAssigned, reconcile, samePartitions,
  type ConsumerMember, type OwnedPartitions, type TopicPartitions,
} from './consumer_group_member.js';
import {
  MAX_SUBSCRIBED_TOPIC_NAMES, MAX_TOPIC_REGEX_LENGTH, TopicRegexes, resolveSubscriptions, sameMetadata,
  type ResolvedSubscriptions, type SubscribedTopics,
} from './consumer_group_subscription.js';
import { fromPartitionsValue, toPartitionsValue, type ConsumerGroupValue } from './consumer_group_value.js';
import type {
  ConsumerDescribeReply, ConsumerDescribedMember, ConsumerGroupPort, ConsumerHeartbeatCall, ConsumerHeartbeatReply,
  GroupConfig, GroupRecord, GroupStateName, TopicIndex,
} from './group_api.js';

type HeartbeatResult = { reply: ConsumerHeartbeatReply; records: GroupRecord[] };

/** Who a heartbeat is for, decided before anything changes (so a refused call changes nothing). */
interface Admission {
  memberId: string;
  existing: ConsumerMember | undefined;
  /** A static member that left temporarily and whose instance id this call takes over. */
  replaced: ConsumerMember | undefined;
}

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_REQUEST, message);
}

function errorReply(err: KafkaError): ConsumerHeartbeatReply {
  return { kind: 'consumerHeartbeat', errorCode: err.code, errorMessage: err.message, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

function blank(value: string | null): boolean {
  return value !== null && value.trim() === '';
}

function validateRegex(regex: string | null): void {
  if (regex === null || regex === '') return;
  // Kafka answers INVALID_REGULAR_EXPRESSION (128), which errors.ts does not define yet.
  if (regex.length > MAX_TOPIC_REGEX_LENGTH) throw invalid(`SubscribedTopicRegex is longer than ${MAX_TOPIC_REGEX_LENGTH} characters.`);
  if (TopicRegexes.compile(regex) === null) throw new KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex ${regex} is not a valid regular expression.`);
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

export class ConsumerGroup implements ConsumerGroupPort {
  readonly groupId: string;
  private readonly config: GroupConfig;
  private readonly assignors: ReadonlyMap<string, Assignor>;
  private readonly newMemberId: () => string;
  private groupEpoch = 0;
  private assignmentEpoch = 0;
  private assignorName: string;
  private readonly members = new Map<string, ConsumerMember>();
  /** Instance id → member id of the static member holding it. */
  private readonly staticMembers = new Map<string, string>();
  private targets = new Map<string, TopicPartitions>();
  /** Topic id → partition → member holding it (assigned or pending revocation). */
  private readonly holders = new Map<string, Map<number, string>>();
  /** The subscribed topics' metadata the current target was computed from. */
  private metadata: SubscribedTopics = new Map();
  private subscribedNames: ReadonlySet<string> = new Set();
  private readonly regexes = new TopicRegexes();
  private dirty = false;

  constructor(groupId: string, config: GroupConfig, assignors: ReadonlyMap<string, Assignor>, newMemberId: () => string) {
    if (assignors.size === 0) throw new Error('a consumer group needs at least one assignor');
    this.groupId = groupId;
    this.config = config;
    this.assignors = assignors;
    this.newMemberId = newMemberId;
    this.assignorName = this.defaultAssignor();
  }

  heartbeat(call: ConsumerHeartbeatCall, now: number, topics: TopicIndex): HeartbeatResult {
    try {
      this.validate(call);
      return call.memberEpoch < 0 ? this.leave(call, topics) : this.memberHeartbeat(call, now, topics);
    } catch (err) {
      if (err instanceof KafkaError) return { reply: errorReply(err), records: [] };
      throw err;
    }
  }

  tick(now: number, topics: TopicIndex): { records: GroupRecord[]; rebalanced: string | null } {
    const reasons: string[] = [];
    const expired: ConsumerMember[] = [];
    for (const member of this.members.values()) {
      if (member.sessionDeadline <= now) {
        reasons.push(`member ${member.memberId} session expired`);
      } else if (member.revocationDeadline !== null && member.revocationDeadline <= now) {
        reasons.push(`member ${member.memberId} did not revoke its partitions within ${member.rebalanceTimeoutMs} ms`);
      } else {
        continue;
      }
      expired.push(member);
    }
    if (expired.length === 0) return { records: [], rebalanced: null };
    for (const member of expired) this.remove(member);
    this.bump(topics);
    const more = reasons.length > 1 ? ` (and ${reasons.length - 1} more)` : '';
    return { records: this.flush(), rebalanced: reasons[0]! + more };
  }

  nextDeadline(): number | null {
    let next: number | null = null;
    for (const m of this.members.values()) {
      const deadline = m.revocationDeadline === null ? m.sessionDeadline : Math.min(m.sessionDeadline, m.revocationDeadline);
      if (next === null || deadline < next) next = deadline;
    }
    return next;
  }

  topicsChanged(_now: number, topics: TopicIndex): GroupRecord[] {
    const resolved = resolveSubscriptions(this.members.values(), topics, this.regexes);
    this.subscribedNames = resolved.names;
    if (sameMetadata(resolved.metadata, this.metadata)) return [];
    this.bump(topics, resolved);
    return this.flush();
  }

  describe(topics: TopicIndex): ConsumerDescribeReply['groups'][number] {
    // A topic deleted since the target was computed is still named from the metadata it used.
    const known = new Map([...this.metadata.values()].map((info) => [info.id, info.name]));
    const nameOf = (topicId: string): string => topics.byId.get(topicId)?.name ?? known.get(topicId) ?? '';
    const named = (partitions: TopicPartitions): ConsumerDescribedMember['assignment'] =>
      [...partitions].map(([topicId, list]) => ({ topicId, topicName: nameOf(topicId), partitions: [...list] }))
        .sort((a, b) => (a.topicName < b.topicName ? -1 : a.topicName > b.topicName ? 1 : a.topicId < b.topicId ? -1 : 1));
    return {
      groupId: this.groupId,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      state: this.state(),
      groupEpoch: this.groupEpoch,
      assignmentEpoch: this.assignmentEpoch,
      assignorName: this.assignorName,
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: named(m.assigned),
        targetAssignment: named(this.targets.get(m.memberId) ?? EMPTY_PARTITIONS),
      })),
    };
  }

  checkMemberEpoch(memberId: string, memberEpoch: number): number {
    const member = this.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    return member.memberEpoch === memberEpoch ? ErrorCode.NONE : ErrorCode.STALE_MEMBER_EPOCH;
  }

  memberCount(): number {
    return this.members.size;
  }

  state(): GroupStateName {
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch > this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) {
      if (m.state !== MemberState.stable || m.memberEpoch !== this.assignmentEpoch) return 'Reconciling';
    }
    return 'Stable';
  }

  subscribedTopics(): ReadonlySet<string> {
    return this.subscribedNames;
  }

  replay(parsed: ConsumerGroupValue | null, now: number): void {
    this.members.clear();
    this.staticMembers.clear();
    this.holders.clear();
    this.targets = new Map();
    this.dirty = false;
    this.groupEpoch = parsed?.groupEpoch ?? 0;
    this.assignmentEpoch = parsed?.assignmentEpoch ?? 0;
    this.metadata = new Map(parsed?.subscribedTopics.map((t) => [t.name, t]));
    const names = new Set(this.metadata.keys());
    for (const { assigned, pendingRevocation, target, ...fields } of parsed?.members ?? []) {
      const member: ConsumerMember = {
        ...fields,
        assigned: fromPartitionsValue(assigned),
        pendingRevocation: fromPartitionsValue(pendingRevocation),
        sessionDeadline: now + this.config.consumerSessionTimeoutMs,
        revocationDeadline: fields.state === MemberState.unrevokedPartitions ? now + fields.rebalanceTimeoutMs : null,
        sentAssignment: null,
      };
      this.members.set(member.memberId, member);
      if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
      this.targets.set(member.memberId, fromPartitionsValue(target));
      this.hold(member);
      for (const name of member.subscribedTopicNames) names.add(name);
    }
    this.subscribedNames = names;
    // Not persisted (Kafka's records have no place for it): the members' votes pick it again.
    this.assignorName = this.pickAssignor();
  }

  // ---- heartbeat steps ----

  /** Request checks that do not depend on the group (Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid). */
  private validate(call: ConsumerHeartbeatCall): void {
    if (call.groupId.trim() === '') throw invalid('GroupId can\'t be empty.');
    if (blank(call.instanceId)) throw invalid('InstanceId can\'t be empty.');
    if (blank(call.rackId)) throw invalid('RackId can\'t be empty.');
    if (call.rebalanceTimeoutMs < -1) throw invalid('RebalanceTimeoutMs is invalid.');
    if (call.memberEpoch === 0) {
      if (call.rebalanceTimeoutMs === -1) throw invalid('RebalanceTimeoutMs must be provided in first request.');
      if (call.ownedPartitions === null || call.ownedPartitions.some((t) => t.partitions.length > 0)) {
        throw invalid('TopicPartitions must be empty when (re-)joining.');
      }
      const names = call.subscribedTopicNames?.length ?? 0;
      if (names === 0 && (call.subscribedTopicRegex ?? '') === '') {
        throw invalid('SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
      }
    } else if (call.memberEpoch > 0 || call.memberEpoch === LEAVE_EPOCH) {
      if (call.memberId.trim() === '') throw invalid('MemberId can\'t be empty.');
    } else if (call.memberEpoch === STATIC_LEFT_EPOCH) {
      if (call.memberId.trim() === '') throw invalid('MemberId can\'t be empty.');
      if (call.instanceId === null) throw invalid('InstanceId can\'t be null.');
    } else {
      throw invalid('MemberEpoch is invalid.');
    }
    if (call.subscribedTopicNames !== null && call.subscribedTopicNames.length > MAX_SUBSCRIBED_TOPIC_NAMES) {
      throw invalid(`SubscribedTopicNames has more than ${MAX_SUBSCRIBED_TOPIC_NAMES} names.`);
    }
    validateRegex(call.subscribedTopicRegex);
    if (call.serverAssignor !== null && !this.assignors.has(call.serverAssignor)) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${call.serverAssignor} is not supported. `
        + `Supported assignors: ${[...this.assignors.keys()].join(', ')}.`);
    }
  }

  private memberHeartbeat(call: ConsumerHeartbeatCall, now: number, topics: TopicIndex): HeartbeatResult {
    const admission = this.admit(call);
    let member = admission.existing;
    let membershipChanged = false;
    if (admission.replaced !== undefined) {
      member = this.replaceStatic(admission.replaced, admission.memberId);
    } else if (member === undefined) {
      member = this.create(admission.memberId, call);
      membershipChanged = true;
    }
    const assignorBefore = member.serverAssignor;
    const subscriptionChanged = this.update(member, call);
    const assignorChanged = member.serverAssignor !== assignorBefore && this.pickAssignor() !== this.assignorName;
    if (membershipChanged || subscriptionChanged || assignorChanged) this.bump(topics);
    this.reconcileMember(member, call.ownedPartitions, now);
    member.sessionDeadline = now + this.config.consumerSessionTimeoutMs;
    const full = call.memberEpoch === 0 || (call.rebalanceTimeoutMs !== -1
      && (call.subscribedTopicNames !== null || call.subscribedTopicRegex !== null) && call.ownedPartitions !== null);
    let assignment: ConsumerHeartbeatReply['assignment'] = null;
    if (full || member.sentAssignment !== member.assigned) {
      assignment = toPartitionsValue(member.assigned);
      member.sentAssignment = member.assigned;
    }
    return {
      reply: {
        kind: 'consumerHeartbeat', errorCode: ErrorCode.NONE, errorMessage: null, memberId: member.memberId,
        memberEpoch: member.memberEpoch, heartbeatIntervalMs: this.config.consumerHeartbeatIntervalMs, assignment,
      },
      records: this.flush(),
    };
  }

  /** Finds (or names) the member a join or heartbeat is for; throws the call's error, changing nothing. */
  private admit(call: ConsumerHeartbeatCall): Admission {
    const joining = call.memberEpoch === 0;
    if (call.instanceId !== null) {
      const holder = this.staticHolder(call.instanceId);
      if (!joining) {
        if (holder === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${call.instanceId} is unknown.`);
        if (holder.memberId !== call.memberId) {
          throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${call.memberId} with instance id ${call.instanceId} was fenced by member ${holder.memberId}.`);
        }
        this.checkEpoch(holder, call);
        return { memberId: holder.memberId, existing: holder, replaced: undefined };
      }
      if (holder !== undefined && holder.memberEpoch === STATIC_LEFT_EPOCH) {
        const memberId = call.memberId === '' ? this.newMemberId() : call.memberId;
        if (memberId !== holder.memberId && this.members.has(memberId)) throw invalid(`MemberId ${memberId} belongs to another member.`);
        return { memberId, existing: undefined, replaced: holder };
      }
      if (holder !== undefined && holder.memberId !== call.memberId) {
        throw new KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID, `Static member ${call.memberId} with instance id ${call.instanceId} `
          + `cannot join the group because the instance id is owned by member ${holder.memberId}.`);
      }
    }
    const memberId = call.memberId === '' ? this.newMemberId() : call.memberId;
    const existing = this.members.get(memberId);
    if (existing === undefined) {
      if (!joining) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${this.groupId}.`);
      if (this.members.size >= this.config.maxGroupSize) {
        throw new KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.config.maxGroupSize} members.`);
      }
    } else {
      this.checkEpoch(existing, call);
    }
    return { memberId, existing, replaced: undefined };
  }

  /** Epoch 0 always rejoins (KAFKA-19233); one epoch behind passes only if the response was lost. */
  private checkEpoch(member: ConsumerMember, call: ConsumerHeartbeatCall): void {
    const epoch = call.memberEpoch;
    if (epoch === 0 || epoch === member.memberEpoch) return;
    if (epoch > member.memberEpoch) {
      throw new KafkaError(ErrorCode.FENCED_MEMBER_EPOCH, `The consumer group member has a greater member epoch (${epoch}) than the one `
        + `known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`);
    }
    if (epoch !== member.previousMemberEpoch || !ownsOnlyAssigned(call.ownedPartitions, member.assigned)) {
      throw new KafkaError(ErrorCode.FENCED_MEMBER_EPOCH, `The consumer group member has a smaller member epoch (${epoch}) than the one `
        + `known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`);
    }
  }

  private staticHolder(instanceId: string): ConsumerMember | undefined {
    const memberId = this.staticMembers.get(instanceId);
    return memberId === undefined ? undefined : this.members.get(memberId);
  }

  private create(memberId: string, call: ConsumerHeartbeatCall): ConsumerMember {
    const member: ConsumerMember = {
      memberId, instanceId: null, rackId: null, clientId: call.clientId, clientHost: call.clientHost,
      rebalanceTimeoutMs: call.rebalanceTimeoutMs, serverAssignor: null, subscribedTopicNames: [], subscribedTopicRegex: null,
      memberEpoch: 0, previousMemberEpoch: -1, state: MemberState.stable, assigned: EMPTY_PARTITIONS,
      pendingRevocation: EMPTY_PARTITIONS, sessionDeadline: 0, revocationDeadline: null, sentAssignment: null,
    };
    this.members.set(memberId, member);
    this.dirty = true;
    return member;
  }

  /**
   * A static member comes back under a new member id: it takes over the old member's assignment
   * and target without a rebalance (unless its subscription changed, which update() then sees).
   */
  private replaceStatic(old: ConsumerMember, memberId: string): ConsumerMember {
    const target = this.targets.get(old.memberId) ?? EMPTY_PARTITIONS;
    this.remove(old);
    const member: ConsumerMember = {
      ...old, memberId, memberEpoch: 0, previousMemberEpoch: -1, state: MemberState.stable,
      pendingRevocation: EMPTY_PARTITIONS, revocationDeadline: null, sentAssignment: null,
    };
    this.members.set(memberId, member);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, memberId);
    this.targets.set(memberId, target);
    this.hold(member);
    return member;
  }

  /** Applies the call's fields ("null/-1 = unchanged"); returns whether the subscription changed. */
  private update(member: ConsumerMember, call: ConsumerHeartbeatCall): boolean {
    if (call.instanceId !== null && call.instanceId !== member.instanceId) {
      if (member.instanceId !== null && this.staticMembers.get(member.instanceId) === member.memberId) this.staticMembers.delete(member.instanceId);
      member.instanceId = call.instanceId;
      this.staticMembers.set(call.instanceId, member.memberId);
      this.dirty = true;
    }
    if (call.rackId !== null && call.rackId !== member.rackId) {
      member.rackId = call.rackId;
      this.dirty = true;
    }
    if (call.rebalanceTimeoutMs !== -1 && call.rebalanceTimeoutMs !== member.rebalanceTimeoutMs) {
      member.rebalanceTimeoutMs = call.rebalanceTimeoutMs;
      this.dirty = true;
    }
    if (call.serverAssignor !== null && call.serverAssignor !== member.serverAssignor) {
      member.serverAssignor = call.serverAssignor;
      this.dirty = true;
    }
    if (call.clientId !== member.clientId || call.clientHost !== member.clientHost) {
      member.clientId = call.clientId;
      member.clientHost = call.clientHost;
      this.dirty = true;
    }
    let changed = false;
    if (call.subscribedTopicNames !== null) {
      const names = [...new Set(call.subscribedTopicNames)].sort();
      if (!sameStrings(names, member.subscribedTopicNames)) {
        member.subscribedTopicNames = names;
        changed = true;
      }
    }
    if (call.subscribedTopicRegex !== null) {
      const regex = call.subscribedTopicRegex === '' ? null : call.subscribedTopicRegex;
      if (regex !== member.subscribedTopicRegex) {
        member.subscribedTopicRegex = regex;
        changed = true;
      }
    }
    if (changed) this.dirty = true;
    return changed;
  }

  /** Moves the member one step towards its target and keeps `holders` in step. */
  private reconcileMember(member: ConsumerMember, owned: OwnedPartitions, now: number): void {
    const target = this.targets.get(member.memberId) ?? EMPTY_PARTITIONS;
    const next = reconcile(member, this.assignmentEpoch, target, this.holderOf, owned);
    if (next === null) return;
    this.release(member);
    if (next.memberEpoch !== member.memberEpoch) {
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = next.memberEpoch;
    }
    member.state = next.state;
    // The same object for the same partitions: replies send an assignment only when it changed.
    if (!samePartitions(member.assigned, next.assigned)) member.assigned = next.assigned;
    member.pendingRevocation = next.pendingRevocation;
    member.revocationDeadline = next.state === MemberState.unrevokedPartitions ? now + member.rebalanceTimeoutMs : null;
    this.hold(member);
    this.dirty = true;
  }

  // ---- leaving ----

  private leave(call: ConsumerHeartbeatCall, topics: TopicIndex): HeartbeatResult {
    const member = this.leaver(call);
    if (call.memberEpoch === STATIC_LEFT_EPOCH) {
      this.leaveTemporarily(member);
    } else {
      this.remove(member);
      this.bump(topics);
    }
    return {
      reply: {
        kind: 'consumerHeartbeat', errorCode: ErrorCode.NONE, errorMessage: null, memberId: call.memberId,
        memberEpoch: call.memberEpoch, heartbeatIntervalMs: this.config.consumerHeartbeatIntervalMs, assignment: null,
      },
      records: this.flush(),
    };
  }

  private leaver(call: ConsumerHeartbeatCall): ConsumerMember {
    if (call.instanceId === null) {
      const member = this.members.get(call.memberId);
      if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${call.memberId} is not a member of group ${this.groupId}.`);
      return member;
    }
    const holder = this.staticHolder(call.instanceId);
    if (holder === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${call.instanceId} is unknown.`);
    if (holder.memberId !== call.memberId) {
      throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${call.memberId} with instance id ${call.instanceId} was fenced by member ${holder.memberId}.`);
    }
    return holder;
  }

  /**
   * Epoch -2: the static member keeps its assignment reserved for its instance id until its
   * session expires; what it was revoking is free now, since the departed client holds nothing.
   */
  private leaveTemporarily(member: ConsumerMember): void {
    if (member.memberEpoch === STATIC_LEFT_EPOCH) return;
    this.release(member);
    member.previousMemberEpoch = member.memberEpoch;
    member.memberEpoch = STATIC_LEFT_EPOCH;
    member.state = MemberState.stable;
    member.pendingRevocation = EMPTY_PARTITIONS;
    member.revocationDeadline = null;
    this.hold(member);
    this.dirty = true;
  }

  private remove(member: ConsumerMember): void {
    this.release(member);
    this.members.delete(member.memberId);
    this.targets.delete(member.memberId);
    if (member.instanceId !== null && this.staticMembers.get(member.instanceId) === member.memberId) this.staticMembers.delete(member.instanceId);
    this.dirty = true;
  }

  // ---- target assignment ----

  /** A new group epoch: resolve subscriptions again and recompute the target for it. */
  private bump(topics: TopicIndex, resolved: ResolvedSubscriptions = resolveSubscriptions(this.members.values(), topics, this.regexes)): void {
    this.groupEpoch++;
    this.metadata = resolved.metadata;
    this.subscribedNames = resolved.names;
    this.assignorName = this.pickAssignor();
    const input: AssignorMember[] = [];
    for (const m of this.members.values()) {
      input.push({
        memberId: m.memberId, rackId: m.rackId, subscribedTopicIds: resolved.topicIds.get(m.memberId)!,
        owned: this.targets.get(m.memberId) ?? EMPTY_PARTITIONS,
      });
    }
    this.targets = new Map(this.assignors.get(this.assignorName)!.assign(input, topics));
    this.assignmentEpoch = this.groupEpoch;
    this.dirty = true;
  }

  /** The assignor most members ask for; ties and no preference go by config.consumerAssignors order. */
  private pickAssignor(): string {
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      if (m.serverAssignor !== null && this.assignors.has(m.serverAssignor)) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    }
    let best = this.defaultAssignor();
    let bestVotes = votes.get(best) ?? 0;
    const candidates = [...this.config.consumerAssignors, ...[...this.assignors.keys()].sort()];
    for (const name of candidates) {
      const n = votes.get(name) ?? 0;
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  private defaultAssignor(): string {
    return this.config.consumerAssignors.find((name) => this.assignors.has(name)) ?? this.assignors.keys().next().value!;
  }

  private readonly holderOf = (topicId: string, partition: number): string | undefined => this.holders.get(topicId)?.get(partition);

  private hold(member: ConsumerMember): void {
    for (const partitions of [member.assigned, member.pendingRevocation]) {
      for (const [topicId, list] of partitions) {
        let byPartition = this.holders.get(topicId);
        if (byPartition === undefined) {
          byPartition = new Map();
          this.holders.set(topicId, byPartition);
        }
        for (const p of list) byPartition.set(p, member.memberId);
      }
    }
  }

  private release(member: ConsumerMember): void {
    for (const partitions of [member.assigned, member.pendingRevocation]) {
      for (const [topicId, list] of partitions) {
        const byPartition = this.holders.get(topicId);
        if (byPartition === undefined) continue;
        for (const p of list) if (byPartition.get(p) === member.memberId) byPartition.delete(p);
        if (byPartition.size === 0) this.holders.delete(topicId);
      }
    }
  }

  // ---- persistence ----

  private flush(): GroupRecord[] {
    if (!this.dirty) return [];
    this.dirty = false;
    return [{ kind: 'consumerGroup', groupId: this.groupId, value: this.toValue() }];
  }

  private toValue(): ConsumerGroupValue {
    return {
      groupEpoch: this.groupEpoch,
      assignmentEpoch: this.assignmentEpoch,
      subscribedTopics: [...this.metadata.values()].map((t) => ({ name: t.name, id: t.id, partitions: t.partitions })),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs, serverAssignor: m.serverAssignor, subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex, memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: m.state,
        assigned: toPartitionsValue(m.assigned), pendingRevocation: toPartitionsValue(m.pendingRevocation),
        target: toPartitionsValue(this.targets.get(m.memberId) ?? EMPTY_PARTITIONS),
      })),
    };
  }
}
