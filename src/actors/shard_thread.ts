// One shard on its worker thread: `runShard` builds the shard over the rings handed in its
// worker data, exposes its control API over comlink and runs its drain loop until shutdown.
// Everything the shard owns is created here, on the worker's own thread, including its storage
// backend (an io_uring ring of its own under io=native/auto); an unusable 'native' choice throws
// here, so the worker fails before exposing its control API. Under --connection-placement shards
// it also joins the shard mesh (shard_mesh.ts): peers' request rings become ring lanes of the
// shard, and the ports to the peers are handed to the entry. The worker's entry module is the
// server layer's (src/server/shard_main.ts), which calls this and adds what lives above the
// actors (connections placed on the shard).
import type { MessagePort } from 'node:worker_threads';
import { coordinatorDeps } from '../coordinator/groups/coordinator_deps.js';
import type { GroupConfig, TopicInfo } from '../coordinator/groups/group_api.js';
import type { FlushPolicy } from '../log/group_commit.js';
import type { IoMode } from '../native/addon.js';
import { selectIoBackend } from '../log/native_io.js';
import type { CleanCloseEntry } from '../log/clean_shutdown.js';
import type { LogConfig } from '../log/partition_log.js';
import type { Logger } from 'pino';
import { createLogger } from '../common/logger.js';
import { LoopDelayMonitor, NO_LOOP_DELAY, type LoopDelay } from '../common/loop_delay.js';
import { GcPauses } from '../common/gc_pauses.js';
import { ParkingTicker } from '../common/parking_ticker.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import { MAX_OFFSET_SERIES, type GroupShardSnapshot, type PartitionSnapshot, type ShardSnapshot } from './shard_snapshot.js';
import { exposeControl } from './control_channel.js';
import { SpscRing, type RingStats } from './ring_buffer.js';
import { RingDoorbell } from './ring_doorbell.js';
import { Shard, type RoleUpdate, type ShardEvent, type ShardIntrospection } from './shard.js';
import { MAX_OUTBOX_BYTES } from './outbox.js';
import { ReplicaFetchers } from './replica_fetcher.js';
import type { RingShardPort } from './ring_shard_port.js';
import { joinShardMesh, type ShardMeshEnds } from './shard_mesh.js';
import type { PeerSecurity } from '../common/peer_socket.js';
import {
  DEFAULT_ALTER_PARTITION_RETRY_MS, DEFAULT_REPLICA_FETCH_BACKOFF_MS,
  type AlterPartitionItem, type AlterPartitionResult, type ReplicaBrokerInfo,
} from '../coordinator/replication/types.js';

export interface ShardWorkerData {
  index: number;
  toShard: SharedArrayBuffer;
  toMain: SharedArrayBuffer;
  /** This thread's ends of the two rings' doorbells (transferred). */
  toShardDoorbell: MessagePort;
  toMainDoorbell: MessagePort;
  /** Where the shard posts ShardEvents for main (transferred). */
  events: MessagePort;
  /** The shard's end of its placement port: client connections main hands it (transferred; src/net/placement_messages.ts). */
  connections: MessagePort;
  flush: FlushPolicy;
  io: IoMode;
  logLevel: string;
  retentionCheckMs: number;
  offsetsTopic: string;
  groupConfig: GroupConfig;
  replication: ShardReplicationConfig;
  /** Bound on produced bytes the shard holds until their commit settles (Shard.producesWait). */
  maxUncommittedProduceBytes: number;
  /** This shard's ends of the shard mesh (placement on shards; ports transferred), else null. */
  mesh: ShardMeshEnds | null;
}

/** Replication settings main hands each shard. */
export interface ShardReplicationConfig {
  /** This broker's id: followers fetch as this replica. */
  readonly brokerId: number;
  readonly replicaLagTimeMaxMs: number;
  readonly fetchMaxWaitMs: number;
  readonly fetchResponseMaxBytes: number;
  readonly fetchPartitionMaxBytes: number;
  /** How replica fetchers reach other brokers' inter-broker listener: TLS, and who they authenticate as. */
  readonly security: PeerSecurity;
}

/** The storage backend a shard runs on; `reason` says why it is not native (null when native). */
export interface IoChoice {
  backend: string;
  reason: string | null;
}

/** A shard's actors and counters with its load now: rings and event-loop delay (the console's actors page). */
export interface ShardView extends ShardIntrospection {
  /** Since the previous metrics scrape; read without restarting its window. */
  loopDelay: LoopDelay;
  toShard: RingStats;
  toMain: RingStats;
}

/** What main may ask a shard over the control channel. */
export interface ShardControl {
  /** `cleanShutdown`: the partition's entry in the clean-shutdown record found at start, if any. */
  openPartition(handle: number, topic: string, partition: number, dir: string, config: LogConfig, cleanShutdown: CleanCloseEntry | null): void;
  closePartition(handle: number, deleteData: boolean): void;
  updateConfig(handle: number, config: LogConfig): void;
  setTopics(topics: TopicInfo[]): void;
  setBrokers(localBrokerId: number, brokers: ReplicaBrokerInfo[]): void;
  setRoles(updates: RoleUpdate[]): void;
  /** This shard's share of the broker's follower replication throttle, bytes/s (Infinity: unthrottled). */
  setFollowerThrottle(bytesPerSecond: number): void;
  alterPartitionResult(handle: number, sent: AlterPartitionItem, result: AlterPartitionResult): void;
  introspect(): ShardView;
  ioChoice(): IoChoice;
  snapshot(): ShardSnapshot;
  /** The open partitions' sizes and offsets; unlike snapshot(), resets nothing the metrics count. */
  partitions(): PartitionSnapshot[];
  /** Closes every log, `closeLanes` at once (clean_close.ts). */
  shutdown(closeLanes: number): Promise<void>;
}

/**
 * Builds shard `data.index` on this worker thread, answers main's control calls on `parent` and
 * starts its drain loops; returns its logger, the shard and its ports to the peer shards (by shard
 * index, null at its own; null without a mesh) for what the entry adds beside it (placed
 * connections serve some requests through a lane of the shard and the peers' ring lanes).
 */
export function runShard(data: ShardWorkerData, parent: MessagePort): { log: Logger; shard: Shard; peers: (RingShardPort | null)[] | null } {
  const log = createLogger(data.logLevel, `shard-${data.index}`);
  const inbound = new SpscRing(data.toShard, new RingDoorbell(data.toShardDoorbell));
  const outbound = new SpscRing(data.toMain, new RingDoorbell(data.toMainDoorbell));
  // Rebalance reasons are the coordinator's own fixed strings, so this map stays small; durations
  // wait here for the next metrics scrape, bounded in case nobody scrapes.
  const MAX_REBALANCE_DURATIONS = 1000;
  const rebalances: Record<string, number> = {};
  let rebalanceMs: number[] = [];
  const io = selectIoBackend(data.io);
  const ioChoice: IoChoice = { backend: io.backend.name, reason: io.note === '' ? null : io.note };
  // A failing disk fails every group commit (hundreds a second): repeats of one kind of failure are
  // logged once per interval with the count suppressed meanwhile; the metric counts every one.
  const ERROR_LOG_INTERVAL_MS = 10_000;
  const MAX_ERROR_KINDS = 1024;
  const errorLines = new RepeatLimiter(ERROR_LOG_INTERVAL_MS, () => performance.now(), MAX_ERROR_KINDS);
  function logError(msg: string, err: unknown): void {
    const errno = (err as { code?: unknown; errno?: unknown } | null)?.errno;
    const verdict = errorLines.offer(`${msg}\0${typeof errno === 'string' ? errno : ''}`);
    if (verdict.log) log.error(verdict.suppressed > 0 ? { err, suppressed: verdict.suppressed } : { err }, msg);
  }
  /** How often leaders look for lagging followers, and how often moved high watermarks are checkpointed. */
  const REPLICA_TICK_MS = 250;
  const HW_CHECKPOINT_MS = 5000;
  const fetchers = new ReplicaFetchers(
    {
      replicaId: data.replication.brokerId,
      clientId: `sluice-replica-${data.replication.brokerId}-shard-${data.index}`,
      maxWaitMs: data.replication.fetchMaxWaitMs,
      minBytes: 1,
      maxBytes: data.replication.fetchResponseMaxBytes,
      partitionMaxBytes: data.replication.fetchPartitionMaxBytes,
      backoffMs: DEFAULT_REPLICA_FETCH_BACKOFF_MS,
      requestTimeoutMs: 30_000,
      connectTimeoutMs: 5_000,
      security: data.replication.security,
    },
    () => localBrokerEpoch,
    () => performance.now(),
    log,
  );
  let localBrokerEpoch = -1;
  const shard = new Shard(data.index, inbound, outbound, io.backend, data.flush, logError, {
    offsetsTopic: data.offsetsTopic,
    deps: () => coordinatorDeps(data.groupConfig),
    rebalanced: (e) => {
      rebalances[e.reason] = (rebalances[e.reason] ?? 0) + 1;
      if (rebalanceMs.length < MAX_REBALANCE_DURATIONS) rebalanceMs.push(e.durationMs);
      log.info({ group: e.groupId, reason: e.reason, generation: e.generationId, members: e.members, ms: e.durationMs }, 'group rebalanced');
    },
    badRecord: (partition, offset, err) => log.error({ err, partition, offset }, 'unreadable group record skipped'),
  }, {
    settings: {
      replicaLagTimeMaxMs: data.replication.replicaLagTimeMaxMs,
      alterPartitionRetryMs: DEFAULT_ALTER_PARTITION_RETRY_MS,
      fetchBackoffMs: DEFAULT_REPLICA_FETCH_BACKOFF_MS,
      flushAlways: data.flush.kind === 'always',
    },
    fetching: fetchers,
    events: (e: ShardEvent) => data.events.postMessage(e),
  }, MAX_OUTBOX_BYTES, data.maxUncommittedProduceBytes);
  const lag = new LoopDelayMonitor();
  const gcPauses = new GcPauses();
  const retention = setInterval(() => shard.enforceRetention(), data.retentionCheckMs);
  retention.unref();
  // Only leaders with followers (or an ISR beyond themselves, or a proposal to resend) change as
  // time passes; a shard of lone leaders, or of none, parks this timer (an idle broker's shard
  // otherwise woke 4 times a second for it). Every control call that can give a leader followers
  // or a proposal to resend pokes it (below), and from then on it ticks every REPLICA_TICK_MS.
  const replicaTicks = new ParkingTicker(REPLICA_TICK_MS, () => shard.tickReplicas());
  replicaTicks.poke();
  /** A control call that can change which partitions need replica ticks. */
  function changed<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void {
    return (...args) => {
      fn(...args);
      replicaTicks.poke();
    };
  }
  const hwCheckpoints = setInterval(() => shard.checkpointHighWatermarks(), HW_CHECKPOINT_MS);
  hwCheckpoints.unref();

  function groupSnapshot(view: ShardIntrospection): GroupShardSnapshot {
    const byState: Record<string, number> = {};
    let members = 0;
    for (const c of view.coordinators) {
      members += c.stats.members;
      for (const [state, n] of Object.entries(c.stats.byState)) byState[state] = (byState[state] ?? 0) + n;
    }
    // Main keeps at most MAX_OFFSET_SERIES of these; sending more would only cost the copy.
    const committed: GroupShardSnapshot['committed'] = [];
    for (const [group, { members, offsets }] of shard.committedOffsets()) {
      for (const o of offsets) if (committed.length < MAX_OFFSET_SERIES) committed.push({ group, members, ...o });
    }
    return { byState, members, rebalances: { ...rebalances }, rebalanceMs, committed };
  }

  const control: ShardControl = {
    openPartition: changed((handle, topic, partition, dir, config, cleanShutdown) => shard.openPartition(handle, topic, partition, dir, config, cleanShutdown)),
    closePartition: (handle, deleteData) => shard.closePartition(handle, deleteData),
    updateConfig: changed((handle, config) => shard.updateConfig(handle, config)),
    setTopics: (topics) => shard.setTopics(topics),
    setBrokers: changed((localBrokerId: number, brokers: ReplicaBrokerInfo[]) => {
      localBrokerEpoch = brokers.find((b) => b.id === localBrokerId)?.epoch ?? -1;
      shard.setBrokers(localBrokerId, brokers);
    }),
    setRoles: changed((updates) => shard.setRoles(updates)),
    setFollowerThrottle: (bytesPerSecond) => fetchers.setThrottleRate(bytesPerSecond),
    alterPartitionResult: changed((handle, sent, result) => shard.alterPartitionResult(handle, sent, result)),
    introspect: () => ({ ...shard.introspect(), loopDelay: lag.peek() ?? NO_LOOP_DELAY, toShard: inbound.stats(), toMain: outbound.stats() }),
    ioChoice: () => ioChoice,
    partitions: () => shard.partitionSnapshots(),
    snapshot: () => {
      const view = shard.introspect();
      const snap: ShardSnapshot = {
        shard: data.index,
        loopDelay: lag.take() ?? NO_LOOP_DELAY,
        toShard: inbound.stats(),
        toMain: outbound.stats(),
        partitions: shard.partitionSnapshots(),
        handled: view.handled,
        busyMs: view.busyMs,
        lastError: view.lastError,
        storageErrors: view.storageErrors,
        rescannedSegments: view.rescannedSegments,
        uncommittedProduceBytesPeak: shard.takeUncommittedPeak(),
        uncommittedProduceWaits: view.uncommittedProduceWaits,
        groups: groupSnapshot(view),
        traffic: {
          linkBytesIn: fetchers.traffic.link.in,
          linkBytesOut: fetchers.traffic.link.out,
          replicaBytesFetched: fetchers.traffic.records,
          logBytesWritten: shard.logBytesWritten(),
        },
        logFlush: shard.takeCommitTimings(),
        gcPauses: gcPauses.take(),
      };
      rebalanceMs = [];
      return snap;
    },
    shutdown: async (closeLanes) => {
      clearInterval(retention);
      replicaTicks.close();
      clearInterval(hwCheckpoints);
      const started = performance.now();
      const partitions = await shard.shutdown(closeLanes);
      log.info({ partitions, closeLanes, ms: Math.round(performance.now() - started) }, 'logs closed');
      await io.backend.close();
      lag.close();
      gcPauses.close();
    },
  };

  exposeControl(control, parent);
  shard.run().catch((err: unknown) => log.fatal({ err }, 'shard loop died'));
  const peers = data.mesh === null ? null : joinShardMesh(shard, data.mesh);
  return { log, shard, peers };
}
