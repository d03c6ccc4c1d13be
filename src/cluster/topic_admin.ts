// The front end of topic changes (CreateTopics, CreatePartitions, DeleteTopics, auto-creation
// and the broker's own internal topics): validates what a client asks against the cluster view,
// places replicas, proposes the change to the metadata store, then waits until the partition
// reconciler has acted on it, so a client that is answered can use (or no longer sees) the
// partitions at once. It never opens or closes a partition itself, but holds the descriptor
// budget's share of every partition it admits, so a change that would exhaust the process's
// descriptors is refused up front with POLICY_VIOLATION. Main thread.
import { PARTITION_FDS, type DescriptorBudget } from '../common/descriptor_budget.js';
import type { BrokerConfig } from '../config.js';
import { validateTopicConfigs } from '../coordinator/topic_configs.js';
import { validateTopicName } from '../coordinator/topic_names.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { isInternalTopic, type ClusterView, type TopicImage } from './cluster_view.js';
import type { MetadataStore, ReplicaAssignment, TopicChange } from './metadata_store.js';
import { checkAssignment, placeBalanced, placeReplicas, type PlacementBroker } from './replica_placement.js';

/** Bound on partitions one broker hosts: every partition costs an actor, files and index memory. */
export const MAX_PARTITIONS_PER_BROKER = 100_000;

/** The back end's confirmation: resolves once what is open on the shards matches the view at `revision`. */
export interface ReconcileWaiter {
  applied(revision: number): Promise<void>;
}

export interface NewTopic {
  readonly name: string;
  /** -1: the broker's default (num.partitions). */
  readonly partitions: number;
  /** -1: the broker's default (default.replication.factor). */
  readonly replicationFactor: number;
  /** The client's replica lists, one per partition, or null to let the broker place them. */
  readonly assignment: ReplicaAssignment | null;
  readonly configs: Readonly<Record<string, string>>;
}

export interface CreatedTopic {
  readonly topic: TopicImage;
  readonly replicationFactor: number;
}

const ZERO_ID = '0'.repeat(32);

export class TopicAdmin {
  /** Creations in flight, so auto-creation callers share one; bounded with every partition by MAX_PARTITIONS_PER_BROKER. */
  private readonly creating = new Map<string, { done: Promise<CreatedTopic>; partitions: number }>();

  constructor(
    private readonly config: BrokerConfig,
    private readonly view: ClusterView,
    private readonly store: MetadataStore,
    private readonly reconciler: ReconcileWaiter,
    private readonly descriptors: DescriptorBudget,
  ) {}

  /** `timeoutMs`: the client's request timeout (see MetadataStore.propose); undefined for the broker's own creations. */
  async create(t: NewTopic, validateOnly = false, timeoutMs?: number): Promise<CreatedTopic> {
    validateTopicName(t.name);
    const live = this.liveIds();
    let assignment: ReplicaAssignment;
    if (t.assignment !== null) {
      if (t.assignment.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'an assignment needs at least one partition');
      checkAssignment(t.assignment, live, t.assignment[0]!.length);
      assignment = t.assignment;
    } else {
      const partitions = t.partitions === -1 ? this.config.numPartitions : t.partitions;
      if (!Number.isInteger(partitions) || partitions < 1) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `partition count must be at least 1, got ${partitions}`);
      }
      // The default is capped by the live brokers, as the controller caps it (one broker: 1).
      const rf = t.replicationFactor === -1 ? Math.min(this.config.defaultReplicationFactor, live.length) : t.replicationFactor;
      assignment = this.place(live, 0, partitions, rf);
    }
    validateTopicConfigs({ ...t.configs }, this.config);
    this.checkCapacity(assignment.length);
    if (this.view.topic(t.name) !== undefined || this.creating.has(t.name)) {
      throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic '${t.name}' already exists`);
    }
    const replicationFactor = assignment[0]!.length;
    if (validateOnly) {
      this.checkDescriptors(assignment.length);
      return { topic: { name: t.name, id: ZERO_ID, partitions: assignment.length, configs: { ...t.configs } }, replicationFactor };
    }
    const change = this.withDescriptors(assignment.length, () => this.apply({ kind: 'createTopic', name: t.name, configs: t.configs, assignment }, replicationFactor, timeoutMs));
    return this.track(t.name, assignment.length, change);
  }

  /** Auto-creation on Metadata: concurrent callers share one creation. */
  async ensure(name: string): Promise<TopicImage> {
    const existing = this.view.topic(name);
    if (existing !== undefined) return existing;
    const inFlight = this.creating.get(name);
    if (inFlight !== undefined) return (await inFlight.done).topic;
    return (await this.create({ name, partitions: -1, replicationFactor: -1, assignment: null, configs: {} })).topic;
  }

  /** An internal topic with configs the broker chose (not subject to client-facing validation); an existing one wins. */
  async createInternal(name: string, partitions: number, configs: Record<string, string>, replicationFactor: number): Promise<TopicImage> {
    const existing = this.view.topic(name);
    if (existing !== undefined) return existing;
    const live = this.liveIds();
    const assignment = placeReplicas(live, 0, partitions, Math.min(replicationFactor, live.length));
    // The broker's own topics are needed whatever the budget says: their descriptors come first.
    this.descriptors.acquire('partitions', partitions * PARTITION_FDS);
    try {
      return (await this.apply({ kind: 'createTopic', name, configs, assignment }, assignment[0]!.length, undefined)).topic;
    } catch (err) {
      // In a cluster every broker creates it on its first start; the first one's wins.
      const created = err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS ? this.view.topic(name) : undefined;
      if (created === undefined) throw err;
      this.descriptors.release('partitions', partitions * PARTITION_FDS);
      return created;
    }
  }

  /** Grows a topic to `total` partitions; `assignment` (or null) gives the new partitions' replicas. */
  async addPartitions(name: string, total: number, assignment: ReplicaAssignment | null, validateOnly = false, timeoutMs?: number): Promise<void> {
    const t = this.view.topic(name);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${name}'`);
    if (isInternalTopic(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `the partition count of internal topic '${name}' is fixed: groups are placed by it`);
    if (!Number.isInteger(total) || total <= t.partitions) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `topic '${name}' has ${t.partitions} partitions; new count ${total} must be larger`);
    }
    const adding = total - t.partitions;
    const rf = this.view.partition(name, 0)?.replicas.length ?? 1;
    const live = this.liveIds();
    if (assignment !== null) {
      if (assignment.length !== adding) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `${assignment.length} assignments given for ${adding} new partitions`);
      }
      checkAssignment(assignment, live, rf);
    }
    const placed = assignment ?? this.place(live, t.partitions, adding, rf);
    this.checkCapacity(adding);
    if (validateOnly) return this.checkDescriptors(adding);
    await this.withDescriptors(adding, () => this.apply({ kind: 'createPartitions', name, assignment: placed }, rf, timeoutMs));
  }

  /** Resolves once the topic is gone from the view and its partitions are closed and deleted. */
  async delete(name: string, timeoutMs?: number): Promise<TopicImage> {
    const existing = this.view.topic(name);
    if (existing === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${name}'`);
    if (isInternalTopic(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `internal topic '${name}' cannot be deleted`);
    const deleted = (await this.apply({ kind: 'deleteTopic', name }, 0, timeoutMs)).topic;
    this.descriptors.release('partitions', existing.partitions * PARTITION_FDS);
    return deleted;
  }

  private async apply(change: TopicChange, replicationFactor: number, timeoutMs: number | undefined): Promise<CreatedTopic> {
    const committed = await this.store.propose(change, timeoutMs);
    await this.reconciler.applied(committed.revision);
    return { topic: committed.topic, replicationFactor };
  }

  private async track(name: string, partitions: number, done: Promise<CreatedTopic>): Promise<CreatedTopic> {
    this.creating.set(name, { done, partitions });
    try {
      return await done;
    } finally {
      this.creating.delete(name);
    }
  }

  /** Runs `change` holding the descriptors of `partitions` new partitions; they are given back if it fails. */
  private async withDescriptors<T>(partitions: number, change: () => Promise<T>): Promise<T> {
    const n = partitions * PARTITION_FDS;
    if (!this.descriptors.tryAcquire('partitions', n)) this.refuseDescriptors(partitions);
    try {
      return await change();
    } catch (err) {
      this.descriptors.release('partitions', n);
      throw err;
    }
  }

  private checkDescriptors(partitions: number): void {
    if (partitions * PARTITION_FDS > this.descriptors.free) this.refuseDescriptors(partitions);
  }

  private refuseDescriptors(partitions: number): never {
    const d = this.descriptors;
    throw new KafkaError(
      ErrorCode.POLICY_VIOLATION,
      `file descriptor budget exhausted: ${partitions} more partitions need ${partitions * PARTITION_FDS} descriptors, ` +
        `${Math.max(0, d.free)} of ${d.capacity} are free (limit ${d.limit}, ${d.reserved} reserved; ` +
        `${d.holding('partitions')} held by partitions, ${d.holding('connections')} by connections)`,
    );
  }

  private liveIds(): number[] {
    return this.view.brokers().map((b) => b.id);
  }

  /**
   * New partitions' replicas: round robin while the live brokers hold replica counts within one of
   * each other; otherwise the least-loaded first (placeBalanced), so a broker just added takes new
   * partitions before the others and nothing already placed moves (no-move expansion).
   */
  private place(live: readonly number[], from: number, count: number, rf: number): number[][] {
    const loads = new Map<number, { replicas: number; leaders: number }>(live.map((id) => [id, { replicas: 0, leaders: 0 }]));
    for (const t of this.view.topics()) {
      for (let p = 0; p < t.partitions; p++) {
        const record = this.view.partition(t.name, p);
        if (record === undefined) continue;
        for (const id of record.replicas) {
          const load = loads.get(id);
          if (load !== undefined) load.replicas++;
        }
        const leader = loads.get(record.leader);
        if (leader !== undefined) leader.leaders++;
      }
    }
    const counts = [...loads.values()].map((l) => l.replicas);
    if (Math.max(...counts) - Math.min(...counts) <= 1) return placeReplicas(live, from, count, rf);
    const racks = new Map(this.view.brokers().map((b) => [b.id, b.rack]));
    const brokers: PlacementBroker[] = live.map((id) => ({ id, rack: racks.get(id) ?? null, ...loads.get(id)! }));
    return placeBalanced(brokers, count, rf, from);
  }

  private checkCapacity(adding: number): void {
    let total = adding;
    for (const t of this.view.topics()) total += t.partitions;
    // A creation already in the view is counted there.
    for (const [name, c] of this.creating) if (this.view.topic(name) === undefined) total += c.partitions;
    if (total > MAX_PARTITIONS_PER_BROKER) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `broker would host more than ${MAX_PARTITIONS_PER_BROKER} partitions`);
    }
  }
}
