// The consumer's fetch side: the position of every assigned partition, and one Fetch pipeline
// per leader: each leader gets a long-poll Fetch for its partitions as soon as it has none
// outstanding, and every answer is applied as soon as a poll finds it, whatever the other
// leaders are doing, so one slow or moving leader delays only its own partitions (Java's
// consumer works the same way). Runs on the consumer's thread.
// Invariants: at most one Fetch per leader is outstanding and a partition is in at most one;
// an answer is applied only if, when it is applied, its partition is still assigned (the same
// assignment, not a later re-add), unpaused and still at the offset that was fetched — so a
// revoke, pause or seek made while a fetch is in flight discards its records; records below
// the position (a batch may start before it) and control batches are never returned; positions
// only move forward except by seek or reset, or back to where a leader's divergingEpoch says the
// log was truncated (KIP-320). Buffered answers are bounded by one per leader, each by maxBytes;
// other state is bounded by the assignment (cluster-given).
// Leader moves: each partition is fetched with the cached leader epoch (a stale leader answers
// FENCED_LEADER_EPOCH, a lagging one UNKNOWN_LEADER_EPOCH: metadata is refreshed) and the epoch of
// the last batch returned; a NOT_LEADER_OR_FOLLOWER naming a newer leader (KIP-951) moves the
// partition to that leader's next request without a Metadata request.
import { FetchApi } from '../../protocol/apis/fetch.js';
import type { FetchRequestTopic, FetchResponse, FetchResponsePartition } from '../../protocol/apis/fetch.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { ZERO_UUID, decodedRecords } from '../../protocol/schema.js';
import { brokerError } from '../broker_errors.js';
import { isStaleMetadataError } from '../cluster.js';
import type { Cluster } from '../cluster.js';
import { hintFrom } from '../leader_hints.js';
import { decodeRecordBatches } from '../../protocol/records.js';
import { isTransient } from './membership.js';
import { listOffsets } from './offsets.js';
import { keyOf, tpKey } from './topic_partitions.js';
import type { ConsumerMessage, FetchSizeOptions, FetchedBatch, OffsetReset, TopicPartition } from './types.js';
import { Waker } from './waker.js';

/** v13+ identifies topics by id only; v12 still names them, which is all we need. */
const FETCH_MAX_VERSION = 12;
const NEEDS_RESET = -1;

export interface FetcherOptions {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly requestTimeoutMs: number;
  readonly autoOffsetReset: OffsetReset;
}

interface PartitionState extends TopicPartition {
  /** Next offset to return; NEEDS_RESET until autoOffsetReset has placed it. */
  position: number;
  /** Leader epoch of the batch holding position - 1; -1 when unknown (after a seek or reset). */
  lastFetchedEpoch: number;
  paused: boolean;
  /** In a Fetch that has not been answered yet. */
  inFlight: boolean;
}

interface Sent {
  readonly state: PartitionState;
  readonly offset: number;
}

interface LeaderResult {
  readonly leader: number;
  readonly sent: readonly Sent[];
  readonly res: FetchResponse | null;
}

export class Fetcher {
  private readonly parts = new Map<string, PartitionState>();
  private maxBytes: number;
  private partitionMaxBytes: number;
  /** Leaders with a Fetch outstanding. */
  private readonly fetching = new Set<number>();
  /** Answers not applied yet, in arrival order (at most one per leader). */
  private answered: LeaderResult[] = [];
  /** An error met while applying answers that also returned records: thrown by the next fetch(). */
  private failure: Error | null = null;
  /** Woken when there may be something new to fetch or apply (assignment, resume, seek, an answer, close). */
  readonly changed = new Waker();

  constructor(private readonly cluster: Cluster, private readonly opts: FetcherOptions, sizes: FetchSizeOptions) {
    this.maxBytes = sizes.maxBytes ?? 50 * 1024 * 1024;
    this.partitionMaxBytes = sizes.partitionMaxBytes ?? 1024 * 1024;
  }

  /** Starts fetching `tp` at `position` (null: per autoOffsetReset). Re-adding replaces the old state. */
  add(tp: TopicPartition, position: number | null): void {
    this.parts.set(keyOf(tp), { topic: tp.topic, partition: tp.partition, position: position ?? NEEDS_RESET, lastFetchedEpoch: -1, paused: false, inFlight: false });
    this.changed.notify();
  }

  remove(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.parts.delete(keyOf(tp));
  }

  assigned(): TopicPartition[] {
    return [...this.parts.values()].map(({ topic, partition }) => ({ topic, partition }));
  }

  has(tp: TopicPartition): boolean {
    return this.parts.has(keyOf(tp));
  }

  /** Next offset to consume per partition whose position is known. */
  positions(): { topic: string; partition: number; offset: number }[] {
    const out: { topic: string; partition: number; offset: number }[] = [];
    for (const s of this.parts.values()) if (s.position >= 0) out.push({ topic: s.topic, partition: s.partition, offset: s.position });
    return out;
  }

  setPaused(tps: readonly TopicPartition[], paused: boolean): void {
    for (const tp of tps) {
      const s = this.parts.get(keyOf(tp));
      if (s !== undefined) s.paused = paused;
    }
    if (!paused) this.changed.notify();
  }

  seek(tp: TopicPartition, offset: number): void {
    const s = this.parts.get(keyOf(tp));
    if (s === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${tp.topic}-${tp.partition} is not assigned`);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`cannot seek to offset ${offset}`);
    s.position = offset;
    s.lastFetchedEpoch = -1;
    this.changed.notify();
  }

  setFetchSize(size: FetchSizeOptions): void {
    if (size.maxBytes !== undefined) this.maxBytes = size.maxBytes;
    if (size.partitionMaxBytes !== undefined) this.partitionMaxBytes = size.partitionMaxBytes;
  }

  /**
   * Resets positions that need it, sends a Fetch to every leader without one outstanding, and
   * returns the records of the answers that have arrived, waiting (≤ maxWaitMs) for the first
   * when none has; [] when nothing came or `signal` aborted (answers then stay for the next call).
   * Before returning it sends the next Fetch to each leader just answered, so those records are
   * on their way while the caller works.
   */
  async fetch(signal?: AbortSignal): Promise<FetchedBatch[]> {
    if (this.failure !== null) {
      const failure = this.failure;
      this.failure = null;
      throw failure;
    }
    await this.resetPositions();
    const deadline = Date.now() + this.opts.maxWaitMs;
    await this.sendToIdleLeaders();
    while (this.answered.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted === true) return [];
      await this.changed.wait(left, signal);
      // An assignment, resume or seek may have made a partition fetchable.
      if (this.answered.length === 0) await this.sendToIdleLeaders();
    }
    // An abandoned poll applies nothing: its caller would drop the records the positions passed.
    if (signal?.aborted === true) return [];
    const out = this.applyAnswered();
    void this.sendToIdleLeaders();
    return out;
  }

  private async resetPositions(): Promise<void> {
    const pending = [...this.parts.values()].filter((s) => s.position === NEEDS_RESET && !s.paused);
    if (pending.length === 0) return;
    const spec = this.opts.autoOffsetReset;
    if (spec === 'none') {
      const first = pending[0] as PartitionState;
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `no offset for ${first.topic}-${first.partition} and autoOffsetReset is 'none'`);
    }
    let found: Map<string, number>;
    try {
      found = await listOffsets(this.cluster, pending, spec);
    } catch (err) {
      // A moved leader or a dropped connection: the positions stay unplaced until a later poll.
      if (isTransient(err) || (err instanceof KafkaError && isStaleMetadataError(err.code))) return;
      throw err;
    }
    for (const s of pending) {
      const offset = found.get(keyOf(s));
      if (offset !== undefined && this.parts.get(keyOf(s)) === s && s.position === NEEDS_RESET) {
        s.position = offset;
        s.lastFetchedEpoch = -1;
      }
    }
  }

  /** Sends one Fetch to each leader of a fetchable partition that has none outstanding. */
  private async sendToIdleLeaders(): Promise<void> {
    await this.learnLeaders();
    // From here on synchronous: two overlapping calls cannot both send to one leader.
    const byLeader = new Map<number, Sent[]>();
    for (const state of this.parts.values()) {
      if (state.paused || state.position < 0 || state.inFlight) continue;
      const leader = this.cluster.leaderOf(state.topic, state.partition);
      if (leader < 0 || this.fetching.has(leader)) continue;
      const list = byLeader.get(leader);
      const sent = { state, offset: state.position };
      if (list === undefined) byLeader.set(leader, [sent]);
      else list.push(sent);
    }
    for (const [leader, sent] of byLeader) {
      this.fetching.add(leader);
      for (const s of sent) s.state.inFlight = true;
      void this.fetchFrom(leader, sent).then((result) => {
        this.fetching.delete(leader);
        for (const s of sent) s.state.inFlight = false;
        this.answered.push(result);
        this.changed.notify();
      });
    }
  }

  /** Loads metadata for fetchable partitions whose topic or leader is unknown; never rejects. */
  private async learnLeaders(): Promise<void> {
    let stale = false;
    for (const state of this.parts.values()) {
      if (state.paused || state.position < 0 || state.inFlight) continue;
      if (this.cluster.cachedTopic(state.topic) === undefined) await this.cluster.topic(state.topic).catch(() => undefined);
      if (this.cluster.leaderOf(state.topic, state.partition) < 0) {
        this.cluster.markStale(state.topic);
        stale = true;
      }
    }
    if (stale) await this.cluster.refresh().catch(() => undefined);
  }

  private async fetchFrom(leader: number, sent: readonly Sent[]): Promise<LeaderResult> {
    const topics = new Map<string, FetchRequestTopic>();
    for (const { state, offset } of sent) {
      let t = topics.get(state.topic);
      if (t === undefined) {
        t = { topic: state.topic, topicId: ZERO_UUID, partitions: [] };
        topics.set(state.topic, t);
      }
      t.partitions.push({
        partition: state.partition, currentLeaderEpoch: this.cluster.leaderEpochOf(state.topic, state.partition),
        fetchOffset: offset, lastFetchedEpoch: state.lastFetchedEpoch,
        logStartOffset: -1, partitionMaxBytes: this.partitionMaxBytes, replicaDirectoryId: ZERO_UUID,
      });
    }
    try {
      const conn = await this.cluster.connection(leader);
      const version = Math.min(FETCH_MAX_VERSION, conn.versionFor(FetchApi));
      const res = await conn.request(FetchApi, {
        clusterId: null, replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1 },
        maxWaitMs: this.opts.maxWaitMs, minBytes: this.opts.minBytes, maxBytes: this.maxBytes, isolationLevel: 0,
        sessionId: 0, sessionEpoch: -1, topics: [...topics.values()], forgottenTopicsData: [], rackId: '',
      }, version, { timeoutMs: this.opts.maxWaitMs + this.opts.requestTimeoutMs });
      return { leader, sent, res };
    } catch {
      // A lost leader connection: its partitions' leaders may have moved; the next round retries.
      for (const t of topics.keys()) this.cluster.markStale(t);
      return { leader, sent, res: null };
    }
  }

  /** Applies every buffered answer; an error is thrown now if no records came with it, else by the next fetch(). */
  private applyAnswered(): FetchedBatch[] {
    const results = this.answered;
    this.answered = [];
    const out: FetchedBatch[] = [];
    let failure: Error | null = null;
    for (const { leader, sent, res } of results) {
      if (res === null) continue;
      if (res.errorCode !== ErrorCode.NONE) {
        failure ??= brokerError(res.errorCode, 'fetch', null);
        continue;
      }
      const bySlot = new Map<string, Sent>();
      for (const s of sent) bySlot.set(keyOf(s.state), s);
      for (const t of res.responses) {
        for (const p of t.partitions) {
          const s = bySlot.get(tpKey(t.topic, p.partitionIndex));
          if (s === undefined || this.parts.get(keyOf(s.state)) !== s.state || s.state.paused || s.state.position !== s.offset) continue;
          try {
            const batch = this.applyPartition(s.state, p, leader, res);
            if (batch !== null) out.push(batch);
          } catch (err) {
            failure ??= err as Error;
          }
        }
      }
    }
    if (failure !== null) {
      if (out.length === 0) throw failure;
      this.failure = failure;
    }
    return out;
  }

  /** Applies broker `leader`'s answer `p` (part of `res`) for `state`'s partition. */
  private applyPartition(state: PartitionState, p: FetchResponsePartition, leader: number, res: FetchResponse): FetchedBatch | null {
    if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      state.position = NEEDS_RESET;
      return null;
    }
    if (p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
      // Applies the hint (or marks the topic stale when it names nobody new).
      this.cluster.followLeaderHint(hintFrom(state.topic, state.partition, p.currentLeader, res.nodeEndpoints), leader);
      return null;
    }
    if (isStaleMetadataError(p.errorCode)) {
      this.cluster.markStale(state.topic);
      return null;
    }
    if (p.errorCode !== ErrorCode.NONE) throw brokerError(p.errorCode, `fetch ${state.topic}-${state.partition}`, null);
    if (p.divergingEpoch.epoch >= 0) {
      // Our last fetched epoch ends earlier on this leader: the log was truncated past what we
      // read. Continue from the end of the last epoch both histories share.
      state.position = Math.min(state.position, p.divergingEpoch.endOffset);
      state.lastFetchedEpoch = p.divergingEpoch.epoch;
      return null;
    }
    if (p.records === null) return null;
    const data = decodedRecords(p.records);
    const messages: ConsumerMessage[] = [];
    let next = state.position;
    for (const batch of decodeRecordBatches(data)) {
      if (batch.lastOffset >= next && batch.partitionLeaderEpoch >= 0) state.lastFetchedEpoch = batch.partitionLeaderEpoch;
      if (batch.lastOffset + 1 > next && batch.control) next = batch.lastOffset + 1;
      if (batch.control) continue;
      for (const r of batch.records) {
        if (r.offset < next) continue;
        messages.push({ topic: state.topic, partition: state.partition, offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers });
        next = r.offset + 1;
      }
      // Compaction may leave a batch's tail empty: step past it all the same.
      if (batch.lastOffset + 1 > next) next = batch.lastOffset + 1;
    }
    state.position = next;
    if (messages.length === 0) return null;
    return { topic: state.topic, partition: state.partition, messages, bytes: data.length, highWatermark: p.highWatermark };
  }
}
