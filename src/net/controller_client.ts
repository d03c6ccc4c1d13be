// A broker's connections to the controller listeners (main thread): the broker's requests to the
// active controller (BrokerRegistration, BrokerHeartbeat, AllocateProducerIds, AlterPartition and
// the forwarded CreateTopics / DeleteTopics / CreatePartitions / ElectLeaders / partition reassignments / alter-configs / UnregisterBroker) as Kafka requests over TCP, one connection per
// controller opened on first use. Responses arrive in request order; each request has its own
// deadline. A request past its deadline fails alone and its late answer is read and dropped: the
// connection stays, because the controller ends a broker's session soon after its connection
// closes, and a slow answer under load is no reason to be fenced. Only a controller silent
// through SILENT_TIMEOUTS deadlines in a row loses the connection. A connection that fails rejects
// what it carried with NOT_CONTROLLER (the caller asks whichever node the quorum names next) and
// is opened afresh by the next request. Requests in flight per controller are bounded (expired
// ones count until their answers come). Connections are secured as the controller listener's
// protocol asks (common/peer_socket.ts); requests wait for that, and a controller that refuses
// this node's credentials or certificate is reported once per episode (until one succeeds).
import type { Socket } from 'node:net';
import { connectPeer, PeerAuthenticationError, type PeerSecurity } from '../common/peer_socket.js';
import type { ControllerRequest } from '../cluster/controller_channel.js';
import type { ControllerReply, TopicResult } from '../cluster/metadata/controller.js';
import { AllocateProducerIdsApi, type AllocateProducerIdsResponse } from '../protocol/apis/allocate_producer_ids.js';
import { AlterPartitionApi, type AlterPartitionResponse } from '../protocol/apis/alter_partition.js';
import { AlterUserScramCredentialsApi, type AlterUserScramCredentialsResponse } from '../protocol/apis/scram_credentials.js';
import { CreateAclsApi, DeleteAclsApi, type CreateAclsResponse, type DeleteAclsResponse } from '../protocol/apis/acls.js';
import { creationWire, filterWire, matchedBinding } from './handlers/acls.js';
import { AlterClientQuotasApi, type AlterClientQuotasResponse } from '../protocol/apis/client_quotas.js';
import { AlterConfigsApi, IncrementalAlterConfigsApi, type AlterConfigsResponse } from '../protocol/apis/alter_configs.js';
import { ElectLeadersApi, type ElectLeadersResponse } from '../protocol/apis/elect_leaders.js';
import { UnregisterBrokerApi, type UnregisterBrokerResponse } from '../protocol/apis/unregister_broker.js';
import { AlterPartitionReassignmentsApi, type AlterPartitionReassignmentsResponse } from '../protocol/apis/alter_partition_reassignments.js';
import { ListPartitionReassignmentsApi, type ListPartitionReassignmentsResponse } from '../protocol/apis/list_partition_reassignments.js';
import { listingReply, reassignmentReply } from './handlers/partition_reassignments.js';
import { BrokerHeartbeatApi, type BrokerHeartbeatResponse } from '../protocol/apis/broker_heartbeat.js';
import { BrokerRegistrationApi, type BrokerRegistrationResponse } from '../protocol/apis/broker_registration.js';
import { CreatePartitionsApi, type CreatePartitionsResponse } from '../protocol/apis/create_partitions.js';
import { CreateTopicsApi, type CreateTopicsResponse } from '../protocol/apis/create_topics.js';
import { DeleteTopicsApi, type DeleteTopicsResponse } from '../protocol/apis/delete_topics.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FrameReader, encodeRequestFrame } from '../protocol/framing.js';
import { readResponseHeader } from '../protocol/header.js';
import { Reader } from '../protocol/reader.js';
import { ZERO_UUID, type AnyApi } from '../protocol/schema.js';

/** Bound on one connection's requests awaiting an answer (a broker sends a handful at a time). */
export const MAX_CONTROLLER_INFLIGHT = 256;
const MAX_RESPONSE_BYTES = 16 << 20;
const CLIENT_ID = 'sluice-broker';
/** Deadlines missed in a row, with no answer at all meanwhile, after which the connection is dropped and opened afresh. */
export const SILENT_TIMEOUTS = 3;
/** How long opening a connection (TCP, TLS and SASL) may take. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Told when controller `id` refused to authenticate this node (once until a connection succeeds). */
export type AuthenticationRefused = (id: number, err: PeerAuthenticationError) => void;

export interface ControllerAddress {
  readonly id: number;
  readonly host: string;
  readonly port: number;
}

interface InFlight {
  readonly api: AnyApi;
  readonly version: number;
  readonly correlationId: number;
  readonly resolve: (body: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
  /** Past its deadline and already rejected: its answer is read and dropped. */
  expired: boolean;
}

/** One controller's connection. */
class ControllerConnection {
  private socket: Socket | null = null;
  private frames = new FrameReader(MAX_RESPONSE_BYTES);
  private inflight: InFlight[] = [];
  private nextCorrelation = 0;
  /** Deadlines missed since the last answer on this connection. */
  private missed = 0;
  /** Settles once the current socket is secured (or failed): requests are written after it. */
  private ready: Promise<void> = Promise.resolve();
  /** A refused authentication was reported and none has succeeded since. */
  private refusalReported = false;

  constructor(
    private readonly address: ControllerAddress,
    private readonly security: PeerSecurity,
    private readonly refused: AuthenticationRefused,
  ) {}

  call(api: AnyApi, version: number, body: unknown, timeoutMs: number): Promise<unknown> {
    if (this.inflight.length >= MAX_CONTROLLER_INFLIGHT) {
      return Promise.reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${this.inflight.length} requests already wait for controller ${this.address.id}`));
    }
    const correlationId = (this.nextCorrelation = (this.nextCorrelation + 1) | 0);
    // Encoded before anything is registered: a request that cannot be encoded leaves no trace.
    const frame = encodeRequestFrame(api, version, correlationId, CLIENT_ID, body);
    const socket = this.socket ?? this.connect();
    return new Promise((resolve, reject) => {
      const late = new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `controller ${this.address.id} did not answer ${api.name} within ${timeoutMs} ms`);
      const entry: InFlight = { api, version, correlationId, resolve, reject, expired: false, timer: setTimeout(() => this.expire(socket, entry, late), timeoutMs) };
      this.inflight.push(entry);
      void this.ready.then(() => {
        if (this.socket === socket) for (const chunk of frame) socket.write(chunk);
      });
    });
  }

  private expire(socket: Socket, entry: InFlight, err: KafkaError): void {
    if (socket !== this.socket) return;
    if (++this.missed >= SILENT_TIMEOUTS) {
      this.fail(socket, err);
      return;
    }
    entry.expired = true;
    entry.reject(err);
  }

  close(): void {
    if (this.socket !== null) this.fail(this.socket, new KafkaError(ErrorCode.NOT_CONTROLLER, 'closed'));
  }

  private connect(): Socket {
    const { socket, ready } = connectPeer(this.address.host, this.address.port, this.security, CONNECT_TIMEOUT_MS, CLIENT_ID);
    this.socket = socket;
    const lost = (): void => this.fail(socket, new KafkaError(ErrorCode.NOT_CONTROLLER, `connection to controller ${this.address.id} lost`));
    socket.on('error', lost);
    socket.on('close', lost);
    this.ready = ready.then(
      () => {
        if (this.socket !== socket) return;
        this.refusalReported = false;
        socket.on('data', (data: Buffer) => {
          try {
            this.frames.push(data, (frame) => this.answer(frame));
          } catch (err) {
            this.fail(socket, new KafkaError(ErrorCode.NOT_CONTROLLER, `bad answer from controller ${this.address.id}: ${(err as Error).message}`));
          }
        });
      },
      (err: KafkaError) => {
        if (err instanceof PeerAuthenticationError && !this.refusalReported) {
          this.refusalReported = true;
          this.refused(this.address.id, err);
        }
        this.fail(socket, new KafkaError(ErrorCode.NOT_CONTROLLER, `controller ${this.address.id}: ${err.message}`));
      },
    );
    return socket;
  }

  private answer(frame: Buffer): void {
    const head = this.inflight.shift();
    if (head === undefined) throw new Error('an answer nobody asked for');
    clearTimeout(head.timer);
    this.missed = 0;
    const r = new Reader(frame);
    if (readResponseHeader(r, head.api.key, head.api.isFlexible(head.version)) !== head.correlationId) throw new Error('correlation id out of order');
    if (!head.expired) head.resolve(head.api.decodeResponse(head.version, r));
  }

  /** Every request the connection carried fails with `err`; the next call connects afresh. */
  private fail(socket: Socket, err: KafkaError): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.frames = new FrameReader(MAX_RESPONSE_BYTES);
    socket.destroy();
    this.missed = 0;
    const lost = this.inflight;
    this.inflight = [];
    for (const f of lost) {
      clearTimeout(f.timer);
      if (!f.expired) f.reject(err);
    }
  }
}

/** The broker's client of the controller listeners. */
export class ControllerClient {
  private readonly connections = new Map<number, ControllerConnection>();

  constructor(
    controllers: readonly ControllerAddress[],
    private readonly clusterId: string,
    security: PeerSecurity,
    refused: AuthenticationRefused,
  ) {
    for (const c of controllers) this.connections.set(c.id, new ControllerConnection(c, security, refused));
  }

  async send(id: number, request: ControllerRequest, timeoutLeftMs: number): Promise<ControllerReply> {
    // The wire's timeouts are whole int32 milliseconds; what is left of a deadline is not.
    const timeoutMs = Math.max(1, Math.min(0x7fffffff, Math.ceil(timeoutLeftMs)));
    const conn = this.connections.get(id);
    if (conn === undefined) throw new KafkaError(ErrorCode.NOT_CONTROLLER, `node ${id} has no controller listener`);
    switch (request.kind) {
      case 'registerBroker': {
        const q = request.request;
        const res = (await conn.call(BrokerRegistrationApi, 3, {
          brokerId: q.brokerId, clusterId: this.clusterId, incarnationId: q.incarnationId,
          listeners: q.endpoints.map((e) => ({ ...e })), features: [], rack: q.rack,
          isMigratingZkBroker: false, logDirs: [], previousBrokerEpoch: -1, sluiceAdminAddress: q.adminAddress ?? null,
        }, timeoutMs)) as BrokerRegistrationResponse;
        return { kind: 'registerBroker', errorCode: res.errorCode as ErrorCode, brokerEpoch: res.brokerEpoch };
      }
      case 'heartbeat': {
        const res = (await conn.call(BrokerHeartbeatApi, 1, { ...request.request, offlineLogDirs: [], sluiceWarm: request.request.warm }, timeoutMs)) as BrokerHeartbeatResponse;
        return { kind: 'heartbeat', errorCode: res.errorCode as ErrorCode, isCaughtUp: res.isCaughtUp, isFenced: res.isFenced, shouldShutDown: res.shouldShutDown };
      }
      case 'allocateProducerIds': {
        const res = (await conn.call(AllocateProducerIdsApi, 0, { brokerId: request.brokerId, brokerEpoch: request.brokerEpoch }, timeoutMs)) as AllocateProducerIdsResponse;
        return { kind: 'allocateProducerIds', errorCode: res.errorCode as ErrorCode, producerIdStart: res.producerIdStart, producerIdLen: res.producerIdLen };
      }
      case 'createTopics': {
        const topics = request.topics.map((t) => ({
          name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor,
          assignments: (t.assignment ?? []).map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds: [...brokerIds] })),
          configs: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
        }));
        const res = (await conn.call(CreateTopicsApi, 7, { topics, timeoutMs, validateOnly: false }, timeoutMs)) as CreateTopicsResponse;
        return topicsReply(res.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, message: t.errorMessage, topicId: t.topicId, partitions: t.numPartitions, replicationFactor: t.replicationFactor })));
      }
      case 'createPartitions': {
        const assignments = request.assignment?.map((brokerIds) => ({ brokerIds: [...brokerIds] })) ?? null;
        const res = (await conn.call(CreatePartitionsApi, 3, { topics: [{ name: request.name, count: request.count, assignments }], timeoutMs, validateOnly: false }, timeoutMs)) as CreatePartitionsResponse;
        return topicsReply(res.results.map((r) => ({ name: r.name, errorCode: r.errorCode, message: r.errorMessage, topicId: ZERO_UUID, partitions: request.count, replicationFactor: -1 })));
      }
      case 'deleteTopics': {
        const res = (await conn.call(DeleteTopicsApi, 6, { topics: request.names.map((name) => ({ name, topicId: ZERO_UUID })), topicNames: [], timeoutMs }, timeoutMs)) as DeleteTopicsResponse;
        return topicsReply(res.responses.map((r) => ({ name: r.name ?? '', errorCode: r.errorCode, message: r.errorMessage, topicId: r.topicId, partitions: -1, replicationFactor: -1 })));
      }
      case 'alterPartition': {
        // v3: topics by id, ISR members with their broker epochs.
        const q = request.request;
        const topics = q.topics.map((t) => {
          if (t.topicId === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, `AlterPartition v3 names topics by id, not '${t.topicName ?? ''}'`);
          return {
            topicName: '', topicId: t.topicId,
            partitions: t.partitions.map((p) => ({
              partitionIndex: p.partition, leaderEpoch: p.leaderEpoch, newIsr: [], newIsrWithEpochs: p.newIsr.map((m) => ({ ...m })),
              leaderRecoveryState: p.leaderRecoveryState, partitionEpoch: p.partitionEpoch,
            })),
          };
        });
        const res = (await conn.call(AlterPartitionApi, 3, { brokerId: q.brokerId, brokerEpoch: q.brokerEpoch, topics }, timeoutMs)) as AlterPartitionResponse;
        return {
          kind: 'alterPartition',
          errorCode: res.errorCode as ErrorCode,
          topics: res.topics.map((t) => ({
            topicId: t.topicId, topicName: null,
            partitions: t.partitions.map((p) => ({
              partition: p.partitionIndex, errorCode: p.errorCode as ErrorCode, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, isr: p.isr, partitionEpoch: p.partitionEpoch,
            })),
          })),
        };
      }
      case 'alterPartitionReassignments': {
        const topics = request.topics.map((t) => ({ name: t.topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, replicas: p.replicas === null ? null : [...p.replicas] })) }));
        return reassignmentReply((await conn.call(AlterPartitionReassignmentsApi, 0, { timeoutMs, topics }, timeoutMs)) as AlterPartitionReassignmentsResponse);
      }
      case 'listPartitionReassignments': {
        const topics = request.topics?.map((t) => ({ name: t.topic, partitionIndexes: [...t.partitions] })) ?? null;
        return listingReply((await conn.call(ListPartitionReassignmentsApi, 0, { timeoutMs, topics }, timeoutMs)) as ListPartitionReassignmentsResponse);
      }
      case 'electLeaders': {
        const topicPartitions = request.partitions?.map((t) => ({ topic: t.topic, partitionId: [...t.partitions] })) ?? null;
        const res = (await conn.call(ElectLeadersApi, 2, { electionType: request.electionType, topicPartitions, timeoutMs }, timeoutMs)) as ElectLeadersResponse;
        return {
          kind: 'electLeaders',
          errorCode: res.errorCode as ErrorCode,
          results: res.replicaElectionResults.flatMap((t) => t.partitionResult.map((p) => ({ topic: t.topic, partition: p.partitionId, errorCode: p.errorCode as ErrorCode, message: p.errorMessage }))),
        };
      }
      case 'alterConfigs': {
        // One resource per request: IncrementalAlterConfigs v1 carries every operation, AlterConfigs v2 a replacement.
        const q = request.request;
        const resource = { resourceType: q.resourceType, resourceName: q.resourceName };
        const res = (q.mode === 'incremental'
          ? await conn.call(IncrementalAlterConfigsApi, 1, { resources: [{ ...resource, configs: q.changes.map((c) => ({ name: c.name, configOperation: c.op, value: c.value })) }], validateOnly: q.validateOnly }, timeoutMs)
          : await conn.call(AlterConfigsApi, 2, { resources: [{ ...resource, configs: q.changes.map((c) => ({ name: c.name, value: c.value })) }], validateOnly: q.validateOnly }, timeoutMs)) as AlterConfigsResponse;
        const r = res.responses[0];
        if (r === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'the controller answered no resource');
        return { kind: 'alterConfigs', errorCode: r.errorCode as ErrorCode, message: r.errorMessage };
      }
      case 'alterScramCredentials': {
        const res = (await conn.call(AlterUserScramCredentialsApi, 0, request.request, timeoutMs)) as AlterUserScramCredentialsResponse;
        return { kind: 'alterScramCredentials', errorCode: ErrorCode.NONE, message: null, results: res.results.map((r) => ({ user: r.user, errorCode: r.errorCode as ErrorCode, message: r.errorMessage })) };
      }
      case 'createAcls': {
        const res = (await conn.call(CreateAclsApi, 3, { creations: request.creations.map(creationWire) }, timeoutMs)) as CreateAclsResponse;
        return { kind: 'createAcls', errorCode: ErrorCode.NONE, message: null, results: res.results.map((r) => ({ errorCode: r.errorCode as ErrorCode, message: r.errorMessage })) };
      }
      case 'deleteAcls': {
        const res = (await conn.call(DeleteAclsApi, 3, { filters: request.filters.map(filterWire) }, timeoutMs)) as DeleteAclsResponse;
        return {
          kind: 'deleteAcls', errorCode: ErrorCode.NONE, message: null,
          results: res.filterResults.map((f) => ({ errorCode: f.errorCode as ErrorCode, message: f.errorMessage, removed: f.matchingAcls.map(matchedBinding) })),
        };
      }
      case 'alterClientQuotas': {
        const res = (await conn.call(AlterClientQuotasApi, 1, request.request, timeoutMs)) as AlterClientQuotasResponse;
        return { kind: 'alterClientQuotas', errorCode: ErrorCode.NONE, message: null, results: res.entries };
      }
      case 'unregisterBroker': {
        const res = (await conn.call(UnregisterBrokerApi, 0, { brokerId: request.brokerId }, timeoutMs)) as UnregisterBrokerResponse;
        return { kind: 'unregisterBroker', errorCode: res.errorCode as ErrorCode };
      }
    }
  }

  close(): void {
    for (const c of this.connections.values()) c.close();
  }
}

function topicsReply(results: readonly { name: string; errorCode: number; message: string | null; topicId: string; partitions: number; replicationFactor: number }[]): ControllerReply {
  return { kind: 'topics', results: results.map((r): TopicResult => ({ ...r, errorCode: r.errorCode as ErrorCode })) };
}
