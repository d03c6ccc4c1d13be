// The main thread's façade over all shards: turns a request's per-partition work into messages
// for the owning shards' ports and gathers the answers back into one result array. It knows a
// shard only as a `ShardPort` (shard_port.ts): a ring pair to a worker (`RingShardPort`) or a lane of a
// `Shard` on this thread (`LocalShardPort`); the answers come back to it as the ports' sink.
// Owns the in-flight request maps (bounded by connections x in-flight requests per
// connection, enforced by the network layer) and one deadline wheel for all their timeouts.
// Invariant (checked): each slot of a request is answered at most once, by main or by a shard.
import { deserialize, serialize } from 'node:v8';
import type { FrameKeeper } from '../common/frame_pool.js';
import type { GroupCall, GroupReply } from '../coordinator/groups/group_api.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { DeadlineWheel } from './deadline_wheel.js';
import { trimToFetchLimits } from './fetch_limits.js';
import { RecentLeaderships } from './recent_leaderships.js';
import {
  FETCH_FLAG_MULTI_SHARD,
  OffsetLookupBy,
  type FetchPartitionAsk,
  type FetchPartitionResult,
  type ListOffsetsPartitionAsk,
  type ListOffsetsPartitionResult,
  type ProduceResult,
} from './ring_messages.js';
import type { ShardPort, ShardResultSink } from './shard_port.js';
import type { ShardTable } from './shard_table.js';

export interface ProduceItem {
  handle: number;
  records: Buffer;
  /** The cluster view's leader epoch this broker leads the partition under, stamped into the batch. */
  leaderEpoch: number;
}

export interface ProduceOutcome {
  errorCode: number;
  baseOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

export interface FetchItem {
  handle: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  /** Fetch v12+: the epoch of the fetcher's last batch, checked for divergence; -1 when not given. */
  lastFetchedEpoch: number;
  /** Fetch v9+: the leader epoch the fetcher believes current, -1 when not given. */
  currentLeaderEpoch: number;
  /** A follower's own log start offset, -1 from consumers. */
  logStartOffset: number;
}

/** Who fetches: a consumer (replicaId -1) or a follower broker and its broker epoch. */
export interface Fetcher {
  readonly replicaId: number;
  readonly replicaEpoch: number;
}

export const CONSUMER_FETCHER: Fetcher = { replicaId: -1, replicaEpoch: -1 };

/** A fetch's answer: per item, in item order, and whether any shard parked it (waited for min_bytes or max_wait). */
export interface FetchAnswer {
  readonly parts: FetchPartitionResult[];
  readonly waited: boolean;
}

export interface ListOffsetsItem {
  handle: number;
  /** -1 latest, -2 earliest, -3 max timestamp, else the first offset at or after this time. */
  timestamp: number;
}

export interface EpochEndItem {
  handle: number;
  /** The leader epoch whose end offset is asked (OffsetsForLeaderEpoch). */
  leaderEpoch: number;
}

/** For an epoch-end lookup, `offset` is the end offset and `leaderEpoch` the epoch it ends (timestamp -1). */
export interface ListOffsetsOutcome {
  errorCode: number;
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

interface PendingProduce {
  results: ProduceOutcome[];
  missing: number;
  resolve: (r: ProduceOutcome[]) => void;
}

interface PendingFetch {
  results: FetchPartitionResult[];
  shardsLeft: Set<number>;
  released: boolean;
  resolve: (r: FetchAnswer) => void;
  /** Some shard parked its part before answering. */
  waited: boolean;
  minBytes: number;
  maxBytes: number;
  /** Per slot, to trim a multi-shard answer to the response's limits; null for one shard, which applied them itself. */
  partitionMaxBytes: number[] | null;
  /** Bytes of the shards that answered, plus the last progress of those still parked. */
  answeredBytes: number;
  parkedBytes: Map<number, number>;
  /** The fetching follower's broker id; -1 for a consumer. */
  replicaId: number;
}

interface PendingListOffsets {
  results: ListOffsetsOutcome[];
  shardsLeft: Set<number>;
  resolve: (r: ListOffsetsOutcome[]) => void;
}

interface PendingGroupCall {
  shard: number;
  resolve: (r: GroupReply) => void;
  reject: (e: Error) => void;
}

// A shard answers a parked fetch at its deadline and a ListOffsets at once; this only guards
// against a dead shard.
const SHARD_SAFETY_MARGIN_MS = 30_000;
const MAX_REQ_ID = 0xffffffff;
/** Kafka's produce timeout is an int32 of milliseconds; the ring carries it as u32. */
const MAX_PRODUCE_TIMEOUT_MS = 0x7fffffff;
/** Granularity of request timeouts: Kafka's timeout_ms needs no finer. */
const TIMEOUT_TICK_MS = 10;

function failedOutcome(code: number): ProduceOutcome {
  return { errorCode: code, baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
}

function failedListOffsets(code: number): ListOffsetsOutcome {
  return { errorCode: code, offset: -1, timestamp: -1, leaderEpoch: -1 };
}

function failedFetch(slot: number, code: number): FetchPartitionResult {
  return { slot, errorCode: code, highWatermark: -1, logStartOffset: -1, ranges: [], diverging: null };
}

function checkSlot(slot: number, results: readonly unknown[], what: string): void {
  if (!(slot >= 0 && slot < results.length) || results[slot] !== undefined) {
    throw new Error(`${what} result for slot ${slot} of ${results.length} is out of range or answered twice`);
  }
}

export class PartitionRouter implements ShardResultSink {
  private ports: readonly ShardPort[] = [];
  private nextReqId = 1;
  private readonly produces = new Map<number, PendingProduce>();
  private readonly fetches = new Map<number, PendingFetch>();
  private readonly listings = new Map<number, PendingListOffsets>();
  private readonly deadlines = new DeadlineWheel<number>(TIMEOUT_TICK_MS, (reqId) => this.expire(reqId));
  // No timer: a JoinGroup legitimately waits for a whole rebalance. The coordinator answers
  // every call exactly once; a dead shard fails its calls through failShard().
  private readonly groupCalls = new Map<number, PendingGroupCall>();

  /** Leaderships this broker took lately: their followers' Fetches are not left parked (recent_leaderships.ts). */
  private readonly leaderships = new RecentLeaderships();

  constructor(readonly table: Pick<ShardTable, 'shardOf'>) {}

  /** Partition `handle`'s shard now leads it: the parked Fetches of `followers` (the other replicas) are answered, so the next can ask for it. */
  leadershipBegan(handle: number, followers: readonly number[]): void {
    this.leaderships.began(handle, followers, this.deadlines.now());
    if (followers.length === 0) return;
    for (const [reqId, f] of this.fetches) if (f.replicaId >= 0 && followers.includes(f.replicaId)) this.releaseFetch(reqId, f);
  }

  /** Partition `handle` no longer leads here. */
  leadershipEnded(handle: number): void {
    this.leaderships.ended(handle);
  }

  /** Shard i's port is `ports[i]`, the index the ShardTable maps partitions to. */
  attach(ports: readonly ShardPort[]): void {
    this.ports = ports;
  }

  /** Shards whose ports are blocked (ShardPort.blocked); a connection that just fed work pauses its socket until they drain. */
  blockedShards(): ShardPort[] {
    return this.ports.filter((p) => p.blocked);
  }

  /**
   * Resolves when every partition answered (acks=0 too: its errors close the connection). `keeper`
   * lends the frame the items' records are views of, to ports that stage them by reference.
   */
  produce(items: readonly ProduceItem[], timeoutMs: number, acks: number, keeper: FrameKeeper | null = null): Promise<ProduceOutcome[]> {
    const reqId = this.allocReqId();
    const timeout = Math.min(Math.max(0, timeoutMs), MAX_PRODUCE_TIMEOUT_MS);
    const results: ProduceOutcome[] = new Array(items.length);
    let missing = 0;
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot]!;
      const shard = this.table.shardOf(item.handle);
      if (shard < 0) results[slot] = failedOutcome(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      else if (!this.ports[shard]!.produce({ reqId, slot, handle: item.handle, acks, timeoutMs: timeout, leaderEpoch: item.leaderEpoch }, item.records, keeper)) {
        results[slot] = failedOutcome(ErrorCode.REQUEST_TIMED_OUT);
      } else missing++;
    }
    if (missing === 0) return Promise.resolve(results);
    return new Promise((resolve) => {
      this.deadlines.add(reqId, this.deadlines.now() + Math.max(1, timeout));
      this.produces.set(reqId, { results, missing, resolve });
    });
  }

  fetch(items: readonly FetchItem[], maxWait: number, minBytes: number, maxBytes: number, fetcher: Fetcher = CONSUMER_FETCHER): Promise<FetchAnswer> {
    const reqId = this.allocReqId();
    const maxWaitMs = fetcher.replicaId < 0 || this.leaderships.size === 0 ? maxWait
      : this.leaderships.maxWaitFor(fetcher.replicaId, new Set(items.map((i) => i.handle)), maxWait, this.deadlines.now());
    const results: FetchPartitionResult[] = new Array(items.length);
    const byShard = new Map<number, FetchPartitionAsk[]>();
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot]!;
      const shard = this.table.shardOf(item.handle);
      if (shard < 0) {
        results[slot] = failedFetch(slot, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        continue;
      }
      let asks = byShard.get(shard);
      if (!asks) byShard.set(shard, (asks = []));
      asks.push({
        slot, handle: item.handle, fetchOffset: item.fetchOffset, partitionMaxBytes: item.partitionMaxBytes,
        lastFetchedEpoch: item.lastFetchedEpoch, currentLeaderEpoch: item.currentLeaderEpoch, logStartOffset: item.logStartOffset,
      });
    }
    if (byShard.size === 0) return Promise.resolve({ parts: results, waited: false });
    const flags = byShard.size > 1 ? FETCH_FLAG_MULTI_SHARD : 0;
    const shardsLeft = new Set<number>();
    for (const [shard, partitions] of byShard) {
      const ok = this.ports[shard]!.fetch({ reqId, flags, replicaId: fetcher.replicaId, replicaEpoch: fetcher.replicaEpoch, maxWaitMs, minBytes, maxBytes, partitions });
      if (ok) shardsLeft.add(shard);
      else for (const p of partitions) results[p.slot] = failedFetch(p.slot, ErrorCode.REQUEST_TIMED_OUT);
    }
    if (shardsLeft.size === 0) return Promise.resolve({ parts: results, waited: false });
    return new Promise((resolve) => {
      this.deadlines.add(reqId, this.deadlines.now() + maxWaitMs + SHARD_SAFETY_MARGIN_MS);
      const partitionMaxBytes = flags === 0 ? null : items.map((i) => i.partitionMaxBytes);
      this.fetches.set(reqId, {
        results, shardsLeft, released: false, resolve, waited: false, minBytes, maxBytes, partitionMaxBytes, answeredBytes: 0, parkedBytes: new Map(), replicaId: fetcher.replicaId,
      });
    });
  }

  /** ListOffsets by timestamp; answered in item order. */
  listOffsets(items: readonly ListOffsetsItem[]): Promise<ListOffsetsOutcome[]> {
    return this.lookUpOffsets(OffsetLookupBy.TIMESTAMP, items.map((it) => ({ handle: it.handle, key: it.timestamp })));
  }

  /** OffsetsForLeaderEpoch: where each asked epoch ends in its partition's log; answered in item order. */
  epochEndOffsets(items: readonly EpochEndItem[]): Promise<ListOffsetsOutcome[]> {
    return this.lookUpOffsets(OffsetLookupBy.EPOCH_END, items.map((it) => ({ handle: it.handle, key: it.leaderEpoch })));
  }

  /** One ring message per owning shard carries all of that shard's partitions. */
  private lookUpOffsets(by: OffsetLookupBy, items: ReadonlyArray<{ handle: number; key: number }>): Promise<ListOffsetsOutcome[]> {
    const reqId = this.allocReqId();
    const results: ListOffsetsOutcome[] = new Array(items.length);
    const byShard = new Map<number, ListOffsetsPartitionAsk[]>();
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot]!;
      const shard = this.table.shardOf(item.handle);
      if (shard < 0) {
        results[slot] = failedListOffsets(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        continue;
      }
      let asks = byShard.get(shard);
      if (!asks) byShard.set(shard, (asks = []));
      asks.push({ slot, handle: item.handle, key: item.key });
    }
    const shardsLeft = new Set<number>();
    for (const [shard, partitions] of byShard) {
      if (this.ports[shard]!.listOffsets({ reqId, by, partitions })) shardsLeft.add(shard);
      else for (const p of partitions) results[p.slot] = failedListOffsets(ErrorCode.REQUEST_TIMED_OUT);
    }
    if (shardsLeft.size === 0) return Promise.resolve(results);
    return new Promise((resolve) => {
      this.deadlines.add(reqId, this.deadlines.now() + SHARD_SAFETY_MARGIN_MS);
      this.listings.set(reqId, { results, shardsLeft, resolve });
    });
  }

  /** Runs `call` on the group coordinator of offsets partition `handle`. Rejects with KafkaError when it cannot be delivered. */
  groupCall(handle: number, call: GroupCall): Promise<GroupReply> {
    const shard = this.table.shardOf(handle);
    if (shard < 0) return Promise.reject(new KafkaError(ErrorCode.NOT_COORDINATOR, 'offsets partition is not open'));
    const reqId = this.allocReqId();
    if (!this.ports[shard]!.groupCall(reqId, handle, serialize(call))) {
      return Promise.reject(new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'coordinator shard is overloaded'));
    }
    return new Promise((resolve, reject) => this.groupCalls.set(reqId, { shard, resolve, reject }));
  }

  onGroupResult(_shard: number, reqId: number, payload: Buffer): void {
    const call = this.groupCalls.get(reqId);
    if (!call) return;
    this.groupCalls.delete(reqId);
    // V8 deserializes byte arrays as views of its input: copy out of the ring first, or the
    // reply's Buffers would alias ring memory that is reused once released.
    call.resolve(deserialize(Buffer.from(payload)) as GroupReply);
  }

  /** A shard died: its coordinators will never answer. */
  failShard(shard: number): void {
    for (const [reqId, call] of this.groupCalls) {
      if (call.shard !== shard) continue;
      this.groupCalls.delete(reqId);
      call.reject(new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `shard ${shard} stopped`));
    }
  }

  onProduceResult(_shard: number, r: ProduceResult): void {
    const p = this.produces.get(r.reqId);
    if (!p) return; // answered already: it timed out on main
    checkSlot(r.slot, p.results, 'produce');
    p.results[r.slot] = { errorCode: r.errorCode, baseOffset: r.baseOffset, logAppendTime: r.logAppendTime, logStartOffset: r.logStartOffset };
    if (--p.missing === 0) {
      this.deadlines.delete(r.reqId);
      this.produces.delete(r.reqId);
      p.resolve(p.results);
    }
  }

  onFetchResult(shard: number, reqId: number, parts: FetchPartitionResult[], waited: boolean): void {
    const f = this.fetches.get(reqId);
    if (!f || !f.shardsLeft.delete(shard)) return;
    if (waited) f.waited = true;
    f.parkedBytes.delete(shard);
    let answerNow = false;
    for (const part of parts) {
      checkSlot(part.slot, f.results, 'fetch');
      f.results[part.slot] = part;
      if (part.errorCode !== ErrorCode.NONE || part.diverging !== null) answerNow = true;
      for (const r of part.ranges) f.answeredBytes += r.length;
    }
    if (f.shardsLeft.size === 0) {
      this.deadlines.delete(reqId);
      this.fetches.delete(reqId);
      this.resolveFetch(f);
    } else if (answerNow) {
      // As in Kafka, an error or a diverging epoch is answered at once: the other shards answer with what they have.
      this.releaseFetch(reqId, f);
    } else this.releaseIfEnough(reqId, f);
  }

  onFetchProgress(shard: number, reqId: number, bytes: number): void {
    const f = this.fetches.get(reqId);
    if (!f || !f.shardsLeft.has(shard)) return;
    f.parkedBytes.set(shard, bytes);
    this.releaseIfEnough(reqId, f);
  }

  private resolveFetch(f: PendingFetch): void {
    if (f.partitionMaxBytes !== null) trimToFetchLimits(f.results, f.partitionMaxBytes, f.maxBytes);
    f.resolve({ parts: f.results, waited: f.waited });
  }

  /** min_bytes holds for the whole response: release the parked shards once all of them together hold it. */
  private releaseIfEnough(reqId: number, f: PendingFetch): void {
    let bytes = f.answeredBytes;
    for (const b of f.parkedBytes.values()) bytes += b;
    if (bytes >= f.minBytes) this.releaseFetch(reqId, f);
  }

  private releaseFetch(reqId: number, f: PendingFetch): void {
    if (f.released) return;
    f.released = true;
    for (const s of f.shardsLeft) this.ports[s]!.release(reqId);
  }

  onListOffsetsResult(shard: number, reqId: number, parts: ListOffsetsPartitionResult[]): void {
    const l = this.listings.get(reqId);
    if (!l || !l.shardsLeft.delete(shard)) return;
    for (const part of parts) {
      checkSlot(part.slot, l.results, 'list-offsets');
      l.results[part.slot] = { errorCode: part.errorCode, offset: part.offset, timestamp: part.timestamp, leaderEpoch: part.leaderEpoch };
    }
    if (l.shardsLeft.size === 0) {
      this.deadlines.delete(reqId);
      this.listings.delete(reqId);
      l.resolve(l.results);
    }
  }

  private expire(reqId: number): void {
    this.expireProduce(reqId);
    this.expireFetch(reqId);
    this.expireListOffsets(reqId);
  }

  private expireListOffsets(reqId: number): void {
    const l = this.listings.get(reqId);
    if (!l) return;
    this.listings.delete(reqId);
    for (let i = 0; i < l.results.length; i++) l.results[i] ??= failedListOffsets(ErrorCode.REQUEST_TIMED_OUT);
    l.resolve(l.results);
  }

  private expireProduce(reqId: number): void {
    const p = this.produces.get(reqId);
    if (!p) return;
    this.produces.delete(reqId);
    for (let i = 0; i < p.results.length; i++) p.results[i] ??= failedOutcome(ErrorCode.REQUEST_TIMED_OUT);
    p.resolve(p.results);
  }

  private expireFetch(reqId: number): void {
    const f = this.fetches.get(reqId);
    if (!f) return;
    this.fetches.delete(reqId);
    for (let i = 0; i < f.results.length; i++) {
      f.results[i] ??= failedFetch(i, ErrorCode.REQUEST_TIMED_OUT);
    }
    // A shard that never answered held the fetch up to its deadline.
    f.waited = true;
    this.resolveFetch(f);
  }

  private allocReqId(): number {
    const id = this.nextReqId;
    this.nextReqId = id === MAX_REQ_ID ? 1 : id + 1;
    return id;
  }
}
