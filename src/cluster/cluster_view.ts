// What a broker knows about the cluster, as request handlers and the partition reconciler read
// it: the cluster id, the live brokers, the controller, every topic and, per partition, the
// metadata record naming its replicas, ISR, leader and epochs. Pure types and the few rules
// every reader applies the same way (leadership and leader-epoch checks, group placement).
// Main thread. The metadata quorum's image answers it (metadata/image_view.ts).
import { offsetsPartitionFor } from '../coordinator/groups/group_api.js';
import type { ReplicaBrokerInfo } from '../coordinator/replication/types.js';
import { ErrorCode } from '../protocol/errors.js';

/** A broker as clients reach it (Metadata, DescribeCluster, FindCoordinator, KIP-951 hints). */
export interface BrokerEndpoint {
  readonly id: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

/** A registered broker and its standing (DescribeCluster, `sluice cluster status`). */
export interface BrokerState {
  readonly id: number;
  /** Its client listener; null when it registered none. */
  readonly host: string | null;
  readonly port: number;
  readonly rack: string | null;
  readonly fenced: boolean;
  /** Joined a cluster with topics and not yet warm: it leads only where no warm replica can. */
  readonly warming: boolean;
  /** Its admin HTTP listener (/metrics, /v1/health), host:port; null when it registered none. */
  readonly adminAddress: string | null;
}

/**
 * One partition's replication state, shaped after KRaft's PartitionRecord (and the fields a
 * PartitionChangeRecord updates), so a metadata image can hand these over unchanged.
 * `leaderEpoch` grows with every leader change; `partitionEpoch` with every change at all.
 */
export interface PartitionRecord {
  readonly topicId: string;
  readonly partition: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly addingReplicas: readonly number[];
  /** -1 when the partition has no leader. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
}

/** A topic as the cluster knows it: name, id, partition count and config overrides. */
export interface TopicImage {
  readonly name: string;
  /** 32 hex chars, never all zero. */
  readonly id: string;
  readonly partitions: number;
  readonly configs: Readonly<Record<string, string>>;
}

export interface ClusterView {
  readonly clusterId: string;
  /** This broker's id. */
  readonly localId: number;
  /** Bumped on every change of topics or partitions. */
  readonly revision: number;
  /** Live brokers, ascending by id. */
  brokers(): readonly BrokerEndpoint[];
  /** Every registered broker, fenced ones too, with its epoch and ISR eligibility (partition replication). */
  replicaBrokers(): readonly ReplicaBrokerInfo[];
  /** Every registered broker with its standing, ascending by id. */
  brokerStates(): readonly BrokerState[];
  /** -1 when no controller is known. */
  controllerId(): number;
  topics(): Iterable<TopicImage>;
  topic(name: string): TopicImage | undefined;
  topicById(id: string): TopicImage | undefined;
  /** Undefined when the topic or the partition does not exist. */
  partition(topic: string, partition: number): PartitionRecord | undefined;
  /** The dynamic config overrides of broker `resourceName` (a broker id, or '' for the cluster-wide default). */
  brokerConfigs(resourceName: string): Readonly<Record<string, string>>;
}

/**
 * The part of the view the data-plane handlers (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch)
 * read: on main the whole view, on a shard serving a placed connection the snapshot main keeps
 * there (net/placed_serving.ts).
 */
export type PartitionsView = Pick<ClusterView, 'localId' | 'partition' | 'brokers' | 'topic' | 'topicById'>;

/** Topics the broker writes itself: clients may read them but never produce to or delete them. */
export const OFFSETS_TOPIC = '__consumer_offsets';

export function isInternalTopic(name: string): boolean {
  return name === OFFSETS_TOPIC;
}

export function brokerById(view: Pick<ClusterView, 'brokers'>, id: number): BrokerEndpoint | undefined {
  return view.brokers().find((b) => b.id === id);
}

/**
 * Replicas on brokers that are not live (Metadata's offlineReplicas). `live` is ascending by id
 * (as brokers() gives it), so each lookup is a binary search: an all-topics answer asks once per
 * partition, and a scan of a thousand brokers per replica made that answer 20x slower.
 */
export function offlineReplicas(p: PartitionRecord, live: readonly BrokerEndpoint[]): number[] {
  return p.replicas.filter((r) => !isLive(live, r));
}

function isLive(live: readonly BrokerEndpoint[], id: number): boolean {
  let lo = 0;
  let hi = live.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = live[mid]!.id;
    if (at === id) return true;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Where a group's coordinator lives: the leader of its `__consumer_offsets` partition, or -1. */
export function coordinatorOf(view: ClusterView, groupId: string): number {
  const offsets = view.topic(OFFSETS_TOPIC);
  if (offsets === undefined || offsets.partitions === 0) return -1;
  return view.partition(OFFSETS_TOPIC, offsetsPartitionFor(groupId, offsets.partitions))?.leader ?? -1;
}

/** How this broker stands to a partition a client names. */
export type Leadership =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'leader'; readonly leaderEpoch: number }
  | { readonly kind: 'notLeader'; readonly leaderId: number; readonly leaderEpoch: number };

export function leadershipOf(view: Pick<ClusterView, 'localId' | 'partition'>, topic: string, partition: number): Leadership {
  const p = view.partition(topic, partition);
  if (p === undefined) return { kind: 'unknown' };
  if (p.leader === view.localId) return { kind: 'leader', leaderEpoch: p.leaderEpoch };
  return { kind: 'notLeader', leaderId: p.leader, leaderEpoch: p.leaderEpoch };
}

/**
 * -1: the client did not say which epoch it saw (Fetch v9+, ListOffsets v4+, OffsetForLeaderEpoch
 * v2+ currentLeaderEpoch). Kafka reads every negative value so.
 */
export const NO_EPOCH = -1;

/**
 * Kafka's check of a client's current leader epoch against the leader's: an older one means
 * the client's metadata is stale (FENCED_LEADER_EPOCH, it refreshes), a newer one that this
 * broker has not caught up yet (UNKNOWN_LEADER_EPOCH, it retries).
 */
export function checkLeaderEpoch(requested: number, current: number): ErrorCode {
  if (requested < 0) return ErrorCode.NONE;
  if (requested < current) return ErrorCode.FENCED_LEADER_EPOCH;
  if (requested > current) return ErrorCode.UNKNOWN_LEADER_EPOCH;
  return ErrorCode.NONE;
}

/**
 * Whether a request naming `replicaId` as its sender (Fetch, OffsetForLeaderEpoch) must be refused:
 * an id >= 0 claims to be a follower, which only another replica of the partition is. Negative ids
 * are consumers and tools.
 */
export function isFalseFollower(view: Pick<ClusterView, 'localId' | 'partition'>, topic: string, partition: number, replicaId: number): boolean {
  if (replicaId < 0) return false;
  return replicaId === view.localId || !(view.partition(topic, partition)?.replicas.includes(replicaId) ?? false);
}
