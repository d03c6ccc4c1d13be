// The metadata quorum of one process (main thread): the QuorumDriver and the pure
// MetadataController joined. Committed data entries are metadata record batches; every node
// (voter or observer) replays them into its committed MetadataImage, which brokers read. On the
// Raft leader the controller is active from the moment this epoch's leaderChange entry is applied
// (every earlier batch is then in its image): broker and topic requests become record batches
// proposed through the driver and are answered once they commit. When leadership goes the
// controller reverts to the committed image and every pending reply fails with NOT_CONTROLLER.
import type { Logger } from 'pino';
import {
  MetadataController, type Completion, type ControllerConfig, type ControllerReply, type CreatableTopic, type ElectionPartitions,
  type HeartbeatRequest, type LegacyMetadata, type Outcome, type RegisterBrokerRequest, type TopicPartitions,
} from '../../cluster/metadata/controller.js';
import type { AlterPartitionRequest, ReassignmentTopic } from '../../cluster/metadata/replication_control.js';
import type { AlterConfigsRequest } from '../../cluster/metadata/config_changes.js';
import type { AlterScramRequest } from '../../cluster/metadata/scram_changes.js';
import type { AclCreation } from '../../cluster/metadata/acl_changes.js';
import type { AclFilter } from '../../coordinator/acl/acl.js';
import type { AlterClientQuotasRequest } from '../../protocol/apis/client_quotas.js';
import type { ScramCredential } from '../../common/sasl_mechanisms.js';
import { MetadataImage } from '../../cluster/metadata/image.js';
import { decodeBatch, encodeBatch, type MetadataRecord } from '../../cluster/metadata/records.js';
import { encodeSnapshot, loadSnapshot } from '../../cluster/metadata/snapshot.js';
import type { Entry, Snapshot } from '../../coordinator/raft/types.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { QuorumDriver, QuorumProposalError, type Proposal, type QuorumDriverOptions, type QuorumStateMachine } from './quorum_driver.js';

export interface MetadataQuorumOptions extends Omit<QuorumDriverOptions, 'stateMachine' | 'onTick'> {
  readonly controller: ControllerConfig;
}

interface WaitingReply {
  readonly resolve: (reply: ControllerReply) => void;
  readonly reject: (err: Error) => void;
}

/**
 * How recent a peer's refused connection must be to end its broker session when this node becomes
 * the active controller: long enough to cover an election, short enough that a node which has
 * restarted since and registered again is not taken for gone.
 */
const REFUSAL_FRESH_MS = 1_000;

export class MetadataQuorum implements QuorumStateMachine {
  readonly driver: QuorumDriver;
  private controller: MetadataController;
  /** Replies awaiting the commit of their batch, by offset (bounded by the controller's maxPendingBatches). */
  private readonly waiting = new Map<number, WaitingReply>();
  private readonly imageListeners: ((image: MetadataImage) => void)[] = [];
  private readonly log: Logger;
  /** The last other node seen leading the quorum: the one whose silence an election here follows. */
  private previousLeader = -1;
  /** When each peer last refused a connection (keys: quorum peers, a bounded set). */
  private readonly refusedAt = new Map<number, number>();

  constructor(private readonly opts: MetadataQuorumOptions) {
    this.log = opts.log;
    this.controller = new MetadataController(opts.controller, MetadataImage.EMPTY);
    this.driver = new QuorumDriver({
      ...opts, stateMachine: this, onTick: (now) => this.onTick(now), nextTimedWork: () => this.controller.nextTimedWork(),
      onPeerRefused: (id, now) => this.peerRefused(id, now),
    });
    this.driver.onLeaderChange((c) => {
      if (c.leaderId >= 0 && c.leaderId !== opts.id) this.previousLeader = c.leaderId;
      if (c.role !== 'leader' && this.controller.isActive) this.deactivate();
    });
  }

  /** The image of every committed metadata batch applied here. */
  get image(): MetadataImage {
    return this.controller.committedImage;
  }

  /** Called after every applied batch with the new committed image. */
  onImage(listener: (image: MetadataImage) => void): void {
    this.imageListeners.push(listener);
  }

  get isActiveController(): boolean {
    return this.controller.isActive;
  }

  // ---- QuorumStateMachine ----

  restore(snapshot: Snapshot): void {
    this.controller = new MetadataController(this.opts.controller, loadSnapshot(snapshot.data, snapshot.meta.id));
    this.publish();
  }

  apply(entries: readonly Entry[]): void {
    let changed = false;
    for (const e of entries) {
      if (e.kind === 'leaderChange') {
        const s = this.driver.status();
        if (s.role === 'leader' && s.epoch === e.epoch && !this.controller.isActive) {
          const now = Date.now();
          this.controller.activate(e.epoch, now, this.previousLeader);
          this.log.info({ epoch: e.epoch, previousLeader: this.previousLeader }, 'active controller');
          // The election most likely followed the previous leader's death: a refusal seen while it ran ends its session now.
          if ((this.refusedAt.get(this.previousLeader) ?? -Infinity) >= now - REFUSAL_FRESH_MS) this.processGone(this.previousLeader, now);
        }
      } else if (e.kind === 'data') {
        if (this.controller.isActive) this.complete(this.controller.committed(e.offset));
        else this.controller.replay(decodeBatch(e.data), e.offset, e.epoch);
        changed = true;
      }
    }
    if (changed) this.publish();
  }

  snapshot(): Uint8Array {
    return encodeSnapshot(this.controller.committedImage);
  }

  // ---- controller requests (answered NOT_CONTROLLER unless this node is the active controller) ----

  registerBroker(req: RegisterBrokerRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.registerBroker(req, next, Date.now()));
  }

  /** Broker `brokerId` (that incarnation) refused a connection to its Kafka listener after its controller connection closed: its session ends now. */
  brokerGone(brokerId: number, brokerEpoch: number): void {
    if (this.controller.processGone(brokerId, Date.now(), brokerEpoch)) this.log.info({ brokerId }, 'a disconnected broker refuses connections: its session ends now');
    this.driver.timedWorkChanged();
  }

  /** Broker `brokerId`'s connection to this controller closed: its session ends after a short grace unless it heartbeats again. */
  brokerDisconnected(brokerId: number, brokerEpoch: number): void {
    this.controller.endSession(brokerId, brokerEpoch, Date.now());
    this.driver.timedWorkChanged();
  }

  heartbeat(req: HeartbeatRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.heartbeat(req, next, Date.now()));
  }

  allocateProducerIds(brokerId: number, brokerEpoch: number): Promise<ControllerReply> {
    return this.run((next) => this.controller.allocateProducerIds(brokerId, brokerEpoch, next));
  }

  createTopics(topics: readonly CreatableTopic[], validateOnly: boolean): Promise<ControllerReply> {
    return this.run((next) => this.controller.createTopics(topics, validateOnly, next));
  }

  createPartitions(requests: Parameters<MetadataController['createPartitions']>[0], validateOnly: boolean): Promise<ControllerReply> {
    return this.run((next) => this.controller.createPartitions(requests, validateOnly, next));
  }

  deleteTopics(names: readonly string[]): Promise<ControllerReply> {
    return this.run((next) => this.controller.deleteTopics(names, next));
  }

  alterPartition(req: AlterPartitionRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.alterPartition(req, next));
  }

  electLeaders(electionType: number, partitions: ElectionPartitions): Promise<ControllerReply> {
    return this.run((next) => this.controller.electLeaders(electionType, partitions, next));
  }

  alterPartitionReassignments(topics: readonly ReassignmentTopic[]): Promise<ControllerReply> {
    return this.run((next) => this.controller.alterPartitionReassignments(topics, next));
  }

  listPartitionReassignments(topics: TopicPartitions): Promise<ControllerReply> {
    return this.run(() => this.controller.listPartitionReassignments(topics));
  }

  alterConfigs(req: AlterConfigsRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.alterConfigs(req, next));
  }

  alterScramCredentials(req: AlterScramRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.alterScramCredentials(req, next));
  }

  createAcls(creations: readonly AclCreation[]): Promise<ControllerReply> {
    return this.run((next) => this.controller.createAcls(creations, next));
  }

  deleteAcls(filters: readonly AclFilter[]): Promise<ControllerReply> {
    return this.run((next) => this.controller.deleteAcls(filters, next));
  }

  alterClientQuotas(req: AlterClientQuotasRequest): Promise<ControllerReply> {
    return this.run((next) => this.controller.alterClientQuotas(req, next));
  }

  /** Carries offline-written SCRAM credentials into the log (MetadataController.bootstrapScramCredentials). */
  bootstrapScramCredentials(credentials: readonly (ScramCredential & { readonly user: string })[]): Promise<ControllerReply> {
    return this.run((next) => this.controller.bootstrapScramCredentials(credentials, next));
  }

  unregisterBroker(brokerId: number): Promise<ControllerReply> {
    return this.run((next) => this.controller.unregisterBroker(brokerId, next));
  }

  /** Carries an older single node's topics and producer-id high mark into the log (MetadataController.importLegacy). */
  importLegacy(legacy: LegacyMetadata): Promise<ControllerReply> {
    return this.run((next) => this.controller.importLegacy(legacy, next));
  }

  stop(): Promise<void> {
    return this.driver.stop();
  }

  /**
   * Hands the controller the offset its batch will get, proposes the batch there and keeps the
   * reply until it commits. Rejects with QuorumProposalError (NOT_CONTROLLER and the leader hint).
   */
  private run(decide: (nextOffset: number) => Outcome): Promise<ControllerReply> {
    if (!this.controller.isActive) return Promise.reject(this.notController());
    const outcome = decide(this.driver.status().logEndOffset);
    if (outcome.kind === 'answered') {
      // A heartbeat can record the first heartbeat time of a broker: its session's end is new timed work.
      this.driver.timedWorkChanged();
      return Promise.resolve(outcome.reply);
    }
    let offset: number;
    try {
      offset = this.propose(outcome.offset, outcome);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => this.waiting.set(offset, { resolve, reject }));
  }

  /** Proposes `outcome`'s records at `offset`, undoing the controller's pending batch if the core refuses. */
  private propose(offset: number, outcome: Outcome & { kind: 'propose' }): number {
    let proposal: Proposal;
    try {
      proposal = this.driver.proposeAt(encodeBatch(outcome.records));
    } catch (err) {
      this.controller.refused(offset);
      throw err;
    }
    if (proposal.offset !== offset) throw new Error(`the core appended at ${proposal.offset}, not at the ${offset} the controller was given`);
    // Loss is reported through deactivate(); the driver's own rejection carries nothing more.
    proposal.committed.catch(() => undefined);
    return offset;
  }

  private peerRefused(id: number, now: number): void {
    this.refusedAt.set(id, now);
    if (this.controller.isActive) this.processGone(id, now);
  }

  private processGone(id: number, now: number): void {
    if (this.controller.processGone(id, now)) this.log.info({ node: id }, 'a quorum peer refuses connections: its broker session ends now');
  }

  /** The active controller's own batches: session expiry, then the leader imbalance check when due. */
  private onTick(now: number): void {
    if (!this.controller.isActive) return;
    const expiry = this.controller.expireSessions(this.driver.status().logEndOffset, now);
    if (expiry?.kind === 'propose') this.log.info({ brokers: fencedBrokers(expiry.records) }, 'fencing brokers whose sessions ran out');
    this.proposeOwn('session expiry', expiry);
    this.proposeOwn('leader balancing', this.controller.balanceLeaders(this.driver.status().logEndOffset, now));
  }

  private proposeOwn(what: string, outcome: Outcome | null): void {
    if (outcome === null || outcome.kind !== 'propose') return;
    try {
      this.propose(outcome.offset, outcome);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      this.log.debug({ err }, `${what} not proposed`);
    }
  }

  private complete(done: readonly Completion[]): void {
    for (const c of done) {
      const w = this.waiting.get(c.offset);
      if (w === undefined) continue;
      this.waiting.delete(c.offset);
      if (c.reply !== null) w.resolve(c.reply);
    }
  }

  private deactivate(): void {
    const err = this.notController();
    for (const offset of this.controller.deactivate()) {
      this.waiting.get(offset)?.reject(err);
      this.waiting.delete(offset);
    }
    this.publish();
  }

  private notController(): QuorumProposalError {
    const leader = this.driver.leader;
    return new QuorumProposalError(ErrorCode.NOT_CONTROLLER, leader.role === 'leader' ? -1 : leader.leaderId, 'this node is not the active controller');
  }

  private publish(): void {
    const image = this.controller.committedImage;
    for (const listener of this.imageListeners) listener(image);
  }
}

/** The brokers a batch fences (for the log line naming them). */
function fencedBrokers(records: readonly MetadataRecord[]): number[] {
  return records.flatMap((r) => (r.type === 'brokerRegistrationChange' && r.fenced === 1 ? [r.brokerId] : []));
}
