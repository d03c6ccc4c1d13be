// The metadata-quorum half of a broker in cluster mode (main thread): the MetadataQuorum (Raft
// driver plus controller) over `<data-dir>/meta/quorum`, the controller listener when this node
// is a voter, the ImageClusterView fed by every committed image, and the broker's side of the
// controller: its lifecycle (registration, heartbeats, the listener gate), the forwarding
// MetadataStore TopicAdmin proposes to, and producer ids from controller blocks. A request for
// the active controller goes straight to the local MetadataQuorum when this node is it, and over
// the controller listener (ControllerClient) otherwise.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { MetadataQuorum } from '../actors/quorum/metadata_quorum.js';
import type { QuorumDriver, QuorumLink } from '../actors/quorum/quorum_driver.js';
import { QuorumHealth } from '../actors/quorum/quorum_report.js';
import { BrokerLifecycle } from '../cluster/broker_lifecycle.js';
import type { ControllerChannel, ControllerRequest } from '../cluster/controller_channel.js';
import { ControllerProducerIds } from '../cluster/controller_producer_ids.js';
import { ForwardingMetadataStore } from '../cluster/forwarding_store.js';
import type { ControllerConfig, ControllerReply } from '../cluster/metadata/controller.js';
import { ImageClusterView } from '../cluster/metadata/image_view.js';
import { MetadataImage } from '../cluster/metadata/image.js';
import { MetadataFollower } from '../cluster/metadata_follower.js';
import type { DescriptorBudget } from '../common/descriptor_budget.js';
import { MAX_CONTROLLER_VOTERS, SECURITY_PROTOCOLS, advertisedListenerEndpoint, type BrokerConfig, type ControllerVoter } from '../config.js';
import { validateTopicConfigs } from '../coordinator/topic_configs.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { startControllerListener } from '../net/controller_server.js';
import { ControllerClient } from '../net/controller_client.js';
import type { KafkaServer } from '../net/kafka_server.js';
import { QuorumTransport } from '../net/quorum_transport.js';
import { controllerListenerSecurity, controllerPeerSecurity } from './peer_security.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { markLegacyMetaCarried, readLegacyMeta } from './legacy_meta.js';
import { carryScramBootstrap } from './scram_bootstrap.js';

/** How long a forwarded topic change or a producer-id block may take, leader changes included; also the cap on a client's CreateTopics/CreatePartitions/DeleteTopics timeout. */
const CONTROLLER_REQUEST_TIMEOUT_MS = 30_000;
/** Bound on brokers and partitions the controller admits. */
const MAX_BROKERS = 1000;
const MAX_CLUSTER_PARTITIONS = 1_000_000;
const MAX_PENDING_BATCHES = 1000;

/**
 * A cluster's id before any node has one: derived from the voters list, so every node of a
 * cluster started with the same --controller-voters agrees on it without a format step.
 */
export function clusterIdOfVoters(voters: readonly ControllerVoter[]): string {
  const spec = voters.map((v) => `${v.id}@${v.host}:${v.port}`).join(',');
  return createHash('sha256').update(`sluice-cluster:${spec}`).digest().subarray(0, 16).toString('base64url');
}

/** A free port on `host`, for a Kafka listener configured with port 0 that must be registered before it opens. */
export function reservePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function controllerConfigOf(config: BrokerConfig): ControllerConfig {
  return {
    sessionTimeoutMs: config.brokerSessionTimeoutMs,
    maxBrokers: MAX_BROKERS,
    maxPartitions: MAX_CLUSTER_PARTITIONS,
    maxPendingBatches: MAX_PENDING_BATCHES,
    defaultPartitions: config.numPartitions,
    defaultReplicationFactor: config.defaultReplicationFactor,
    newTopicId: () => crypto.randomUUID().replace(/-/g, ''),
    checkTopicConfigs: (configs) => validateTopicConfigs(configs, config),
    leaderImbalanceCheckIntervalMs: config.leaderImbalanceCheckIntervalMs,
    leaderImbalancePerBrokerPercentage: config.leaderImbalancePerBrokerPercentage,
  };
}

/** How often a single node looks whether its controller is active, before carrying old metadata in. */
const ACTIVE_POLL_MS = 10;

/**
 * A single node on a data dir an older Sluice wrote: its topic table and producer-id mark go into
 * the metadata log once the node's controller is active, before the broker registers.
 */
async function carryLegacyMeta(quorum: MetadataQuorum, metaDir: string, brokerId: number, log: Logger): Promise<void> {
  const legacy = readLegacyMeta(metaDir);
  if (legacy === null) return;
  await untilLeaderKnown(() => quorum.isActiveController, 'carry meta/topics.json into');
  const reply = await quorum.importLegacy({ ...legacy, brokerId });
  const refused = reply.kind === 'topics' ? reply.results.find((r) => r.errorCode !== ErrorCode.NONE) : undefined;
  if (refused !== undefined) throw new Error(`meta/topics.json not carried into the metadata log: ${errorName(refused.errorCode)}: ${refused.message ?? ''}`);
  markLegacyMetaCarried(metaDir);
  log.info({ topics: legacy.topics.length, nextProducerId: legacy.nextProducerId }, 'carried the old topic table and producer-id mark into the metadata log');
}

/** Waits until `known()` holds (the quorum has elected what the caller needs), up to the controller request timeout. */
async function untilLeaderKnown(known: () => boolean, purpose: string): Promise<void> {
  const deadline = performance.now() + CONTROLLER_REQUEST_TIMEOUT_MS;
  while (!known()) {
    if (performance.now() > deadline) throw new Error(`no active controller within ${CONTROLLER_REQUEST_TIMEOUT_MS} ms to ${purpose}`);
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS));
  }
}

/**
 * Carries SCRAM credentials written offline into the log (scram_bootstrap.ts): a single node
 * before its broker registers; a cluster node in the background once the quorum has a leader,
 * and only if that is itself.
 */
async function carryScramCredentials(quorum: MetadataQuorum, config: BrokerConfig, sole: boolean, log: Logger): Promise<void> {
  const purpose = 'carry SCRAM credentials written offline into';
  const active = async (): Promise<boolean> => {
    if (sole) await untilLeaderKnown(() => quorum.isActiveController, purpose);
    else await untilLeaderKnown(() => quorum.driver.leader.leaderId !== -1, purpose);
    return quorum.isActiveController;
  };
  await carryScramBootstrap(config.dataDir, active, async (credentials) => {
    const reply = await quorum.bootstrapScramCredentials(credentials);
    return reply.kind === 'alterScramCredentials' ? reply : { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, message: `answered ${reply.kind}` };
  }, log);
}

/** A request for the active controller run on this process's MetadataQuorum. */
function runOnQuorum(quorum: MetadataQuorum, request: ControllerRequest): Promise<ControllerReply> {
  switch (request.kind) {
    case 'registerBroker':
      return quorum.registerBroker(request.request);
    case 'heartbeat':
      return quorum.heartbeat(request.request);
    case 'createTopics':
      return quorum.createTopics(request.topics, false);
    case 'createPartitions':
      return quorum.createPartitions([{ name: request.name, count: request.count, assignment: request.assignment }], false);
    case 'deleteTopics':
      return quorum.deleteTopics(request.names);
    case 'allocateProducerIds':
      return quorum.allocateProducerIds(request.brokerId, request.brokerEpoch);
    case 'alterPartition':
      return quorum.alterPartition(request.request);
    case 'electLeaders':
      return quorum.electLeaders(request.electionType, request.partitions);
    case 'alterPartitionReassignments':
      return quorum.alterPartitionReassignments(request.topics);
    case 'listPartitionReassignments':
      return quorum.listPartitionReassignments(request.topics);
    case 'alterConfigs':
      return quorum.alterConfigs(request.request);
    case 'alterScramCredentials':
      return quorum.alterScramCredentials(request.request);
    case 'createAcls':
      return quorum.createAcls(request.creations);
    case 'deleteAcls':
      return quorum.deleteAcls(request.filters);
    case 'alterClientQuotas':
      return quorum.alterClientQuotas(request.request);
    case 'unregisterBroker':
      return quorum.unregisterBroker(request.brokerId);
  }
}

/** The active controller as the local quorum member knows it, reached locally or over TCP. */
class QuorumControllerChannel implements ControllerChannel {
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly self: number,
    private readonly quorum: MetadataQuorum,
    private readonly remote: ControllerClient,
  ) {
    quorum.driver.onLeaderChange(() => {
      for (const wake of [...this.waiting]) wake();
    });
  }

  activeController(): number {
    return this.quorum.driver.leader.leaderId;
  }

  controllerChange(ms: number, until?: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiting.add(wake);
      until?.then(wake, wake);
    });
  }

  send(id: number, request: ControllerRequest, timeoutMs: number): Promise<ControllerReply> {
    return id === this.self ? runOnQuorum(this.quorum, request) : this.remote.send(id, request, timeoutMs);
  }
}

export interface ClusterNode {
  readonly view: ImageClusterView;
  readonly follower: MetadataFollower;
  readonly store: ForwardingMetadataStore;
  readonly producerIds: ControllerProducerIds;
  readonly lifecycle: BrokerLifecycle;
  /** The controller listener's port; -1 without one (no controller role, or a single node not given --controller-addr). */
  readonly controllerPort: number;
  /** The quorum's Raft driver (status, leader), for /v1/quorum and DescribeQuorum on the client listener. */
  readonly driver: QuorumDriver;
  /** Whether the quorum has been leaderless for too long, for /v1/health. */
  readonly quorumHealth: QuorumHealth;
  /** The controller listeners of the voters, as --controller-voters names them (a single node: its own, if it has one). */
  readonly voters: readonly ControllerVoter[];
  /** The way to the active controller, for requests run there (ElectLeaders on the client listener). */
  readonly controller: ControllerChannel;
  /** Reads the controller listener's TLS certificate again for new connections (SIGHUP). */
  reloadTls(): void;
  stop(): Promise<void>;
}

export interface ClusterNodeServices {
  readonly clusterId: string;
  /** Each client listener's port, in config.clientListeners' order (known before the listeners open); registered unless advertised elsewhere. */
  readonly listenerPorts: readonly number[];
  readonly log: Logger;
  readonly metrics: BrokerMetrics;
  readonly descriptors: DescriptorBudget;
  /** A storage failure of the metadata log. */
  readonly onFatal: (err: unknown) => void;
}

export async function startClusterNode(config: BrokerConfig, services: ClusterNodeServices): Promise<ClusterNode> {
  const { clusterId, log } = services;
  const metaDir = join(config.dataDir, 'meta');
  const dir = join(metaDir, 'quorum');
  mkdirSync(dir, { recursive: true });
  const sole = config.controllerVoters.length === 0;
  if (!sole && readLegacyMeta(metaDir) !== null) {
    throw new Error('the data dir holds meta/topics.json of an older single node: start it once without --controller-voters to carry its topics into a metadata log');
  }
  // A single node is a one-voter quorum of itself, with nobody to dial. It binds a controller
  // listener only when --controller-addr names one; a port 0 is fixed first so DescribeQuorum can name it.
  const controllerPort = sole && config.controllerPort === 0 ? await reservePort(config.controllerHost) : config.controllerPort;
  const ownEndpoint: readonly ControllerVoter[] = controllerPort === -1 ? [] : [{ id: config.nodeId, host: config.controllerHost, port: controllerPort }];
  const voters = sole ? ownEndpoint : config.controllerVoters;
  const peerSecurity = controllerPeerSecurity(config);
  // One line per peer that refuses this node's credentials or certificate, until it accepts them.
  const refusedBy = (role: string) => (id: number, err: Error): void => {
    log.warn({ peer: id, err: err.message }, `${role} ${id} refused this node's authentication (check inter-broker-sasl-username, its password, controller-security-protocol and the ssl-* files)`);
  };
  // Brokers find each other's replica fetch endpoint under the primary listener's name.
  const view = new ImageClusterView(clusterId, config.nodeId, config.clientListeners[0]!.name, MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const quorum = new MetadataQuorum({
    id: config.nodeId,
    dir,
    bootstrapVoters: sole ? [config.nodeId] : voters.map((v) => v.id),
    log,
    onFatal: services.onFatal,
    snapshotEveryEntries: config.metadataSnapshotRecords,
    snapshotEveryBytes: config.metadataSnapshotBytes,
    controller: controllerConfigOf(config),
    transport: ({ deliver, isVoter, unreachable }): QuorumLink => {
      const t = new QuorumTransport({
        self: config.nodeId,
        clusterId,
        peers: voters.filter((v) => v.id !== config.nodeId),
        deliver,
        isVoter,
        unreachable,
        maxPeers: MAX_CONTROLLER_VOTERS,
        maxQueuedPerPeer: 256,
        maxInflightPerPeer: 8,
        requestTimeoutMs: 2000,
        maxPendingInbound: 1024,
        maxResponseBytes: 16 << 20,
        security: peerSecurity,
        authenticationRefused: refusedBy('voter'),
      });
      return { send: (m) => t.send(m), receive: (req) => t.receive(req), learnPeers: (endpoints) => t.learnPeers(endpoints), close: () => t.close() };
    },
  });
  follower.publish(quorum.image);
  quorum.onImage((image) => follower.publish(image));
  view.setControllerId(quorum.driver.leader.leaderId);
  quorum.driver.onLeaderChange((c) => view.setControllerId(c.leaderId));
  services.metrics.watchQuorum(quorum.driver);

  let listener: KafkaServer | null = null;
  let boundPort = -1;
  if (config.controllerAddr !== '') {
    const started = await startControllerListener(
      { quorum, clusterId, endpoints: voters },
      { host: config.controllerHost, port: controllerPort, security: controllerListenerSecurity(config, () => quorum.image, log, services.metrics) },
      { log, metrics: services.metrics, descriptors: services.descriptors },
    );
    listener = started.server;
    boundPort = started.port;
  }
  if (sole) await carryLegacyMeta(quorum, metaDir, config.nodeId, log);
  if (sole) await carryScramCredentials(quorum, config, sole, log);
  else void carryScramCredentials(quorum, config, sole, log).catch((err: unknown) => log.error({ err }, 'SCRAM bootstrap credentials not carried'));
  const remote = new ControllerClient(voters, clusterId, peerSecurity, refusedBy('controller'));
  const channel = new QuorumControllerChannel(config.nodeId, quorum, remote);
  // Every client listener is registered where clients reach it; the primary's is also where other brokers' replica fetchers connect.
  const endpoints = config.clientListeners.map((l, i) => ({
    name: l.name, ...advertisedListenerEndpoint(config, l, services.listenerPorts[i]!), securityProtocol: SECURITY_PROTOCOLS.indexOf(l.protocol),
  }));
  const lifecycle = new BrokerLifecycle(
    { brokerId: config.nodeId, endpoints, rack: config.rack },
    channel,
    follower,
    { heartbeatIntervalMs: config.brokerHeartbeatIntervalMs, sessionTimeoutMs: config.brokerSessionTimeoutMs },
    log,
  );
  return {
    view,
    follower,
    store: new ForwardingMetadataStore(channel, follower, view, CONTROLLER_REQUEST_TIMEOUT_MS),
    producerIds: new ControllerProducerIds(config.nodeId, lifecycle, channel, CONTROLLER_REQUEST_TIMEOUT_MS),
    lifecycle,
    controllerPort: boundPort,
    driver: quorum.driver,
    quorumHealth: new QuorumHealth(quorum.driver),
    voters,
    controller: channel,
    reloadTls() {
      listener?.reloadTls();
    },
    async stop() {
      await lifecycle.stop();
      remote.close();
      await listener?.close();
      await quorum.stop();
    },
  };
}
