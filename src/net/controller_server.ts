// The controller listener (main thread): KRaft's CONTROLLER listener, a KafkaServer of its own so
// quorum traffic never queues behind client traffic. It serves the quorum APIs (Vote,
// BeginQuorumEpoch, EndQuorumEpoch, Fetch of __cluster_metadata, FetchSnapshot) through the
// driver's inbound hook, DescribeQuorum from the driver's status, AddRaftVoter/RemoveRaftVoter,
// and the controller RPCs brokers send (BrokerRegistration, BrokerHeartbeat, AllocateProducerIds,
// AlterPartition from partition leaders, and CreateTopics/DeleteTopics/CreatePartitions/ElectLeaders/
// IncrementalAlterConfigs/AlterConfigs, the partition reassignment APIs and UnregisterBroker forwarded by brokers), each answered once its
// records commit, NOT_CONTROLLER when this node is not the active controller or stops being it
// first. ApiVersions lists exactly these APIs.
// A secured controller listener (controller-security-protocol) speaks TLS and/or SASL as a client
// listener does, and admits only principals holding CLUSTER_ACTION on the cluster (super users
// included): anyone else has the connection closed, one log line per interval. What brokers
// forward was authorised on the broker the client sent it to, so the forwarded APIs' own checks
// see no authorizer here.
import type { Logger } from 'pino';
import type { MetadataQuorum } from '../actors/quorum/metadata_quorum.js';
import type { QuorumDriver } from '../actors/quorum/quorum_driver.js';
import type { ControllerReply, TopicResult } from '../cluster/metadata/controller.js';
import type { DescriptorBudget } from '../common/descriptor_budget.js';
import { QuorumApiKey, type QuorumRequest } from '../coordinator/raft/quorum_wire.js';
import type { NodeId } from '../coordinator/raft/types.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { connectionRefused } from './listener_probe.js';
import { AddRaftVoterApi, type AddRaftVoterRequest } from '../protocol/apis/add_raft_voter.js';
import { AllocateProducerIdsApi, type AllocateProducerIdsRequest, type AllocateProducerIdsResponse } from '../protocol/apis/allocate_producer_ids.js';
import { AlterPartitionApi, type AlterPartitionRequest, type AlterPartitionResponse } from '../protocol/apis/alter_partition.js';
import {
  AlterConfigsApi, IncrementalAlterConfigsApi, type AlterConfigsRequest, type AlterConfigsResponse, type IncrementalAlterConfigsRequest, type IncrementalAlterConfigsResponse,
} from '../protocol/apis/alter_configs.js';
import { ElectLeadersApi, type ElectLeadersRequest, type ElectLeadersResponse } from '../protocol/apis/elect_leaders.js';
import { UnregisterBrokerApi, type UnregisterBrokerRequest, type UnregisterBrokerResponse } from '../protocol/apis/unregister_broker.js';
import {
  AlterPartitionReassignmentsApi, type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponse,
} from '../protocol/apis/alter_partition_reassignments.js';
import {
  ListPartitionReassignmentsApi, type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponse,
} from '../protocol/apis/list_partition_reassignments.js';
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import { BrokerHeartbeatApi, type BrokerHeartbeatRequest, type BrokerHeartbeatResponse } from '../protocol/apis/broker_heartbeat.js';
import { BrokerRegistrationApi, type BrokerRegistrationRequest, type BrokerRegistrationResponse } from '../protocol/apis/broker_registration.js';
import { CreatePartitionsApi, type CreatePartitionsRequest, type CreatePartitionsResponse } from '../protocol/apis/create_partitions.js';
import { CreateTopicsApi, type CreateTopicsRequest, type CreateTopicsResponse } from '../protocol/apis/create_topics.js';
import { DeleteTopicsApi, type DeleteTopicsRequest, type DeleteTopicsResponse } from '../protocol/apis/delete_topics.js';
import { DescribeQuorumApi, type DescribeQuorumReplicaState, type DescribeQuorumRequest, type DescribeQuorumResponse } from '../protocol/apis/describe_quorum.js';
import { apiByKey } from '../protocol/apis/index.js';
import { METADATA_TOPIC_NAME, type QuorumListener, type RaftVoterChangeResponse } from '../protocol/apis/quorum_common.js';
import { RemoveRaftVoterApi, type RemoveRaftVoterRequest } from '../protocol/apis/remove_raft_voter.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ZERO_UUID, type AnyApi } from '../protocol/schema.js';
import { bindHandler, CloseConnection, handler, type BoundHandler, type HandlerTable, type Wire } from './handler.js';
import { AlterUserScramCredentialsApi } from '../protocol/apis/scram_credentials.js';
import type { AlterScramRequest } from '../cluster/metadata/scram_changes.js';
import { alterUserScramCredentialsHandler } from './handlers/scram_credentials.js';
import { CreateAclsApi, DeleteAclsApi } from '../protocol/apis/acls.js';
import { createAclsHandler, deleteAclsHandler, type AlterAclsDeps } from './handlers/acls.js';
import { AclOperation } from '../coordinator/acl/acl.js';
import { permitsCluster, type AclAuthority } from './acl_authority.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import { AlterClientQuotasApi, type AlterClientQuotasRequest } from '../protocol/apis/client_quotas.js';
import { alterClientQuotasHandler } from './handlers/client_quotas.js';
import { apiKeysOf, apiVersionsHandler } from './handlers/api_versions.js';
import { alterEach, incrementalChanges, replacementChanges } from './handlers/alter_configs.js';
import { saslAuthenticateHandler, saslHandshakeHandler } from './handlers/sasl.js';
import { electionPartitions, electionResponse, refusedElection } from './handlers/elect_leaders.js';
import {
  listingAnswer, listingTopics, reassignmentAnswer, reassignmentTopics, refusedListing, refusedReassignments,
} from './handlers/partition_reassignments.js';
import { KafkaServer, type KafkaServerOptions, type ListenerSecurity } from './kafka_server.js';

/** A controller's listener address, as `--controller-voters` names it. */
export interface ControllerEndpoint {
  readonly id: NodeId;
  readonly host: string;
  readonly port: number;
}

/** KRaft's name for the listener DescribeQuorum v2 reports. */
const LISTENER_NAME = 'CONTROLLER';

const QUORUM_KEYS = [QuorumApiKey.fetch, QuorumApiKey.vote, QuorumApiKey.beginQuorumEpoch, QuorumApiKey.endQuorumEpoch, QuorumApiKey.fetchSnapshot] as const;

// ---- DescribeQuorum (also served on the client listener) ----

export interface DescribeQuorumDeps {
  readonly driver: Pick<QuorumDriver, 'status' | 'tickToMs'>;
  /** Controller listeners by node id, for v2's node list. */
  readonly endpoints: readonly ControllerEndpoint[];
}

/**
 * The leader's view of the quorum, as KRaft answers DescribeQuorum: voters and observers with
 * their log end offsets and last fetch / caught-up times. A node that is not the leader answers
 * NOT_LEADER_OR_FOLLOWER for the partition, naming the leader it knows.
 */
export const describeQuorumHandler = handler({
  api: DescribeQuorumApi,
  handle(ctx, req: DescribeQuorumRequest, deps: DescribeQuorumDeps): Wire<DescribeQuorumResponse> {
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized on the cluster', topics: [], nodes: [] };
    const s = deps.driver.status();
    const now = Date.now();
    const byId = new Map(s.replicas.map((r) => [r.id, r]));
    const state = (id: NodeId): DescribeQuorumReplicaState => {
      if (id === s.leaderId) return { replicaId: id, replicaDirectoryId: ZERO_UUID, logEndOffset: s.logEndOffset, lastFetchTimestamp: now, lastCaughtUpTimestamp: now };
      const r = byId.get(id);
      return {
        replicaId: id,
        replicaDirectoryId: ZERO_UUID,
        logEndOffset: r?.logEndOffset ?? -1,
        lastFetchTimestamp: deps.driver.tickToMs(r?.lastFetchTick ?? -1),
        lastCaughtUpTimestamp: deps.driver.tickToMs(r?.lastCaughtUpTick ?? -1),
      };
    };
    const leading = s.role === 'leader';
    const topics = req.topics.map((t) => ({
      topicName: t.topicName,
      partitions: t.partitions.map(({ partitionIndex }) => {
        const base = { partitionIndex, leaderId: s.leaderId, leaderEpoch: s.epoch, highWatermark: -1, currentVoters: [], observers: [] };
        if (t.topicName !== METADATA_TOPIC_NAME || partitionIndex !== 0) return { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
        if (!leading) return { ...base, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: 'this node is not the quorum leader' };
        return {
          ...base,
          errorCode: 0,
          errorMessage: null,
          highWatermark: s.highWatermark,
          currentVoters: s.voters.map(state),
          observers: s.replicas.filter((r) => !r.voter).map((r) => state(r.id)),
        };
      }),
    }));
    const nodes = deps.endpoints.map((e) => ({ nodeId: e.id, listeners: [{ name: LISTENER_NAME, host: e.host, port: e.port }] }));
    return { errorCode: 0, errorMessage: null, topics, nodes };
  },
});

// ---- the controller listener's own handlers ----

export interface ControllerHandlerDeps {
  readonly quorum: MetadataQuorum;
  readonly clusterId: string;
  readonly endpoints: readonly ControllerEndpoint[];
  /** Set on a secured controller listener: every API but ApiVersions and SASL's needs CLUSTER_ACTION, and a refusal is told here. */
  readonly refused?: ControllerRefusal;
}

/** How long the controller's connect attempt to a disconnected broker's listener may take; well inside the disconnect grace. */
const GONE_PROBE_TIMEOUT_MS = 200;

/** Ends broker `brokerId`'s session (that incarnation's) once its first registered listener refuses a connection. */
async function probeGone(quorum: MetadataQuorum, brokerId: number, brokerEpoch: number): Promise<void> {
  const b = quorum.image.brokers.get(brokerId);
  const at = b?.endpoints[0];
  if (b === undefined || b.epoch !== brokerEpoch || b.fenced || at === undefined) return;
  if (await connectionRefused(at.host, at.port, GONE_PROBE_TIMEOUT_MS)) quorum.brokerGone(brokerId, brokerEpoch);
}

/** The error code a failed controller or quorum call answers with. */
function codeOf(err: unknown): { errorCode: ErrorCode; errorMessage: string } {
  if (!(err instanceof KafkaError)) throw err;
  return { errorCode: err.code, errorMessage: err.message };
}

function foreignCluster(clusterId: string | null, deps: ControllerHandlerDeps): boolean {
  return clusterId !== null && clusterId !== deps.clusterId;
}

/** Awaits a controller reply of `kind`, or turns a refusal (NOT_CONTROLLER, ...) into `refuse`'s answer. */
async function reply<K extends ControllerReply['kind'], R>(
  call: Promise<ControllerReply>,
  kind: K,
  answer: (r: Extract<ControllerReply, { kind: K }>) => R,
  refuse: (errorCode: ErrorCode) => R,
): Promise<R> {
  let r: ControllerReply;
  try {
    r = await call;
  } catch (err) {
    return refuse(codeOf(err).errorCode);
  }
  if (r.kind !== kind) throw new Error(`controller answered ${r.kind} to a ${kind} request`);
  return answer(r as Extract<ControllerReply, { kind: K }>);
}

const brokerRegistrationHandler = handler({
  api: BrokerRegistrationApi,
  handle(_ctx, req: BrokerRegistrationRequest, deps: ControllerHandlerDeps): Promise<Wire<BrokerRegistrationResponse>> {
    const refuse = (errorCode: ErrorCode): Wire<BrokerRegistrationResponse> => ({ throttleTimeMs: 0, errorCode, brokerEpoch: -1 });
    if (foreignCluster(req.clusterId, deps)) return Promise.resolve(refuse(ErrorCode.INCONSISTENT_CLUSTER_ID));
    const call = deps.quorum.registerBroker({
      brokerId: req.brokerId,
      incarnationId: req.incarnationId,
      endpoints: req.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
      rack: req.rack,
      adminAddress: req.sluiceAdminAddress,
    });
    return reply(call, 'registerBroker', (r) => ({ throttleTimeMs: 0, errorCode: r.errorCode, brokerEpoch: r.brokerEpoch }), refuse);
  },
});

const brokerHeartbeatHandler = handler({
  api: BrokerHeartbeatApi,
  handle(ctx, req: BrokerHeartbeatRequest, deps: ControllerHandlerDeps): Promise<Wire<BrokerHeartbeatResponse>> {
    // A broker keeps one connection to the active controller; when it drops (the process died),
    // its session ends after the disconnect grace instead of the session timeout, and at once if
    // its Kafka listener refuses a connection (nothing listens: the process is gone).
    ctx.onConnectionClose?.(`broker ${req.brokerId} ${req.brokerEpoch}`, () => {
      deps.quorum.brokerDisconnected(req.brokerId, req.brokerEpoch);
      void probeGone(deps.quorum, req.brokerId, req.brokerEpoch);
    });
    const call = deps.quorum.heartbeat({
      brokerId: req.brokerId,
      brokerEpoch: req.brokerEpoch,
      currentMetadataOffset: req.currentMetadataOffset,
      wantFence: req.wantFence,
      wantShutDown: req.wantShutDown,
      warm: req.sluiceWarm,
    });
    return reply(
      call,
      'heartbeat',
      (r) => ({ throttleTimeMs: 0, errorCode: r.errorCode, isCaughtUp: r.isCaughtUp, isFenced: r.isFenced, shouldShutDown: r.shouldShutDown }),
      (errorCode) => ({ throttleTimeMs: 0, errorCode, isCaughtUp: false, isFenced: true, shouldShutDown: false }),
    );
  },
});

const allocateProducerIdsHandler = handler({
  api: AllocateProducerIdsApi,
  handle(_ctx, req: AllocateProducerIdsRequest, deps: ControllerHandlerDeps): Promise<Wire<AllocateProducerIdsResponse>> {
    return reply(
      deps.quorum.allocateProducerIds(req.brokerId, req.brokerEpoch),
      'allocateProducerIds',
      (r) => ({ throttleTimeMs: 0, errorCode: r.errorCode, producerIdStart: r.producerIdStart, producerIdLen: r.producerIdLen }),
      (errorCode) => ({ throttleTimeMs: 0, errorCode, producerIdStart: -1, producerIdLen: 0 }),
    );
  },
});

/** The per-topic results of a topic change, or every topic refused with one code. */
function topicResults(call: Promise<ControllerReply>, names: readonly string[]): Promise<readonly TopicResult[]> {
  return reply(call, 'topics', (r) => r.results, (errorCode) =>
    names.map((name) => ({ name, errorCode, message: null, topicId: ZERO_UUID, partitions: -1, replicationFactor: -1 } as TopicResult)));
}

const forwardedCreateTopicsHandler = handler({
  api: CreateTopicsApi,
  async handle(_ctx, req: CreateTopicsRequest, deps: ControllerHandlerDeps): Promise<Wire<CreateTopicsResponse>> {
    const topics = req.topics.map((t) => {
      const configs: Record<string, string> = {};
      for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
      const assignment = t.assignments.length > 0 ? [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex).map((a) => a.brokerIds) : null;
      return { name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor, assignment, configs };
    });
    const results = await topicResults(deps.quorum.createTopics(topics, req.validateOnly), topics.map((t) => t.name));
    return {
      throttleTimeMs: 0,
      topics: results.map((r) => ({
        name: r.name, topicId: r.topicId, errorCode: r.errorCode, errorMessage: r.message,
        numPartitions: r.partitions, replicationFactor: r.replicationFactor, configs: null,
      })),
    };
  },
});

const forwardedDeleteTopicsHandler = handler({
  api: DeleteTopicsApi,
  async handle(ctx, req: DeleteTopicsRequest, deps: ControllerHandlerDeps): Promise<Wire<DeleteTopicsResponse>> {
    const image = deps.quorum.image;
    const names = ctx.version >= 6 ? req.topics.map((t) => t.name ?? image.topicsById.get(t.topicId)?.name ?? null) : req.topicNames;
    const known = names.filter((n): n is string => n !== null);
    const results = new Map((await topicResults(deps.quorum.deleteTopics(known), known)).map((r) => [r.name, r]));
    return {
      throttleTimeMs: 0,
      responses: names.map((name, i) => {
        if (name === null) return { name: null, topicId: req.topics[i]!.topicId, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: 'unknown topic id' };
        const r = results.get(name);
        return { name, topicId: r?.topicId ?? ZERO_UUID, errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: r?.message ?? null };
      }),
    };
  },
});

const forwardedCreatePartitionsHandler = handler({
  api: CreatePartitionsApi,
  async handle(_ctx, req: CreatePartitionsRequest, deps: ControllerHandlerDeps): Promise<Wire<CreatePartitionsResponse>> {
    const asks = req.topics.map((t) => ({ name: t.name, count: t.count, assignment: t.assignments?.map((a) => a.brokerIds) ?? null }));
    const results = await topicResults(deps.quorum.createPartitions(asks, req.validateOnly), asks.map((a) => a.name));
    return { throttleTimeMs: 0, results: results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.message })) };
  },
});

/**
 * A partition leader's ISR change. v0-1 name topics (unknown: UNKNOWN_TOPIC_OR_PARTITION) and
 * know neither INELIGIBLE_REPLICA nor UNKNOWN_TOPIC_ID: they get OPERATION_NOT_ATTEMPTED for an
 * ineligible ISR member, as KIP-841 keeps it for older leaders.
 */
const alterPartitionHandler = handler({
  api: AlterPartitionApi,
  handle(ctx, req: AlterPartitionRequest, deps: ControllerHandlerDeps): Promise<Wire<AlterPartitionResponse>> {
    const byName = ctx.version < 2;
    const call = deps.quorum.alterPartition({
      brokerId: req.brokerId,
      brokerEpoch: req.brokerEpoch,
      topics: req.topics.map((t) => ({
        topicId: byName ? null : t.topicId,
        topicName: byName ? t.topicName : null,
        partitions: t.partitions.map((p) => ({
          partition: p.partitionIndex, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: p.leaderRecoveryState,
          newIsr: ctx.version >= 3 ? p.newIsrWithEpochs : p.newIsr.map((brokerId) => ({ brokerId, brokerEpoch: -1 })),
        })),
      })),
    });
    const legacy = (code: ErrorCode): ErrorCode => (byName && code === ErrorCode.INELIGIBLE_REPLICA ? ErrorCode.OPERATION_NOT_ATTEMPTED : code);
    return reply(
      call,
      'alterPartition',
      (r) => ({
        throttleTimeMs: 0,
        errorCode: r.errorCode,
        topics: r.topics.map((t) => ({
          topicName: t.topicName ?? '', topicId: t.topicId ?? ZERO_UUID,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partition, errorCode: legacy(p.errorCode), leaderId: p.leaderId, leaderEpoch: p.leaderEpoch,
            isr: [...p.isr], leaderRecoveryState: 0, partitionEpoch: p.partitionEpoch,
          })),
        })),
      }),
      (errorCode) => ({ throttleTimeMs: 0, errorCode, topics: [] }),
    );
  },
});

const forwardedElectLeadersHandler = handler({
  api: ElectLeadersApi,
  handle(_ctx, req: ElectLeadersRequest, deps: ControllerHandlerDeps): Promise<Wire<ElectLeadersResponse>> {
    return reply(
      deps.quorum.electLeaders(req.electionType, electionPartitions(req)),
      'electLeaders',
      (r) => (r.errorCode === ErrorCode.NONE ? electionResponse(r.errorCode, r.results) : refusedElection(req, r.errorCode, null)),
      (errorCode) => refusedElection(req, errorCode, null),
    );
  },
});

const forwardedAlterPartitionReassignmentsHandler = handler({
  api: AlterPartitionReassignmentsApi,
  handle(_ctx, req: AlterPartitionReassignmentsRequest, deps: ControllerHandlerDeps): Promise<Wire<AlterPartitionReassignmentsResponse>> {
    return deps.quorum.alterPartitionReassignments(reassignmentTopics(req)).then(
      (r) => reassignmentAnswer(req, r),
      (err: unknown) => refusedReassignments(req, codeOf(err).errorCode, null),
    );
  },
});

const forwardedListPartitionReassignmentsHandler = handler({
  api: ListPartitionReassignmentsApi,
  handle(_ctx, req: ListPartitionReassignmentsRequest, deps: ControllerHandlerDeps): Promise<Wire<ListPartitionReassignmentsResponse>> {
    return deps.quorum.listPartitionReassignments(listingTopics(req)).then(listingAnswer, (err: unknown) => refusedListing(codeOf(err).errorCode, null));
  },
});

const forwardedIncrementalAlterConfigsHandler = handler({
  api: IncrementalAlterConfigsApi,
  async handle(_ctx, req: IncrementalAlterConfigsRequest, deps: ControllerHandlerDeps): Promise<Wire<IncrementalAlterConfigsResponse>> {
    return { throttleTimeMs: 0, responses: await alterEach(incrementalChanges(req), (change) => deps.quorum.alterConfigs(change)) };
  },
});

const forwardedAlterConfigsHandler = handler({
  api: AlterConfigsApi,
  async handle(_ctx, req: AlterConfigsRequest, deps: ControllerHandlerDeps): Promise<Wire<AlterConfigsResponse>> {
    return { throttleTimeMs: 0, responses: await alterEach(replacementChanges(req), (change) => deps.quorum.alterConfigs(change)) };
  },
});

const forwardedUnregisterBrokerHandler = handler({
  api: UnregisterBrokerApi,
  handle(_ctx, req: UnregisterBrokerRequest, deps: ControllerHandlerDeps): Promise<Wire<UnregisterBrokerResponse>> {
    return reply(
      deps.quorum.unregisterBroker(req.brokerId),
      'unregisterBroker',
      (r) => ({ throttleTimeMs: 0, errorCode: r.errorCode, errorMessage: null }),
      (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null }),
    );
  },
});

/** AddRaftVoter / RemoveRaftVoter: answered once the voters entry commits (KIP-853). */
function voterChange(clusterId: string | null, deps: ControllerHandlerDeps, change: () => Promise<number>): Promise<Wire<RaftVoterChangeResponse>> {
  if (foreignCluster(clusterId, deps)) return Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.INCONSISTENT_CLUSTER_ID, errorMessage: null });
  return change().then(
    () => ({ throttleTimeMs: 0, errorCode: 0, errorMessage: null }),
    (err: unknown) => ({ throttleTimeMs: 0, ...codeOf(err) }),
  );
}

/** Listeners kept per added voter (a controller announces one per controller listener). */
const MAX_VOTER_LISTENERS = 8;

/** Why AddRaftVoter's listeners cannot go into the voters entry (every peer dials the first), or null. */
function listenersFault(listeners: readonly QuorumListener[]): string | null {
  if (listeners.length > MAX_VOTER_LISTENERS) return `at most ${MAX_VOTER_LISTENERS} listeners per voter`;
  const unusable = listeners.find((l) => l.host.length === 0 || l.host.length > 255 || l.port === 0);
  return unusable === undefined ? null : `listener ${unusable.name} has no usable host and port`;
}

const addRaftVoterHandler = handler({
  api: AddRaftVoterApi,
  handle: (_ctx, req: AddRaftVoterRequest, deps: ControllerHandlerDeps) => {
    const fault = listenersFault(req.listeners);
    if (fault !== null) return Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: fault });
    const endpoints = req.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port }));
    return voterChange(req.clusterId, deps, () => deps.quorum.driver.addVoter(req.voterId, endpoints));
  },
});

const removeRaftVoterHandler = handler({
  api: RemoveRaftVoterApi,
  handle: (_ctx, req: RemoveRaftVoterRequest, deps: ControllerHandlerDeps) => voterChange(req.clusterId, deps, () => deps.quorum.driver.removeVoter(req.voterId)),
});

/** A quorum API handed to the driver's inbound hook, which answers with the core's response. */
function quorumHandler(apiKey: QuorumRequest['apiKey'], driver: QuorumDriver): BoundHandler {
  return {
    api: apiByKey.get(apiKey)! as BoundHandler['api'],
    barrier: false,
    handle: async (ctx, body) => (await driver.inbound.receive({ apiKey, version: ctx.version, body } as QuorumRequest)).body,
  };
}

/** Every API the controller listener serves, and so what its ApiVersions lists. */
export const CONTROLLER_APIS: readonly AnyApi[] = [
  ApiVersionsApi, ...QUORUM_KEYS.map((key) => apiByKey.get(key)!), DescribeQuorumApi, AddRaftVoterApi, RemoveRaftVoterApi,
  BrokerRegistrationApi, BrokerHeartbeatApi, AllocateProducerIdsApi, AlterPartitionApi, CreateTopicsApi, DeleteTopicsApi,
  CreatePartitionsApi, ElectLeadersApi, AlterPartitionReassignmentsApi, ListPartitionReassignmentsApi, IncrementalAlterConfigsApi, AlterConfigsApi,
  UnregisterBrokerApi, AlterUserScramCredentialsApi, CreateAclsApi, DeleteAclsApi, AlterClientQuotasApi,
] as readonly AnyApi[];

/** `listenerHandlers`: SaslHandshake and SaslAuthenticate on a SASL controller listener, served before authentication. */
export function buildControllerHandlers(deps: ControllerHandlerDeps, listenerHandlers: readonly BoundHandler[] = []): HandlerTable {
  const aclDeps: AlterAclsDeps = { create: (creations) => deps.quorum.createAcls(creations), delete: (filters) => deps.quorum.deleteAcls(filters) };
  const bound = [
    ...QUORUM_KEYS.map((key) => quorumHandler(key, deps.quorum.driver)),
    bindHandler(describeQuorumHandler, { driver: deps.quorum.driver, endpoints: deps.endpoints }),
    bindHandler(addRaftVoterHandler, deps),
    bindHandler(removeRaftVoterHandler, deps),
    bindHandler(brokerRegistrationHandler, deps),
    bindHandler(brokerHeartbeatHandler, deps),
    bindHandler(allocateProducerIdsHandler, deps),
    bindHandler(forwardedCreateTopicsHandler, deps),
    bindHandler(forwardedDeleteTopicsHandler, deps),
    bindHandler(forwardedCreatePartitionsHandler, deps),
    bindHandler(alterPartitionHandler, deps),
    bindHandler(forwardedElectLeadersHandler, deps),
    bindHandler(forwardedAlterPartitionReassignmentsHandler, deps),
    bindHandler(forwardedListPartitionReassignmentsHandler, deps),
    bindHandler(forwardedIncrementalAlterConfigsHandler, deps),
    bindHandler(alterUserScramCredentialsHandler, { alter: (req: AlterScramRequest) => deps.quorum.alterScramCredentials(req) }),
    bindHandler(createAclsHandler, aclDeps), bindHandler(deleteAclsHandler, aclDeps),
    bindHandler(alterClientQuotasHandler, { alter: (req: AlterClientQuotasRequest) => deps.quorum.alterClientQuotas(req) }),
    bindHandler(forwardedAlterConfigsHandler, deps),
    bindHandler(forwardedUnregisterBrokerHandler, deps),
  ];
  const gated = deps.refused === undefined ? bound : bound.map((h) => clusterActionOnly(h, deps.refused!));
  const apiVersions = bindHandler(apiVersionsHandler, { apiKeys: apiKeysOf([...CONTROLLER_APIS, ...listenerHandlers.map((h) => h.api)]) });
  return new Map([apiVersions, ...listenerHandlers, ...gated].map((h) => [h.api.key, h]));
}

/** Told of a principal refused on the controller listener (it logs, once per interval). */
export type ControllerRefusal = (principal: string, host: string, api: string) => void;

/**
 * `h` for principals holding CLUSTER_ACTION on the cluster only (brokers and controllers); it
 * then runs without an authorizer: what brokers forward was authorised where the client sent it.
 */
function clusterActionOnly(h: BoundHandler, refused: ControllerRefusal): BoundHandler {
  return {
    ...h,
    handle: (ctx, req) => {
      if (permitsCluster(ctx.authorizer, AclOperation.CLUSTER_ACTION)) return h.handle({ ...ctx, authorizer: null }, req);
      const principal = ctx.authorizer!.principal;
      refused(principal, ctx.clientHost, h.api.name);
      return new CloseConnection('cluster-action', `${principal} lacks CLUSTER_ACTION on the cluster for ${h.api.name}`, true);
    },
  };
}

export type ControllerMetrics = Pick<BrokerMetrics, 'protocolError' | 'requestMemoryWaited' | 'recordRequest' | 'connectionOpened' | 'connectionClosed' | 'connectionRejected' | 'addSocketBytesIn' | 'addSocketBytesOut'>;

/** Limits of the controller listener: few peers and brokers, requests up to a fetch's worth of metadata. */
const CONTROLLER_LIMITS = {
  maxConnections: 1024,
  maxRequestBytes: 16 << 20,
  maxPartialRequestBytes: 64 << 20,
  maxInflight: 16,
  idleTimeoutMs: 10 * 60_000,
  maxQueuedResponseBytes: 64 << 20,
} as const;

export interface ControllerListenerOptions {
  readonly host: string;
  /** 0: an ephemeral port (the one-voter quorum of a single node). */
  readonly port: number;
  /** TLS and SASL of a secured controller listener, and the ACLs its principals are checked against; absent: PLAINTEXT, open to every peer. */
  readonly security?: { readonly listener: ListenerSecurity; readonly acls: AclAuthority } | null;
}

/** At most one log line per this interval about principals refused on the controller listener. */
const REFUSED_PRINCIPAL_LOG_INTERVAL_MS = 10_000;
/** Principals the refusal log remembers. */
const REFUSED_PRINCIPALS_REMEMBERED = 256;

/** Starts the controller listener; resolves with the server and the port it bound. */
export async function startControllerListener(
  deps: ControllerHandlerDeps,
  opts: ControllerListenerOptions,
  services: { readonly log: Logger; readonly metrics: ControllerMetrics; readonly descriptors: DescriptorBudget },
): Promise<{ readonly server: KafkaServer; readonly port: number }> {
  const serverOpts: KafkaServerOptions = { ...CONTROLLER_LIMITS, host: opts.host, port: opts.port };
  const security = opts.security ?? null;
  const refusals = new RepeatLimiter(REFUSED_PRINCIPAL_LOG_INTERVAL_MS, () => performance.now(), REFUSED_PRINCIPALS_REMEMBERED);
  const refused: ControllerRefusal = (principal, host, api) => {
    const verdict = refusals.offer(principal);
    if (verdict.log) services.log.warn({ principal, host, api, refusedBefore: verdict.suppressed }, 'controller listener refused a principal without CLUSTER_ACTION on the cluster');
  };
  const sasl = security?.listener.sasl ?? null;
  const handlers = security === null
    ? buildControllerHandlers(deps)
    : buildControllerHandlers({ ...deps, refused }, sasl === null ? [] : [bindHandler(saslHandshakeHandler, { authenticator: sasl }), bindHandler(saslAuthenticateHandler, { authenticator: sasl })]);
  const server = new KafkaServer(
    { handlers, metrics: services.metrics, releaseLeases: () => {}, blockedShards: () => [], acls: security?.acls ?? null },
    serverOpts,
    services.log,
    services.descriptors,
    null,
    null,
    security?.listener ?? null,
  );
  const port = await server.listen();
  return { server, port };
}
