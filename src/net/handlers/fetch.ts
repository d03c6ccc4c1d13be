// Fetch: asks the owning shards for file ranges (they park the request until min_bytes or
// max_wait), then either reads those ranges and hands the buffers to the response by reference,
// or, on a natively served connection, answers with the ranges themselves (leased segment fds)
// for the addon's sender to sendfile().
// Only the partition's leader (as the cluster view has it) answers: others get
// NOT_LEADER_OR_FOLLOWER with the leader's hint (KIP-951); a client's current leader epoch
// (v9+) older than the leader's is FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH. A replica
// id >= 0 claims a follower's fetch, which only a follower of the partition may send.
// A last fetched epoch (v12+) that this log's epoch history does not continue at the fetch offset
// is answered with no records and the diverging epoch (where the fetcher truncates to, KIP-595
// style truncation on fetch); one this log cannot place is OFFSET_OUT_OF_RANGE.
// No fetch sessions: always answers session id 0, which every client treats as "sessionless".
// A follower's partitions under the leader's replication throttle (leader_throttle.ts) get no
// byte budget while its quota is exceeded, and their bytes count against it.
// A fetch no shard parked is timed into sluice_fetch_serve_seconds (the serving cost without the
// long-poll wait); bytes served to a follower count as replication bytes out.
// A consumer's fetch of a topic it may not READ is answered TOPIC_AUTHORIZATION_FAILED, and so,
// as Kafka answers it, is every partition of a follower's fetch (replica id >= 0) from a principal
// without CLUSTER_ACTION on the cluster.
import { CONSUMER_FETCHER, type FetchItem, type PartitionRouter } from '../../actors/partition_router.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import { checkLeaderEpoch, isFalseFollower, leadershipOf, type PartitionsView, type TopicImage } from '../../cluster/cluster_view.js';
import type { BrokerMetrics } from '../../metrics/metrics.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsReplication, permitsTopic } from '../acl_authority.js';
import { leaderEndpoints } from './leader_endpoints.js';
import { handler, type Wire } from '../handler.js';
import { FetchApi, type FetchRequest, type FetchRequestPartition, type FetchResponse } from '../../protocol/apis/fetch.js';
import type { LeaderIdAndEpoch } from '../../protocol/apis/leader_hints.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { RecordsValue } from '../../protocol/schema.js';
import type { LeaderThrottle } from '../leader_throttle.js';
import type { SegmentReader } from '../segment_reader.js';

type TopicOut = Wire<FetchResponse['responses'][number]>;
type PartitionOut = Wire<FetchResponse['responses'][number]['partitions'][number]>;

// librdkafka waits 500 ms and kafkajs 5 s; anything far beyond that only pins memory.
const MAX_FETCH_WAIT_MS = 60_000;
const MAX_FETCH_BYTES = 0x7fffffff;
const EMPTY = Buffer.alloc(0);
const NO_LEADER_HINT: LeaderIdAndEpoch = { leaderId: -1, leaderEpoch: -1 };

export interface FetchDeps {
  readonly cluster: PartitionsView;
  readonly partitions: PartitionLookup;
  readonly router: Pick<PartitionRouter, 'fetch'>;
  readonly segments: Pick<SegmentReader, 'readRanges' | 'fileRanges'>;
  readonly metrics: Pick<BrokerMetrics, 'addBytesOut' | 'addReplicaBytesServed' | 'recordFetchServe'>;
  /** fetchMaxBytes caps every response (Kafka's fetch.max.bytes); a response may pass its grant by one batch of up to messageMaxBytes. */
  readonly limits: { readonly fetchMaxBytes: number; readonly messageMaxBytes: number };
  readonly leaderThrottle: Pick<LeaderThrottle, 'applies' | 'exceeded' | 'record'>;
}

function partitionOut(partitionIndex: number, errorCode: number, hw = -1, logStart = -1, records: RecordsValue = EMPTY, committed = false, currentLeader = NO_LEADER_HINT): PartitionOut {
  return {
    partitionIndex,
    errorCode,
    currentLeader,
    highWatermark: hw,
    lastStableOffset: hw,
    logStartOffset: logStart,
    abortedTransactions: committed ? [] : null,
    preferredReadReplica: -1,
    records,
  };
}

/** The open partition's handle when this broker serves it to this fetcher, else the refusal to answer. */
function servingHandle(deps: FetchDeps, topic: TopicImage, p: FetchRequestPartition, replicaId: number, leaders: Set<number>): PartitionOut | number {
  const lead = leadershipOf(deps.cluster, topic.name, p.partition);
  if (lead.kind === 'unknown') return partitionOut(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (lead.kind === 'notLeader') {
    if (lead.leaderId >= 0) leaders.add(lead.leaderId);
    return partitionOut(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, EMPTY, false, { leaderId: lead.leaderId, leaderEpoch: lead.leaderEpoch });
  }
  const epochError = checkLeaderEpoch(p.currentLeaderEpoch, lead.leaderEpoch);
  if (epochError !== ErrorCode.NONE) return partitionOut(p.partition, epochError);
  if (isFalseFollower(deps.cluster, topic.name, p.partition, replicaId)) return partitionOut(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  const handle = deps.partitions.handleOf(topic.name, p.partition);
  return handle < 0 ? partitionOut(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER) : handle;
}

export const fetchHandler = handler({
  api: FetchApi,
  async handle(ctx, req: FetchRequest, deps: FetchDeps): Promise<Wire<FetchResponse>> {
    const started = performance.now();
    const { cluster } = deps;
    const byId = ctx.version >= 13;
    const replicaId = ctx.version >= 15 ? req.replicaState.replicaId : req.replicaId;
    const follower = replicaId >= 0;
    const replicationAllowed = follower && permitsReplication(ctx.authorizer);
    const committed = req.isolationLevel === 1;
    const items: FetchItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    const partitionLists: PartitionOut[][] = [];
    const leaders = new Set<number>();
    // Items whose bytes count against the leader's replication throttle (replica fetches only).
    const throttled = follower ? new Set<number>() : null;
    const throttleExceeded = follower && deps.leaderThrottle.exceeded();
    const responses: TopicOut[] = req.topics.map((t, ti) => {
      const topic = byId ? cluster.topicById(t.topicId) : cluster.topic(t.topic);
      // A follower is checked once, for the cluster, not per topic. A consumer's unknown topic id names
      // nothing to check (UNKNOWN_TOPIC_ID); an unknown name is checked, as Kafka does.
      const readable = follower
        ? replicationAllowed
        : (byId && topic === undefined) || permitsTopic(ctx.authorizer, AclOperation.READ, topic?.name ?? t.topic);
      const partitions = t.partitions.map((p, pi) => {
        if (!readable) return partitionOut(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        if (!topic) return partitionOut(p.partition, byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        const handle = servingHandle(deps, topic, p, replicaId, leaders);
        if (typeof handle !== 'number') return handle;
        let partitionMaxBytes = Math.min(Math.max(0, p.partitionMaxBytes), MAX_FETCH_BYTES);
        if (follower && deps.leaderThrottle.applies(topic, p.partition, replicaId)) {
          throttled?.add(items.length);
          if (throttleExceeded) partitionMaxBytes = 0;
        }
        items.push({
          handle, fetchOffset: p.fetchOffset, partitionMaxBytes, lastFetchedEpoch: Math.max(-1, p.lastFetchedEpoch),
          currentLeaderEpoch: Math.max(-1, p.currentLeaderEpoch), logStartOffset: follower ? p.logStartOffset : -1,
        });
        where.push([ti, pi, p.partition]);
        return partitionOut(p.partition, ErrorCode.NONE);
      });
      partitionLists.push(partitions);
      return { topic: t.topic, topicId: t.topicId, partitions };
    });
    const nodeEndpoints = leaderEndpoints(cluster, leaders);
    const maxWait = Math.min(Math.max(0, req.maxWaitMs), MAX_FETCH_WAIT_MS);
    // Kafka caps every response at fetch.max.bytes, and the connection's bound on queued response
    // bytes may cap it further while earlier responses are unsent.
    const asked = Math.min(ctx.version >= 3 ? Math.max(0, req.maxBytes) : MAX_FETCH_BYTES, deps.limits.fetchMaxBytes);
    const maxBytes = ctx.reserveResponseBytes?.(asked, deps.limits.messageMaxBytes) ?? asked;
    const fetcher = follower ? { replicaId, replicaEpoch: ctx.version >= 15 ? req.replicaState.replicaEpoch : -1 } : CONSUMER_FETCHER;
    const routedAt = performance.now();
    const { parts: results, waited } = await deps.router.fetch(items, maxWait, Math.max(0, req.minBytes), maxBytes, fetcher);
    // A parked fetch waited up to max_wait by design; whatever the shards took beyond it is serving time.
    if (waited) ctx.parked?.(Math.min(performance.now() - routedAt, maxWait));
    const leases = ctx.fileLeases ?? null;
    const reads = await Promise.all(
      results.map((r) => {
        if (r.errorCode !== 0 || r.ranges.length === 0) return null;
        return leases === null ? deps.segments.readRanges(r.ranges) : deps.segments.fileRanges(r.ranges, leases);
      }),
    );
    let bytesOut = 0;
    let throttledBytes = 0;
    results.forEach((r, i) => {
      const [ti, pi, partition] = where[i]!;
      const chunks = reads[i];
      if (chunks) {
        for (const c of chunks) bytesOut += c.length;
        if (throttled?.has(i) === true) for (const c of chunks) throttledBytes += c.length;
      }
      const out = partitionOut(partition, r.errorCode, r.highWatermark, r.logStartOffset, chunks ?? EMPTY, committed);
      if (r.diverging !== null) out.divergingEpoch = r.diverging;
      partitionLists[ti]![pi] = out;
    });
    deps.metrics.addBytesOut(bytesOut);
    if (follower) deps.metrics.addReplicaBytesServed(bytesOut);
    if (throttledBytes > 0) deps.leaderThrottle.record(throttledBytes);
    if (!waited) deps.metrics.recordFetchServe(follower ? 'replica' : 'consumer', (performance.now() - started) / 1000);
    return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses, nodeEndpoints };
  },
});
