// A shard: the event loop of one worker thread and every actor on it. It drains the inbound
// ring in batches, runs the owning actor for each message, lets the log's GroupCommitter turn
// all appends of a drain pass into one write + fsync, and answers on the outbound ring.
// Parked fetches live here (keyed by the main thread's request id) and are released by the
// commits that make data readable, by their deadline, or by a FETCH_RELEASE from main.
// Owns: actors by handle, the committer, parked fetches, the outbox for a full outbound ring, and
// the recycled slabs its produce batches are copied into.
import { deserialize, serialize } from 'node:v8';
import type { FlushPolicy } from '../log/group_commit.js';
import { GroupCommitter } from '../log/group_commit.js';
import { StorageError, type IoBackend } from '../log/io_backend.js';
import { PartitionLog, type LogConfig } from '../log/partition_log.js';
import type { CoordinatorDeps } from '../coordinator/groups/group_coordinator.js';
import type { GroupCall, GroupEffect, GroupReply, TopicIndex, TopicInfo } from '../coordinator/groups/group_api.js';
import { errorReply } from '../coordinator/groups/error_reply.js';
import { ErrorCode } from '../protocol/errors.js';
import { BatchSlabs } from './batch_slabs.js';
import { GroupCoordinatorActor } from './group_coordinator_actor.js';
import { PartitionActor, type ActorStats } from './partition_actor.js';
import type { SpscRing } from './ring_buffer.js';
import {
  FETCH_FLAG_MULTI_SHARD,
  GROUP_CALL_HEADER_BYTES,
  GROUP_RESULT_HEADER_BYTES,
  MsgType,
  PRODUCE_HEADER_BYTES,
  PRODUCE_RESULT_BYTES,
  fetchResultBytes,
  readFetch,
  writeFetchResult,
  writeGroupResult,
  writeProduceResult,
  type FetchAsk,
  type FetchPartitionResult,
  type ProduceResult,
} from './ring_messages.js';

interface ParkedFetch {
  ask: FetchAsk;
  timer: NodeJS.Timeout;
}

type Outgoing =
  | { kind: 'produce'; result: ProduceResult }
  | { kind: 'fetch'; reqId: number; parts: FetchPartitionResult[] }
  | { kind: 'group'; reqId: number; payload: Buffer };

/** How a shard hosts group coordinators: which topic is the offsets topic, and what a coordinator is built with. */
export interface ShardGroupHosting {
  readonly offsetsTopic: string;
  deps(): CoordinatorDeps;
  rebalanced(e: Extract<GroupEffect, { kind: 'rebalanced' }>): void;
  badRecord(partition: number, offset: number, err: unknown): void;
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
  coordinators: { partition: number; stats: ReturnType<GroupCoordinatorActor['stats']> }[];
}

/** Longest the drain loop runs before yielding the thread (bounds the shard's event-loop delay). */
const DRAIN_SLICE_MS = 1;

export class Shard {
  private readonly actors = new Map<number, PartitionActor>();
  private readonly coordinators = new Map<number, GroupCoordinatorActor>();
  private topicIndex: TopicIndex = { byName: new Map(), byId: new Map() };
  private readonly parked = new Map<number, ParkedFetch>();
  private readonly outbox: Outgoing[] = [];
  private readonly committer: GroupCommitter;
  private readonly slabs = new BatchSlabs();
  private flushingOutbox = false;
  private running = true;
  handled = 0;
  busyMs = 0;
  lastError: string | null = null;

  constructor(
    readonly index: number,
    private readonly inbound: SpscRing,
    private readonly outbound: SpscRing,
    private readonly io: IoBackend,
    flush: FlushPolicy,
    private readonly onError: (msg: string, err: unknown) => void,
    private readonly groups: ShardGroupHosting,
  ) {
    this.committer = new GroupCommitter(io, flush, (err) => {
      this.lastError = `storage: ${err.message}`;
      onError('group commit failed', err);
    });
  }

  // ---- control plane (comlink) ----

  openPartition(handle: number, topic: string, partition: number, dir: string, config: LogConfig): void {
    const log = PartitionLog.open(dir, config, this.io, Date.now, { onWarning: (what, err) => this.onError(`${topic}-${partition} log: ${what}`, err) });
    const actor = new PartitionActor(handle, topic, partition, log, config);
    this.actors.set(handle, actor);
    if (topic !== this.groups.offsetsTopic) return;
    const coordinator = new GroupCoordinatorActor(actor, this.committer, this.groups.deps(), {
      reply: (ref, reply) => this.replyGroup(ref, reply),
      rebalanced: (e) => this.groups.rebalanced(e),
      badRecord: (offset, err) => this.groups.badRecord(partition, offset, err),
    }, Date.now);
    coordinator.setTopics(this.topicIndex);
    this.coordinators.set(handle, coordinator);
  }

  /** The broker's topics changed: KIP-848 groups reassign against the new metadata. */
  setTopics(topics: readonly TopicInfo[]): void {
    this.topicIndex = { byName: new Map(topics.map((t) => [t.name, t])), byId: new Map(topics.map((t) => [t.id, t])) };
    for (const c of this.coordinators.values()) c.setTopics(this.topicIndex);
  }

  /** Committed offsets of every group this shard coordinates, for lag metrics and the CLI. */
  committedOffsets(): Map<string, { topic: string; partition: number; offset: number }[]> {
    const all = new Map<string, { topic: string; partition: number; offset: number }[]>();
    for (const c of this.coordinators.values()) for (const [g, offsets] of c.committedOffsets()) all.set(g, offsets);
    return all;
  }

  closePartition(handle: number, deleteData: boolean): void {
    const actor = this.actors.get(handle);
    if (!actor) return;
    this.actors.delete(handle);
    this.coordinators.get(handle)?.close();
    this.coordinators.delete(handle);
    for (const reqId of actor.waiters) this.completeFetch(reqId);
    if (deleteData) actor.log.deleteAll();
    else actor.log.close();
  }

  updateConfig(handle: number, config: LogConfig): void {
    this.actors.get(handle)?.updateConfig(config);
  }

  listOffset(handle: number, timestamp: number): { errorCode: number; offset: number; timestamp: number } {
    const actor = this.actors.get(handle);
    if (!actor) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1, timestamp: -1 };
    const log = actor.log;
    if (timestamp === -1) return { errorCode: 0, offset: log.highWatermark, timestamp: -1 };
    if (timestamp === -2) return { errorCode: 0, offset: log.logStartOffset, timestamp: -1 };
    try {
      const found = timestamp === -3 ? log.maxTimestamp() : log.offsetForTimestamp(timestamp);
      return found ? { errorCode: 0, offset: found.offset, timestamp: found.timestamp } : { errorCode: 0, offset: -1, timestamp: -1 };
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      actor.lastError = err.message;
      return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, offset: -1, timestamp: -1 };
    }
  }

  enforceRetention(): void {
    for (const a of this.actors.values()) a.log.enforceRetention();
  }

  introspect(): ShardIntrospection {
    return {
      shard: this.index,
      actors: [...this.actors.values()].map((a) => a.stats()),
      handled: this.handled,
      busyMs: this.busyMs,
      parkedFetches: this.parked.size,
      outboxDepth: this.outbox.length,
      lastError: this.lastError,
      commits: this.committer.stats(),
      coordinators: [...this.coordinators.values()].map((c) => ({ partition: c.partition.partition, stats: c.stats() })),
    };
  }

  /** Stops draining, answers parked fetches, waits for the in-flight commit, checkpoints every log. */
  async shutdown(): Promise<void> {
    this.running = false;
    for (const reqId of [...this.parked.keys()]) this.completeFetch(reqId);
    for (const c of this.coordinators.values()) c.close();
    await this.committer.close();
    for (const a of this.actors.values()) a.log.close();
    this.actors.clear();
  }

  // ---- data plane ----

  async run(): Promise<void> {
    const ring = this.inbound;
    while (this.running) {
      await ring.waitForData();
      const started = performance.now();
      const sliceEnd = started + DRAIN_SLICE_MS;
      let sliceUsed = false;
      for (let off = ring.peek(); off >= 0 && this.running; off = ring.peek()) {
        if (performance.now() > sliceEnd) {
          sliceUsed = true;
          break;
        }
        try {
          this.dispatch(ring.bytes, off, ring.lastLength);
        } catch (err) {
          // A bug in one message's handling must not stop the shard; the message is dropped
          // and main's request times out for that partition.
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
      if (sliceUsed) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private dispatch(b: Buffer, off: number, len: number): void {
    switch (b[off]) {
      case MsgType.PRODUCE:
        this.produce(b, off, len);
        return;
      case MsgType.FETCH:
        this.fetch(readFetch(b, off));
        return;
      case MsgType.FETCH_RELEASE:
        this.completeFetch(b.readUInt32LE(off + 4));
        return;
      case MsgType.GROUP_CALL:
        this.groupCall(b.readUInt32LE(off + 4), b.readUInt32LE(off + 8), b.subarray(off + GROUP_CALL_HEADER_BYTES, off + len));
        return;
      default:
        throw new Error(`unknown ring message type ${b[off]}`);
    }
  }

  private produce(b: Buffer, off: number, len: number): void {
    const reqId = b.readUInt32LE(off + 4);
    const slot = b.readUInt32LE(off + 8);
    const handle = b.readUInt32LE(off + 12);
    const actor = this.actors.get(handle);
    const result: ProduceResult = { reqId, slot, errorCode: 0, baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
    if (!actor) {
      result.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
      this.send({ kind: 'produce', result });
      return;
    }
    // The log keeps the batch until its commit settles, so it must leave the ring's memory before
    // release(); its slab space is reused once that commit settled.
    const lease = this.slabs.take(len - PRODUCE_HEADER_BYTES);
    const records = lease.buf;
    b.copy(records, 0, off + PRODUCE_HEADER_BYTES, off + len);
    const appended = actor.produce(records);
    result.logStartOffset = actor.log.logStartOffset;
    if (appended.kind === 'error') {
      this.slabs.release(lease.slab);
      result.errorCode = appended.code;
      this.send({ kind: 'produce', result });
      return;
    }
    result.baseOffset = appended.baseOffset;
    if (appended.kind === 'appended') result.logAppendTime = appended.logAppendTime;
    this.committer.commit(actor.log).then(
      () => {
        this.slabs.release(lease.slab);
        this.wakeWaiters(actor);
        this.send({ kind: 'produce', result });
      },
      (err: unknown) => {
        this.slabs.release(lease.slab);
        actor.lastError = String(err);
        result.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
        result.baseOffset = -1;
        this.send({ kind: 'produce', result });
      },
    );
  }

  private groupCall(reqId: number, handle: number, payload: Buffer): void {
    // A copy: deserialized byte arrays are views of the input, and the coordinator keeps member
    // metadata long after this ring message is released.
    const call = deserialize(Buffer.from(payload)) as GroupCall;
    const coordinator = this.coordinators.get(handle);
    if (!coordinator) this.replyGroup(reqId, errorReply(call, ErrorCode.NOT_COORDINATOR));
    else coordinator.call(reqId, call);
  }

  private replyGroup(reqId: number, reply: GroupReply): void {
    this.send({ kind: 'group', reqId, payload: serialize(reply) });
  }

  private fetch(ask: FetchAsk): void {
    const { parts, bytes, failed } = this.readAll(ask);
    const multi = (ask.flags & FETCH_FLAG_MULTI_SHARD) !== 0;
    if (ask.maxWaitMs === 0 || failed || bytes >= ask.minBytes || (multi && bytes > 0) || !this.running) {
      this.send({ kind: 'fetch', reqId: ask.reqId, parts });
      return;
    }
    const timer = setTimeout(() => this.completeFetch(ask.reqId), ask.maxWaitMs);
    this.parked.set(ask.reqId, { ask, timer });
    for (const p of ask.partitions) this.actors.get(p.handle)?.waiters.add(ask.reqId);
  }

  private readAll(ask: FetchAsk): { parts: FetchPartitionResult[]; bytes: number; failed: boolean } {
    let bytes = 0;
    let failed = false;
    const parts: FetchPartitionResult[] = new Array(ask.partitions.length);
    for (let i = 0; i < ask.partitions.length; i++) {
      const p = ask.partitions[i]!;
      const actor = this.actors.get(p.handle);
      if (!actor) {
        parts[i] = { slot: p.slot, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, logStartOffset: -1, ranges: [] };
        failed = true;
        continue;
      }
      const budget = Math.min(p.partitionMaxBytes, Math.max(0, ask.maxBytes - bytes));
      const r = actor.read(p.fetchOffset, budget, bytes === 0);
      if (r.error !== 0) failed = true;
      bytes += r.bytes;
      parts[i] = {
        slot: p.slot,
        errorCode: r.error,
        highWatermark: actor.log.highWatermark,
        logStartOffset: actor.log.logStartOffset,
        ranges: r.ranges,
      };
    }
    return { parts, bytes, failed };
  }

  private wakeWaiters(actor: PartitionActor): void {
    if (actor.waiters.size === 0) return;
    for (const reqId of [...actor.waiters]) {
      const parked = this.parked.get(reqId);
      if (!parked) continue;
      const { bytes } = this.readAll(parked.ask);
      const multi = (parked.ask.flags & FETCH_FLAG_MULTI_SHARD) !== 0;
      if (bytes >= parked.ask.minBytes || (multi && bytes > 0)) this.completeFetch(reqId);
    }
  }

  private completeFetch(reqId: number): void {
    const parked = this.parked.get(reqId);
    if (!parked) return;
    this.parked.delete(reqId);
    clearTimeout(parked.timer);
    for (const p of parked.ask.partitions) this.actors.get(p.handle)?.waiters.delete(reqId);
    this.send({ kind: 'fetch', reqId, parts: this.readAll(parked.ask).parts });
  }

  // ---- outbound ring ----

  private send(msg: Outgoing): void {
    if (this.outbox.length > 0 || !this.tryWrite(msg)) {
      this.outbox.push(msg);
      if (!this.flushingOutbox) void this.flushOutbox();
    }
  }

  private tryWrite(msg: Outgoing): boolean {
    const ring = this.outbound;
    if (msg.kind === 'produce') {
      const at = ring.reserve(PRODUCE_RESULT_BYTES);
      if (at < 0) return false;
      writeProduceResult(ring.bytes, at, msg.result);
    } else if (msg.kind === 'group') {
      const at = ring.reserve(GROUP_RESULT_HEADER_BYTES + msg.payload.length);
      if (at < 0) return false;
      writeGroupResult(ring.bytes, at, msg.reqId, msg.payload);
    } else {
      const at = ring.reserve(fetchResultBytes(msg.parts));
      if (at < 0) return false;
      writeFetchResult(ring.bytes, at, msg.reqId, msg.parts);
    }
    ring.publish();
    return true;
  }

  private async flushOutbox(): Promise<void> {
    this.flushingOutbox = true;
    try {
      while (this.outbox.length > 0) {
        if (this.tryWrite(this.outbox[0]!)) this.outbox.shift();
        else await this.outbound.waitForSpace();
      }
    } finally {
      this.flushingOutbox = false;
    }
  }
}
