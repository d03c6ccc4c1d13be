// The metadata controller, pure: requests in, the records to append and the replies out, with
// the clock passed in (ms). The active controller applies each batch it proposes to a working
// image at once (later requests see it) and keeps the reply until the batch commits: the driver
// proposes the records to the Raft core at the offset it named and calls committed(offset) as
// the high watermark passes it; losing leadership reverts to the last committed image
// (cluster.md §2.3). A standby controller replays committed batches instead. Broker sessions
// (last heartbeat and reported metadata offset per broker) live only on the active controller,
// as in KRaft. Main thread.
// Partition leadership follows replication_control.ts: a broker that is fenced, shuts down or
// re-registers hands its leaderships to other ISR members in the batch that marks it (one in
// controlled shutdown is let go only once the other brokers have applied that batch), and the
// active controller moves leaders back to preferred replicas on ElectLeaders and on its
// periodic imbalance check.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { checkAssignment, checkReplicationFactor, placeBalanced, type PlacementBroker } from '../replica_placement.js';
import { placementBrokers, withAssignment } from './placement_load.js';
import { validateTopicName } from '../../coordinator/topic_names.js';
import { validateBrokerConfigs } from '../../coordinator/broker_configs.js';
import { isListTopicConfig } from '../../coordinator/topic_configs.js';
import { changedConfigs, configRecords, type AlterConfigsRequest } from './config_changes.js';
import { aclCreations, aclDeletions, type AclCreation, type AclDeletionResult, type AclResult } from './acl_changes.js';
import type { AclFilter } from '../../coordinator/acl/acl.js';
import { scramChanges, type AlterScramRequest, type ScramUserResult } from './scram_changes.js';
import { quotaChanges } from './quota_changes.js';
import type { AlterClientQuotasRequest, AlterClientQuotasResult } from '../../protocol/apis/client_quotas.js';
import { applyRecords } from './delta.js';
import { configKey, MetadataImage, NO_CONFIGS, scramKey, type BrokerRegistration } from './image.js';
import type { ScramCredential } from '../../common/sasl_mechanisms.js';
import { ConfigResource, MAX_ADMIN_ADDRESS_CHARS, MAX_SCRAM_NAME_CHARS, MAX_ENDPOINTS, MAX_REPLICAS, type BrokerEndpointRecord, type MetadataRecord } from './records.js';
import {
  alterPartition, alterPartitionReassignments, departureChanges, electLeaders, eligibility, ElectionType, firstLeader, imbalanceElections,
  listPartitionReassignments, NONE_WARMING, returnChanges, warmedElections, warmingOf,
  type AlterPartitionRequest, type AlterPartitionTopicResult, type ElectionResult, type OngoingReassignment, type ReassignmentResult,
  type ReassignmentTopic, type Warming,
} from './replication_control.js';

/**
 * How long a broker whose controller connection closed keeps its session: a live broker that lost
 * its connection (its client drops one only after several silent deadlines, or on a network
 * error) heartbeats again over a new one within its interval (500 ms by default); a killed one is
 * fenced after this instead of the whole session timeout. It is most of a killed leader's
 * failover time (kill to the first acks=all answer on the new leader, issue 14's bar: 1 s).
 */
export const DISCONNECT_GRACE_MS = 500;

/** Producer ids per AllocateProducerIds, as Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE. */
export const PRODUCER_ID_BLOCK = 1000;
/** Bound on config overrides of one resource. */
export const MAX_CONFIGS_PER_RESOURCE = 1000;
/** Bound on the elections of one imbalance check batch (Kafka's controller takes 1000 at a time too). */
export const MAX_BALANCING_ELECTIONS = 1000;

const UUID = /^[0-9a-f]{32}$/;
const ZERO_UUID = '0'.repeat(32);

export interface ControllerConfig {
  /** A broker without a heartbeat for this long is fenced (broker.session.timeout.ms, Kafka: 9000). */
  readonly sessionTimeoutMs: number;
  /** Bound on registered brokers. */
  readonly maxBrokers: number;
  /** Bound on partitions in the cluster. */
  readonly maxPartitions: number;
  /** Bound on batches proposed and not yet committed; past it requests are refused with REQUEST_TIMED_OUT. */
  readonly maxPendingBatches: number;
  readonly defaultPartitions: number;
  readonly defaultReplicationFactor: number;
  /** A fresh random id (32 hex chars) for a topic or an ACL; injected so the controller stays deterministic in tests. */
  readonly newTopicId: () => string;
  /** Throws INVALID_CONFIG (a KafkaError) for topic overrides the brokers would refuse. */
  readonly checkTopicConfigs: (configs: Record<string, string>) => void;
  /** How often the active controller moves leaders back to preferred replicas; 0: never (leader.imbalance.check.interval.seconds, Kafka: 300 s). */
  readonly leaderImbalanceCheckIntervalMs: number;
  /** A broker whose preferred partitions others lead for more than this share gets them back (leader.imbalance.per.broker.percentage, Kafka: 10). */
  readonly leaderImbalancePerBrokerPercentage: number;
}

export interface RegisterBrokerRequest {
  readonly brokerId: number;
  readonly incarnationId: string;
  readonly endpoints: readonly BrokerEndpointRecord[];
  readonly rack: string | null;
  /** Its admin HTTP listener, host:port (absent: none). */
  readonly adminAddress?: string | null;
}

export interface HeartbeatRequest {
  readonly brokerId: number;
  readonly brokerEpoch: number;
  /** The last metadata offset the broker has applied. */
  readonly currentMetadataOffset: number;
  readonly wantFence: boolean;
  readonly wantShutDown: boolean;
  /** A warming broker reports its replicas caught up and its read warm-up done (warm_up.ts). */
  readonly warm: boolean;
}

export interface CreatableTopic {
  readonly name: string;
  /** -1: the default. */
  readonly numPartitions: number;
  /** -1: the default. */
  readonly replicationFactor: number;
  /** The client's replica lists, or null to let the controller place them. */
  readonly assignment: readonly (readonly number[])[] | null;
  readonly configs: Readonly<Record<string, string>>;
}

/** A topic as an older single node's topic table held it (meta/topics.json). */
export interface LegacyTopic {
  readonly name: string;
  /** Its partition directories name it, so it is kept. */
  readonly id: string;
  readonly partitions: number;
  readonly configs: Readonly<Record<string, string>>;
}

/** What an older single node kept outside a metadata log, carried into it once. */
export interface LegacyMetadata {
  readonly topics: readonly LegacyTopic[];
  /** Its producer-id high mark: no id at or above it was handed out. */
  readonly nextProducerId: number;
  /** The node, the only replica of every topic. */
  readonly brokerId: number;
}

export interface TopicResult {
  readonly name: string;
  readonly errorCode: ErrorCode;
  readonly message: string | null;
  /** ZERO_UUID when the topic was not created (or not found). */
  readonly topicId: string;
  readonly partitions: number;
  readonly replicationFactor: number;
}

export type ControllerReply =
  | { readonly kind: 'registerBroker'; readonly errorCode: ErrorCode; readonly brokerEpoch: number }
  | { readonly kind: 'heartbeat'; readonly errorCode: ErrorCode; readonly isCaughtUp: boolean; readonly isFenced: boolean; readonly shouldShutDown: boolean }
  | { readonly kind: 'unregisterBroker'; readonly errorCode: ErrorCode }
  | { readonly kind: 'topics'; readonly results: readonly TopicResult[] }
  | { readonly kind: 'alterConfigs'; readonly errorCode: ErrorCode; readonly message: string | null }
  | { readonly kind: 'alterScramCredentials'; readonly errorCode: ErrorCode; readonly message: string | null; readonly results: readonly ScramUserResult[] }
  | { readonly kind: 'createAcls'; readonly errorCode: ErrorCode; readonly message: string | null; readonly results: readonly AclResult[] }
  | { readonly kind: 'deleteAcls'; readonly errorCode: ErrorCode; readonly message: string | null; readonly results: readonly AclDeletionResult[] }
  | { readonly kind: 'alterClientQuotas'; readonly errorCode: ErrorCode; readonly message: string | null; readonly results: readonly AlterClientQuotasResult[] }
  | { readonly kind: 'allocateProducerIds'; readonly errorCode: ErrorCode; readonly producerIdStart: number; readonly producerIdLen: number }
  | { readonly kind: 'alterPartition'; readonly errorCode: ErrorCode; readonly topics: readonly AlterPartitionTopicResult[] }
  | { readonly kind: 'electLeaders'; readonly errorCode: ErrorCode; readonly results: readonly ElectionResult[] }
  | { readonly kind: 'alterPartitionReassignments'; readonly errorCode: ErrorCode; readonly message: string | null; readonly results: readonly ReassignmentResult[] }
  | { readonly kind: 'listPartitionReassignments'; readonly errorCode: ErrorCode; readonly message: string | null; readonly reassignments: readonly OngoingReassignment[] };

/** Partitions by topic name; null: every partition. */
export type TopicPartitions = readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null;

/** ElectLeaders' partitions by topic name; null: every partition. */
export type ElectionPartitions = TopicPartitions;

/** What a request comes to: an answer now (nothing to write), or records to propose at `offset`. */
export type Outcome =
  | { readonly kind: 'answered'; readonly reply: ControllerReply }
  | { readonly kind: 'propose'; readonly offset: number; readonly records: readonly MetadataRecord[] };

export interface Completion {
  readonly offset: number;
  /** Null for the controller's own batches (session expiry). */
  readonly reply: ControllerReply | null;
}

interface Pending {
  readonly offset: number;
  /** The working image once this batch is applied. */
  readonly image: MetadataImage;
  readonly reply: ControllerReply | null;
}

type Refuse = (code: ErrorCode, message: string) => ControllerReply;

const refuseRegistration: Refuse = (errorCode) => ({ kind: 'registerBroker', errorCode, brokerEpoch: -1 });
const refuseHeartbeat: Refuse = (errorCode) => ({ kind: 'heartbeat', errorCode, isCaughtUp: false, isFenced: true, shouldShutDown: false });
const refuseUnregistration: Refuse = (errorCode) => ({ kind: 'unregisterBroker', errorCode });
const refuseConfigs: Refuse = (errorCode, message) => ({ kind: 'alterConfigs', errorCode, message });
const refuseScram: Refuse = (errorCode, message) => ({ kind: 'alterScramCredentials', errorCode, message, results: [] });
const refuseAclCreations: Refuse = (errorCode, message) => ({ kind: 'createAcls', errorCode, message, results: [] });
const refuseAclDeletions: Refuse = (errorCode, message) => ({ kind: 'deleteAcls', errorCode, message, results: [] });
const refuseQuotas: Refuse = (errorCode, message) => ({ kind: 'alterClientQuotas', errorCode, message, results: [] });
const refuseProducerIds: Refuse = (errorCode) => ({ kind: 'allocateProducerIds', errorCode, producerIdStart: -1, producerIdLen: 0 });
const refuseAlterPartition: Refuse = (errorCode) => ({ kind: 'alterPartition', errorCode, topics: [] });
const refuseElection: Refuse = (errorCode) => ({ kind: 'electLeaders', errorCode, results: [] });
const refuseReassignments: Refuse = (errorCode, message) => ({ kind: 'alterPartitionReassignments', errorCode, message, results: [] });
const refuseListing: Refuse = (errorCode, message) => ({ kind: 'listPartitionReassignments', errorCode, message, reassignments: [] });
/** Every named topic gets the request's error. */
function refuseTopics(names: readonly string[]): Refuse {
  return (code, message) => ({ kind: 'topics', results: names.map((name) => failed(name, new KafkaError(code, message))) });
}

function failed(name: string, err: unknown): TopicResult {
  if (!(err instanceof KafkaError)) throw err;
  return { name, errorCode: err.code, message: err.message, topicId: ZERO_UUID, partitions: -1, replicationFactor: -1 };
}

export class MetadataController {
  /** The image of every committed batch. */
  private lastCommitted: MetadataImage;
  /** committedImage plus the pending batches, in offset order. */
  private pending: Pending[] = [];
  private active = false;
  private epoch = -1;
  /** Last heartbeat per registered broker (active only; bounded by the registered brokers). */
  private readonly lastHeartbeat = new Map<number, number>();
  /** Last metadata offset each registered broker reported applied (active only; bounded like lastHeartbeat). */
  private readonly reportedOffsets = new Map<number, number>();
  /** Per broker in controlled shutdown, the offset of the batch that moved its leaderships (active only). */
  private readonly shutdownOffsets = new Map<number, number>();
  /** When the active controller next checks leader imbalance. */
  private nextBalanceAt = Infinity;

  constructor(
    private readonly config: ControllerConfig,
    image: MetadataImage,
  ) {
    this.lastCommitted = image;
  }

  /** The working image: what the active controller has proposed, committed or not. */
  get image(): MetadataImage {
    return this.pending.length === 0 ? this.lastCommitted : this.pending[this.pending.length - 1]!.image;
  }

  /** The image of every committed batch (what a revert returns to). */
  get committedImage(): MetadataImage {
    return this.lastCommitted;
  }

  get isActive(): boolean {
    return this.active;
  }

  /**
   * This node leads the quorum at `epoch` and every batch below the leader's epoch start is
   * replayed. Every registered broker gets a full session from now: none has had a chance to
   * heartbeat to this controller yet. Except the broker of `previousLeader`, the node that led
   * before (in combined mode a controller is also a broker): its silence is what most elections
   * follow, so it keeps only the disconnect grace, as if its connection had closed. A live one
   * learns of this controller at once and heartbeats within the grace.
   */
  activate(epoch: number, nowMs: number, previousLeader = -1): void {
    this.active = true;
    this.epoch = epoch;
    this.forgetSessions();
    for (const id of this.lastCommitted.brokers.keys()) this.lastHeartbeat.set(id, nowMs);
    if (this.lastCommitted.brokers.has(previousLeader)) {
      this.lastHeartbeat.set(previousLeader, this.graceEnd(nowMs));
    }
    const interval = this.config.leaderImbalanceCheckIntervalMs;
    this.nextBalanceAt = interval > 0 ? nowMs + interval : Infinity;
  }

  /** Leadership is lost: back to the committed image. Returns the offsets whose replies are dropped (answer them NOT_CONTROLLER). */
  deactivate(): number[] {
    const dropped = this.pending.map((p) => p.offset);
    this.pending = [];
    this.active = false;
    this.forgetSessions();
    return dropped;
  }

  /** A standby's committed batch from the log. */
  replay(records: readonly MetadataRecord[], offset: number, epoch: number): void {
    if (this.active) throw new Error('the active controller learns commits through committed(), not replay()');
    this.lastCommitted = applyRecords(this.lastCommitted, records, { endOffset: offset + 1, epoch });
  }

  /** The high watermark passed `offset`: the batches up to it are committed; their replies go out. */
  committed(offset: number): Completion[] {
    const done: Completion[] = [];
    while (this.pending.length > 0 && this.pending[0]!.offset <= offset) {
      const p = this.pending.shift()!;
      this.lastCommitted = p.image;
      done.push({ offset: p.offset, reply: p.reply });
    }
    return done;
  }

  /** The core refused the batch proposed at `offset` (the last one): it is undone. */
  refused(offset: number): void {
    const last = this.pending[this.pending.length - 1];
    if (last === undefined || last.offset !== offset) throw new Error(`refused offset ${offset} is not the last proposed batch`);
    this.pending.pop();
  }

  registerBroker(req: RegisterBrokerRequest, nextOffset: number, nowMs: number): Outcome {
    const kind = 'registerBroker';
    return this.guarded(refuseRegistration, () => {
      const image = this.image;
      const id = req.brokerId;
      if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker id ${id}`);
      if (!UUID.test(req.incarnationId) || req.incarnationId === ZERO_UUID) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'incarnation id must be 32 hex chars, not all zero');
      if (req.endpoints.length === 0 || req.endpoints.length > MAX_ENDPOINTS) throw new KafkaError(ErrorCode.INVALID_REQUEST, `a broker needs 1 to ${MAX_ENDPOINTS} endpoints`);
      const adminAddress = req.adminAddress ?? null;
      if (adminAddress !== null && adminAddress.length > MAX_ADMIN_ADDRESS_CHARS) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `an admin address of ${adminAddress.length} chars passes ${MAX_ADMIN_ADDRESS_CHARS}`);
      }
      const existing = image.brokers.get(id);
      if (existing === undefined && image.brokers.size >= this.config.maxBrokers) {
        throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster has its maximum of ${this.config.maxBrokers} brokers`);
      }
      // A new registration (a restart, or a retry) starts fenced: the old incarnation leads nothing from here.
      const records: MetadataRecord[] = existing === undefined ? [] : departureChanges(image, id, eligibility(image, { leaving: id }));
      // A broker joining a cluster that holds topics warms up before it takes leaderships (the
      // brokers a cluster starts with have nothing to warm); a restart stays as it was.
      records.push({
        type: 'registerBroker', brokerId: id, incarnationId: req.incarnationId, brokerEpoch: nextOffset,
        endpoints: req.endpoints, rack: req.rack, fenced: true, inControlledShutdown: false, warming: existing?.warming ?? image.topicsById.size > 0,
        adminAddress,
      });
      this.lastHeartbeat.set(id, nowMs);
      return this.propose(nextOffset, records, { kind, errorCode: ErrorCode.NONE, brokerEpoch: nextOffset });
    });
  }

  heartbeat(req: HeartbeatRequest, nextOffset: number, nowMs: number): Outcome {
    const kind = 'heartbeat';
    return this.guarded(refuseHeartbeat, () => {
      const b = this.registered(req.brokerId, req.brokerEpoch);
      this.lastHeartbeat.set(b.id, nowMs);
      const caughtUp = req.currentMetadataOffset >= b.epoch;
      const reply = (isFenced: boolean, shouldShutDown: boolean): ControllerReply => ({ kind, errorCode: ErrorCode.NONE, isCaughtUp: caughtUp, isFenced, shouldShutDown });
      this.reportedOffsets.set(b.id, req.currentMetadataOffset);
      if (req.wantShutDown) return this.controlledShutdown(b, nextOffset, reply);
      if (req.wantFence) {
        if (b.fenced) return { kind: 'answered', reply: reply(true, false) };
        return this.propose(nextOffset, this.fencing(b, false), reply(true, false));
      }
      if (b.fenced && caughtUp && !b.inControlledShutdown) {
        // A broker already warm (a new one hosting nothing is) is unfenced warm, so it never leads less for a moment.
        const warmed = req.warm && b.warming;
        const records: MetadataRecord[] = [{ type: 'brokerRegistrationChange', brokerId: b.id, brokerEpoch: b.epoch, fenced: -1, inControlledShutdown: false, warmed }];
        records.push(...returnChanges(this.image, b.id, eligibility(this.image, { returning: b.id })));
        return this.propose(nextOffset, records, reply(false, false));
      }
      if (req.warm && b.warming && !b.fenced && !b.inControlledShutdown) {
        // Warm: it takes the leaderships it is preferred for; a full batch leaves the rest to the imbalance check, due now.
        const records: MetadataRecord[] = [{ type: 'brokerRegistrationChange', brokerId: b.id, brokerEpoch: b.epoch, fenced: 0, inControlledShutdown: false, warmed: true }];
        const elections = warmedElections(this.image, b.id, MAX_BALANCING_ELECTIONS);
        if (elections.length === MAX_BALANCING_ELECTIONS) this.nextBalanceAt = nowMs;
        records.push(...elections);
        return this.propose(nextOffset, records, reply(false, false));
      }
      return { kind: 'answered', reply: reply(b.fenced, false) };
    });
  }

  unregisterBroker(brokerId: number, nextOffset: number): Outcome {
    const kind = 'unregisterBroker';
    return this.guarded(refuseUnregistration, () => {
      const b = this.image.brokers.get(brokerId);
      if (b === undefined) throw new KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, `broker ${brokerId} is not registered`);
      const records = departureChanges(this.image, b.id, eligibility(this.image, { leaving: b.id }));
      records.push({ type: 'unregisterBroker', brokerId: b.id, brokerEpoch: b.epoch });
      this.lastHeartbeat.delete(b.id);
      this.reportedOffsets.delete(b.id);
      this.shutdownOffsets.delete(b.id);
      return this.propose(nextOffset, records, { kind, errorCode: ErrorCode.NONE });
    });
  }

  /**
   * The broker's connection to this controller closed (a killed process, or a connection the
   * broker dropped after silent deadlines): its session ends DISCONNECT_GRACE_MS from now unless it
   * heartbeats again meanwhile, over a new connection. Only the incarnation named; a broker that
   * registered again since keeps its session.
   */
  endSession(brokerId: number, brokerEpoch: number, nowMs: number): void {
    const b = this.image.brokers.get(brokerId);
    if (!this.active || b === undefined || b.epoch !== brokerEpoch || b.fenced) return;
    this.lastHeartbeat.set(brokerId, Math.min(this.lastHeartbeat.get(brokerId) ?? nowMs, this.graceEnd(nowMs)));
  }

  /**
   * Node `brokerId` refused a connection to its controller listener: in combined mode that listener
   * is the broker's own process, so the process is gone (killed, or restarting as a new
   * incarnation, which registers again anyway) and its session ends now rather than after the
   * disconnect grace. Kept for the case that most needs it: the killed node was the controller
   * before this one, whose successor cannot learn of the death from a closed broker connection.
   * A refusal says nothing of a live process (a full accept backlog drops, it does not refuse).
   * The same holds for a broker's Kafka listener once its controller connection closed; with
   * `brokerEpoch` only that incarnation's session ends. Returns whether a live session was ended.
   */
  processGone(brokerId: number, nowMs: number, brokerEpoch = -1): boolean {
    const b = this.image.brokers.get(brokerId);
    if (!this.active || b === undefined || b.fenced || (brokerEpoch >= 0 && b.epoch !== brokerEpoch)) return false;
    this.lastHeartbeat.set(brokerId, nowMs - this.config.sessionTimeoutMs - 1);
    return true;
  }

  /** The last-heartbeat time at which a session runs out DISCONNECT_GRACE_MS after `nowMs`. */
  private graceEnd(nowMs: number): number {
    return nowMs + Math.min(DISCONNECT_GRACE_MS, this.config.sessionTimeoutMs) - this.config.sessionTimeoutMs;
  }

  /**
   * The earliest wall-clock ms at which expireSessions or balanceLeaders can act, or Infinity while
   * neither can until some input changes the state: the quorum driver of a lone voter sleeps until
   * then instead of waking every 100 ms. A session runs out once now - lastHeartbeat exceeds the
   * session timeout (lastHeartbeat + timeout + 1 in whole ms); a broker without a recorded
   * heartbeat counts as just heard from in expireSessions, so it never runs out on time alone.
   */
  nextTimedWork(): number {
    if (!this.active) return Infinity;
    let at = this.nextBalanceAt;
    for (const b of this.image.brokers.values()) {
      const last = this.lastHeartbeat.get(b.id);
      if (!b.fenced && last !== undefined) at = Math.min(at, last + this.config.sessionTimeoutMs + 1);
    }
    return at;
  }

  /**
   * Fences the unfenced broker whose session ran out longest ago, if any (one batch per call:
   * the driver calls again while it returns a proposal).
   */
  expireSessions(nextOffset: number, nowMs: number): Outcome | null {
    if (!this.active || this.pending.length >= this.config.maxPendingBatches) return null;
    let oldest: BrokerRegistration | null = null;
    let oldestAt = Infinity;
    for (const b of this.image.brokers.values()) {
      const last = this.lastHeartbeat.get(b.id) ?? nowMs;
      if (!b.fenced && nowMs - last > this.config.sessionTimeoutMs && last < oldestAt) {
        oldest = b;
        oldestAt = last;
      }
    }
    return oldest === null ? null : this.propose(nextOffset, this.fencing(oldest, false), null);
  }

  createTopics(topics: readonly CreatableTopic[], validateOnly: boolean, nextOffset: number): Outcome {
    const kind = 'topics';
    return this.guarded(refuseTopics(topics.map((t) => t.name)), () => {
      const image = this.image;
      let live = placementBrokers(image);
      const warming = warmingOf(image);
      const records: MetadataRecord[] = [];
      const results: TopicResult[] = [];
      const names = new Set<string>();
      const taken = new Set<string>();
      let partitions = image.partitionCount();
      for (const [i, t] of topics.entries()) {
        try {
          if (names.has(t.name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `topic '${t.name}' is named twice in the request`);
          names.add(t.name);
          validateTopicName(t.name);
          if (image.topicsByName.has(t.name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic '${t.name}' already exists`);
          const assignment = this.assignmentFor(t, live, image.topicsById.size + i);
          this.config.checkTopicConfigs({ ...t.configs });
          if (partitions + assignment.length > this.config.maxPartitions) {
            throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${this.config.maxPartitions} partitions`);
          }
          partitions += assignment.length;
          live = withAssignment(live, assignment);
          const topicId = this.freshTopicId(image, taken);
          taken.add(topicId);
          records.push({ type: 'topic', name: t.name, topicId });
          for (const [name, value] of Object.entries(t.configs)) {
            records.push({ type: 'config', resourceType: ConfigResource.TOPIC, resourceName: t.name, name, value });
          }
          for (const [p, replicas] of assignment.entries()) records.push(partitionRecord(topicId, p, replicas, warming));
          results.push({ name: t.name, errorCode: ErrorCode.NONE, message: null, topicId, partitions: assignment.length, replicationFactor: assignment[0]!.length });
        } catch (err) {
          results.push(failed(t.name, err));
        }
      }
      return this.finish(validateOnly ? [] : records, nextOffset, { kind, results });
    });
  }

  /** Grows topics to `count` partitions each; `assignment` (or null) places the new ones. */
  createPartitions(requests: readonly { readonly name: string; readonly count: number; readonly assignment: readonly (readonly number[])[] | null }[], validateOnly: boolean, nextOffset: number): Outcome {
    const kind = 'topics';
    return this.guarded(refuseTopics(requests.map((r) => r.name)), () => {
      const image = this.image;
      let live = placementBrokers(image);
      const warming = warmingOf(image);
      const records: MetadataRecord[] = [];
      const results: TopicResult[] = [];
      const names = new Set<string>();
      let partitions = image.partitionCount();
      for (const req of requests) {
        try {
          if (names.has(req.name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `topic '${req.name}' is named twice in the request`);
          names.add(req.name);
          const t = image.topicsByName.get(req.name);
          if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${req.name}'`);
          const have = t.table.count;
          if (!Number.isInteger(req.count) || req.count <= have) {
            throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `topic '${req.name}' has ${have} partitions; new count ${req.count} must be larger`);
          }
          const adding = req.count - have;
          if (partitions + adding > this.config.maxPartitions) {
            throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${this.config.maxPartitions} partitions`);
          }
          const rf = have > 0 ? t.table.replicas(0).length : this.config.defaultReplicationFactor;
          let assignment: readonly (readonly number[])[];
          if (req.assignment !== null) {
            if (req.assignment.length !== adding) {
              throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${req.assignment.length} assignments given for ${adding} new partitions`);
            }
            checkAssignment(req.assignment, live.map((b) => b.id), rf);
            assignment = req.assignment;
          } else {
            assignment = placeBalanced(live, adding, rf, have);
          }
          partitions += adding;
          live = withAssignment(live, assignment);
          for (const [i, replicas] of assignment.entries()) records.push(partitionRecord(t.id, have + i, replicas, warming));
          results.push({ name: req.name, errorCode: ErrorCode.NONE, message: null, topicId: t.id, partitions: req.count, replicationFactor: rf });
        } catch (err) {
          results.push(failed(req.name, err));
        }
      }
      return this.finish(validateOnly ? [] : records, nextOffset, { kind, results });
    });
  }

  deleteTopics(names: readonly string[], nextOffset: number): Outcome {
    const kind = 'topics';
    return this.guarded(refuseTopics(names), () => {
      const image = this.image;
      const records: MetadataRecord[] = [];
      const removed = new Set<string>();
      const results = names.map((name): TopicResult => {
        const t = image.topicsByName.get(name);
        if (t === undefined || removed.has(t.id)) return failed(name, new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${name}'`));
        removed.add(t.id);
        records.push({ type: 'removeTopic', topicId: t.id });
        return { name, errorCode: ErrorCode.NONE, message: null, topicId: t.id, partitions: t.table.count, replicationFactor: -1 };
      });
      return this.finish(records, nextOffset, { kind, results });
    });
  }

  /** SCRAM credentials added, replaced or deleted (AlterUserScramCredentials): each user's alterations apply whole or not at all. */
  alterScramCredentials(req: AlterScramRequest, nextOffset: number): Outcome {
    return this.guarded(refuseScram, () => {
      const { records, results } = scramChanges(this.image, req);
      return this.finish(records, nextOffset, { kind: 'alterScramCredentials', errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /** Client quotas set or removed (AlterClientQuotas): each entry's ops apply whole or not at all; validateOnly writes nothing. */
  alterClientQuotas(req: AlterClientQuotasRequest, nextOffset: number): Outcome {
    return this.guarded(refuseQuotas, () => {
      const { records, results } = quotaChanges(this.image, req);
      return this.finish(records, nextOffset, { kind: 'alterClientQuotas', errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /**
   * Credentials written offline (`sluice user create --data-dir`) carried into the log: each one
   * whose user has no credential for its mechanism yet is written; existing ones are left as they
   * are, so a bootstrap file carried late never undoes a change made since.
   */
  bootstrapScramCredentials(credentials: readonly (ScramCredential & { readonly user: string })[], nextOffset: number): Outcome {
    return this.guarded(refuseScram, () => {
      const image = this.image;
      const records: MetadataRecord[] = [];
      for (const { user, ...c } of credentials) {
        if (user === '' || user.length > MAX_SCRAM_NAME_CHARS) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'a bootstrap credential has an empty or overlong user name');
        if (image.scram.get(scramKey(c.mechanism, user)) === undefined) records.push({ type: 'userScramCredential', name: user, ...c });
      }
      const results = credentials.map((c) => ({ user: c.user, errorCode: ErrorCode.NONE, message: null }));
      return this.finish(records, nextOffset, { kind: 'alterScramCredentials', errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /** ACLs created (CreateAcls), each named by a fresh id; each creation answered on its own. */
  createAcls(creations: readonly AclCreation[], nextOffset: number): Outcome {
    return this.guarded(refuseAclCreations, () => {
      const { records, results } = aclCreations(this.image, creations, this.config.newTopicId);
      return this.finish(records, nextOffset, { kind: 'createAcls', errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /** ACLs removed (DeleteAcls): each filter answered with the ACLs it matched. */
  deleteAcls(filters: readonly AclFilter[], nextOffset: number): Outcome {
    return this.guarded(refuseAclDeletions, () => {
      const { records, results } = aclDeletions(this.image, filters);
      return this.finish(records, nextOffset, { kind: 'deleteAcls', errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /** One resource's dynamic configs changed (IncrementalAlterConfigs or AlterConfigs), validated against what brokers apply. */
  alterConfigs(req: AlterConfigsRequest, nextOffset: number): Outcome {
    const kind = 'alterConfigs';
    return this.guarded(refuseConfigs, () => {
      const image = this.image;
      const before = image.configs.get(configKey(req.resourceType, req.resourceName)) ?? NO_CONFIGS;
      if (req.resourceType === ConfigResource.TOPIC) {
        if (!image.topicsByName.has(req.resourceName)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${req.resourceName.slice(0, 255)}'`);
      } else if (req.resourceType === ConfigResource.BROKER) {
        const id = Number(req.resourceName);
        if (req.resourceName !== '' && (String(id) !== req.resourceName || !image.brokers.has(id))) {
          throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker '${req.resourceName.slice(0, 100)}' is not registered`);
        }
      } else {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `config resource type ${req.resourceType} is not supported`);
      }
      const after = changedConfigs(before, req, req.resourceType === ConfigResource.TOPIC ? isListTopicConfig : () => false);
      if (req.resourceType === ConfigResource.TOPIC) this.config.checkTopicConfigs(after);
      else validateBrokerConfigs(after);
      if (Object.keys(after).length > MAX_CONFIGS_PER_RESOURCE) {
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `more than ${MAX_CONFIGS_PER_RESOURCE} config overrides on one resource`);
      }
      const records = req.validateOnly ? [] : configRecords(req.resourceType, req.resourceName, before, after);
      return this.finish(records, nextOffset, { kind, errorCode: ErrorCode.NONE, message: null });
    });
  }

  allocateProducerIds(brokerId: number, brokerEpoch: number, nextOffset: number): Outcome {
    const kind = 'allocateProducerIds';
    return this.guarded(refuseProducerIds, () => {
      this.registered(brokerId, brokerEpoch);
      const start = this.image.producerIds.nextProducerId;
      return this.propose(nextOffset, [{ type: 'producerIds', brokerId, brokerEpoch, nextProducerId: start + PRODUCER_ID_BLOCK }], {
        kind, errorCode: ErrorCode.NONE, producerIdStart: start, producerIdLen: PRODUCER_ID_BLOCK,
      });
    });
  }

  /** A partition leader's ISR change (AlterPartition); the sender must be registered at its epoch. */
  alterPartition(req: AlterPartitionRequest, nextOffset: number): Outcome {
    const kind = 'alterPartition';
    return this.guarded(refuseAlterPartition, () => {
      const b = this.image.brokers.get(req.brokerId);
      if (b === undefined || b.epoch !== req.brokerEpoch) {
        throw new KafkaError(ErrorCode.STALE_BROKER_EPOCH, `broker ${req.brokerId} is not registered at epoch ${req.brokerEpoch}`);
      }
      const { records, topics } = alterPartition(this.image, req);
      return this.finish(records, nextOffset, { kind, errorCode: ErrorCode.NONE, topics });
    });
  }

  /** ElectLeaders: a preferred or unclean election (ElectionType) of the named partitions, or of all. */
  electLeaders(type: number, partitions: ElectionPartitions, nextOffset: number): Outcome {
    const kind = 'electLeaders';
    return this.guarded(refuseElection, () => {
      if (type !== ElectionType.PREFERRED && type !== ElectionType.UNCLEAN) throw new KafkaError(ErrorCode.INVALID_REQUEST, `election type ${type}`);
      const { records, results } = electLeaders(this.image, type, partitions);
      return this.finish(records, nextOffset, { kind, errorCode: ErrorCode.NONE, results });
    });
  }

  /** AlterPartitionReassignments (KIP-455): targets and cancels per partition (replication_control.ts). */
  alterPartitionReassignments(topics: readonly ReassignmentTopic[], nextOffset: number): Outcome {
    const kind = 'alterPartitionReassignments';
    return this.guarded(refuseReassignments, () => {
      const { records, results } = alterPartitionReassignments(this.image, topics);
      return this.finish(records, nextOffset, { kind, errorCode: ErrorCode.NONE, message: null, results });
    });
  }

  /** ListPartitionReassignments: the ongoing reassignments of the named partitions, or of all (null). */
  listPartitionReassignments(topics: TopicPartitions): Outcome {
    const kind = 'listPartitionReassignments';
    return this.guarded(refuseListing, () => ({
      kind: 'answered', reply: { kind, errorCode: ErrorCode.NONE, message: null, reassignments: listPartitionReassignments(this.image, topics) },
    }));
  }

  /**
   * The periodic leader imbalance check, due every leaderImbalanceCheckIntervalMs: one batch of
   * preferred elections, or null when none is due or needed. A full batch leaves the check due,
   * so the driver's next call continues it.
   */
  balanceLeaders(nextOffset: number, nowMs: number): Outcome | null {
    if (!this.active || nowMs < this.nextBalanceAt || this.pending.length >= this.config.maxPendingBatches) return null;
    const records = imbalanceElections(this.image, this.config.leaderImbalancePerBrokerPercentage, MAX_BALANCING_ELECTIONS);
    if (records.length < MAX_BALANCING_ELECTIONS) this.nextBalanceAt = nowMs + this.config.leaderImbalanceCheckIntervalMs;
    return records.length === 0 ? null : this.propose(nextOffset, records, null);
  }

  /**
   * Carries an older single node's topics (with their ids) and producer-id high mark into the
   * log as ordinary records, in one batch. Only into a log without topics; a log that already
   * holds exactly these topics and ids (the batch committed, the old file was not yet renamed) is
   * answered without records.
   */
  importLegacy(legacy: LegacyMetadata, nextOffset: number): Outcome {
    const names = legacy.topics.map((t) => t.name);
    return this.guarded(refuseTopics(names), () => {
      const image = this.image;
      const done = (errorCode: ErrorCode): ControllerReply => ({
        kind: 'topics',
        results: legacy.topics.map((t) => ({ name: t.name, errorCode, message: null, topicId: t.id, partitions: t.partitions, replicationFactor: 1 })),
      });
      const carried = legacy.topics.every((t) => image.topicsByName.get(t.name)?.id === t.id) && image.producerIds.nextProducerId >= legacy.nextProducerId;
      if (image.topicsById.size > 0) {
        if (carried) return { kind: 'answered', reply: done(ErrorCode.NONE) };
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'the metadata log already holds topics other than the ones to import');
      }
      const id = legacy.brokerId;
      if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker id ${id}`);
      if (!Number.isSafeInteger(legacy.nextProducerId) || legacy.nextProducerId < 0) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `producer id high mark ${legacy.nextProducerId}`);
      }
      const records: MetadataRecord[] = [];
      const ids = new Set<string>();
      let partitions = 0;
      for (const t of legacy.topics) {
        validateTopicName(t.name);
        if (ids.has(t.id) || names.indexOf(t.name) !== names.lastIndexOf(t.name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `topic '${t.name}' or its id is named twice`);
        if (!UUID.test(t.id) || t.id === ZERO_UUID) throw new KafkaError(ErrorCode.INVALID_REQUEST, `topic '${t.name}' has id '${t.id.slice(0, 40)}', not 32 hex chars`);
        ids.add(t.id);
        partitions += t.partitions;
        if (!Number.isInteger(t.partitions) || t.partitions < 1 || partitions > this.config.maxPartitions) {
          throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `topic '${t.name}' has ${t.partitions} partitions (at most ${this.config.maxPartitions} in all)`);
        }
        this.config.checkTopicConfigs({ ...t.configs });
        records.push({ type: 'topic', name: t.name, topicId: t.id });
        for (const [name, value] of Object.entries(t.configs)) {
          records.push({ type: 'config', resourceType: ConfigResource.TOPIC, resourceName: t.name, name, value });
        }
        for (let p = 0; p < t.partitions; p++) records.push(partitionRecord(t.id, p, [id], NONE_WARMING));
      }
      if (legacy.nextProducerId > image.producerIds.nextProducerId) {
        records.push({ type: 'producerIds', brokerId: id, brokerEpoch: -1, nextProducerId: legacy.nextProducerId });
      }
      return this.finish(records, nextOffset, done(ErrorCode.NONE));
    });
  }

  /** Runs a request on the active controller; KafkaErrors become the reply's error code. */
  private guarded(refuse: Refuse, handle: () => Outcome): Outcome {
    if (!this.active) return { kind: 'answered', reply: refuse(ErrorCode.NOT_CONTROLLER, 'not the active controller') };
    if (this.pending.length >= this.config.maxPendingBatches) {
      return { kind: 'answered', reply: refuse(ErrorCode.REQUEST_TIMED_OUT, `${this.pending.length} metadata batches await commit`) };
    }
    try {
      return handle();
    } catch (err) {
      if (err instanceof KafkaError) return { kind: 'answered', reply: refuse(err.code, err.message) };
      throw err;
    }
  }

  /** Answers at once when there is nothing to write. */
  private finish(records: readonly MetadataRecord[], nextOffset: number, reply: ControllerReply): Outcome {
    return records.length === 0 ? { kind: 'answered', reply } : this.propose(nextOffset, records, reply);
  }

  private propose(offset: number, records: readonly MetadataRecord[], reply: ControllerReply | null): Outcome {
    const last = this.pending[this.pending.length - 1];
    if (last !== undefined && offset <= last.offset) throw new Error(`proposal at ${offset} does not follow the pending one at ${last.offset}`);
    const image = applyRecords(this.image, records, { endOffset: offset + 1, epoch: this.epoch });
    this.pending.push({ offset, image, reply });
    return { kind: 'propose', offset, records };
  }

  private registered(brokerId: number, brokerEpoch: number): BrokerRegistration {
    const b = this.image.brokers.get(brokerId);
    if (b === undefined) throw new KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, `broker ${brokerId} is not registered`);
    if (b.epoch !== brokerEpoch) throw new KafkaError(ErrorCode.STALE_BROKER_EPOCH, `broker ${brokerId} is at epoch ${b.epoch}, not ${brokerEpoch}`);
    return b;
  }

  /**
   * KRaft's controlled shutdown (BrokerHeartbeatManager): the first request moves the broker's
   * leaderships to other ISR members and takes it out of ISRs, in the batch that marks it in
   * controlled shutdown, while it stays unfenced and serving. It may stop (shouldShutDown, and it
   * is fenced) once it leads nothing and every unfenced broker, itself included, has reported
   * applying that batch: no client is sent here by an image older than the move, and until it
   * closes its listeners it answers a moved partition's clients NOT_LEADER_OR_FOLLOWER with the
   * new leader instead of appending, so none sends it another request it would close unread. With
   * no other unfenced broker nothing moved: a single node is fenced and answered in the first
   * batch. A fenced broker stops at once, as it leads nothing.
   */
  private controlledShutdown(b: BrokerRegistration, nextOffset: number, reply: (isFenced: boolean, shouldShutDown: boolean) => ControllerReply): Outcome {
    if (b.fenced) return { kind: 'answered', reply: reply(true, true) };
    const moves = departureChanges(this.image, b.id, eligibility(this.image, { leaving: b.id }));
    const marking = moves.length > 0 || !b.inControlledShutdown;
    // A controller activated after the marking batch does not know its offset: its image's end bounds it.
    const shutdownOffset = marking ? nextOffset : (this.shutdownOffsets.get(b.id) ?? this.image.provenance.endOffset - 1);
    this.shutdownOffsets.set(b.id, shutdownOffset);
    let alone = true;
    let seen = true;
    for (const other of this.image.brokers.values()) {
      if (other.fenced) continue;
      if (other.id !== b.id) alone = false;
      if ((this.reportedOffsets.get(other.id) ?? -1) < shutdownOffset) seen = false;
    }
    if (seen || alone) {
      this.shutdownOffsets.delete(b.id);
      return this.propose(nextOffset, this.fencing(b, true), reply(true, true));
    }
    if (!marking) return { kind: 'answered', reply: reply(false, false) };
    moves.push({ type: 'brokerRegistrationChange', brokerId: b.id, brokerEpoch: b.epoch, fenced: 0, inControlledShutdown: true });
    return this.propose(nextOffset, moves, reply(false, false));
  }

  private forgetSessions(): void {
    this.lastHeartbeat.clear();
    this.reportedOffsets.clear();
    this.shutdownOffsets.clear();
  }

  /** One batch: the broker hands over its leaderships and leaves ISRs, then is marked fenced. */
  private fencing(b: BrokerRegistration, shutdown: boolean): MetadataRecord[] {
    const records = departureChanges(this.image, b.id, eligibility(this.image, { leaving: b.id }));
    records.push({ type: 'brokerRegistrationChange', brokerId: b.id, brokerEpoch: b.epoch, fenced: 1, inControlledShutdown: shutdown });
    return records;
  }


  private assignmentFor(t: CreatableTopic, live: readonly PlacementBroker[], rotation: number): readonly (readonly number[])[] {
    if (t.assignment !== null) {
      if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'an assignment comes without partition count and replication factor');
      }
      if (t.assignment.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'an assignment needs at least one partition');
      const rf = t.assignment[0]!.length;
      if (rf > MAX_REPLICAS) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor ${rf} exceeds ${MAX_REPLICAS}`);
      checkAssignment(t.assignment, live.map((b) => b.id), rf);
      return t.assignment;
    }
    const count = t.numPartitions === -1 ? this.config.defaultPartitions : t.numPartitions;
    if (!Number.isInteger(count) || count < 1) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `partition count must be at least 1, got ${count}`);
    if (count > this.config.maxPartitions) throw new KafkaError(ErrorCode.POLICY_VIOLATION, `the cluster would hold more than ${this.config.maxPartitions} partitions`);
    const rf = t.replicationFactor === -1 ? Math.min(this.config.defaultReplicationFactor, live.length) : t.replicationFactor;
    checkReplicationFactor(rf, live.length);
    return placeBalanced(live, count, rf, rotation);
  }

  private freshTopicId(image: MetadataImage, taken: ReadonlySet<string>): string {
    for (;;) {
      const id = this.config.newTopicId();
      if (id !== ZERO_UUID && UUID.test(id) && !image.topicsById.has(id) && !taken.has(id)) return id;
    }
  }
}

/** A new partition, led by its first warm replica (the first, when all are warming). */
function partitionRecord(topicId: string, partition: number, replicas: readonly number[], warming: Warming): MetadataRecord {
  return {
    type: 'partition', topicId, partition, replicas, isr: replicas, removingReplicas: [], addingReplicas: [],
    leader: firstLeader(replicas, warming), leaderEpoch: 0, partitionEpoch: 0,
  };
}
