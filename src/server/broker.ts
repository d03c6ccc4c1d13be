// Assembles a broker: the cluster id from the data dir, the metadata quorum's image behind the
// cluster view (see cluster_node.ts; without --controller-voters a one-voter quorum of this node),
// one shard worker per configured shard, the topic front end and the partition reconciler (which
// reopens partition actors, with log recovery, on their shards), the request handlers bound to
// their dependencies, the client listeners (client_listeners.ts; opened only once the controller unfenced this broker and its
// image shows it) and the admin HTTP server. stop() reverses it: move leaderships away
// (controlled shutdown), stop accepting, finish in-flight requests, let shards commit and
// checkpoint, then exit.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { PartitionReconciler } from '../actors/partition_reconciler.js';
import { PartitionRouter } from '../actors/partition_router.js';
import { produceMessageBytes } from '../actors/ring_messages.js';
import { ShardHost } from '../actors/shard_host.js';
import { allocateShardMesh, meshRingBytes } from '../actors/shard_mesh.js';
import type { IoChoice, ShardView } from '../actors/shard_thread.js';
import { ShardTable } from '../actors/shard_table.js';
import type { PartitionSnapshot } from '../actors/shard_snapshot.js';
import { quorumReport, type QuorumReport } from '../actors/quorum/quorum_report.js';
import { interBrokerPeerSecurity } from './peer_security.js';
import { advertisedAdminAddress, type BrokerConfig } from '../config.js';
import { GroupDirectory, groupConfigOf } from '../actors/group_directory.js';
import { OFFSETS_TOPIC, type ClusterView } from '../cluster/cluster_view.js';
import { TopicAdmin } from '../cluster/topic_admin.js';
import { WarmUp } from '../cluster/warm_up.js';
import { AlterPartitionSender } from '../cluster/alter_partition_sender.js';
import { BrokerMetrics } from '../metrics/metrics.js';
import { OffsetHistory, type LogEndReading } from '../metrics/offset_history.js';
import { MAX_ADMIN_CONNECTIONS, startAdminServer, type HealthStatus } from '../net/admin_http.js';
import { ClusterFanout, peerGet } from '../net/cluster_overview.js';
import { BearerToken, TlsMaterial } from '../net/listener_security.js';
import { AdminReports } from '../net/admin_reports.js';
import type { BrokerServices } from '../net/handlers/index.js';
import { DEFAULT_CLASS_WEIGHTS, DEFAULT_TURN_BUDGET, RequestScheduler } from '../net/request_scheduler.js';
import { selectSender } from '../net/native_sender.js';
import { RequestLog } from '../net/request_log.js';
import { QuotaGate } from '../net/client_quota_gate.js';
import { ClientQuotas } from '../coordinator/client_quotas.js';
import { MAX_SEGMENT_FDS, SegmentReader } from '../net/segment_reader.js';
import { diskSpaceOf } from '../common/disk_space.js';
import { CONNECTION_FDS, DescriptorBudget, PARTITION_FDS, reservedDescriptors } from '../common/descriptor_budget.js';
import { closeLanesFor } from '../log/clean_close.js';
import { CleanShutdownEntries } from '../log/clean_shutdown.js';
import { MAX_SEALED_HANDLES } from '../log/segment_handles.js';
import { readLogTail } from '../log/log_tail.js';
import { clusterIdOfVoters, reservePort, startClusterNode } from './cluster_node.js';
import { nofileLimit, type NofileLimit } from './descriptor_limit.js';
import { ClientListeners } from './client_listeners.js';
import { exposureWarnings } from './exposure_warnings.js';
import { shardWorkerEntry } from './shard_entry.js';
import { ConnectionPlacement } from '../net/connection_placement.js';
import { loadAddon } from '../native/addon.js';

export interface Broker {
  /** The primary client listener's port. */
  readonly kafkaPort: number;
  /** Every client listener's port, in config.clientListeners' order. */
  readonly listenerPorts: readonly number[];
  readonly adminPort: number;
  /** Reads TLS certificates (client and controller listeners), PLAIN users and the admin token again (SIGHUP). */
  reloadSecurity(): void;
  stop(): Promise<void>;
}

/** The data dir's cluster id; a new one is `fresh` (derived from --controller-voters) or, on a single node, random. */
function loadClusterId(metaDir: string, fresh: string | null): string {
  const file = join(metaDir, 'cluster_id');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = fresh ?? randomBytes(16).toString('base64url');
  writeFileSync(file, id);
  return id;
}

/** Kafka's replica.fetch.response.max.bytes and replica.fetch.max.bytes (the latter at least one largest batch). */
const REPLICA_FETCH_RESPONSE_MAX_BYTES = 10 << 20;
const REPLICA_FETCH_MAX_BYTES = 1 << 20;
/** How long one AlterPartition may look for an active controller before the leader retries it. */
const ALTER_PARTITION_TIMEOUT_MS = 5000;

/** libuv's pool size, fixed before any JavaScript ran; the launchers raise it from 4. */
const ioThreads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
const IO_THREADS_ADVISED_MIN = 8;

/** Every shard's backend as one figure for the log and /v1/health (shards normally agree). */
function summarizeIo(choices: readonly IoChoice[]): IoChoice {
  const backends = new Set(choices.map((c) => c.backend));
  const reason = choices.find((c) => c.reason !== null)?.reason ?? null;
  return { backend: backends.size === 1 ? [...backends][0]! : [...backends].join('+'), reason };
}

/** Waits until every shard is up; if one fails (e.g. io=native unavailable) all are stopped and its error thrown. */
/** The main thread's segment-reader cache: a small limit gets a smaller share. */
const readerCacheFor = (limit: number): number => Math.max(16, Math.min(MAX_SEGMENT_FDS, Math.floor(limit / 32)));

/** The descriptor budget for this process, before any partition is charged to it. */
function descriptorBudget(config: BrokerConfig, limit: NofileLimit, placedConnections: boolean): DescriptorBudget {
  const reserved = reservedDescriptors({
    shards: config.shards, sealedPerShard: MAX_SEALED_HANDLES, readerCache: readerCacheFor(limit.soft), adminConnections: MAX_ADMIN_CONNECTIONS, placedConnections,
  });
  return new DescriptorBudget(limit.soft, reserved);
}

/**
 * Charges the partitions the metadata image holds at start-up (they must open whatever the budget
 * says); a start that could not even hold them is refused with the figures rather than failing
 * later with EMFILE.
 */
function chargeStartPartitions(budget: DescriptorBudget, limit: NofileLimit, config: BrokerConfig, partitions: number, logger: Logger): void {
  const partitionFds = partitions * PARTITION_FDS;
  if (partitionFds > budget.capacity) {
    throw new Error(
      `the data dir holds ${partitions} partitions needing ${partitionFds} file descriptors, but the limit of ${limit.soft} ` +
        `(${limit.source}; hard ${limit.hard}) leaves ${budget.capacity} after ${budget.reserved} reserved: raise ulimit -n`,
    );
  }
  budget.acquire('partitions', partitionFds);
  const connectionsFit = Math.floor(budget.free / CONNECTION_FDS);
  const details = { limit: limit.soft, hard: limit.hard, source: limit.source, reserved: budget.reserved, partitions, maxConnections: config.maxConnections, connectionsFit };
  if (config.maxConnections > connectionsFit) {
    logger.warn(details, 'max-connections exceeds the file descriptor budget: connections beyond it will be refused (raise ulimit -n or lower --max-connections)');
  } else logger.info(details, 'file descriptor budget');
}

async function awaitShards(hosts: readonly ShardHost[]): Promise<IoChoice> {
  const settled = await Promise.allSettled(hosts.map((h) => h.started()));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(hosts.map((h) => h.abort()));
    throw failed.reason;
  }
  return summarizeIo(settled.map((s) => (s as PromiseFulfilledResult<IoChoice>).value));
}

/**
 * Whether client connections go to the shards (--connection-placement shards): the addon's dupFd
 * that hands them over, or null (every connection on main) when the setting is main or the
 * handoff cannot work here, said once: --io node, or an addon without dupFd.
 */
function placementDupFd(config: BrokerConfig, logger: Logger): ((fd: number) => number) | null {
  if (config.connectionPlacement === 'main') return null;
  const addon = config.io === 'node' ? null : loadAddon();
  const dupFd = addon === null || typeof addon === 'string' ? undefined : addon.dupFd;
  if (dupFd === undefined) {
    const why = config.io === 'node' ? '--io node' : typeof addon === 'string' ? addon : 'the native addon has no dupFd (built before it)';
    // The default asks for shards; falling back to main is a setting's consequence, not a fault.
    logger.info({ reason: why }, 'connection placement: connections stay on main');
    return null;
  }
  logger.info({ shards: config.shards }, 'connection placement: plaintext connections are handed to the shards');
  return dupFd;
}

/** What a failed start must undo, in start order; undone newest first. */
type StartedParts = Array<() => unknown>;

/**
 * Starts a broker; a start that fails part-way stops what it had started (shard workers, the
 * cluster node, the listeners) before rethrowing, so an embedding process is left with no handles.
 */
export async function startBroker(config: BrokerConfig, logger: Logger): Promise<Broker> {
  const startedParts: StartedParts = [];
  try {
    return await assembleBroker(config, logger, startedParts);
  } catch (err) {
    for (const undo of startedParts.reverse()) {
      await Promise.resolve().then(undo).catch((undoErr: unknown) => logger.warn({ err: undoErr }, 'cleanup after a failed start failed'));
    }
    throw err;
  }
}

async function assembleBroker(config: BrokerConfig, logger: Logger, startedParts: StartedParts): Promise<Broker> {
  let status: 'starting' | 'ready' | 'draining' = 'starting';
  if (ioThreads < IO_THREADS_ADVISED_MIN) {
    logger.warn({ ioThreads }, 'few I/O threads: fsyncs of different partitions will queue; start through bin/sluice or set UV_THREADPOOL_SIZE=16');
  }
  const metaDir = join(config.dataDir, 'meta');
  mkdirSync(metaDir, { recursive: true });
  const limit = nofileLimit();
  const dupFd = placementDupFd(config, logger);
  const descriptors = descriptorBudget(config, limit, dupFd !== null);
  const send = selectSender(config.io);
  logger.info(send.sender !== null ? 'response sends: native' : `response sends: node (${send.note})`);
  // Log ends sampled by every admin read of the shards' partitions (the /metrics scrape, the
  // console's reports), the one source of append rates and lag in seconds for both.
  const offsetHistory = new OffsetHistory();
  const sampledLogEnds = <P extends LogEndReading>(partitions: P[]): P[] => {
    offsetHistory.record(partitions, performance.now());
    return partitions;
  };
  const metrics = new BrokerMetrics(offsetHistory);
  startedParts.push(() => metrics.close());
  // Set once the controller channel exists; shards have no leaders before their partitions open.
  let alterPartitions: AlterPartitionSender | null = null;
  const shardTable = new ShardTable(config.shards);
  const router = new PartitionRouter(shardTable);
  // Shards serving placed connections reach each other over the mesh; nothing of it otherwise.
  const mesh = dupFd === null ? null : allocateShardMesh(config.shards, meshRingBytes(config.shards, config.ringBytes), config.ringBytes);
  const hosts = Array.from({ length: config.shards }, (_, index) =>
    ShardHost.spawn({
      index,
      entry: shardWorkerEntry(),
      ringBytes: config.ringBytes,
      maxOverflowBytes: config.ringBytes,
      flush: config.flush,
      io: config.io,
      logLevel: config.logLevel,
      retentionCheckMs: config.logRetentionCheckIntervalMs,
      offsetsTopic: OFFSETS_TOPIC,
      groupConfig: groupConfigOf(config),
      replication: {
        brokerId: config.nodeId,
        replicaLagTimeMaxMs: config.replicaLagTimeMaxMs,
        fetchMaxWaitMs: config.replicaFetchWaitMaxMs,
        fetchResponseMaxBytes: REPLICA_FETCH_RESPONSE_MAX_BYTES,
        fetchPartitionMaxBytes: Math.max(REPLICA_FETCH_MAX_BYTES, config.messageMaxBytes),
        security: interBrokerPeerSecurity(config),
      },
      maxUncommittedProduceBytes: config.maxUncommittedProduceBytes,
      mesh: mesh?.[index] ?? null,
      onEvent: (shard, event) => {
        if (alterPartitions === null) return;
        void alterPartitions.send(event.item).then((result) => hosts[shard]!.control.alterPartitionResult(event.handle, event.item, result)).catch(
          (err: unknown) => logger.warn({ err }, 'AlterPartition answer not delivered to the shard'),
        );
      },
      sink: router,
      onExit: (i, code) => {
        logger.fatal({ shard: i, code }, 'shard worker exited unexpectedly');
        router.failShard(i);
        placement?.failShard(i);
        process.exitCode = 1;
        void stop();
      },
    }),
  );
  router.attach(hosts.map((h) => h.port));
  // Before any listener opens; a shard's exit closes its placed connections' records.
  const placement = dupFd === null ? null : new ConnectionPlacement(hosts.map((h) => h.connections), dupFd, metrics, logger, {
    fetchLimits: { fetchMaxBytes: config.fetchMaxBytes, messageMaxBytes: config.messageMaxBytes }, slowRequestMs: config.slowRequestMs,
  });
  const io = await awaitShards(hosts);
  startedParts.push(() => Promise.all(hosts.map((h) => h.abort())));
  logger.info(io.reason === null ? `io backend: ${io.backend}` : `io backend: ${io.backend} (${io.reason})`);
  const clusterId = loadClusterId(metaDir, config.controllerVoters.length > 0 ? clusterIdOfVoters(config.controllerVoters) : null);
  // The broker registers its listeners' ports before they open, so a port 0 is resolved first.
  const listenerPorts: number[] = [];
  for (const l of config.clientListeners) listenerPorts.push(l.port === 0 ? await reservePort(l.host) : l.port);
  const node = await startClusterNode(config, {
    clusterId, listenerPorts, log: logger, metrics, descriptors,
    onFatal: () => {
      process.exitCode = 1;
      void stop();
    },
  });
  startedParts.push(() => node.stop());
  const cluster: ClusterView = node.view;
  metrics.watchCluster(cluster, resolve(config.dataDir));
  alterPartitions = new AlterPartitionSender(node.controller, config.nodeId, () => node.lifecycle.brokerEpoch, ALTER_PARTITION_TIMEOUT_MS);
  const segments = new SegmentReader(readerCacheFor(descriptors.limit));
  startedParts.push(() => segments.closeAll());
  // Read and removed before any partition opens (so no record outlives a change to the files it vouches for).
  const cleanShutdown = CleanShutdownEntries.take(config.dataDir);
  const reconciler = new PartitionReconciler(
    config, cluster, shardTable, (shard) => hosts[shard]!.control, (dir) => segments.dropDir(dir), cleanShutdown,
    // Followers fetch from the leaders' inter-broker listener.
    config.interBrokerListener === '' ? cluster : node.view.forListener(config.interBrokerListener),
  );
  const topics = new TopicAdmin(config, cluster, node.store, reconciler, descriptors);
  const groups = new GroupDirectory({ config, cluster, topics, partitions: reconciler, router });
  const pushTopics = (): Promise<void[]> => {
    const infos = groups.topicInfos();
    return Promise.all(hosts.map((h) => h.control.setTopics(infos)));
  };
  reconciler.onLeadership = (handle, followers) => {
    if (followers === null) router.leadershipEnded(handle);
    else router.leadershipBegan(handle, followers);
    placement?.changed();
  };
  reconciler.onChange = () => {
    placement?.changed();
    void pushTopics().catch((err: unknown) => logger.error({ err }, 'topic list not delivered to shards'));
  };
  // What of the image the shards' snapshots hold (partitions and leaders, whether ACLs or quotas
  // apply), each a new map object whenever it changes: an image that changed none of it (a
  // producer-id block, a broker's registration) costs them nothing.
  let snapshotted: readonly unknown[] = [];
  const snapshotInputs = (): readonly unknown[] => [node.follower.image.topicsByName, node.follower.image.acls, node.follower.image.quotas];
  // Topics other brokers create (or delete) reach this one only through the image.
  node.follower.onPublish = () => {
    metrics.metadataPublished();
    const inputs = snapshotInputs();
    if (inputs.some((v, i) => v !== snapshotted[i])) {
      snapshotted = inputs;
      placement?.changed();
    }
    void reconciler.applied(cluster.revision).catch((err: unknown) => logger.error({ err }, 'partitions not reconciled with the metadata image'));
  };
  // Set while the broker hands its leaderships over on stop (produce answers for moved partitions wait for it).
  let handover: Promise<unknown> | null = null;
  const hostedPartitions = async (): Promise<PartitionSnapshot[]> => (await Promise.all(hosts.map((h) => h.control.partitions()))).flat();
  const brokerServices: BrokerServices = {
    handover: () => handover,
    config,
    cluster,
    partitions: reconciler,
    topics,
    router,
    offsets: router,
    segments,
    producerIds: node.producerIds,
    groups,
    metrics,
    quorum: { driver: node.driver, endpoints: node.voters, controller: node.controller, follower: node.follower },
    logDirs: {
      path: resolve(config.dataDir),
      partitions: hostedPartitions,
      space: () => diskSpaceOf(config.dataDir),
    },
    // Every shard's inbound ring has the same size.
    limits: {
      maxProduceBatchBytes: hosts[0]!.port.requests.maxMessageBytes - produceMessageBytes(0),
      fetchMaxBytes: config.fetchMaxBytes,
      messageMaxBytes: config.messageMaxBytes,
    },
  };
  const quotas = new QuotaGate(new ClientQuotas(() => node.follower.image.quotas), metrics);
  placement?.serveFrom({
    view: cluster,
    table: shardTable,
    partitionDir: (topic, partition) => reconciler.partitionDir(topic, partition),
    // Placed connections are ANONYMOUS (plaintext, no SASL): shards serve them only while no ACL
    // applies to anyone, and leave client quotas and the handover's waits to main.
    open: () => node.follower.image.acls.size === 0 && config.allowEveryoneIfNoAclFound === true && !quotas.active && handover === null,
    limits: brokerServices.limits,
  });
  const scheduler = new RequestScheduler({
    turnBudget: DEFAULT_TURN_BUDGET, weights: DEFAULT_CLASS_WEIGHTS, defer: (fn) => setImmediate(fn), onQueued: (cls) => metrics.requestQueued(cls),
  });
  const listeners = new ClientListeners(config, listenerPorts, {
    services: brokerServices,
    connection: {
      metrics, releaseLeases: (leases: number[]) => segments.release(leases), blockedShards: () => router.blockedShards(), scheduler,
      requestLog: new RequestLog(logger, config.slowRequestMs, metrics),
      quotas,
    },
    view: node.view,
    descriptors,
    native: send.sender,
    placement,
    log: logger,
  });
  const reports = new AdminReports({
    cluster, groups, partitions: async () => sampledLogEnds(await hostedPartitions()), history: offsetHistory, now: () => performance.now(),
  });
  const warmUp = new WarmUp(node.view, (topic, partition, maxBytes) => readLogTail(reconciler.partitionDir(topic, partition), maxBytes), config.warmUpBytes, logger);
  const exposure = exposureWarnings(config);
  for (const warning of exposure) logger.warn(warning);
  const adminTls = config.adminSslCertFile === '' ? null : new TlsMaterial({ certFile: config.adminSslCertFile, keyFile: config.adminSslKeyFile, caFile: '', clientAuth: 'none' });
  const adminToken = config.adminTokenFile === '' ? null : new BearerToken(config.adminTokenFile);
  const health = (): { status: HealthStatus; failing: string[]; details: Record<string, unknown> } => {
    const quorum = node.quorumHealth.check();
    return {
      status,
      failing: quorum.state === 'lost' ? ['quorum'] : [],
      details: {
        shards: config.shards, topics: node.view.image.topicsByName.size, connections: listeners.connectionCount, io, ioThreads,
        // Client connections each shard serves now (--connection-placement shards); null: all on main.
        placedConnections: placement === null ? null : [...placement.perShard],
        // Per shard, requests of placed connections served there and forwarded to main.
        placedRequests: placement === null ? null : placement.requests,
        descriptors: { limit: descriptors.limit, reserved: descriptors.reserved, partitions: descriptors.holding('partitions'), connections: descriptors.holding('connections') },
        quorum,
        warmUp: warmUp.progress(),
        security: { warnings: exposure },
      },
    };
  };
  const actors = (): Promise<ShardView[]> => Promise.all(hosts.map((h) => h.control.introspect()));
  const quorum = (): QuorumReport => quorumReport(node.driver);
  const fanout = new ClusterFanout({
    reports, view: node.view, quorum, scheme: adminTls === null ? 'http' : 'https',
    own: async () => {
      const standing = health();
      const shards = await actors();
      return {
        nodeId: node.view.localId, status: standing.status, failing: standing.failing, traffic: { atMs: Date.now(), ...await metrics.traffic() },
        loopDelayP99Ms: shards.length === 0 ? null : Math.max(...shards.map((v) => v.loopDelay.p99Ms)),
      };
    },
    authorization: () => adminToken?.authorization(),
    // A peer's certificate is trusted when this broker's own chain (or a default CA) signs it.
    get: peerGet(() => [adminTls?.context.cert ?? []].flat()),
    now: Date.now,
  });
  const admin = await startAdminServer({
    host: config.adminHost,
    port: config.adminPort,
    logger,
    metrics,
    tls: adminTls,
    token: adminToken,
    health,
    actors,
    snapshots: async () => {
      // Requests shards served for placed connections are in the figures once their reports are in.
      const [snapshots] = await Promise.all([Promise.all(hosts.map((h) => h.control.snapshot())), placement?.trafficReported()]);
      sampledLogEnds(snapshots.flatMap((s) => s.partitions));
      return snapshots;
    },
    quorum,
    reports,
    fanout,
  });
  startedParts.push(() => admin.close());
  const started = performance.now();
  node.lifecycle.warmWith(() => warmUp.ready());
  node.lifecycle.advertiseAdmin(advertisedAdminAddress(config, admin.port));
  // Placing __consumer_offsets needs this broker live, and clients must not see an older image.
  node.lifecycle.start();
  await node.lifecycle.unfenced();
  let partitions = 0;
  for (const t of cluster.topics()) partitions += t.partitions;
  chargeStartPartitions(descriptors, limit, config, partitions, logger);
  // Coordinators load with the topic list already in place.
  await pushTopics();
  await reconciler.applied(cluster.revision);
  await groups.start();
  logger.info({ topics: node.view.image.topicsByName.size, ms: Math.round(performance.now() - started) }, 'partitions opened');
  startedParts.push(() => listeners.close());
  const boundPorts = await listeners.listen();
  status = 'ready';

  let stopping: Promise<void> | null = null;
  function stop(): Promise<void> {
    stopping ??= (async () => {
      status = 'draining';
      // Controlled shutdown while the listener still serves: produces on partitions led here
      // complete, and clients of moved ones are answered from an image that shows the new leader.
      handover = node.lifecycle.shutDown(config.controlledShutdownTimeoutMs);
      placement?.changed();
      await handover;
      await listeners.close();
      await node.stop();
      // Connections are closed: what the budget has free now carries the logs' clean closes.
      const closeLanes = closeLanesFor(descriptors.free, hosts.length);
      await Promise.all(hosts.map((h) => h.stop(closeLanes)));
      segments.closeAll();
      await admin.close();
      metrics.close();
    })();
    return stopping;
  }
  return {
    kafkaPort: boundPorts[0]!,
    listenerPorts: boundPorts,
    adminPort: admin.port,
    reloadSecurity: () => {
      listeners.reload(logger);
      node.reloadTls();
      admin.reload();
    },
    stop,
  };
}
