// A shard: the event loop of one worker thread, a mailbox and dispatcher for the actors it hosts
// (partition actors, and group-coordinator actors for `__consumer_offsets` partitions). It drains
// the inbound ring in batches and hands each message to the actor it addresses; the actors do the
// work and answer through the shard's Outbox on the outbound ring.
// Lanes (lanes.ts): every request has an origin, and its answer goes back there. Lane 0 is main's
// ring pair, as described above; `attachRingLane` adds another ring pair drained the same way
// (a peer shard's, the shard mesh under --connection-placement shards), with its own Outbox and
// drain loop; `openLane` adds an origin on this thread, which calls the data plane methods
// (produce, fetch, releaseFetch, listOffsets, groupCall) directly and gets its answers through
// the sink it opened the lane with. The lane travels with the request: in the
// produce answer PendingAcks holds, in the parked fetch's (lane, reqId) key, in the group call's
// coordinator ref.
// Owns: actors by handle, the GroupCommitter (one write + fsync per pass across all partitions of
// the shard: every append of a drain pass joins the same commit), the recycled slabs ring lanes'
// produce batches are copied into (a same-thread lane's stay in the frame its sender lends), the
// bound on those batches' bytes until their commit settles (maxUncommittedBytes: past it a ring
// lane's drain stops at its next produce, and same-thread lanes' ports report blocked), the
// registry of parked fetches, the deadline wheel (one timer for fetch deadlines and
// acknowledgement timeouts), the lanes' sinks, and each ring lane's Outbox,
// whose bound it enforces by pausing that lane's drain loop. Stopping the shard ends every drain
// loop (each exits at its next wake-up without dispatching). Replication: main tells it the
// registered brokers and each replica's role (setBrokers, setRoles); the shard hands its
// followers to the replica fetchers of their leaders, places group coordinators on the
// `__consumer_offsets` partitions it leads, and passes its leaders' ISR changes to main as events.
import { deserialize, serialize } from 'node:v8';
import { GroupCommitter, type CommitTimings, type FlushPolicy } from '../log/group_commit.js';
import { closeLogsTogether } from '../log/clean_close.js';
import { reviveEntry, writeCleanShutdown, type CleanCloseEntry } from '../log/clean_shutdown.js';
import type { IoBackend } from '../log/io_backend.js';
import { PartitionLog, type LogConfig } from '../log/partition_log.js';
import type { CoordinatorDeps, GroupOffsets } from '../coordinator/groups/group_coordinator.js';
import type { GroupCall, GroupEffect, GroupReply, TopicIndex, TopicInfo } from '../coordinator/groups/group_api.js';
import { errorReply } from '../coordinator/groups/error_reply.js';
import { ErrorCode } from '../protocol/errors.js';
import { DEFAULT_MAX_UNCOMMITTED_PRODUCE_BYTES } from '../config.js';
import { BatchSlabs } from './batch_slabs.js';
import { DeadlineWheel } from './deadline_wheel.js';
import { GroupCoordinatorActor } from './group_coordinator_actor.js';
import { MAIN_LANE, MAX_LANES, laneKey, laneOfKey, reqIdOfKey, type LaneSink } from './lanes.js';
import { Outbox, MAX_OUTBOX_BYTES } from './outbox.js';
import { ParkedFetches } from './parked_fetches.js';
import { PartitionActor, type ActorPorts, type ActorStats, type Expirable, type ReplicaContext } from './partition_actor.js';
import type { FollowerSettings } from '../coordinator/replication/partition_follower.js';
import type { ReplicationSettings } from '../coordinator/replication/partition_leader.js';
import type { AlterPartitionItem, AlterPartitionResult, PartitionRole, ReplicaBrokerInfo } from '../coordinator/replication/types.js';
import type { SpscRing } from './ring_buffer.js';
import type { PartitionSnapshot } from './shard_snapshot.js';
import {
  GROUP_CALL_HEADER_BYTES,
  MsgType,
  readFetch,
  OffsetLookupBy,
  readListOffsets,
  produceRecordsAt,
  readProduce,
  type FetchAsk,
  type ListOffsetsAsk,
  type ListOffsetsPartitionResult,
  type ProduceAsk,
} from './ring_messages.js';

/** How a shard hosts group coordinators: which topic is the offsets topic, and what a coordinator is built with. */
export interface ShardGroupHosting {
  readonly offsetsTopic: string;
  deps(): CoordinatorDeps;
  rebalanced(e: Extract<GroupEffect, { kind: 'rebalanced' }>): void;
  badRecord(partition: number, offset: number, err: unknown): void;
}

/** What a shard tells main outside the rings (control plane, low rate). */
export type ShardEvent = { readonly kind: 'alterPartition'; readonly handle: number; readonly item: AlterPartitionItem };

/** One replica's role, as main sends it. */
export interface RoleUpdate {
  readonly handle: number;
  readonly role: PartitionRole;
}

/** The shard's replica fetchers (replica_fetcher.ts): one per leader broker, for the followers of this shard. */
export interface FollowerFetching {
  follow(p: PartitionActor, leader: { readonly id: number; readonly host: string; readonly port: number }): void;
  unfollow(p: PartitionActor): void;
  close(): Promise<void>;
}

export interface ShardReplication {
  readonly settings: ReplicationSettings & FollowerSettings;
  readonly fetching: FollowerFetching;
  readonly events: (e: ShardEvent) => void;
}

export interface ShardIntrospection {
  shard: number;
  actors: ActorStats[];
  handled: number;
  busyMs: number;
  parkedFetches: number;
  outboxDepth: number;
  lastError: string | null;
  commits: ReturnType<GroupCommitter['stats']>;
  storageErrors: number;
  rescannedSegments: number;
  /** Produced bytes the logs hold until their commit settles, now. */
  uncommittedProduceBytes: number;
  /** Times produces began to wait for room under the uncommitted-bytes bound (cumulative). */
  uncommittedProduceWaits: number;
  coordinators: { partition: number; stats: ReturnType<GroupCoordinatorActor['stats']> }[];
}

/** Longest the drain loop runs before yielding the thread (bounds the shard's event-loop delay). */
const DRAIN_SLICE_MS = 1;
/** Granularity of fetch max_wait and produce timeouts on the shard. */
const DEADLINE_TICK_MS = 10;
export class Shard {
  private readonly actors = new Map<number, PartitionActor>();
  private readonly coordinators = new Map<number, GroupCoordinatorActor>();
  private topicIndex: TopicIndex = { byName: new Map(), byId: new Map() };
  private readonly committer: GroupCommitter;
  private readonly slabs = new BatchSlabs();
  private readonly deadlines = new DeadlineWheel<Expirable>(DEADLINE_TICK_MS, (key) => key.expire(this.deadlines.now()));
  /** Lane 0's sink, main's outbound ring. */
  private readonly outbox: Outbox;
  /** Where each lane's answers go, by lane id; lane 0 is the Outbox. */
  private readonly lanes: LaneSink[];
  private readonly parked: ParkedFetches;
  private readonly ports: ActorPorts;
  private readonly brokers = new Map<number, ReplicaBrokerInfo>();
  /** Shared by every actor of the shard; setBrokers fills in this broker's id. */
  private readonly replicaContext: { -readonly [K in keyof ReplicaContext]: ReplicaContext[K] };
  private running = true;
  handled = 0;
  busyMs = 0;
  lastError: string | null = null;
  /** Every storage failure seen (failed group commits, absorbed log failures, failed clean closes). */
  private storageErrors = 0;
  /** Segments log recovery rescanned (rather than trusting their indexes) as partitions opened. */
  private rescannedSegments = 0;
  /** Bytes appended to the logs this shard has closed since it started. */
  private closedLogsAppendedBytes = 0;
  /**
   * Bytes of produced batches this shard's logs hold until their commit settles: ring lanes'
   * batches copied into slabs, same-thread lanes' batches in the frames they lend. At
   * maxUncommittedBytes or more, produces wait (producesWait).
   */
  private uncommittedBytes = 0;
  /** The most uncommittedBytes reached since takeUncommittedPeak last asked. */
  private uncommittedPeak = 0;
  /** Times produces began to wait for room under maxUncommittedBytes (cumulative). */
  private uncommittedWaits = 0;
  /** What every waiter for room under maxUncommittedBytes awaits, one promise for all; null: none waits. */
  private uncommittedRoom: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;

  constructor(
    readonly index: number,
    private readonly inbound: SpscRing,
    outbound: SpscRing,
    private readonly io: IoBackend,
    flush: FlushPolicy,
    private readonly onError: (msg: string, err: unknown) => void,
    private readonly groups: ShardGroupHosting,
    private readonly replication: ShardReplication,
    private readonly maxOutboxBytes: number = MAX_OUTBOX_BYTES,
    private readonly maxUncommittedBytes: number = DEFAULT_MAX_UNCOMMITTED_PRODUCE_BYTES,
  ) {
    this.committer = new GroupCommitter(io, flush, (err) => {
      this.lastError = `storage: ${err.message}`;
      this.storageFailure('group commit failed', err);
    });
    this.outbox = new Outbox(outbound, maxOutboxBytes);
    this.lanes = [this.outbox];
    this.parked = new ParkedFetches(
      (handle) => this.actors.get(handle),
      this.deadlines,
      (lane, reqId, parts, waited) => this.lanes[lane]!.send({ kind: 'fetch', reqId, parts, waited }),
      (lane, reqId, bytes) => this.lanes[lane]!.send({ kind: 'fetchProgress', reqId, bytes }),
    );
    this.ports = {
      committer: this.committer,
      deadlines: this.deadlines,
      sendProduceResult: (result) => this.lanes[result.lane]!.send({ kind: 'produce', result }),
      fetchMayProceed: (key) => this.parked.mayProceed(key),
      sendAlterPartition: (handle, item) => this.replication.events({ kind: 'alterPartition', handle, item }),
      followingChanged: (actor) => this.followLeaderOf(actor),
    };
    this.replicaContext = {
      localBrokerId: -1,
      brokers: this.brokers,
      settings: replication.settings,
      now: () => performance.now(),
    };
  }

  /**
   * A new origin on this thread: its requests come through the data plane methods with the lane
   * id returned, its answers go to `sink`, in the order the shard sends them.
   * Backpressure: lane 0's bound (the Outbox's) pauses the ring drain, which is lane 0's intake
   * only. An opened lane has no intake here to pause: its origin calls in on this thread, so the
   * bound of its answers is the origin's to keep (a connection stops reading its socket while the
   * responses it owes pass its queued-bytes bound, and submits nothing meanwhile). The shard never
   * drops or holds back a lane's answers: results of work already under way (commits in flight,
   * parked fetches, group timers) reach the sink whatever its state, as they reach the Outbox. One
   * lane's bound never pauses another's intake, so a slow main thread does not stall the
   * shard's own origins, nor they it.
   */
  openLane(sink: LaneSink): number {
    if (this.lanes.length >= MAX_LANES) throw new RangeError(`a shard holds at most ${MAX_LANES} lanes`);
    this.lanes.push(sink);
    return this.lanes.length - 1;
  }

  /**
   * A lane over another ring pair (a peer shard's requests on `inbound`, its answers through an
   * Outbox of its own onto `outbound`), drained by a loop of its own with lane 0's rules: the
   * same slices and yields, and intake paused while this lane's Outbox is over its bound (this
   * lane's only). Returns the lane id.
   */
  attachRingLane(inbound: SpscRing, outbound: SpscRing): number {
    const outbox = new Outbox(outbound, this.maxOutboxBytes);
    const lane = this.openLane(outbox);
    this.drain(lane, inbound, outbox).catch((err: unknown) => this.onError(`ring lane ${lane} stopped`, err));
    return lane;
  }

  // ---- control plane (comlink) ----

  openPartition(handle: number, topic: string, partition: number, dir: string, config: LogConfig, cleanShutdown: CleanCloseEntry | null = null): void {
    // The actor moves the high watermark (its replication role decides how far), never the commit alone.
    const log = PartitionLog.open(dir, config, this.io, Date.now, {
      highWatermark: 'owner',
      cleanShutdown: cleanShutdown && reviveEntry(cleanShutdown),
      onWarning: (what, err) => this.storageFailure(`${topic}-${partition} log: ${what}`, err),
    });
    this.rescannedSegments += log.recovery.scannedSegments;
    const actor = new PartitionActor(handle, topic, partition, log, config, this.ports, this.replicaContext);
    this.actors.set(handle, actor);
  }

  /** The registered brokers (and this broker's id) as the latest metadata image has them. */
  setBrokers(localBrokerId: number, brokers: readonly ReplicaBrokerInfo[]): void {
    this.replicaContext.localBrokerId = localBrokerId;
    this.brokers.clear();
    for (const b of brokers) this.brokers.set(b.id, b);
    for (const actor of this.actors.values()) {
      actor.brokersChanged();
      if (actor.followedLeader >= 0) this.followLeaderOf(actor);
    }
  }

  /** Roles from the latest metadata image, for partitions whose role changed. */
  setRoles(updates: readonly RoleUpdate[]): void {
    for (const u of updates) {
      const actor = this.actors.get(u.handle);
      if (actor === undefined) continue;
      actor.setRole(u.role);
      if (actor.topic === this.groups.offsetsTopic) this.placeCoordinator(actor);
    }
  }

  alterPartitionResult(handle: number, sent: AlterPartitionItem, result: AlterPartitionResult): void {
    this.actors.get(handle)?.onAlterPartitionResult(sent, result);
  }

  /**
   * Periodic: leaders drop lagging followers and resend due proposals. Returns whether any
   * partition still needs ticks (the worker stops its timer when none does, and starts it again
   * on the control calls that can change that: roles, brokers, AlterPartition results, opens).
   */
  tickReplicas(): boolean {
    const now = performance.now();
    let needed = false;
    for (const actor of this.actors.values()) {
      actor.tick(now);
      needed ||= actor.needsTicks;
    }
    return needed;
  }

  /** Periodic: high watermarks that moved are written to their checkpoint files. */
  checkpointHighWatermarks(): void {
    for (const actor of this.actors.values()) actor.checkpointHighWatermark();
  }

  /** A follower fetches from its leader's client listener; one whose leader has none yet waits for setBrokers. */
  private followLeaderOf(actor: PartitionActor): void {
    const id = actor.followedLeader;
    const endpoint = id >= 0 ? this.brokers.get(id)?.endpoint ?? null : null;
    if (endpoint === null) this.replication.fetching.unfollow(actor);
    else this.replication.fetching.follow(actor, { id, host: endpoint.host, port: endpoint.port });
  }

  /** A group coordinator runs on the leader of its `__consumer_offsets` partition only; it loads the log when leadership arrives. */
  private placeCoordinator(actor: PartitionActor): void {
    const existing = this.coordinators.get(actor.handle);
    if (!actor.isLeader) {
      existing?.close();
      this.coordinators.delete(actor.handle);
      return;
    }
    if (existing !== undefined) return;
    const coordinator = new GroupCoordinatorActor(actor, this.committer, this.groups.deps(), {
      reply: (ref, reply) => this.replyGroup(ref, reply),
      rebalanced: (e) => this.groups.rebalanced(e),
      badRecord: (offset, err) => this.groups.badRecord(actor.partition, offset, err),
    }, Date.now);
    coordinator.setTopics(this.topicIndex);
    this.coordinators.set(actor.handle, coordinator);
  }

  /** The broker's topics changed: KIP-848 groups reassign against the new metadata. */
  setTopics(topics: readonly TopicInfo[]): void {
    this.topicIndex = { byName: new Map(topics.map((t) => [t.name, t])), byId: new Map(topics.map((t) => [t.id, t])) };
    for (const c of this.coordinators.values()) c.setTopics(this.topicIndex);
  }

  /** Committed offsets and member counts of every group this shard coordinates, for lag metrics. */
  committedOffsets(): Map<string, GroupOffsets> {
    const all = new Map<string, GroupOffsets>();
    for (const c of this.coordinators.values()) for (const [g, offsets] of c.committedOffsets()) all.set(g, offsets);
    return all;
  }

  closePartition(handle: number, deleteData: boolean): void {
    const actor = this.actors.get(handle);
    if (!actor) return;
    this.actors.delete(handle);
    this.replication.fetching.unfollow(actor);
    this.coordinators.get(handle)?.close();
    this.coordinators.delete(handle);
    for (const key of [...actor.waiters]) this.parked.complete(key);
    this.closedLogsAppendedBytes += actor.log.appendedBytes;
    if (deleteData) actor.log.deleteAll();
    else actor.log.close();
  }

  updateConfig(handle: number, config: LogConfig): void {
    this.actors.get(handle)?.updateConfig(config);
  }

  enforceRetention(): void {
    for (const a of this.actors.values()) a.log.enforceRetention();
    // A leader's view of its own log (its start, sent in fetch answers) used to be refreshed by
    // the replica tick, which no longer runs for a lone leader: refresh it where retention moves it.
    this.tickReplicas();
  }

  /** Each open partition's size and offsets, from the logs' own counters (metrics scrapes, DescribeLogDirs). */
  partitionSnapshots(): PartitionSnapshot[] {
    const out: PartitionSnapshot[] = [];
    for (const a of this.actors.values()) {
      const log = a.log;
      out.push({
        topic: a.topic, partition: a.partition, sizeBytes: log.sizeBytes,
        logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset, highWatermark: log.highWatermark,
      });
    }
    return out;
  }

  /** Group commit durations and queue waits since the previous call (the metrics scrape's). */
  takeCommitTimings(): CommitTimings {
    return this.committer.takeTimings();
  }

  /** Record batch bytes appended to this shard's logs since it started (cumulative). */
  logBytesWritten(): number {
    let bytes = this.closedLogsAppendedBytes;
    for (const a of this.actors.values()) bytes += a.log.appendedBytes;
    return bytes;
  }

  introspect(): ShardIntrospection {
    return {
      shard: this.index,
      actors: [...this.actors.values()].map((a) => a.stats()),
      handled: this.handled,
      busyMs: this.busyMs,
      parkedFetches: this.parked.size,
      outboxDepth: this.outbox.depth,
      lastError: this.lastError,
      commits: this.committer.stats(),
      storageErrors: this.storageErrors,
      rescannedSegments: this.rescannedSegments,
      uncommittedProduceBytes: this.uncommittedBytes,
      uncommittedProduceWaits: this.uncommittedWaits,
      coordinators: [...this.coordinators.values()].map((c) => ({ partition: c.partition.partition, stats: c.stats() })),
    };
  }

  /**
   * Stops draining, answers parked fetches, waits for the in-flight commit, closes every log (up
   * to `closeLanes` at once, as the descriptors left allow), then writes this shard's
   * clean-shutdown record of those that closed cleanly; returns how many logs it closed.
   */
  async shutdown(closeLanes: number): Promise<number> {
    this.running = false;
    this.parked.completeAll();
    this.deadlines.close();
    await this.replication.fetching.close();
    for (const c of this.coordinators.values()) c.close();
    await this.committer.close();
    const logs = [...this.actors.values()].map((a) => a.log);
    this.actors.clear();
    const entries = await closeLogsTogether(logs, this.io, (err) => this.storageFailure('clean close failed', err), closeLanes);
    try {
      writeCleanShutdown(this.index, entries);
    } catch (err) {
      // Without the record the next start rescans these logs; nothing acknowledged is lost.
      this.storageFailure('clean-shutdown record not written', err);
    }
    return logs.length;
  }

  private storageFailure(msg: string, err: unknown): void {
    this.storageErrors++;
    this.onError(msg, err);
  }

  // ---- data plane ----

  /** Drains main's inbound ring (lane 0's intake) until shutdown. */
  run(): Promise<void> {
    return this.drain(MAIN_LANE, this.inbound, this.outbox);
  }

  /** Drains ring lane `lane`'s inbound ring until shutdown, its answers going to `outbox`. */
  private async drain(lane: number, ring: SpscRing, outbox: Outbox): Promise<void> {
    while (this.running) {
      // Backpressure instead of dropping results: no new work from this lane's origin while too
      // many of its results wait (this lane's bound; openLane says what a same-thread lane's is).
      if (outbox.overLimit) await outbox.whenUnderLimit();
      await ring.waitForData();
      const started = performance.now();
      const sliceEnd = started + DRAIN_SLICE_MS;
      let sliceUsed = false;
      let producesWait = false;
      for (let off = ring.peek(); off >= 0 && this.running && !outbox.overLimit; off = ring.peek()) {
        if (performance.now() > sliceEnd) {
          sliceUsed = true;
          break;
        }
        // Left in the ring until there is room (peek() returns it again).
        if (ring.bytes[off] === MsgType.PRODUCE && this.producesWait) {
          producesWait = true;
          break;
        }
        try {
          this.dispatch(lane, ring.bytes, off, ring.lastLength);
        } catch (err) {
          // A bug in one message's handling must not stop the shard; the message is dropped
          // and the origin's request times out for that partition.
          this.lastError = String(err);
          this.onError('shard message failed', err);
        }
        ring.release();
        this.handled++;
      }
      this.busyMs += performance.now() - started;
      // The ring refills as fast as this loop empties it under load: without a yield one pass
      // would hold the thread (commit completions, timers, parked-fetch deadlines) for as long as
      // the load lasts. setImmediate lets every pending macrotask run first.
      if (producesWait) await this.whenProducesMay();
      else if (sliceUsed) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** One message of a ring lane's inbound ring: that lane's request. */
  private dispatch(lane: number, b: Buffer, off: number, len: number): void {
    switch (b[off]) {
      case MsgType.PRODUCE:
        this.produce(lane, readProduce(b, off), b, produceRecordsAt(b, off), off + len);
        return;
      case MsgType.FETCH:
        this.fetch(lane, readFetch(b, off));
        return;
      case MsgType.FETCH_RELEASE:
        this.releaseFetch(lane, b.readUInt32LE(off + 4));
        return;
      case MsgType.GROUP_CALL:
        this.groupCall(lane, b.readUInt32LE(off + 4), b.readUInt32LE(off + 8), b.subarray(off + GROUP_CALL_HEADER_BYTES, off + len));
        return;
      case MsgType.LIST_OFFSETS:
        this.listOffsets(lane, readListOffsets(b, off));
        return;
      default:
        throw new Error(`unknown ring message type ${b[off]}`);
    }
  }

  /** A produce from `lane` whose batch is `src[start, end)`, copied before this returns. */
  produce(lane: number, ask: ProduceAsk, src: Buffer, start: number, end: number): void {
    const actor = this.producer(lane, ask);
    if (actor === null) return;
    // The log keeps the batch until its commit settles, so it must leave the sender's memory (the
    // ring's, released after this message) first; its slab space is reused once the actor says
    // the log let go of it.
    const bytes = end - start;
    const lease = this.slabs.take(bytes, src.byteOffset + start);
    src.copy(lease.buf, 0, start, end);
    this.holdUncommitted(bytes);
    actor.produce(lane, ask, lease.buf, () => {
      this.slabs.release(lease.slab);
      this.settledUncommitted(bytes);
    });
  }

  /**
   * A produce from a lane on this thread whose batch `records` its sender lends until `released`
   * runs: the log stages it by reference (a placed connection's request frame), no copy.
   */
  produceLent(lane: number, ask: ProduceAsk, records: Buffer, released: () => void): void {
    const actor = this.producer(lane, ask);
    if (actor === null) return released();
    const bytes = records.length;
    this.holdUncommitted(bytes);
    actor.produce(lane, ask, records, () => {
      released();
      this.settledUncommitted(bytes);
    });
  }

  /**
   * Whether produces wait for room: this shard's logs hold maxUncommittedBytes or more of
   * produced batches whose commit has not settled. A ring lane's drain then stops at its next
   * produce (the messages behind it wait with it, so the lane keeps its order), and a same-thread
   * lane's port reports itself blocked (its connections stop after the request they are serving).
   * Commits settle whatever the followers do, so waiting here cannot wait on a fetch it holds back.
   */
  get producesWait(): boolean {
    return this.uncommittedBytes >= this.maxUncommittedBytes;
  }

  /** Resolves once produces need not wait (at once when they need not now); every waiter shares one promise. */
  whenProducesMay(): Promise<void> {
    if (!this.producesWait) return Promise.resolve();
    if (this.uncommittedRoom === null) {
      this.uncommittedWaits++;
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.uncommittedRoom = { promise, resolve };
    }
    return this.uncommittedRoom.promise;
  }

  /** The most produced bytes the logs held until their commit settled since the previous call (the metrics snapshot's). */
  takeUncommittedPeak(): number {
    const peak = this.uncommittedPeak;
    this.uncommittedPeak = this.uncommittedBytes;
    return peak;
  }

  private holdUncommitted(bytes: number): void {
    this.uncommittedBytes += bytes;
    if (this.uncommittedBytes > this.uncommittedPeak) this.uncommittedPeak = this.uncommittedBytes;
  }

  private settledUncommitted(bytes: number): void {
    this.uncommittedBytes -= bytes;
    const room = this.uncommittedRoom;
    if (room === null || this.producesWait) return;
    this.uncommittedRoom = null;
    room.resolve();
  }

  /** The actor a produce addresses; null after answering NOT_LEADER_OR_FOLLOWER for one this shard does not host. */
  private producer(lane: number, ask: ProduceAsk): PartitionActor | null {
    const actor = this.actors.get(ask.handle);
    if (actor !== undefined) return actor;
    const result = { reqId: ask.reqId, slot: ask.slot, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, lane };
    this.lanes[lane]!.send({ kind: 'produce', result });
    return null;
  }

  /** A fetch from `lane`: answered now or parked (not parked once the shard is stopping). */
  fetch(lane: number, ask: FetchAsk): void {
    this.parked.fetch(lane, ask, this.running);
  }

  /** Answers `lane`'s parked fetch `reqId` now (no-op if it is not parked). */
  releaseFetch(lane: number, reqId: number): void {
    this.parked.complete(laneKey(lane, reqId));
  }

  /** ListOffsets or OffsetsForLeaderEpoch from `lane`, answered at once. */
  listOffsets(lane: number, ask: ListOffsetsAsk): void {
    const parts: ListOffsetsPartitionResult[] = ask.partitions.map((p) => {
      const actor = this.actors.get(p.handle);
      if (!actor) return { slot: p.slot, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1, timestamp: -1, leaderEpoch: -1 };
      return ask.by === OffsetLookupBy.EPOCH_END ? actor.epochEndOffset(p.slot, p.key) : actor.listOffset(p.slot, p.key);
    });
    this.lanes[lane]!.send({ kind: 'listOffsets', reqId: ask.reqId, parts });
  }

  /** A serialized GroupCall from `lane` for the coordinator of offsets partition `handle`; `payload` is read during the call only. */
  groupCall(lane: number, reqId: number, handle: number, payload: Buffer): void {
    // A copy: deserialized byte arrays are views of the input, and the coordinator keeps member
    // metadata long after this ring message is released.
    const call = deserialize(Buffer.from(payload)) as GroupCall;
    // The coordinator's ref is the lane-qualified key, so its reply (maybe a rebalance later) finds the lane.
    const ref = laneKey(lane, reqId);
    const coordinator = this.coordinators.get(handle);
    if (!coordinator) this.replyGroup(ref, errorReply(call, ErrorCode.NOT_COORDINATOR));
    else coordinator.call(ref, call);
  }

  private replyGroup(ref: number, reply: GroupReply): void {
    this.lanes[laneOfKey(ref)]!.send({ kind: 'group', reqId: reqIdOfKey(ref), payload: serialize(reply) });
  }
}
