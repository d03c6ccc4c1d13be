// Request priority classes on the main thread: which decoded requests run first when more arrive
// in one event-loop turn than the turn's budget. Owned by the broker's Kafka listener, shared by
// all its connections; main thread only.
//
// Up to `turnBudget` requests per loop turn run at once, in arrival order, as long as nothing
// waits. Past the budget a request waits in its class's FIFO queue, and a check-phase tick (after
// the poll phase has read every ready socket) runs up to `turnBudget` of them in weighted rounds:
// each round runs at most `weight` requests of each class, highest class first. So replica
// fetches (replication) and group traffic (coordination) overtake a flood of Metadata and
// ApiVersions (metadata) that reconnecting clients send after leaders move, while the flood still
// gets one request in every round it waits (never starved beyond its weight).
// A connection submits one request at a time and dispatches nothing behind it until it has run,
// so the queues hold at most one entry per connection: bounded by the listener's connection cap.
// Pure apart from the injected `defer` (setImmediate in the broker).
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import { ConsumerGroupDescribeApi } from '../protocol/apis/consumer_group_describe.js';
import { ConsumerGroupHeartbeatApi } from '../protocol/apis/consumer_group_heartbeat.js';
import { CreatePartitionsApi } from '../protocol/apis/create_partitions.js';
import { CreateTopicsApi } from '../protocol/apis/create_topics.js';
import { DeleteGroupsApi } from '../protocol/apis/delete_groups.js';
import { DeleteTopicsApi } from '../protocol/apis/delete_topics.js';
import { DescribeClusterApi } from '../protocol/apis/describe_cluster.js';
import { DescribeConfigsApi } from '../protocol/apis/describe_configs.js';
import { DescribeGroupsApi } from '../protocol/apis/describe_groups.js';
import { ElectLeadersApi } from '../protocol/apis/elect_leaders.js';
import { FetchApi, type FetchRequest } from '../protocol/apis/fetch.js';
import { FindCoordinatorApi } from '../protocol/apis/find_coordinator.js';
import { HeartbeatApi } from '../protocol/apis/heartbeat.js';
import { InitProducerIdApi } from '../protocol/apis/init_producer_id.js';
import { JoinGroupApi } from '../protocol/apis/join_group.js';
import { LeaveGroupApi } from '../protocol/apis/leave_group.js';
import { ListGroupsApi } from '../protocol/apis/list_groups.js';
import { MetadataApi } from '../protocol/apis/metadata.js';
import { OffsetCommitApi } from '../protocol/apis/offset_commit.js';
import { OffsetDeleteApi } from '../protocol/apis/offset_delete.js';
import { OffsetFetchApi } from '../protocol/apis/offset_fetch.js';
import { SyncGroupApi } from '../protocol/apis/sync_group.js';

/** Highest first: the order a round visits them in. */
export const PRIORITY_CLASSES = ['replication', 'coordination', 'data', 'metadata'] as const;
export type PriorityClass = (typeof PRIORITY_CLASSES)[number];

/** Requests of each class one round runs at most. */
export const DEFAULT_CLASS_WEIGHTS: Readonly<Record<PriorityClass, number>> = { replication: 8, coordination: 4, data: 4, metadata: 1 };

/** Requests run per event-loop turn before later ones queue by class. */
export const DEFAULT_TURN_BUDGET = 32;

const COORDINATION_KEYS: ReadonlySet<number> = new Set([
  FindCoordinatorApi, JoinGroupApi, SyncGroupApi, HeartbeatApi, LeaveGroupApi, OffsetCommitApi, OffsetFetchApi,
  ConsumerGroupHeartbeatApi, InitProducerIdApi,
].map((api) => api.key));

/** Cluster-wide reads and admin changes: what a reconnecting fleet floods. */
const METADATA_KEYS: ReadonlySet<number> = new Set([
  MetadataApi, ApiVersionsApi, DescribeConfigsApi, DescribeClusterApi, ListGroupsApi, DescribeGroupsApi,
  ConsumerGroupDescribeApi, CreateTopicsApi, DeleteTopicsApi, CreatePartitionsApi, DeleteGroupsApi, OffsetDeleteApi,
  ElectLeadersApi,
].map((api) => api.key));

/** The class of a decoded client-listener request; everything unnamed (Produce, consumer Fetch, ListOffsets...) is data. */
export function priorityClassOf(apiKey: number, version: number, req: unknown): PriorityClass {
  if (apiKey === FetchApi.key) {
    const fetch = req as FetchRequest;
    const replicaId = version >= 15 ? fetch.replicaState.replicaId : fetch.replicaId;
    return replicaId >= 0 ? 'replication' : 'data';
  }
  if (COORDINATION_KEYS.has(apiKey)) return 'coordination';
  if (METADATA_KEYS.has(apiKey)) return 'metadata';
  return 'data';
}

export interface RequestSchedulerOptions {
  readonly turnBudget: number;
  readonly weights: Readonly<Record<PriorityClass, number>>;
  /** Runs `fn` once the loop has polled for I/O (setImmediate). */
  readonly defer: (fn: () => void) => void;
  /** Told of every request that has to wait (metrics). */
  readonly onQueued?: (cls: PriorityClass) => void;
}

export class RequestScheduler {
  private readonly queues: Record<PriorityClass, Array<() => void>> = { replication: [], coordination: [], data: [], metadata: [] };
  private waiting = 0;
  /** Requests run since the last tick. */
  private ranThisTurn = 0;
  private tickPending = false;
  /** The round's position: the class being served and how many of it ran in this round. */
  private cursor = 0;
  private servedInRound = 0;

  constructor(private readonly opts: RequestSchedulerOptions) {
    if (!Number.isInteger(opts.turnBudget) || opts.turnBudget < 1) throw new RangeError(`turn budget ${opts.turnBudget} is not a positive integer`);
    for (const c of PRIORITY_CLASSES) {
      if (!Number.isInteger(opts.weights[c]) || opts.weights[c] < 1) throw new RangeError(`weight of ${c} is not a positive integer`);
    }
  }

  /** Requests waiting, over all classes. */
  get queued(): number {
    return this.waiting;
  }

  queuedIn(cls: PriorityClass): number {
    return this.queues[cls].length;
  }

  /**
   * Claims a place in this turn for a request the caller runs at once: true when nothing waits
   * and the turn has room. The uncontended path: no class lookup, no queued closure per request.
   */
  tryRunNow(): boolean {
    if (this.waiting !== 0 || this.ranThisTurn >= this.opts.turnBudget) return false;
    this.ranThisTurn++;
    this.scheduleTick();
    return true;
  }

  /** Runs `task` now if the turn has room and nothing waits, else when its class's turn comes. */
  submit(cls: PriorityClass, task: () => void): void {
    if (this.tryRunNow()) {
      task();
      return;
    }
    this.queues[cls].push(task);
    this.waiting++;
    this.opts.onQueued?.(cls);
    this.scheduleTick();
  }

  private scheduleTick(): void {
    if (this.tickPending) return;
    this.tickPending = true;
    this.opts.defer(() => this.tick());
  }

  /** A new turn: runs up to the budget from the queues, by rounds; ticks again while work or the turn's count remains. */
  private tick(): void {
    this.tickPending = false;
    this.ranThisTurn = 0;
    while (this.waiting > 0 && this.ranThisTurn < this.opts.turnBudget) {
      const task = this.next();
      this.waiting--;
      this.ranThisTurn++;
      task();
    }
    if (this.ranThisTurn > 0) this.scheduleTick();
  }

  /** The next waiting task in round order; the caller checked that one waits. */
  private next(): () => void {
    for (;;) {
      const cls = PRIORITY_CLASSES[this.cursor]!;
      const queue = this.queues[cls];
      if (queue.length > 0 && this.servedInRound < this.opts.weights[cls]) {
        this.servedInRound++;
        return queue.shift()!;
      }
      this.cursor = (this.cursor + 1) % PRIORITY_CLASSES.length;
      this.servedInRound = 0;
    }
  }
}
