// The fetches one shard has parked (shard worker thread), by lane and request id (lanes.ts: two
// origins may use the same request id, so the registry keys a fetch by its lane-qualified key and
// answers it on its lane). A fetch may span several partition actors of the shard yet must be
// answered exactly once, so its record lives here rather than on any one actor; each actor keeps
// the keys of the fetches waiting on it and says when they may proceed (its readable end moved).
// A parked fetch is answered when the partitions it reads hold min_bytes, at its max_wait
// deadline on the shard's deadline wheel, on a FETCH_RELEASE from its lane, or when one of its
// partitions closes. When the request spans several shards, min_bytes counts all of them: a
// parked part reports each growth of its bytes to its lane, which releases every part once their
// sum reaches min_bytes.
// A follower's fetch (replicaId >= 0) is counted by the leader once, when it arrives (its fetch
// offsets are the follower's acknowledgement), and reads to the leader's log end; every later
// read of a parked one only checks the actor still leads at the epoch the follower named.
// Invariant (checked): one parked fetch per (lane, request id).
import { ErrorCode } from '../protocol/errors.js';
import type { DeadlineWheel } from './deadline_wheel.js';
import { laneKey } from './lanes.js';
import type { Expirable, PartitionActor } from './partition_actor.js';
import { FETCH_FLAG_MULTI_SHARD, type FetchAsk, type FetchPartitionResult } from './ring_messages.js';

/**
 * Main bounds fetches in flight by connections x in-flight requests each; beyond this many on one
 * shard a fetch is answered at once with what there is (an empty answer is valid Kafka).
 */
export const MAX_PARKED_FETCHES = 65_536;

interface Reading {
  parts: FetchPartitionResult[];
  bytes: number;
  /** An error or a diverging epoch: as in Kafka, answered without waiting for min_bytes. */
  answerNow: boolean;
}

class ParkedFetch implements Expirable {
  /** Bytes last reported to main (multi-shard fetches only). */
  reported = 0;

  constructor(
    readonly lane: number,
    /** laneKey(lane, ask.reqId): the registry's key and what the actors' waiters hold. */
    readonly key: number,
    readonly ask: FetchAsk,
    private readonly registry: ParkedFetches,
  ) {}

  expire(): void {
    this.registry.complete(this.key);
  }
}

export class ParkedFetches {
  private readonly parked = new Map<number, ParkedFetch>();

  constructor(
    private readonly actorOf: (handle: number) => PartitionActor | undefined,
    private readonly deadlines: DeadlineWheel<Expirable>,
    /** Answers fetch `reqId` on `lane`; `waited`: the fetch was parked before this answer. */
    private readonly send: (lane: number, reqId: number, parts: FetchPartitionResult[], waited: boolean) => void,
    private readonly progress: (lane: number, reqId: number, bytes: number) => void,
  ) {}

  get size(): number {
    return this.parked.size;
  }

  /** Answers `ask` from `lane` now if it has enough data (or may not wait), else parks it. */
  fetch(lane: number, ask: FetchAsk, mayPark: boolean): void {
    const r = this.readAll(ask, true);
    if (!mayPark || ask.maxWaitMs === 0 || r.answerNow || this.enough(ask, r.bytes) || this.parked.size >= MAX_PARKED_FETCHES) {
      this.send(lane, ask.reqId, r.parts, false);
      return;
    }
    // An origin never reuses the id of a request in flight; a clash would leave one fetch unanswered.
    const key = laneKey(lane, ask.reqId);
    if (this.parked.has(key)) throw new Error(`fetch ${ask.reqId} of lane ${lane} is already parked`);
    const parked = new ParkedFetch(lane, key, ask, this);
    this.parked.set(key, parked);
    this.deadlines.add(parked, this.deadlines.now() + ask.maxWaitMs);
    for (const p of ask.partitions) this.actorOf(p.handle)?.waiters.add(key);
    this.report(parked, r.bytes);
  }

  /** One of the partitions of parked fetch `key` has new data: answer if the fetch now has enough, else report it. */
  mayProceed(key: number): void {
    const parked = this.parked.get(key);
    if (!parked) return;
    const bytes = this.readAll(parked.ask, false).bytes;
    if (this.enough(parked.ask, bytes)) this.complete(key);
    else this.report(parked, bytes);
  }

  /** Tells the fetch's lane a multi-shard fetch's part grew, so it can weigh min_bytes against every shard's bytes. */
  private report(parked: ParkedFetch, bytes: number): void {
    if ((parked.ask.flags & FETCH_FLAG_MULTI_SHARD) === 0 || bytes <= parked.reported) return;
    parked.reported = bytes;
    this.progress(parked.lane, parked.ask.reqId, bytes);
  }

  /** Answers the parked fetch `key` (laneKey) with what its partitions hold now; no-op if it is not parked. */
  complete(key: number): void {
    const parked = this.parked.get(key);
    if (!parked) return;
    this.parked.delete(key);
    this.deadlines.delete(parked);
    for (const p of parked.ask.partitions) this.actorOf(p.handle)?.waiters.delete(key);
    this.send(parked.lane, parked.ask.reqId, this.readAll(parked.ask, false).parts, true);
  }

  completeAll(): void {
    for (const key of [...this.parked.keys()]) this.complete(key);
  }

  private enough(ask: FetchAsk, bytes: number): boolean {
    return bytes >= ask.minBytes;
  }

  /** `arriving`: the fetch is read for the first time (a follower's position is counted then). */
  private readAll(ask: FetchAsk, arriving: boolean): Reading {
    let bytes = 0;
    let answerNow = false;
    const parts: FetchPartitionResult[] = new Array(ask.partitions.length);
    for (let i = 0; i < ask.partitions.length; i++) {
      const p = ask.partitions[i]!;
      const actor = this.actorOf(p.handle);
      if (!actor) {
        parts[i] = { slot: p.slot, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, logStartOffset: -1, ranges: [], diverging: null };
        answerNow = true;
        continue;
      }
      if (ask.replicaId >= 0) {
        const budget = Math.min(p.partitionMaxBytes, Math.max(0, ask.maxBytes - bytes));
        // A partition asked with no budget (the leader's replication throttle, KIP-73) reads nothing, not even one batch.
        const part = this.readForReplica(ask, p, actor, budget, bytes === 0 && p.partitionMaxBytes > 0, arriving);
        if (part.errorCode !== ErrorCode.NONE || part.diverging !== null) answerNow = true;
        for (const r of part.ranges) bytes += r.length;
        parts[i] = part;
        continue;
      }
      const { highWatermark, logStartOffset } = actor.log;
      // A fetcher whose history parted from this log's learns where at once and reads nothing.
      const history = p.lastFetchedEpoch < 0 ? null : actor.log.fetchHistory(p.fetchOffset, p.lastFetchedEpoch);
      if (history !== null && history.kind !== 'agrees') {
        const diverging = history.kind === 'diverges' ? { epoch: history.epoch, endOffset: history.endOffset } : null;
        parts[i] = { slot: p.slot, errorCode: diverging ? ErrorCode.NONE : ErrorCode.OFFSET_OUT_OF_RANGE, highWatermark, logStartOffset, ranges: [], diverging };
        answerNow = true;
        continue;
      }
      const budget = Math.min(p.partitionMaxBytes, Math.max(0, ask.maxBytes - bytes));
      const r = actor.read(p.fetchOffset, budget, bytes === 0);
      if (r.error !== 0) answerNow = true;
      bytes += r.bytes;
      parts[i] = { slot: p.slot, errorCode: r.error, highWatermark, logStartOffset, ranges: r.ranges, diverging: null };
    }
    return { parts, bytes, answerNow };
  }

  private readForReplica(ask: FetchAsk, p: FetchAsk['partitions'][number], actor: PartitionActor, budget: number, minOneBatch: boolean, arriving: boolean): FetchPartitionResult {
    if (arriving) {
      const answer = actor.replicaFetch({
        replicaId: ask.replicaId,
        replicaEpoch: ask.replicaEpoch,
        currentLeaderEpoch: p.currentLeaderEpoch,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: p.lastFetchedEpoch,
        logStartOffset: p.logStartOffset,
      });
      if (answer.errorCode !== ErrorCode.NONE || answer.divergingEpoch !== null) {
        return { slot: p.slot, errorCode: answer.errorCode, highWatermark: answer.highWatermark, logStartOffset: answer.logStartOffset, ranges: [], diverging: answer.divergingEpoch };
      }
    }
    const r = actor.readForReplica(p.fetchOffset, budget, minOneBatch, p.currentLeaderEpoch);
    return { slot: p.slot, errorCode: r.error, highWatermark: actor.log.highWatermark, logStartOffset: actor.log.logStartOffset, ranges: r.ranges, diverging: null };
  }
}
