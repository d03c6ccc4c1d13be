// KIP-848 group membership (ConsumerGroupHeartbeat): joins with epoch 0, heartbeats at the
// interval the coordinator returns, and reconciles the target assignment it hands out —
// partitions taken away are revoked (fetching stops, onRevoked awaited) and acknowledged by the
// next heartbeat's owned set; partitions added are assigned (committed offsets, onAssigned, then
// fetching). Runs on the consumer's thread: one heartbeat loop plus one reconciliation chain.
// Invariants: heartbeats continue while a slow listener reconciles, but changes to the owned set
// happen one at a time on the chain; the owned set reported is always one the member really holds
// (a partition leaves it only after onRevoked returned, joins it only after onAssigned); fenced or
// unknown → everything owned is lost (onLost) before rejoining with epoch 0; every wait is bounded.
import { randomUUID } from 'node:crypto';
import { ConsumerGroupHeartbeatApi } from '../../protocol/apis/consumer_group_heartbeat.js';
import type { ConsumerGroupHeartbeatTopicPartitions } from '../../protocol/apis/consumer_group_heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { brokerError } from '../broker_errors.js';
import { MembershipLoop, errorCodeOf, isTransient, retryDelay } from './membership.js';
import type { Membership } from './membership.js';
import type { CommitIdentity } from './offsets.js';
import { keyOf, minus } from './topic_partitions.js';
import type { TopicPartition } from './types.js';

const LEAVE_EPOCH = -1;
const STATIC_LEAVE_EPOCH = -2;
/** Until the coordinator says otherwise. */
const DEFAULT_INTERVAL_MS = 1000;
const LEAVE_TIMEOUT_MS = 5000;

export class Kip848Membership extends MembershipLoop implements Membership {
  readonly protocol = 'consumer';
  private memberId = '';
  private epoch = 0;
  private intervalMs = DEFAULT_INTERVAL_MS;
  /** The coordinator's latest target, by topic id; null until one arrives. */
  private target: ConsumerGroupHeartbeatTopicPartitions[] | null = null;
  /** Send every field: on join and after a heartbeat whose answer may have been lost. */
  private sendFull = true;
  private ownedSent: string | null = null;
  private chain: Promise<void> = Promise.resolve();
  private reconciling = false;

  identity(): CommitIdentity {
    return { memberId: this.memberId, generationIdOrMemberEpoch: this.epoch, groupInstanceId: this.config.instanceId };
  }

  async close(): Promise<void> {
    await this.stopLoop();
    await this.chain;
    await this.revokeAll();
    if (this.epoch > 0) await this.leave().catch(() => undefined);
  }

  protected async run(): Promise<void> {
    let failures = 0;
    while (!this.closing) {
      let delay: number;
      try {
        delay = await this.beat();
        failures = 0;
      } catch (err) {
        delay = await this.onError(err, failures++);
      }
      if (!this.closing && delay > 0) await this.waker.wait(delay);
    }
  }

  /** One heartbeat; returns how long to wait before the next. */
  private async beat(): Promise<number> {
    const conn = await this.cluster.coordinator(this.config.groupId);
    const version = conn.versionFor(ConsumerGroupHeartbeatApi);
    // v1 (KIP-1082): the member names itself.
    if (this.memberId === '' && version >= 1) this.memberId = randomUUID();
    const full = this.sendFull || this.epoch === 0;
    const owned = this.owned();
    const ownedKey = owned.map(keyOf).join(',');
    const res = await conn.request(ConsumerGroupHeartbeatApi, {
      groupId: this.config.groupId, memberId: this.memberId, memberEpoch: this.epoch,
      instanceId: this.config.instanceId, rackId: null,
      rebalanceTimeoutMs: full ? this.config.rebalanceTimeoutMs : -1,
      subscribedTopicNames: full ? [...this.config.topics] : null, subscribedTopicRegex: null,
      serverAssignor: full ? this.config.serverAssignor : null,
      topicPartitions: full || ownedKey !== this.ownedSent ? await this.toIds(owned) : null,
    }, version);
    if (res.errorCode !== ErrorCode.NONE) throw brokerError(res.errorCode, `ConsumerGroupHeartbeat of group ${this.config.groupId}`, res.errorMessage);
    this.sendFull = false;
    this.ownedSent = ownedKey;
    if (res.memberId !== null && res.memberId !== '') this.memberId = res.memberId;
    this.epoch = res.memberEpoch;
    if (res.heartbeatIntervalMs > 0) this.intervalMs = res.heartbeatIntervalMs;
    if (res.assignment !== null) this.target = res.assignment.topicPartitions;
    if (!this.closing && !this.reconciling) this.reconcileInBackground();
    return this.intervalMs;
  }

  private async onError(err: unknown, failures: number): Promise<number> {
    const code = errorCodeOf(err);
    this.sendFull = true;
    if (code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) {
      await this.loseAll();
      return 0;
    }
    if (isTransient(err)) {
      if (code !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) this.cluster.forgetCoordinator(this.config.groupId);
      return retryDelay(failures);
    }
    this.host.fail(err instanceof Error ? err : new Error(String(err)));
    return retryDelay(failures);
  }

  /** Fenced: the partitions are already someone else's; rejoin from scratch (same member id on v1). */
  private async loseAll(): Promise<void> {
    this.target = null;
    await this.chain;
    const lost = this.owned();
    this.held.clear();
    this.epoch = 0;
    this.ownedSent = null;
    if (lost.length > 0) await this.host.lose(lost).catch((err: unknown) => this.host.fail(err as Error));
  }

  private reconcileInBackground(): void {
    this.reconciling = true;
    this.chain = this.chain.then(() => this.reconcile()).catch((err: unknown) => {
      this.host.fail(err instanceof Error ? err : new Error(String(err)));
    }).finally(() => {
      this.reconciling = false;
    });
  }

  /** Moves the owned set to the target; wakes the loop to acknowledge as soon as anything changed. */
  private async reconcile(): Promise<void> {
    const targetIds = this.target;
    if (targetIds === null) return;
    const names = await this.idsToNames();
    const target: TopicPartition[] = [];
    for (const t of targetIds) {
      const topic = names.get(t.topicId);
      if (topic === undefined) continue;
      for (const partition of t.partitions) target.push({ topic, partition });
    }
    const owned = this.owned();
    const removed = minus(owned, target);
    const added = minus(target, owned);
    if (removed.length > 0) {
      await this.host.revoke(removed);
      for (const tp of removed) this.held.delete(keyOf(tp));
    }
    if (added.length > 0 && !this.closing && this.target === targetIds) {
      await this.host.assign(added);
      for (const tp of added) this.held.set(keyOf(tp), tp);
    }
    if (removed.length > 0 || added.length > 0) this.waker.notify();
  }

  /** Subscribed topics' ids → names (topics the cluster does not know are left out). */
  private async idsToNames(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const name of this.config.topics) {
      const meta = await this.cluster.topic(name).catch(() => null);
      if (meta !== null) out.set(meta.topicId, name);
    }
    return out;
  }

  private async toIds(owned: readonly TopicPartition[]): Promise<ConsumerGroupHeartbeatTopicPartitions[]> {
    const byTopic = new Map<string, number[]>();
    for (const tp of owned) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
    const out: ConsumerGroupHeartbeatTopicPartitions[] = [];
    for (const [topic, partitions] of byTopic) out.push({ topicId: (await this.cluster.topic(topic)).topicId, partitions });
    return out;
  }

  private async leave(): Promise<void> {
    const conn = await this.cluster.coordinator(this.config.groupId);
    await conn.request(ConsumerGroupHeartbeatApi, {
      groupId: this.config.groupId, memberId: this.memberId,
      memberEpoch: this.config.instanceId === null ? LEAVE_EPOCH : STATIC_LEAVE_EPOCH,
      instanceId: this.config.instanceId, rackId: null, rebalanceTimeoutMs: -1, subscribedTopicNames: null,
      subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null,
    }, undefined, { timeoutMs: LEAVE_TIMEOUT_MS });
  }
}
