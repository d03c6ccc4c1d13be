// Classic group membership with incremental cooperative rebalancing ('cooperative-sticky'):
// JoinGroup (subscription v3 carrying the partitions owned and their generation), SyncGroup (the
// leader computes the assignment with assignCooperative), then Heartbeat until the coordinator
// announces a rebalance. Runs on the consumer's thread as one loop.
// Invariants: a rebalance keeps what the member owns; only partitions the new assignment no longer
// holds are revoked (onRevoked awaited), and revoking anything triggers a follow-up rejoin so the
// group can hand them on; ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID lose everything (onLost) first;
// every request is bounded (join and sync by the rebalance timeout plus a margin); a joined
// generation is synced even when closing, so the group is not left in CompletingRebalance.
import { HeartbeatApi } from '../../protocol/apis/heartbeat.js';
import { JoinGroupApi } from '../../protocol/apis/join_group.js';
import type { JoinGroupResponse } from '../../protocol/apis/join_group.js';
import { LeaveGroupApi } from '../../protocol/apis/leave_group.js';
import { SyncGroupApi } from '../../protocol/apis/sync_group.js';
import type { SyncGroupRequestAssignment } from '../../protocol/apis/sync_group.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../protocol/consumer_protocol.js';
import { ErrorCode } from '../../protocol/errors.js';
import { brokerError } from '../broker_errors.js';
import { COOPERATIVE_STICKY, assignCooperative } from './cooperative_assignor.js';
import type { CooperativeMember } from './cooperative_assignor.js';
import { MembershipLoop, errorCodeOf, isTransient, retryDelay } from './membership.js';
import type { Membership } from './membership.js';
import type { CommitIdentity } from './offsets.js';
import { byTopic, keyOf, minus } from './topic_partitions.js';
import type { TopicPartition } from './types.js';

const PROTOCOL_TYPE = 'consumer';
/** Beyond the rebalance timeout, for the answer to travel. */
const REBALANCE_MARGIN_MS = 5000;
const LEAVE_TIMEOUT_MS = 5000;

function grouped(tps: readonly TopicPartition[]): { topic: string; partitions: number[] }[] {
  return [...byTopic(tps)].map(([topic, ps]) => ({ topic, partitions: ps.map((p) => p.partition) }));
}

export class ClassicMembership extends MembershipLoop implements Membership {
  readonly protocol = 'classic';
  private memberId = '';
  private generation = -1;
  private needsRejoin = true;

  identity(): CommitIdentity {
    return { memberId: this.memberId, generationIdOrMemberEpoch: this.generation, groupInstanceId: this.config.instanceId };
  }

  async close(): Promise<void> {
    await this.stopLoop();
    await this.revokeAll();
    // Static members keep their place across restarts: they do not leave (as Kafka's clients).
    if (this.memberId !== '' && this.config.instanceId === null) await this.leave().catch(() => undefined);
  }

  protected async run(): Promise<void> {
    let failures = 0;
    while (!this.closing) {
      try {
        if (this.needsRejoin) {
          await this.joinAndSync();
        } else {
          await this.waker.wait(this.config.heartbeatIntervalMs);
          if (this.closing) break;
          await this.heartbeat();
        }
        failures = 0;
      } catch (err) {
        const delay = await this.onError(err, failures++);
        if (!this.closing && delay > 0) await this.waker.wait(delay);
      }
    }
  }

  private async onError(err: unknown, failures: number): Promise<number> {
    const code = errorCodeOf(err);
    this.needsRejoin = true;
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) return 0;
    if (code === ErrorCode.ILLEGAL_GENERATION || code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.FENCED_INSTANCE_ID) {
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
      this.generation = -1;
      const lost = this.owned();
      this.held.clear();
      if (lost.length > 0) await this.host.lose(lost).catch((e: unknown) => this.host.fail(e as Error));
      if (code !== ErrorCode.FENCED_INSTANCE_ID) return 0;
    }
    if (isTransient(err)) {
      if (code !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) this.cluster.forgetCoordinator(this.config.groupId);
      return retryDelay(failures);
    }
    this.host.fail(err instanceof Error ? err : new Error(String(err)));
    return retryDelay(failures);
  }

  private async heartbeat(): Promise<void> {
    const conn = await this.cluster.coordinator(this.config.groupId);
    const res = await conn.request(HeartbeatApi, {
      groupId: this.config.groupId, generationId: this.generation, memberId: this.memberId, groupInstanceId: this.config.instanceId,
    });
    if (res.errorCode !== ErrorCode.NONE) throw brokerError(res.errorCode, `Heartbeat of group ${this.config.groupId}`, null);
  }

  private async join(): Promise<JoinGroupResponse> {
    const conn = await this.cluster.coordinator(this.config.groupId);
    const metadata = encodeSubscription({
      topics: [...this.config.topics], userData: null, ownedPartitions: grouped(this.owned()), generationId: this.generation, rackId: null,
    });
    return conn.request(JoinGroupApi, {
      groupId: this.config.groupId, sessionTimeoutMs: this.config.sessionTimeoutMs, rebalanceTimeoutMs: this.config.rebalanceTimeoutMs,
      memberId: this.memberId, groupInstanceId: this.config.instanceId, protocolType: PROTOCOL_TYPE,
      protocols: [{ name: COOPERATIVE_STICKY, metadata }], reason: null,
    }, undefined, { timeoutMs: this.config.rebalanceTimeoutMs + REBALANCE_MARGIN_MS });
  }

  private async joinAndSync(): Promise<void> {
    const joined = await this.join();
    if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberId = joined.memberId;
      return;
    }
    if (joined.errorCode !== ErrorCode.NONE) throw brokerError(joined.errorCode, `JoinGroup of group ${this.config.groupId}`, null);
    this.memberId = joined.memberId;
    this.generation = joined.generationId;
    // Even when closing, a member that has joined a generation syncs it: until the leader's
    // SyncGroup the group sits in CompletingRebalance, where the coordinator refuses commits with
    // REBALANCE_IN_PROGRESS, so a closing leader that skipped it would lose the commits made in
    // onRevoked at close (a follower's would race the leader's). apply() assigns nothing new
    // while closing, so the generation is completed without starting to fetch.
    const assignments = joined.leader === joined.memberId && !joined.skipAssignment ? await this.lead(joined) : [];
    const conn = await this.cluster.coordinator(this.config.groupId);
    const synced = await conn.request(SyncGroupApi, {
      groupId: this.config.groupId, generationId: this.generation, memberId: this.memberId, groupInstanceId: this.config.instanceId,
      protocolType: PROTOCOL_TYPE, protocolName: COOPERATIVE_STICKY, assignments,
    }, undefined, { timeoutMs: this.config.rebalanceTimeoutMs + REBALANCE_MARGIN_MS });
    if (synced.errorCode !== ErrorCode.NONE) throw brokerError(synced.errorCode, `SyncGroup of group ${this.config.groupId}`, null);
    // The generation is complete: commits waiting out REBALANCE_IN_PROGRESS can go now.
    this.settled.notify();
    const assigned: TopicPartition[] = [];
    if (synced.assignment.length > 0) {
      for (const t of decodeAssignment(synced.assignment).assignedPartitions) {
        for (const partition of t.partitions) assigned.push({ topic: t.topic, partition });
      }
    }
    await this.apply(assigned);
  }

  /** Revoke what the assignment drops, assign what it adds; anything revoked calls for a follow-up rebalance. */
  private async apply(assigned: readonly TopicPartition[]): Promise<void> {
    const owned = this.owned();
    const removed = minus(owned, assigned);
    const added = minus(assigned, owned);
    this.needsRejoin = removed.length > 0;
    if (removed.length > 0) {
      await this.host.revoke(removed);
      for (const tp of removed) this.held.delete(keyOf(tp));
    }
    if (added.length > 0 && !this.closing) {
      await this.host.assign(added);
      for (const tp of added) this.held.set(keyOf(tp), tp);
    }
  }

  /** The leader's share of a rebalance: every member's assignment. */
  private async lead(joined: JoinGroupResponse): Promise<SyncGroupRequestAssignment[]> {
    const members: CooperativeMember[] = joined.members.map((m) => {
      const sub = decodeSubscription(m.metadata);
      const owned = sub.ownedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
      return { memberId: m.memberId, topics: sub.topics, owned, generation: sub.generationId };
    });
    const counts = new Map<string, number>();
    for (const topic of new Set(members.flatMap((m) => m.topics))) {
      const meta = await this.cluster.topic(topic).catch(() => null);
      if (meta !== null) counts.set(topic, meta.partitions.length);
    }
    const plan = assignCooperative(members, counts);
    return members.map((m) => ({
      memberId: m.memberId,
      assignment: encodeAssignment({ assignedPartitions: grouped(plan.get(m.memberId) ?? []), userData: null }),
    }));
  }

  private async leave(): Promise<void> {
    const conn = await this.cluster.coordinator(this.config.groupId);
    await conn.request(LeaveGroupApi, {
      groupId: this.config.groupId, memberId: this.memberId,
      members: [{ memberId: this.memberId, groupInstanceId: this.config.instanceId, reason: 'the consumer is closing' }],
    }, undefined, { timeoutMs: LEAVE_TIMEOUT_MS });
  }
}
