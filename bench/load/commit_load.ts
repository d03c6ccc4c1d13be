// Offset-commit load over the Kafka protocol (bench process, main thread): N KafkaConnections,
// each keeping K OffsetCommit requests in flight; every request commits P partitions of one topic
// for one group, from outside any generation (generation -1, member ''), as an admin or a
// stand-alone consumer does. Measures acknowledged partition-offsets/s, requests/s and per-request
// latency (call -> decoded answer, so the client's encode/decode is included).
// Invariants: group g is only ever committed on connection g mod N, and Kafka answers a
// connection's requests in order, so the last acknowledged commit of a group is the one the
// broker must hold afterwards (`lastAcked`, checked by the caller with OffsetFetch).
// Bounds: stops sending after `commits` partition-offsets or `durationMs`, whichever comes
// first, or at the first error; requests in flight then finish or time out (requestTimeoutMs).
// The first `warmupMs` of answers are not counted. Memory: one request object per group.
import { performance } from 'node:perf_hooks';
import type { KafkaConnection } from '../../src/client/connection.js';
import { OffsetCommitApi } from '../../src/protocol/apis/offset_commit.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../src/protocol/apis/offset_commit.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';
import { newLatencyHistogram, summarizeLatency } from '../../src/bench/load/latency.js';
import type { Histogram, LatencySummary } from '../../src/bench/load/latency.js';

export interface CommitLoadOptions {
  readonly topic: string;
  /** Partitions 0..P-1 of `topic` are committed by every request. */
  readonly partitionsPerCommit: number;
  readonly groups: readonly string[];
  readonly inflight: number;
  /** Partition-offsets to commit at most (warm-up included). */
  readonly commits: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly version: number;
}

export interface CommitLoadResult {
  /** Partition-offsets acknowledged inside the measured window. */
  readonly commits: number;
  readonly requests: number;
  readonly seconds: number;
  readonly commitsPerSec: number;
  readonly requestsPerSec: number;
  readonly latency: LatencySummary;
  /** Requests acknowledged over the whole run, warm-up included. */
  readonly totalRequests: number;
  readonly errors: number;
  readonly firstError: string | null;
  /** Per group: the offset its last acknowledged commit set on every partition (-1 = none). */
  readonly lastAcked: ReadonlyMap<string, number>;
}

/** Coordinator errors a freshly started broker may answer while it loads its offsets partitions. */
const LOADING: ReadonlySet<number> = new Set([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);

function commitRequest(groupId: string, topic: string, partitions: number): OffsetCommitRequest {
  return {
    groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{
      name: topic,
      partitions: Array.from({ length: partitions }, (_, p) => ({ partitionIndex: p, committedOffset: 0, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null })),
    }],
  };
}

/** The first partition error of a commit answer, or ErrorCode.NONE. */
export function firstCommitError(res: OffsetCommitResponse): number {
  for (const t of res.topics) for (const p of t.partitions) if (p.errorCode !== ErrorCode.NONE) return p.errorCode;
  return ErrorCode.NONE;
}

/** One commit per group (offset 0), retrying while the coordinators load, at most timeoutMs. */
export async function primeGroups(conn: KafkaConnection, o: CommitLoadOptions, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (const g of o.groups) {
    for (;;) {
      const code = firstCommitError(await conn.request(OffsetCommitApi, commitRequest(g, o.topic, o.partitionsPerCommit), o.version));
      if (code === ErrorCode.NONE) break;
      if (!LOADING.has(code) || performance.now() > deadline) throw new Error(`priming commit of ${g}: ${errorName(code)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** State shared by every connection of one run. */
class CommitTally {
  readonly histogram: Histogram = newLatencyHistogram();
  readonly startedAt = performance.now();
  sentCommits = 0;
  requests = 0;
  measuredFrom = -1;
  requestsAtWindowStart = 0;
  lastAnswerAt = 0;
  errors = 0;
  firstError: string | null = null;

  constructor(readonly o: CommitLoadOptions) {}

  mayStartAnother(now: number): boolean {
    return this.errors === 0 && this.sentCommits < this.o.commits && now - this.startedAt < this.o.durationMs;
  }

  onAnswer(now: number, latencyMs: number): void {
    this.requests++;
    this.lastAnswerAt = now;
    this.histogram.recordValue(Math.max(1, Math.round(latencyMs * 1000)));
    if (this.measuredFrom < 0 && now - this.startedAt >= this.o.warmupMs) {
      // The window opens at this answer; it belongs to the warm-up.
      this.histogram.reset();
      this.measuredFrom = now;
      this.requestsAtWindowStart = this.requests;
    }
  }

  fail(message: string): void {
    this.errors++;
    if (this.firstError === null) this.firstError = message;
  }
}

/** One connection's share: the groups g with g mod N = c, committed round robin by K slots. */
class ConnectionLoad {
  private next = 0;
  private readonly requests: OffsetCommitRequest[];
  private readonly offsets: Float64Array;

  constructor(private readonly conn: KafkaConnection, readonly groups: readonly string[], private readonly t: CommitTally,
    private readonly lastAcked: Map<string, number>) {
    this.requests = groups.map((g) => commitRequest(g, t.o.topic, t.o.partitionsPerCommit));
    this.offsets = new Float64Array(groups.length);
  }

  async slot(): Promise<void> {
    const o = this.t.o;
    while (this.t.mayStartAnother(performance.now())) {
      const i = this.next;
      this.next = (i + 1) % this.requests.length;
      const req = this.requests[i] as OffsetCommitRequest;
      const offset = ++this.offsets[i];
      // The request is encoded inside request(), so the shared object may change right after.
      for (const p of (req.topics[0] as OffsetCommitRequest['topics'][number]).partitions) p.committedOffset = offset;
      this.t.sentCommits += o.partitionsPerCommit;
      const t0 = performance.now();
      let code: number;
      try {
        code = firstCommitError(await this.conn.request(OffsetCommitApi, req, o.version));
      } catch (err) {
        this.t.fail((err as Error).message);
        return;
      }
      const now = performance.now();
      if (code !== ErrorCode.NONE) {
        this.t.fail(`${req.groupId}: ${errorName(code)}`);
        return;
      }
      this.t.onAnswer(now, now - t0);
      this.lastAcked.set(req.groupId, offset);
    }
  }
}

/** Runs the load over `conns` (one KafkaConnection per load connection, each allowing >= inflight in flight). */
export async function runCommitLoad(conns: readonly KafkaConnection[], o: CommitLoadOptions): Promise<CommitLoadResult> {
  validate(o, conns.length);
  const t = new CommitTally(o);
  const lastAcked = new Map<string, number>(o.groups.map((g) => [g, -1]));
  const loads = conns.map((c, i) => new ConnectionLoad(c, o.groups.filter((_, g) => g % conns.length === i), t, lastAcked));
  await Promise.all(loads.flatMap((l) => Array.from({ length: o.inflight }, () => l.slot())));
  const windowed = t.measuredFrom >= 0 && t.lastAnswerAt > t.measuredFrom;
  const from = windowed ? t.measuredFrom : t.startedAt;
  const requests = windowed ? t.requests - t.requestsAtWindowStart : t.requests;
  const seconds = Math.max(1e-6, (t.lastAnswerAt - from) / 1000);
  return {
    commits: requests * o.partitionsPerCommit, requests, seconds,
    commitsPerSec: (requests * o.partitionsPerCommit) / seconds, requestsPerSec: requests / seconds,
    latency: summarizeLatency(t.histogram), totalRequests: t.requests, errors: t.errors, firstError: t.firstError, lastAcked,
  };
}

function validate(o: CommitLoadOptions, connections: number): void {
  for (const [k, v] of [['connections', connections], ['inflight', o.inflight], ['partitionsPerCommit', o.partitionsPerCommit],
    ['commits', o.commits], ['durationMs', o.durationMs]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer (got ${v})`);
  }
  if (o.groups.length < connections) throw new RangeError(`need at least one group per connection (${o.groups.length} groups, ${connections} connections)`);
}
