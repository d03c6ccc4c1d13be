// Broker metrics in Prometheus form, owned by the main thread. Request, byte, message and
// connection figures are recorded as they happen on the main thread; shard-side figures
// (partitions, rings, shard event loops, group commit timings) arrive as ShardSnapshots pulled at
// scrape time and are applied just before the registry is rendered.
// Invariants: one private Registry per BrokerMetrics (never prom-client's global one, so several
// brokers can live in one process, e.g. in tests); every label value set is bounded — partition
// and shard label sets mirror the latest snapshots (stale ones are removed), and free-form labels
// (API names, reasons) are capped at MAX_LABEL_VALUES distinct values.
// The figures a reassignment watches (the CLI's sampler, cli/reassign_metrics.ts): fetch serving
// time without the long-poll wait, the process's CPU, socket and replication bytes, log bytes
// written. Hot-path byte counts are plain additions to numbers, published into their counters at
// scrape time together with the shards' totals, so recording them allocates nothing.
// Replication, controller and log dir figures (replication_metrics.ts) appear once the broker
// hands over its cluster view (watchCluster).

import { availableParallelism } from 'node:os';
import { LoopDelayMonitor, type LoopDelay } from '../common/loop_delay.js';
import { GC_KINDS, GC_PAUSE_BOUNDS, GcPauses, type GcPauseCounts } from '../common/gc_pauses.js';
import { Counter, Gauge, Registry } from 'prom-client';
import type { PartitionSnapshot, ShardSnapshot } from '../actors/shard_snapshot.js';
import { DISK_FLUSH_BOUNDS, REQUEST_LATENCY_BOUNDS, type BucketCounts } from '../common/bucket_histogram.js';
import { CumulativeCounter } from './cumulative_counter.js';
import { DeltaHistogram } from './delta_histogram.js';
import { GroupMetrics } from './group_metrics.js';
import { OffsetHistory } from './offset_history.js';
import { RaftMetrics, type RaftMetricsSource } from './raft_metrics.js';
import { ReplicationMetrics, type ReplicationSource } from './replication_metrics.js';

const MAX_LABEL_VALUES = 64;
const OVERFLOW_LABEL = 'other';

/** Cached label children with a cap on distinct values, so recording allocates nothing. */
class BoundedChildren<C> {
  private readonly children = new Map<string, C>();
  constructor(private readonly make: (value: string) => C) {}
  get(value: string): C {
    let child = this.children.get(value);
    if (child !== undefined) return child;
    const label = this.children.size < MAX_LABEL_VALUES ? value : OVERFLOW_LABEL;
    child = this.children.get(label) ?? this.make(label);
    this.children.set(label, child);
    return child;
  }
}

const DIRECTIONS = ['to_shard', 'to_main'] as const;
/** Who a fetch serves: a consumer, or a follower broker's replica fetcher. */
export type FetchKind = 'consumer' | 'replica';
const WAKEUP_SIDES = ['consumer', 'producer'] as const;

function counter<L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return new Counter<L>({ name, help, labelNames, registers: [r] });
}

function gauge<L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
  return new Gauge<L>({ name, help, labelNames, registers: [r] });
}

/** A latency histogram: cumulative counts per finite upper bound in seconds, and all observations. */
export interface LatencyBuckets {
  le: number[];
  counts: number[];
  count: number;
}

/**
 * Cumulative traffic since start, for readers that diff two readings into rates and a windowed
 * p99 (the console, scripts): bytes and records in and out, produce latency and consumer fetch
 * serve time (without long-poll waits).
 */
export interface TrafficTotals {
  bytesIn: number;
  bytesOut: number;
  messagesIn: number;
  messagesOut: number;
  produceSeconds: LatencyBuckets;
  fetchServeSeconds: LatencyBuckets;
}

/** The cumulative buckets of one labelled series of a histogram (+Inf last, as its count). */
async function bucketsOf<L extends string>(h: DeltaHistogram<L>, label: L, value: string): Promise<LatencyBuckets> {
  const le: number[] = [];
  const counts: number[] = [];
  let count = 0;
  for (const v of (await h.get()).values) {
    const labels: Partial<Record<string, string | number>> = v.labels;
    if (!v.metricName?.endsWith('_bucket') || labels[label] !== value) continue;
    if (labels['le'] === '+Inf') {
      count = v.value;
      continue;
    }
    le.push(Number(labels['le']));
    counts.push(v.value);
  }
  return { le, counts, count };
}

const PARTITION = ['topic', 'partition'] as const;
const RING = ['shard', 'direction'] as const;

export class BrokerMetrics {
  readonly registry = new Registry();

  private readonly requests = counter(this.registry, 'sluice_requests_total', 'Requests handled, by API', ['api']);
  // Delta histograms: shards report their requests' durations as bucket counts (PlacedTraffic).
  private readonly latency = new DeltaHistogram({
    name: 'sluice_request_duration_seconds',
    help: 'Time from request decoded to response queued, by API',
    labelNames: ['api'],
    bounds: REQUEST_LATENCY_BOUNDS,
    registry: this.registry,
  });
  private readonly bytesIn = counter(this.registry, 'sluice_bytes_in_total', 'Record batch bytes accepted from producers');
  private readonly bytesOut = counter(this.registry, 'sluice_bytes_out_total', 'Record batch bytes sent to consumers');
  private readonly messagesIn = counter(this.registry, 'sluice_messages_in_total', 'Records appended by produce requests');
  private readonly messagesOut = counter(this.registry, 'sluice_messages_out_total', 'Records returned by fetch requests');
  private readonly connections = gauge(this.registry, 'sluice_connections', 'Open client connections');
  private readonly rejected = counter(
    this.registry, 'sluice_connections_rejected_total', 'Connections refused at accept or, by the per-IP bounds, on their first request, by reason', ['reason'],
  );
  private readonly throttled = counter(this.registry, 'sluice_connections_throttled_total', 'Client connections delayed by max.connection.creation.rate');
  private readonly throttledSeconds = counter(this.registry, 'sluice_connections_throttle_seconds_total', 'Delay imposed on client connections by max.connection.creation.rate');
  private readonly quotaThrottles = counter(
    this.registry, 'sluice_quota_throttled_responses_total', 'Responses that asked the client to back off for its client quota (KIP-219), by quota', ['quota'],
  );
  private readonly quotaThrottleMs = counter(
    this.registry, 'sluice_quota_throttle_time_ms_total', 'Throttle time answered to clients over their client quota (the channel is muted as long), by quota', ['quota'],
  );
  private readonly brokerConnections = counter(
    this.registry, 'sluice_broker_connections_admitted_total', 'Connections of other brokers\' replica fetchers, admitted outside the per-IP bounds',
  );
  private readonly requestsQueued = counter(
    this.registry, 'sluice_requests_queued_total', 'Requests that waited for their priority class\'s turn on a saturated main thread, by class', ['class'],
  );
  private readonly slowRequests = counter(
    this.registry, 'sluice_slow_requests_total', 'Requests served slower than --slow-request-ms (a long-poll fetch\'s wait for data not counted), by API', ['api'],
  );
  private readonly protocolErrors = counter(
    this.registry, 'sluice_protocol_errors_total', 'Connections closed for a protocol violation, by reason', ['reason'],
  );
  private readonly requestMemoryWaits = counter(
    this.registry, 'sluice_request_memory_waits_total',
    'Times a connection stopped reading because --max-partial-request-bytes had no room for its next request frame',
  );

  private readonly partitionGauges = [
    gauge(this.registry, 'sluice_partition_log_size_bytes', 'Bytes held by the partition log', PARTITION),
    gauge(this.registry, 'sluice_partition_log_end_offset', 'Next offset to be assigned', PARTITION),
    gauge(this.registry, 'sluice_partition_log_start_offset', 'First offset still held', PARTITION),
    gauge(this.registry, 'sluice_partition_high_watermark', 'Offset below which records are visible', PARTITION),
  ] as const;
  private readonly ringUsed = gauge(this.registry, 'sluice_ring_used_bytes', 'Bytes waiting in a shard ring', RING);
  private readonly ringCapacity = gauge(this.registry, 'sluice_ring_capacity_bytes', 'Capacity of a shard ring', RING);
  private readonly ringFill = gauge(this.registry, 'sluice_ring_fill_ratio', 'Share of a shard ring\'s capacity waiting to be read, at the scrape', RING);
  private readonly ringFull = new CumulativeCounter(counter(
    this.registry, 'sluice_ring_full_total',
    'Times the writer of a shard ring found it full and waited for space (the main thread into a shard, the shard back out)',
    RING,
  ));
  private readonly wakeups = new CumulativeCounter(counter(
    this.registry, 'sluice_ring_wakeups_total', 'Atomics wake-ups on a shard ring, by side woken', [...RING, 'side'],
  ));
  private readonly lag = gauge(
    this.registry, 'sluice_event_loop_lag_seconds', 'Mean event-loop delay since the previous scrape', ['thread'],
  );
  private readonly lagP99 = gauge(
    this.registry, 'sluice_event_loop_lag_p99_seconds', '99th percentile event-loop delay since the previous scrape', ['thread'],
  );
  private readonly lagMax = gauge(
    this.registry, 'sluice_event_loop_lag_max_seconds', 'Largest event-loop delay since the previous scrape', ['thread'],
  );
  private readonly ownLagP99 = gauge(
    this.registry, 'sluice_event_loop_own_lag_p99_seconds',
    '99th percentile event-loop delay since the previous scrape, less the time the thread waited for a CPU', ['thread'],
  );
  private readonly cpuWait = gauge(
    this.registry, 'sluice_thread_cpu_wait_ratio',
    'Share of the time since the previous scrape the thread was ready to run but waited for a CPU', ['thread'],
  );
  private readonly handled = new CumulativeCounter(
    counter(this.registry, 'sluice_shard_messages_handled_total', 'Ring messages handled by a shard', ['shard']),
  );
  private readonly busy = new CumulativeCounter(
    counter(this.registry, 'sluice_shard_busy_seconds_total', 'Time a shard spent handling messages', ['shard']),
  );
  private readonly storageErrors = new CumulativeCounter(
    counter(this.registry, 'sluice_storage_errors_total', 'Storage failures on a shard (failed group commits, seals, checkpoints, clean closes)', ['shard']),
  );
  private readonly uncommittedProduceBytes = gauge(
    this.registry, 'sluice_uncommitted_produce_bytes_max',
    'The most produced bytes a shard held until their group commit settled, since the previous scrape (bounded by --max-uncommitted-produce-bytes)', ['shard'],
  );
  private readonly uncommittedProduceWaits = new CumulativeCounter(counter(
    this.registry, 'sluice_uncommitted_produce_waits_total',
    'Times a shard stopped taking produce requests because --max-uncommitted-produce-bytes was reached, until its commits settled', ['shard'],
  ));
  private readonly rescanned = new CumulativeCounter(
    counter(this.registry, 'sluice_log_recovery_rescanned_segments_total', 'Segments log recovery rescanned as partitions opened (a clean shutdown leaves none)', ['shard']),
  );
  private readonly logFlush = new DeltaHistogram({
    name: 'sluice_log_flush_seconds',
    help: 'Duration of a shard\'s group commits: write and, per the flush policy, fdatasync, from submission to completion (a commit written while the previous one synced: from its own fdatasync\'s submission)',
    labelNames: ['shard'],
    bounds: DISK_FLUSH_BOUNDS,
    registry: this.registry,
  });
  private readonly logFlushQueue = new DeltaHistogram({
    name: 'sluice_log_flush_queue_seconds',
    help: 'Time produced or replicated data waited for its shard\'s group commit to start',
    labelNames: ['shard'],
    bounds: DISK_FLUSH_BOUNDS,
    registry: this.registry,
  });

  private readonly gcPause = new DeltaHistogram<'thread' | 'kind'>({
    name: 'sluice_gc_pause_seconds',
    help: 'Garbage-collection pauses of each thread\'s JavaScript (main, shard-N), by kind: minor (scavenge of the young generation), major (mark-compact), incremental and weakcb (their steps and callbacks)',
    labelNames: ['thread', 'kind'],
    bounds: GC_PAUSE_BOUNDS,
    registry: this.registry,
  });
  private readonly mainGc = new GcPauses();

  private readonly fetchServe = new DeltaHistogram<'kind'>({
    name: 'sluice_fetch_serve_seconds',
    help: 'Time from a fetch decoded to its answer ready, only for fetches answered without waiting for min_bytes (no long-poll wait), by fetcher',
    labelNames: ['kind'],
    bounds: REQUEST_LATENCY_BOUNDS,
    registry: this.registry,
  });
  // Both fetchers' series exist from the start, so a dashboard's rate() sees them begin at 0.
  private readonly fetchServeChildren = { consumer: this.fetchServe.child({ kind: 'consumer' }), replica: this.fetchServe.child({ kind: 'replica' }) };
  private readonly cpuSeconds = new CumulativeCounter(counter(
    this.registry, 'sluice_process_cpu_seconds_total', 'User and system CPU time of the whole process, every thread included',
  ));
  private readonly networkBytes = new CumulativeCounter(counter(
    this.registry, 'sluice_network_bytes_total', 'Bytes read from and written to Kafka-protocol sockets (clients, controller listener and replica fetchers)', ['direction'],
  ));
  private readonly replicationBytes = new CumulativeCounter(counter(
    this.registry, 'sluice_replication_bytes_total', 'Record bytes this broker fetched as a follower (in) and served to followers\' fetches (out)', ['direction'],
  ));
  private readonly logBytesWritten = new CumulativeCounter(counter(
    this.registry, 'sluice_log_bytes_written_total', 'Record batch bytes appended to partition logs (produce, follower appends, group coordinator writes)',
  ));
  /** Main thread's totals since start, published into the counters above at each scrape. */
  private socketBytesIn = 0;
  private socketBytesOut = 0;
  private replicaBytesServed = 0;

  private readonly requestChildren = new BoundedChildren((api) => ({
    count: this.requests.labels(api),
    latency: this.latency.child({ api }),
  }));
  private readonly rejectedChildren = new BoundedChildren((r) => this.rejected.labels(r));
  private readonly slowChildren = new BoundedChildren((api) => this.slowRequests.labels(api));
  private readonly protocolErrorChildren = new BoundedChildren((r) => this.protocolErrors.labels(r));
  private readonly mainLag = new LoopDelayMonitor();
  private readonly groupMetrics: GroupMetrics;
  private raft: RaftMetrics | null = null;
  private replication: ReplicationMetrics | null = null;
  private partitionKeys = new Map<string, PartitionSnapshot>();
  private shardIds = new Set<number>();

  /**
   * `offsets`: the broker's log-end history, which its owner feeds (consumer lag in seconds reads
   * it; an unfed one gives no lag-seconds series); `now`: the monotonic ms clock it is fed on.
   */
  constructor(offsets: OffsetHistory = new OffsetHistory(), now: () => number = () => performance.now()) {
    this.groupMetrics = new GroupMetrics(this.registry, offsets, now);
    gauge(this.registry, 'sluice_process_cpu_cores', 'CPUs this process may use (os.availableParallelism)').set(availableParallelism());
  }

  /** `api` must come from the broker's API table (bounded anyway). */
  recordRequest(api: string, seconds: number): void {
    const c = this.requestChildren.get(api);
    c.count.inc();
    c.latency.observe(seconds);
  }
  /** A shard's requests of `api` since its previous report, as bucket counts of REQUEST_LATENCY_BOUNDS. */
  addRequestTimes(api: string, times: BucketCounts): void {
    const c = this.requestChildren.get(api);
    c.count.inc(times.count);
    c.latency.add(times);
  }
  addBytesIn(n: number): void { this.bytesIn.inc(n); }
  addBytesOut(n: number): void { this.bytesOut.inc(n); }
  addMessagesIn(n: number): void { this.messagesIn.inc(n); }
  addMessagesOut(n: number): void { this.messagesOut.inc(n); }
  /** A fetch answered without waiting for min_bytes took `seconds` to serve. */
  recordFetchServe(kind: FetchKind, seconds: number): void { this.fetchServeChildren[kind].observe(seconds); }
  /** A shard's fetches of `kind` served since its previous report, as bucket counts of REQUEST_LATENCY_BOUNDS. */
  addFetchServeTimes(kind: FetchKind, times: BucketCounts): void { this.fetchServeChildren[kind].add(times); }
  addSocketBytesIn(n: number): void { this.socketBytesIn += n; }
  addSocketBytesOut(n: number): void { this.socketBytesOut += n; }
  /** Record bytes this leader served to a follower's fetch. */
  addReplicaBytesServed(n: number): void { this.replicaBytesServed += n; }
  connectionOpened(): void { this.connections.inc(); }
  connectionClosed(): void { this.connections.dec(); }
  connectionRejected(reason: string): void { this.rejectedChildren.get(reason).inc(); }
  connectionThrottled(seconds: number): void {
    this.throttled.inc();
    this.throttledSeconds.inc(seconds);
  }
  brokerConnectionAdmitted(): void { this.brokerConnections.inc(); }
  /** `quota` is one of produce, fetch, request. */
  quotaThrottled(quota: string, ms: number): void {
    this.quotaThrottles.labels(quota).inc();
    this.quotaThrottleMs.labels(quota).inc(ms);
  }
  /** `cls` is one of the scheduler's four classes. */
  requestQueued(cls: string): void { this.requestsQueued.labels(cls).inc(); }
  protocolError(reason: string): void { this.protocolErrorChildren.get(reason).inc(); }
  requestMemoryWaited(n: number): void { this.requestMemoryWaits.inc(n); }
  /** `api` must come from the broker's API table (bounded anyway). */
  requestSlow(api: string): void { this.slowChildren.get(api).inc(); }
  /** A new metadata image was published (ISR changes are counted from it); ignored before watchCluster. */
  metadataPublished(): void { this.replication?.imagePublished(); }

  /** Exports the metadata quorum's figures (sluice_raft_*) from now on; once, on a node that runs it. */
  watchQuorum(driver: RaftMetricsSource): void {
    if (this.raft !== null) throw new Error('the quorum is already watched');
    this.raft = new RaftMetrics(this.registry, driver);
  }

  /** Exports replication, controller and log dir figures (replication_metrics.ts) from now on; once. */
  watchCluster(view: ReplicationSource, logDir: string): void {
    if (this.replication !== null) throw new Error('the cluster is already watched');
    this.replication = new ReplicationMetrics(this.registry, view, logDir);
  }

  /** Replaces all shard-fed figures with these snapshots (one per live shard). */
  applyShardSnapshots(snapshots: readonly ShardSnapshot[]): void {
    const partitions = new Map<string, PartitionSnapshot>();
    const shards = new Set<number>();
    for (const s of snapshots) {
      shards.add(s.shard);
      this.applyShard(s);
      for (const p of s.partitions) {
        partitions.set(`${p.topic}\u0000${p.partition}`, p);
        this.applyPartition(p);
      }
    }
    for (const [key, p] of this.partitionKeys) if (!partitions.has(key)) this.removePartition(p);
    for (const id of this.shardIds) if (!shards.has(id)) this.removeShard(id);
    this.partitionKeys = partitions;
    this.shardIds = shards;
    this.groupMetrics.apply(snapshots, (topic, partition) => partitions.get(`${topic}\u0000${partition}`)?.logEndOffset);
  }

  async traffic(): Promise<TrafficTotals> {
    const total = async (c: Counter): Promise<number> => (await c.get()).values[0]?.value ?? 0;
    return {
      bytesIn: await total(this.bytesIn),
      bytesOut: await total(this.bytesOut),
      messagesIn: await total(this.messagesIn),
      messagesOut: await total(this.messagesOut),
      produceSeconds: await bucketsOf(this.latency, 'api', 'Produce'),
      fetchServeSeconds: await bucketsOf(this.fetchServe, 'kind', 'consumer'),
    };
  }

  /** Prometheus text exposition of everything recorded and applied so far. */
  async metricsText(): Promise<string> {
    this.sampleMainLag();
    this.addGcPauses('main', this.mainGc.take());
    this.publishMainTotals();
    this.raft?.sample();
    await this.replication?.sample();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    this.mainLag.close();
    this.mainGc.close();
  }

  private publishMainTotals(): void {
    const cpu = process.cpuUsage();
    this.cpuSeconds.feed({}, 'process', (cpu.user + cpu.system) / 1e6);
    this.networkBytes.feed({ direction: 'in' }, 'main/in', this.socketBytesIn);
    this.networkBytes.feed({ direction: 'out' }, 'main/out', this.socketBytesOut);
    this.replicationBytes.feed({ direction: 'out' }, 'main/out', this.replicaBytesServed);
  }

  private sampleMainLag(): void {
    // No sample yet (scraped twice within one timer period): keep the previous values.
    const d = this.mainLag.take();
    if (d !== null) this.setLoopDelay('main', d);
  }

  private addGcPauses(thread: string, pauses: GcPauseCounts): void {
    for (const [kind, times] of pauses) this.gcPause.add({ thread, kind }, times);
  }

  private setLoopDelay(thread: string, d: LoopDelay): void {
    this.lag.set({ thread }, d.meanMs / 1000);
    this.lagP99.set({ thread }, d.p99Ms / 1000);
    this.lagMax.set({ thread }, d.maxMs / 1000);
    this.ownLagP99.set({ thread }, d.ownP99Ms / 1000);
    this.cpuWait.set({ thread }, d.cpuWaitRatio);
  }

  private applyShard(s: ShardSnapshot): void {
    const shard = String(s.shard);
    this.setLoopDelay(`shard-${shard}`, s.loopDelay);
    this.handled.feed({ shard }, shard, s.handled);
    this.busy.feed({ shard }, shard, s.busyMs / 1000);
    this.storageErrors.feed({ shard }, shard, s.storageErrors);
    this.rescanned.feed({ shard }, shard, s.rescannedSegments);
    this.uncommittedProduceBytes.set({ shard }, s.uncommittedProduceBytesPeak);
    this.uncommittedProduceWaits.feed({ shard }, shard, s.uncommittedProduceWaits);
    this.networkBytes.feed({ direction: 'in' }, `shard-${shard}/in`, s.traffic.linkBytesIn);
    this.networkBytes.feed({ direction: 'out' }, `shard-${shard}/out`, s.traffic.linkBytesOut);
    this.replicationBytes.feed({ direction: 'in' }, `shard-${shard}/in`, s.traffic.replicaBytesFetched);
    this.logBytesWritten.feed({}, `shard-${shard}`, s.traffic.logBytesWritten);
    this.logFlush.add({ shard }, s.logFlush.durations);
    this.logFlushQueue.add({ shard }, s.logFlush.queueWait);
    this.addGcPauses(`shard-${shard}`, s.gcPauses);
    for (const direction of DIRECTIONS) {
      const ring = direction === 'to_shard' ? s.toShard : s.toMain;
      this.ringUsed.set({ shard, direction }, ring.usedBytes);
      this.ringCapacity.set({ shard, direction }, ring.capacity);
      this.ringFill.set({ shard, direction }, ring.capacity > 0 ? ring.usedBytes / ring.capacity : 0);
      this.ringFull.feed({ shard, direction }, `${shard}/${direction}`, ring.producerWaits);
      for (const side of WAKEUP_SIDES) {
        const total = side === 'consumer' ? ring.consumerWakeups : ring.producerWakeups;
        this.wakeups.feed({ shard, direction, side }, `${shard}/${direction}/${side}`, total);
      }
    }
  }

  private removeShard(id: number): void {
    const shard = String(id);
    for (const g of [this.lag, this.lagP99, this.lagMax, this.ownLagP99, this.cpuWait]) g.remove({ thread: `shard-${shard}` });
    this.handled.remove({ shard }, shard);
    this.busy.remove({ shard }, shard);
    this.storageErrors.remove({ shard }, shard);
    this.rescanned.remove({ shard }, shard);
    this.uncommittedProduceBytes.remove({ shard });
    this.uncommittedProduceWaits.remove({ shard }, shard);
    this.logFlush.remove({ shard });
    this.logFlushQueue.remove({ shard });
    for (const kind of GC_KINDS) this.gcPause.remove({ thread: `shard-${shard}`, kind });
    for (const direction of DIRECTIONS) {
      this.ringUsed.remove({ shard, direction });
      this.ringCapacity.remove({ shard, direction });
      this.ringFill.remove({ shard, direction });
      this.ringFull.remove({ shard, direction }, `${shard}/${direction}`);
      for (const side of WAKEUP_SIDES) {
        this.wakeups.remove({ shard, direction, side }, `${shard}/${direction}/${side}`);
      }
    }
  }

  private applyPartition(p: PartitionSnapshot): void {
    const labels = { topic: p.topic, partition: String(p.partition) };
    const [size, end, start, hw] = this.partitionGauges;
    size.set(labels, p.sizeBytes);
    end.set(labels, p.logEndOffset);
    start.set(labels, p.logStartOffset);
    hw.set(labels, p.highWatermark);
  }

  private removePartition(p: PartitionSnapshot): void {
    const labels = { topic: p.topic, partition: String(p.partition) };
    for (const g of this.partitionGauges) g.remove(labels);
  }
}
