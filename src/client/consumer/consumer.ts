// Our Kafka consumer (speaks to Sluice and to Apache Kafka): manual assignment or group
// membership — KIP-848 (ConsumerGroupHeartbeat) where the coordinator offers it or is asked for,
// classic cooperative-sticky otherwise — over one Fetcher, with commits and a rebalance listener.
// Runs on the thread that creates it; the membership's loop runs beside the caller's polls.
// Invariants: a partition is fetched only between its onAssigned and its onRevoked/onLost (or
// between assign() calls in manual mode); a failure from the background (listener, fatal group
// error) is handed to the caller by the next poll, once; after close() every call but close rejects;
// onRevoked runs only after any poll() that could still return the revoked partitions' messages
// has returned and its caller's synchronous continuation has run (so it can commit them); a
// commit refused with REBALANCE_IN_PROGRESS is retried for at most commitTimeoutMs.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { Cluster } from '../cluster.js';
import { ClassicMembership } from './classic_membership.js';
import { Fetcher } from './fetcher.js';
import { Kip848Membership } from './kip848_membership.js';
import { errorCodeOf } from './membership.js';
import type { AssignmentHost, Membership, MembershipConfig } from './membership.js';
import { commitOffsets, fetchCommitted } from './offsets.js';
import type { CommitIdentity } from './offsets.js';
import { keyOf, normalized, tpKey } from './topic_partitions.js';
import type {
  AssignedPartition, CommittedPosition, ConsumerOptions, FetchSizeOptions, FetchedBatch, OffsetToCommit, TopicPartition,
} from './types.js';

const CONSUMER_GROUP_HEARTBEAT_KEY = 68;
const NO_GROUP_IDENTITY: CommitIdentity = { memberId: '', generationIdOrMemberEpoch: -1, groupInstanceId: null };
const DEFAULT_COMMIT_TIMEOUT_MS = 30_000;

/** Pause before retry number `attempt` of a commit refused with REBALANCE_IN_PROGRESS: 50 ms doubling to 800 ms. */
function rebalanceRetryDelay(attempt: number): number {
  return 50 * 2 ** Math.min(attempt, 4);
}

export class Consumer {
  private readonly cluster: Cluster;
  private readonly fetcher: Fetcher;
  private membership: Membership | null = null;
  private pendingError: Error | null = null;
  private lastAutoCommit = Date.now();
  private closed = false;
  /** The poll() in progress, if any: revocation waits for it (see pollDelivered). */
  private polling: Promise<FetchedBatch[]> | null = null;
  private readonly host: AssignmentHost = {
    assign: (partitions) => this.onAssign(partitions),
    revoke: (partitions) => this.onRevoke(partitions),
    lose: (partitions) => this.onLose(partitions),
    fail: (err) => {
      this.pendingError = err;
      this.fetcher.changed.notify();
    },
  };

  constructor(private readonly options: ConsumerOptions) {
    this.cluster = new Cluster(options);
    this.fetcher = new Fetcher(this.cluster, {
      maxWaitMs: options.maxWaitMs ?? 500,
      minBytes: options.minBytes ?? 1,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      autoOffsetReset: options.autoOffsetReset ?? 'latest',
    }, options);
  }

  /** 'consumer' (KIP-848), 'classic', or 'none' (assign mode / not joined yet). */
  get protocol(): 'consumer' | 'classic' | 'none' {
    return this.membership?.protocol ?? 'none';
  }

  /** Joins options.groupId for these topics; resolves once membership has started (assignments arrive through the listener and poll). */
  async subscribe(topics: readonly string[]): Promise<void> {
    this.checkOpen();
    const groupId = this.options.groupId;
    if (groupId === undefined) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'subscribe needs options.groupId');
    if (this.membership !== null || this.fetcher.assigned().length > 0) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, 'the consumer is already subscribed or assigned');
    }
    const config: MembershipConfig = {
      groupId, topics: [...new Set(topics)], instanceId: this.options.groupInstanceId ?? null,
      sessionTimeoutMs: this.options.sessionTimeoutMs ?? 45_000,
      rebalanceTimeoutMs: this.options.rebalanceTimeoutMs ?? 60_000,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 3000,
      serverAssignor: this.options.serverAssignor ?? null,
    };
    const useKip848 = await this.prefersKip848(groupId);
    this.membership = useKip848 ? new Kip848Membership(this.cluster, config, this.host) : new ClassicMembership(this.cluster, config, this.host);
    this.membership.start();
  }

  /** Manual assignment without membership; offset per partition optional (else committed offset when groupId is set, else autoOffsetReset). */
  async assign(partitions: readonly (TopicPartition & { offset?: number })[]): Promise<void> {
    this.checkOpen();
    if (this.membership !== null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'a subscribed consumer cannot assign partitions');
    const groupId = this.options.groupId;
    const unknown = partitions.filter((p) => p.offset === undefined);
    const committed = groupId !== undefined && unknown.length > 0 ? await fetchCommitted(this.cluster, groupId, unknown) : new Map<string, CommittedPosition | null>();
    this.fetcher.remove(this.fetcher.assigned());
    for (const p of partitions) {
      this.fetcher.add({ topic: p.topic, partition: p.partition }, p.offset ?? committed.get(keyOf(p))?.offset ?? null);
    }
  }

  /** Long-polls (≤ maxWaitMs) the leaders of assigned, unpaused partitions; [] when nothing arrived. */
  async poll(options: { signal?: AbortSignal } = {}): Promise<FetchedBatch[]> {
    this.checkOpen();
    this.throwPending();
    this.maybeAutoCommit();
    const round = this.fetcher.fetch(options.signal);
    this.polling = round;
    try {
      const batches = await round;
      this.throwPending();
      return batches;
    } finally {
      if (this.polling === round) this.polling = null;
    }
  }

  pause(partitions: readonly TopicPartition[]): void {
    this.fetcher.setPaused(partitions, true);
  }

  resume(partitions: readonly TopicPartition[]): void {
    this.fetcher.setPaused(partitions, false);
  }

  seek(partition: TopicPartition, offset: number): void {
    this.fetcher.seek(partition, offset);
  }

  setFetchSize(size: FetchSizeOptions): void {
    this.fetcher.setFetchSize(size);
  }

  assignment(): TopicPartition[] {
    return normalized(this.fetcher.assigned());
  }

  /** The next offset poll() will return for `partition`; null when not assigned or not yet placed. */
  position(partition: TopicPartition): number | null {
    const found = this.fetcher.positions().find((p) => p.topic === partition.topic && p.partition === partition.partition);
    return found?.offset ?? null;
  }

  /** The group's committed positions (offset + metadata), in the order asked; null where none. */
  async committed(partitions: readonly TopicPartition[]): Promise<(CommittedPosition | null)[]> {
    this.checkOpen();
    const groupId = this.options.groupId;
    if (groupId === undefined) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'committed offsets need options.groupId');
    const found = await fetchCommitted(this.cluster, groupId, partitions);
    return partitions.map((p) => found.get(tpKey(p.topic, p.partition)) ?? null);
  }

  /**
   * OffsetCommit with the group's current generation/epoch; rejects with KafkaError (e.g. on a
   * fenced or unknown member). A refusal with REBALANCE_IN_PROGRESS (the group is between
   * JoinGroup and SyncGroup, as when another member joins or leaves while this one revokes) is
   * retried until the membership completes the rebalance or commitTimeoutMs runs out: the
   * commit is still valid once the generation is synced, and a commit made in onRevoked at close
   * has no later chance.
   */
  async commit(offsets: readonly OffsetToCommit[]): Promise<void> {
    this.checkOpen();
    const groupId = this.options.groupId;
    if (groupId === undefined) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'commit needs options.groupId');
    const deadline = Date.now() + (this.options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS);
    for (let attempt = 0; ; attempt++) {
      const membership = this.membership;
      try {
        // The identity is read on every attempt: the retry must carry the generation just synced.
        await commitOffsets(this.cluster, groupId, membership?.identity() ?? NO_GROUP_IDENTITY, offsets);
        return;
      } catch (err) {
        const left = deadline - Date.now();
        if (membership === null || errorCodeOf(err) !== ErrorCode.REBALANCE_IN_PROGRESS || left <= 0) throw err;
        // Woken early by a completed sync; the backoff alone covers a commit made from inside the
        // membership's own rebalance (onRevoked), which cannot wait for that rebalance to finish.
        await membership.rebalanceSettled(Math.min(left, rebalanceRetryDelay(attempt)));
      }
    }
  }

  /** Leaves the group (listener.onRevoked awaited first) and closes connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.membership !== null) await this.membership.close();
      else if (this.options.autoCommit === true) await this.commitPositions(this.fetcher.assigned()).catch(() => undefined);
    } finally {
      this.closed = true;
      this.fetcher.remove(this.fetcher.assigned());
      this.fetcher.changed.notify();
      await this.cluster.close();
    }
  }

  private async prefersKip848(groupId: string): Promise<boolean> {
    const wanted = this.options.groupProtocol ?? 'auto';
    if (wanted !== 'auto') return wanted === 'consumer';
    const conn = await this.cluster.coordinator(groupId);
    return conn.brokerVersions.has(CONSUMER_GROUP_HEARTBEAT_KEY);
  }

  private checkOpen(): void {
    if (this.closed) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'the consumer is closed');
  }

  private throwPending(): void {
    const err = this.pendingError;
    if (err === null) return;
    this.pendingError = null;
    throw err;
  }

  private maybeAutoCommit(): void {
    if (this.options.autoCommit !== true || this.options.groupId === undefined) return;
    if (Date.now() - this.lastAutoCommit < (this.options.autoCommitIntervalMs ?? 5000)) return;
    this.lastAutoCommit = Date.now();
    this.commitPositions(this.fetcher.assigned()).catch((err: unknown) => this.host.fail(err as Error));
  }

  /** Commits the positions of `partitions` (the messages polled so far). */
  private commitPositions(partitions: readonly TopicPartition[]): Promise<void> {
    const wanted = new Set(partitions.map(keyOf));
    return this.commit(this.fetcher.positions().filter((p) => wanted.has(keyOf(p))));
  }

  private async callListener(call: (() => void | Promise<void>) | undefined): Promise<void> {
    if (call === undefined) return;
    try {
      await call();
    } catch (err) {
      this.host.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private async onAssign(partitions: readonly TopicPartition[]): Promise<void> {
    const groupId = this.options.groupId as string;
    const found = await fetchCommitted(this.cluster, groupId, partitions);
    const assigned: AssignedPartition[] = partitions.map(({ topic, partition }) => ({ topic, partition, committed: found.get(tpKey(topic, partition)) ?? null }));
    const listener = this.options.listener;
    await this.callListener(listener?.onAssigned === undefined ? undefined : () => listener.onAssigned?.(assigned));
    for (const p of assigned) this.fetcher.add(p, p.committed?.offset ?? null);
  }

  private async onRevoke(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.options.autoCommit === true) await this.commitPositions(partitions).catch((err: unknown) => this.host.fail(err as Error));
    this.fetcher.remove(partitions);
    await this.pollDelivered();
    const listener = this.options.listener;
    await this.callListener(listener?.onRevoked === undefined ? undefined : () => listener.onRevoked?.(partitions));
  }

  /**
   * A poll whose answer was applied before the partitions were removed may still be on its way to
   * the caller: wait until it has returned and the caller's synchronous continuation has run, so
   * that onRevoked sees (and can commit) every message poll handed out for those partitions.
   */
  private async pollDelivered(): Promise<void> {
    const inFlight = this.polling;
    if (inFlight !== null) await inFlight.catch(() => undefined);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async onLose(partitions: readonly TopicPartition[]): Promise<void> {
    this.fetcher.remove(partitions);
    const listener = this.options.listener;
    await this.callListener(listener?.onLost === undefined ? undefined : () => listener.onLost?.(partitions));
  }
}
