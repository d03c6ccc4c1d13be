// What a group membership (KIP-848 or classic) needs from the consumer that hosts it, and what it
// offers back. The membership decides which partitions the member owns; the host turns that into
// fetching and listener calls. Also the loop lifetime, owned set and close() start both share
// (MembershipLoop). Runs on the consumer's thread.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { fullJitterDelay } from '../../protocol/backoff.js';
import { isStaleCoordinatorError } from '../cluster.js';
import { ConnectionError } from '../connection.js';
import type { Cluster } from '../cluster.js';
import type { CommitIdentity } from './offsets.js';
import { normalized } from './topic_partitions.js';
import type { TopicPartition } from './types.js';
import { Waker } from './waker.js';

export interface AssignmentHost {
  /** Committed offsets → listener.onAssigned → fetching starts. */
  assign(partitions: readonly TopicPartition[]): Promise<void>;
  /** Fetching stops → listener.onRevoked (awaited). */
  revoke(partitions: readonly TopicPartition[]): Promise<void>;
  /** Fetching stops → listener.onLost (awaited). */
  lose(partitions: readonly TopicPartition[]): Promise<void>;
  /** A failure the application must hear of (the next poll rejects with it). */
  fail(err: Error): void;
}

export interface MembershipConfig {
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly instanceId: string | null;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly serverAssignor: string | null;
}

export interface Membership {
  readonly protocol: 'consumer' | 'classic';
  /** Starts the membership's loop (it never rejects; failures go to host.fail). */
  start(): void;
  /** Member id and generation / member epoch to commit with. */
  identity(): CommitIdentity;
  /** Partitions the member owns right now. */
  owned(): TopicPartition[];
  /** Stops the loop, revokes everything owned (onRevoked awaited), leaves the group. */
  close(): Promise<void>;
  /**
   * Resolves when the member next completes a rebalance (classic: its SyncGroup is answered) or
   * after `maxWaitMs`, whichever comes first; never rejects. A commit the coordinator refused with
   * REBALANCE_IN_PROGRESS waits on this before trying again with the then current identity.
   */
  rebalanceSettled(maxWaitMs: number): Promise<void>;
}

/** Failures after which the same call is worth repeating after a pause (with the coordinator looked up again). */
export function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  if (!(err instanceof KafkaError)) return false;
  return isStaleCoordinatorError(err.code) || err.code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    || err.code === ErrorCode.REQUEST_TIMED_OUT;
}

/** Pause before retry number `failures` of a membership call. */
export function retryDelay(failures: number): number {
  return 50 + fullJitterDelay(failures, { baseMs: 200, maxMs: 5000 });
}

export function errorCodeOf(err: unknown): number | null {
  return err instanceof KafkaError ? err.code : null;
}

/** How long close() waits for a join, sync or heartbeat in flight before going on regardless. */
const CLOSE_WAIT_MS = 5000;

/** What both memberships share: the loop's lifetime, the owned set and the start of close(). */
export abstract class MembershipLoop {
  protected readonly held = new Map<string, TopicPartition>();
  protected closing = false;
  protected readonly waker = new Waker();
  /** Notified when a rebalance completes; commits waiting out REBALANCE_IN_PROGRESS sleep on it. */
  protected readonly settled = new Waker();
  private loop: Promise<void> | null = null;

  constructor(protected readonly cluster: Cluster, protected readonly config: MembershipConfig, protected readonly host: AssignmentHost) {}

  start(): void {
    this.loop ??= this.run();
  }

  owned(): TopicPartition[] {
    return normalized([...this.held.values()]);
  }

  rebalanceSettled(maxWaitMs: number): Promise<void> {
    return this.settled.wait(maxWaitMs);
  }

  /** The membership's loop until `closing`; never rejects. */
  protected abstract run(): Promise<void>;

  /** Ends the loop; a call stuck on a silent coordinator must not hold close() for a whole request timeout. */
  protected async stopLoop(): Promise<void> {
    this.closing = true;
    this.waker.notify();
    if (this.loop !== null) await Promise.race([this.loop, this.waker.wait(CLOSE_WAIT_MS)]);
  }

  /** Revokes everything still owned (onRevoked awaited; its failure goes to the host). */
  protected async revokeAll(): Promise<void> {
    const owned = this.owned();
    if (owned.length === 0) return;
    await this.host.revoke(owned).catch((err: unknown) => this.host.fail(err as Error));
    this.held.clear();
  }
}
