// The main thread's façade over all shards: turns a request's per-partition work into ring
// messages for the owning shards and gathers the answers back into one result array.
// Owns the in-flight request maps (bounded by connections x in-flight requests per
// connection, enforced by the network layer) and their timers.
import { deserialize, serialize } from 'node:v8';
import type { GroupCall, GroupReply } from '../coordinator/groups/group_api.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import {
  FETCH_FLAG_MULTI_SHARD,
  type FetchPartitionAsk,
  type FetchPartitionResult,
  type ProduceResult,
} from './ring_messages.js';
import type { ShardHost, ShardResultSink } from './shard_host.js';
import type { ShardTable } from './shard_table.js';

export interface ProduceItem {
  handle: number;
  records: Buffer;
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
}

interface PendingProduce {
  results: ProduceOutcome[];
  missing: number;
  timer: NodeJS.Timeout;
  resolve: (r: ProduceOutcome[]) => void;
}

interface PendingFetch {
  results: FetchPartitionResult[];
  shardsLeft: Set<number>;
  released: boolean;
  timer: NodeJS.Timeout;
  resolve: (r: FetchPartitionResult[]) => void;
}

interface PendingGroupCall {
  shard: number;
  resolve: (r: GroupReply) => void;
  reject: (e: Error) => void;
}

// A shard answers a parked fetch at its deadline; this only guards against a dead shard.
const FETCH_SAFETY_MARGIN_MS = 30_000;
const REQ_ID_MAX = 0xffffffff;

function failedOutcome(code: number): ProduceOutcome {
  return { errorCode: code, baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
}

export class PartitionRouter implements ShardResultSink {
  private hosts: ShardHost[] = [];
  private nextReqId = 1;
  private readonly produces = new Map<number, PendingProduce>();
  private readonly fetches = new Map<number, PendingFetch>();
  // No timer: a JoinGroup legitimately waits for a whole rebalance. The coordinator answers
  // every call exactly once; a dead shard fails its calls through failShard().
  private readonly groupCalls = new Map<number, PendingGroupCall>();

  constructor(readonly table: ShardTable) {}

  attach(hosts: ShardHost[]): void {
    this.hosts = hosts;
  }

  host(shard: number): ShardHost {
    return this.hosts[shard]!;
  }

  /** Shards whose inbound rings are full; a connection that just fed work pauses its socket until they drain. */
  blockedShards(): ShardHost[] {
    return this.hosts.filter((h) => h.blocked);
  }

  /** Resolves when every partition answered (acks=0 too: its errors close the connection). */
  produce(items: readonly ProduceItem[], timeoutMs: number): Promise<ProduceOutcome[]> {
    const reqId = this.allocReqId();
    const results: ProduceOutcome[] = new Array(items.length);
    let missing = 0;
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot]!;
      const shard = this.table.shardOf(item.handle);
      if (shard < 0) results[slot] = failedOutcome(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      else if (!this.hosts[shard]!.produce(reqId, slot, item.handle, item.records)) {
        results[slot] = failedOutcome(ErrorCode.REQUEST_TIMED_OUT);
      } else missing++;
    }
    if (missing === 0) return Promise.resolve(results);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.expireProduce(reqId), Math.max(1, timeoutMs));
      this.produces.set(reqId, { results, missing, timer, resolve });
    });
  }

  fetch(items: readonly FetchItem[], maxWaitMs: number, minBytes: number, maxBytes: number): Promise<FetchPartitionResult[]> {
    const reqId = this.allocReqId();
    const results: FetchPartitionResult[] = new Array(items.length);
    const byShard = new Map<number, FetchPartitionAsk[]>();
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot]!;
      const shard = this.table.shardOf(item.handle);
      if (shard < 0) {
        results[slot] = { slot, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, logStartOffset: -1, ranges: [] };
        continue;
      }
      let asks = byShard.get(shard);
      if (!asks) byShard.set(shard, (asks = []));
      asks.push({ slot, handle: item.handle, fetchOffset: item.fetchOffset, partitionMaxBytes: item.partitionMaxBytes });
    }
    if (byShard.size === 0) return Promise.resolve(results);
    const flags = byShard.size > 1 ? FETCH_FLAG_MULTI_SHARD : 0;
    const shardsLeft = new Set<number>();
    for (const [shard, partitions] of byShard) {
      const ok = this.hosts[shard]!.fetch({ reqId, flags, maxWaitMs, minBytes, maxBytes, partitions });
      if (ok) shardsLeft.add(shard);
      else for (const p of partitions) results[p.slot] = { slot: p.slot, errorCode: ErrorCode.REQUEST_TIMED_OUT, highWatermark: -1, logStartOffset: -1, ranges: [] };
    }
    if (shardsLeft.size === 0) return Promise.resolve(results);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.expireFetch(reqId), maxWaitMs + FETCH_SAFETY_MARGIN_MS);
      this.fetches.set(reqId, { results, shardsLeft, released: false, timer, resolve });
    });
  }

  /** Runs `call` on the group coordinator of offsets partition `handle`. Rejects with KafkaError when it cannot be delivered. */
  groupCall(handle: number, call: GroupCall): Promise<GroupReply> {
    const shard = this.table.shardOf(handle);
    if (shard < 0) return Promise.reject(new KafkaError(ErrorCode.NOT_COORDINATOR, 'offsets partition is not open'));
    const reqId = this.allocReqId();
    if (!this.hosts[shard]!.groupCall(reqId, handle, serialize(call))) {
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
    if (!p || p.results[r.slot] !== undefined) return;
    p.results[r.slot] = { errorCode: r.errorCode, baseOffset: r.baseOffset, logAppendTime: r.logAppendTime, logStartOffset: r.logStartOffset };
    if (--p.missing === 0) {
      clearTimeout(p.timer);
      this.produces.delete(r.reqId);
      p.resolve(p.results);
    }
  }

  onFetchResult(shard: number, reqId: number, parts: FetchPartitionResult[]): void {
    const f = this.fetches.get(reqId);
    if (!f || !f.shardsLeft.delete(shard)) return;
    let bytes = 0;
    for (const part of parts) {
      f.results[part.slot] = part;
      for (const r of part.ranges) bytes += r.length;
    }
    if (f.shardsLeft.size === 0) {
      clearTimeout(f.timer);
      this.fetches.delete(reqId);
      f.resolve(f.results);
    } else if (bytes > 0 && !f.released) {
      // Data arrived from one shard: the others answer now with whatever they have.
      f.released = true;
      for (const s of f.shardsLeft) this.hosts[s]!.release(reqId);
    }
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
      f.results[i] ??= { slot: i, errorCode: ErrorCode.REQUEST_TIMED_OUT, highWatermark: -1, logStartOffset: -1, ranges: [] };
    }
    f.resolve(f.results);
  }

  private allocReqId(): number {
    const id = this.nextReqId;
    this.nextReqId = id === REQ_ID_MAX ? 1 : id + 1;
    return id;
  }
}
