// Serving placed connections' data-plane requests on their shard (shard worker thread;
// --connection-placement shards, issue 16 stage A). Produce, Fetch (consumers' and followers'),
// ListOffsets and OffsetForLeaderEpoch run the same handlers as on main, bound to shard-side deps: a
// PartitionRouter with one port per shard (a LocalShardPort into this thread's Shard at its own
// index, the RingShardPorts of the shard mesh to its peers elsewhere), a segment reader
// of this thread (records answered as leased file ranges for the shard's native sender, or as
// Buffers on a socket sink), counters posted to
// main, and instead of main's ClusterView and PartitionLookup the snapshot main keeps here.
//
// The snapshot (placement_messages.ts) lists every partition this broker leads, with its record,
// topic image, handle and hosting shard. A request is served here only if every partition it
// names is in it, with any current leader epoch the client gave equal to the snapshot's, and the
// snapshot is `open`; anything else (a partition not led or not known here, ACLs enforced, quotas
// configured, a handover under way) is forwarded whole to main as before. A follower's Fetch is
// served here too when the snapshot's replica set names it for every partition and none of them
// lists it in `leader.replication.throttled.replicas` (main owns the leader throttle's quota);
// a replica's OffsetForLeaderEpoch (rare: followers truncate on fetch) is always forwarded.
// Leaderships the snapshot gains release the followers' Fetches parked here, as main's router
// does for its own (recent_leaderships.ts): a follower adds a partition only to its next Fetch.
// A request naming partitions of several shards is served here too: the router sends each shard
// its part, over the mesh for the peers, unless that part is more than a mesh ring takes (a
// produce batch, or a Fetch or ListOffsets naming that many partitions: mesh rings are smaller
// than main's, shard_mesh.ts), which main then carries over its own rings. So a stale snapshot
// never answers UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER or an epoch error main would
// not have: only the partition's actor can refuse, as it would refuse main.
// Ordering against metadata changes: main bumps its snapshot revision as soon as anything the
// snapshot holds may have changed (an image published, partitions opened or closed, roles told,
// the handover), posts the new snapshot a turn later (a burst of changes makes one), and every
// answer to a forwarded request carries the revision main was at. Until the snapshot here reaches
// the highest revision an answer carried, every request is forwarded: a Produce pipelined behind
// a DeleteTopics or CreateAcls never runs against the snapshot from before it.
// Ordering within a connection: a request is served here only while main owes the connection no
// answer, so a Produce served here never reaches its partition's actor before one forwarded
// earlier on the same connection. One served here reaches its partition's actor (on this shard)
// or the peer's request ring (through the peer's RingShardPort, whose overflow queue keeps ring
// order) during its own dispatch; the ring is FIFO and drained as one lane, so nothing served
// later on the connection overtakes it. A request forwarded to main reaches the peer on another
// lane (main's ring), which has no order with the mesh lane: so a forward waits, unposted, until
// every Produce served here on the connection is answered (`ServedProduces`; its answer means its
// batch is appended, acks=0 included, since the handler waits for the outcomes; a Produce served
// on this shard alone is waited for too, which costs a forward one commit at most). Reads served
// here are not waited for: a request behind a parked Fetch may reach the log first, as on main,
// where a parked Fetch holds back nothing behind it.
import type { Shard } from '../actors/shard.js';
import { SHARD_READER_FDS } from '../common/descriptor_budget.js';
import { LocalShardPort } from '../actors/local_shard_port.js';
import { PartitionRouter } from '../actors/partition_router.js';
import { LeaderThrottleLists } from './leader_throttle.js';
import type { RingShardPort } from '../actors/ring_shard_port.js';
import type { ShardPort } from '../actors/shard_port.js';
import type { PartitionRecord, PartitionsView, TopicImage } from '../cluster/cluster_view.js';
import { FetchApi, type FetchRequest } from '../protocol/apis/fetch.js';
import { ListOffsetsApi, type ListOffsetsRequest } from '../protocol/apis/list_offsets.js';
import { OffsetForLeaderEpochApi, type OffsetForLeaderEpochRequest } from '../protocol/apis/offset_for_leader_epoch.js';
import { ProduceApi, type ProduceRequest } from '../protocol/apis/produce.js';
import { fetchBytes, listOffsetsBytes, produceMessageBytes } from '../actors/ring_messages.js';
import { decodeRequest } from './connection.js';
import { bindHandler, type BoundHandler, type HandlerContext, type HandlerResult } from './handler.js';
import { fetchHandler } from './handlers/fetch.js';
import { listOffsetsHandler } from './handlers/list_offsets.js';
import { offsetForLeaderEpochHandler } from './handlers/offset_for_leader_epoch.js';
import { produceHandler } from './handlers/produce.js';
import type { FetchKind } from '../metrics/metrics.js';
import { BucketHistogram, REQUEST_LATENCY_BOUNDS, takeObserved } from '../common/bucket_histogram.js';
import type { PlacementSnapshot, PlacedTraffic, SnapshotPartition } from './placement_messages.js';
import { SegmentReader } from './segment_reader.js';

/** The shard reports what it served at most this often. */
const TRAFFIC_REPORT_MS = 1000;
/** Slow requests named between reports; past it, the rest are not counted. */
const MAX_SLOW_REQUESTS = 4096;
const FETCH_KINDS: readonly FetchKind[] = ['consumer', 'replica'];


const EMPTY_SNAPSHOT: PlacementSnapshot = {
  revision: -1, localId: -1, open: false, partitions: [], limits: { maxProduceBatchBytes: 0, fetchMaxBytes: 0, messageMaxBytes: 0 },
};

/** Main's latest snapshot as the handlers' view, partition lookup and (for the router) shard table. */
class SnapshotView implements PartitionsView {
  snapshot: PlacementSnapshot = EMPTY_SNAPSHOT;
  /** By topic name, then partition index: looked up several times a request, so no key string is built for it. */
  private byTopic = new Map<string, Map<number, SnapshotPartition>>();
  /** Hosting shard by handle. */
  private handles = new Map<number, number>();
  private topicsByName = new Map<string, TopicImage>();
  private topicsById = new Map<string, TopicImage>();

  /** Takes `snapshot`; returns the partitions of the previous one it no longer holds, and those it newly leads (or at a new epoch). */
  update(snapshot: PlacementSnapshot): { left: SnapshotPartition[]; began: SnapshotPartition[] } {
    const before = this.snapshot.partitions;
    const epochBefore = new Map(before.map((p) => [p.handle, p.record.leaderEpoch]));
    this.snapshot = snapshot;
    this.byTopic = new Map();
    this.handles = new Map();
    this.topicsByName = new Map();
    this.topicsById = new Map();
    for (const p of snapshot.partitions) {
      let partitions = this.byTopic.get(p.topic.name);
      if (partitions === undefined) this.byTopic.set(p.topic.name, (partitions = new Map()));
      partitions.set(p.record.partition, p);
      this.handles.set(p.handle, p.shard);
      this.topicsByName.set(p.topic.name, p.topic);
      this.topicsById.set(p.topic.id, p.topic);
    }
    return {
      left: before.filter((p) => !this.handles.has(p.handle)),
      began: snapshot.partitions.filter((p) => (epochBefore.get(p.handle) ?? -1) < p.record.leaderEpoch),
    };
  }

  get localId(): number {
    return this.snapshot.localId;
  }

  served(topic: string, partition: number): SnapshotPartition | undefined {
    return this.byTopic.get(topic)?.get(partition);
  }

  partition(topic: string, partition: number): PartitionRecord | undefined {
    return this.served(topic, partition)?.record;
  }

  /** No hint ever names another broker here: every partition served here is led here. */
  brokers(): [] {
    return [];
  }

  topic(name: string): TopicImage | undefined {
    return this.topicsByName.get(name);
  }

  topicById(id: string): TopicImage | undefined {
    return this.topicsById.get(id);
  }

  handleOf(topic: string, partition: number): number {
    return this.served(topic, partition)?.handle ?? -1;
  }

  shardOf(handle: number): number {
    return this.handles.get(handle) ?? -1;
  }
}

type TrafficCounts = { -readonly [K in Exclude<keyof PlacedTraffic, 'requests' | 'fetchServes' | 'slowRequests' | 'asked'>]: number };

const emptyTraffic = (): TrafficCounts => ({
  served: 0, messagesIn: 0, bytesIn: 0, bytesOut: 0, replicaBytesOut: 0, socketBytesIn: 0, socketBytesOut: 0, requestMemoryWaits: 0,
});

/** A current leader epoch a client named (>= 0) that differs from the snapshot's: main decides it. */
const epochDiffers = (asked: number, p: SnapshotPartition): boolean => asked >= 0 && asked !== p.record.leaderEpoch;

/**
 * One placed connection's Produces served on its shard and not yet answered: a request forwarded
 * to main waits for them (the file header's ordering argument).
 */
export class ServedProduces {
  private inFlight = 0;
  private waiters: Array<() => void> = [];

  /** Counts `result` until it settles. */
  track(result: Promise<HandlerResult<unknown>>): Promise<HandlerResult<unknown>> {
    this.inFlight++;
    result.then(this.settled, this.settled);
    return result;
  }

  // One function for every tracked result, not a closure each.
  private readonly settled = (): void => {
    if (--this.inFlight > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  };

  /** Runs `fn` once none is in flight (now if none is); calls queued meanwhile run in call order. */
  whenIdle(fn: () => void): void {
    if (this.inFlight === 0) fn();
    else this.waiters.push(fn);
  }
}

export class PlacedServing {
  private readonly view = new SnapshotView();
  private readonly router: PartitionRouter;
  /** The snapshot's limits, as the handlers read them (updated in place). */
  private readonly limits = { ...EMPTY_SNAPSHOT.limits };
  /** The highest snapshot revision main's answers carried: nothing is served here before the snapshot reaches it. */
  private fence = -1;
  private readonly segments = new SegmentReader(SHARD_READER_FDS);
  private readonly handlers: ReadonlyMap<number, BoundHandler>;
  private traffic = emptyTraffic();
  // Durations as bucket counts, not one entry per request: a shard serving 25k requests a second
  // kept each until the report a second later, so every scavenge of its heap copied and promoted
  // them, and only the first 4096 a second were counted at all.
  /** Per API of the handlers below (so bounded): durations of the requests served here since the last report. */
  private readonly requestTimes = new Map<string, BucketHistogram>();
  private readonly fetchServeTimes = new Map<FetchKind, BucketHistogram>(
    FETCH_KINDS.map((kind) => [kind, new BucketHistogram(REQUEST_LATENCY_BOUNDS)]),
  );
  private slowRequests: string[] = [];
  private readonly throttleLists = new LeaderThrottleLists();
  private reportTimer: NodeJS.Timeout | null = null;
  private readonly shardIndex: number;
  /** The largest message every peer's mesh request ring takes (all have one size). */
  private readonly meshMessageBytes: number;

  /** `peers`: this shard's ports to every shard by index (the shard mesh), null at its own. */
  constructor(
    shard: Shard,
    peers: readonly (RingShardPort | null)[],
    private readonly report: (traffic: PlacedTraffic) => void,
  ) {
    const view = this.view;
    this.shardIndex = shard.index;
    this.meshMessageBytes = Math.min(...peers.map((p) => p?.requests.maxMessageBytes ?? Infinity));
    const router = new PartitionRouter(view);
    this.router = router;
    router.attach(peers.map((p, i): ShardPort => (i === shard.index ? new LocalShardPort(shard, i, router) : p!.start(router))));
    const metrics = {
      addMessagesIn: (n: number) => this.count('messagesIn', n),
      addBytesIn: (n: number) => this.count('bytesIn', n),
      addBytesOut: (n: number) => this.count('bytesOut', n),
      addReplicaBytesServed: (n: number) => this.count('replicaBytesOut', n),
      recordFetchServe: (kind: FetchKind, seconds: number) => this.fetchServeTimes.get(kind)!.observe(seconds),
    };
    const common = { cluster: view, partitions: view, router, offsets: router, segments: this.segments, metrics, limits: this.limits };
    this.handlers = new Map([
      // The snapshot is never open during a handover, so produce answers never wait for one here.
      bindHandler(produceHandler, { ...common, handover: () => null }),
      // A follower's Fetch naming a partition whose leader throttle lists it is forwarded (covers()), so none applies here.
      bindHandler(fetchHandler, { ...common, leaderThrottle: { applies: () => false, exceeded: () => false, record: () => undefined } }),
      bindHandler(listOffsetsHandler, common),
      bindHandler(offsetForLeaderEpochHandler, common),
    ].map((h) => [h.api.key, h]));
    for (const h of this.handlers.values()) this.requestTimes.set(h.api.name, new BucketHistogram(REQUEST_LATENCY_BOUNDS));
  }

  /** The shard's request log found a request of `api` slow (any of its placed connections', served here or not). */
  requestSlow(api: string): void {
    if (this.slowRequests.length < MAX_SLOW_REQUESTS) this.slowRequests.push(api);
    this.armReport();
  }

  /** Gives back segment fds a response's file ranges leased (the connection calls it once they are sent or dropped). */
  releaseLeases(leases: number[]): void {
    this.segments.release(leases);
  }

  /** Shards whose mesh ports are blocked: a connection that just fed one stops reading until it drains. */
  blockedShards(): ShardPort[] {
    return this.router.blockedShards();
  }

  /** The APIs decided here per request (the others are always forwarded). */
  get apiKeys(): Iterable<number> {
    return this.handlers.keys();
  }

  update(snapshot: PlacementSnapshot): void {
    Object.assign(this.limits, snapshot.limits);
    const { left, began } = this.view.update(snapshot);
    // A partition that left (deleted, moved, no longer led here) must not be read through fds of its old files.
    for (const p of left) {
      this.segments.dropDir(p.dir);
      this.router.leadershipEnded(p.handle);
    }
    for (const p of began) this.router.leadershipBegan(p.handle, p.record.replicas.filter((r) => r !== snapshot.localId));
  }

  /** Main answered a forwarded request at snapshot `revision`. */
  answeredAt(revision: number): void {
    if (revision > this.fence) this.fence = revision;
  }

  /** Socket bytes of every placed connection of this shard (main no longer counts them). */
  socketBytes(inBytes: number, outBytes: number): void {
    this.count('socketBytesIn', inBytes);
    this.count('socketBytesOut', outBytes);
  }

  /** A placed connection of this shard stopped reading: the listener's held-bytes share had no room. */
  requestMemoryWaited(): void {
    this.count('requestMemoryWaits', 1);
  }

  /**
   * Serves request `frame` here when the snapshot covers it and main owes its connection nothing
   * (`forwardedPending` false), else forwards it: `forward` is the shard's path to main, also
   * taken for a frame this decode finds malformed (main closes the connection as it would have).
   */
  handle(
    ctx: HandlerContext, frame: Buffer, forwardedPending: boolean, forward: (ctx: HandlerContext, frame: Buffer) => Promise<HandlerResult<unknown>>, produces: ServedProduces,
  ): HandlerResult<unknown> | Promise<HandlerResult<unknown>> {
    const h = this.handlers.get(frame.readInt16BE(0))!;
    if (forwardedPending || !this.view.snapshot.open || this.view.snapshot.revision < this.fence) return forward(ctx, frame);
    const decoded = decodeRequest(frame, h, ctx.version, true);
    if (typeof decoded === 'string' || !this.covers(h.api.key, ctx.version, decoded.req)) return forward(ctx, frame);
    this.traffic.served++;
    this.armReport();
    const times = this.requestTimes.get(h.api.name)!;
    const started = performance.now();
    const result = h.handle(ctx, decoded.req);
    const timed = (res: HandlerResult<unknown>): HandlerResult<unknown> => {
      times.observe((performance.now() - started) / 1000);
      return res;
    };
    if (!(result instanceof Promise)) return timed(result);
    const answered = result.then(timed);
    return h.api.key === ProduceApi.key ? produces.track(answered) : answered;
  }

  /**
   * Whether every partition `req` names is served here at the epoch the client expects, and what
   * it sends peers over the mesh fits their rings.
   */
  // Loops, not every() with closures: this runs for every request a placed connection makes.
  private covers(apiKey: number, version: number, req: unknown): boolean {
    const view = this.view;
    let onPeers = 0; // partitions served here that a peer shard hosts
    switch (apiKey) {
      case ProduceApi.key:
        for (const t of (req as ProduceRequest).topicData) {
          for (const p of t.partitionData) {
            const served = view.served(t.name, p.index);
            if (served === undefined) return false;
            if (served.shard !== this.shardIndex && produceMessageBytes(p.records?.length ?? 0) > this.meshMessageBytes) return false;
          }
        }
        return true;
      case FetchApi.key: {
        const r = req as FetchRequest;
        const replicaId = version >= 15 ? r.replicaState.replicaId : r.replicaId;
        for (const t of r.topics) {
          const topic = version >= 13 ? view.topicById(t.topicId) : view.topic(t.topic);
          if (topic === undefined) return false;
          for (const p of t.partitions) {
            const served = view.served(topic.name, p.partition);
            if (served === undefined || epochDiffers(p.currentLeaderEpoch, served) || (replicaId >= 0 && !this.servesFollower(served, replicaId))) return false;
            if (served.shard !== this.shardIndex) onPeers++;
          }
        }
        return fetchBytes(onPeers) <= this.meshMessageBytes;
      }
      case ListOffsetsApi.key:
        for (const t of (req as ListOffsetsRequest).topics) {
          for (const p of t.partitions) {
            const served = view.served(t.name, p.partitionIndex);
            if (served === undefined || epochDiffers(p.currentLeaderEpoch, served)) return false;
            if (served.shard !== this.shardIndex) onPeers++;
          }
        }
        return listOffsetsBytes(onPeers) <= this.meshMessageBytes;
      case OffsetForLeaderEpochApi.key: {
        const r = req as OffsetForLeaderEpochRequest;
        if (version >= 3 && r.replicaId >= 0) return false;
        // Answered by the same offset lookups as ListOffsets (ring_messages.ts' EPOCH_END).
        for (const t of r.topics) {
          for (const p of t.partitions) {
            const served = view.served(t.topic, p.partition);
            if (served === undefined || epochDiffers(p.currentLeaderEpoch, served)) return false;
            if (served.shard !== this.shardIndex) onPeers++;
          }
        }
        return listOffsetsBytes(onPeers) <= this.meshMessageBytes;
      }
      default:
        return false;
    }
  }

  /**
   * Whether follower `replicaId`'s fetch of `p` is decided here: the snapshot names it a replica
   * (one it does not name, main's newer image may; main also answers the false ones) and the
   * leader throttle does not list it.
   */
  private servesFollower(p: SnapshotPartition, replicaId: number): boolean {
    return replicaId !== this.view.localId && p.record.replicas.includes(replicaId) && !this.throttleLists.listed(p.topic, p.record.partition, replicaId);
  }

  private count(what: keyof PlacedServing['traffic'], n: number): void {
    this.traffic[what] += n;
    this.armReport();
  }

  /** One report a second at most, and none while nothing happens (an idle shard does not wake for it). */
  private armReport(): void {
    if (this.reportTimer !== null) return;
    this.reportTimer = setTimeout(() => this.reportNow(), TRAFFIC_REPORT_MS);
    this.reportTimer.unref();
  }

  /**
   * Reports what was served since the last report at once (main's metrics scrape asks, so what
   * a client saw answered is in the figures it reads), `asked` echoing the request; an empty
   * report too, when asked.
   */
  reportNow(asked?: number): void {
    if (this.reportTimer !== null) clearTimeout(this.reportTimer);
    this.reportTimer = null;
    this.report({
      ...this.traffic, requests: takeObserved(this.requestTimes), fetchServes: takeObserved(this.fetchServeTimes), slowRequests: this.slowRequests,
      ...(asked === undefined ? {} : { asked }),
    });
    this.traffic = emptyTraffic();
    this.slowRequests = [];
  }
}
