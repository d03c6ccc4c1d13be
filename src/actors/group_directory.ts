// Main-thread entry to the group coordinators. Every group lives on one partition of
// `__consumer_offsets` (by Kafka's hash of its id), and that partition's coordinator runs on
// the shard owning the partition, on the broker leading it; this directory creates the topic at
// startup, answers NOT_COORDINATOR for groups whose partition another broker leads, sends each
// call to the right coordinator through the router, splits multi-group calls by partition and
// merges their replies, and keeps the shards' view of the topic list current.
// Owns nothing but the partition count of the offsets topic, fixed once created.
import type { PartitionRouter } from './partition_router.js';
import type { BrokerConfig } from '../config.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { errorReply } from '../coordinator/groups/error_reply.js';
import {
  offsetsPartitionFor,
  type ConsumerDescribeCall,
  type DeleteGroupsCall,
  type DescribeCall,
  type GroupCall,
  type ListCall,
  type GroupConfig,
  type GroupReply,
  type TopicInfo,
} from '../coordinator/groups/group_api.js';
import { OFFSETS_TOPIC, type ClusterView } from '../cluster/cluster_view.js';
import type { TopicAdmin } from '../cluster/topic_admin.js';
import type { PartitionLookup } from './partition_reconciler.js';

/**
 * Offsets and group records must outlive any time or size retention: they go only when
 * tombstoned, and the coordinator's rewrites of its live state keep the log compact.
 */
function offsetsTopicConfigs(config: BrokerConfig): Record<string, string> {
  return {
    'retention.ms': '-1',
    'retention.bytes': '-1',
    'segment.bytes': String(config.offsetsTopicSegmentBytes),
    // A classic group's record carries every member's subscription and assignment.
    'max.message.bytes': String(Math.min(16 << 20, config.ringBytes / 2 - 1)),
  };
}

export function groupConfigOf(c: BrokerConfig): GroupConfig {
  return {
    minSessionTimeoutMs: c.groupMinSessionTimeoutMs,
    maxSessionTimeoutMs: c.groupMaxSessionTimeoutMs,
    initialRebalanceDelayMs: c.groupInitialRebalanceDelayMs,
    maxGroupSize: c.groupMaxSize,
    maxGroups: 100_000,
    offsetMetadataMaxBytes: 4096,
    offsetsRetentionMs: c.offsetsRetentionMs,
    consumerHeartbeatIntervalMs: c.groupConsumerHeartbeatIntervalMs,
    consumerSessionTimeoutMs: c.groupConsumerSessionTimeoutMs,
    consumerAssignors: ['uniform', 'range'],
  };
}

export type ReplyOf<K extends GroupReply['kind']> = Extract<GroupReply, { kind: K }>;

/** What request handlers ask of the group coordinators, wherever they run. */
export interface GroupCalls {
  call<C extends GroupCall>(groupId: string, call: C): Promise<ReplyOf<C['kind']>>;
  callByGroup<T extends { groupId: string }>(call: DescribeCall | DeleteGroupsCall | ConsumerDescribeCall, pick: (reply: GroupReply) => T[]): Promise<T[]>;
  list(call: ListCall): Promise<ReplyOf<'list'>['groups']>;
}

export interface GroupDirectoryDeps {
  readonly config: BrokerConfig;
  readonly cluster: ClusterView;
  readonly topics: Pick<TopicAdmin, 'createInternal'>;
  readonly partitions: PartitionLookup;
  readonly router: Pick<PartitionRouter, 'groupCall'>;
}

/** How long the first broker of a cluster waits for enough live brokers to place `__consumer_offsets` on. */
const OFFSETS_TOPIC_PLACEMENT_WAIT_MS = 15_000;
const LIVE_BROKERS_POLL_MS = 50;

export class GroupDirectory implements GroupCalls {
  private partitions = 0;

  constructor(private readonly deps: GroupDirectoryDeps) {}

  /**
   * Creates `__consumer_offsets` on first start; its existing partition count wins afterwards.
   * Its replication factor is fixed at creation, so in a cluster the first broker waits (bounded)
   * until as many brokers as it asks for, or as there are voters, are live: brokers of a new
   * cluster start together, and the first one up would otherwise place every partition on itself.
   */
  async start(): Promise<void> {
    const { config, topics, cluster } = this.deps;
    const wanted = Math.min(config.offsetsTopicReplicationFactor, Math.max(1, config.controllerVoters.length));
    const deadline = performance.now() + OFFSETS_TOPIC_PLACEMENT_WAIT_MS;
    while (cluster.topic(OFFSETS_TOPIC) === undefined && cluster.brokers().length < wanted && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, LIVE_BROKERS_POLL_MS));
    }
    const t = await topics.createInternal(OFFSETS_TOPIC, config.offsetsTopicPartitions, offsetsTopicConfigs(config), config.offsetsTopicReplicationFactor);
    this.partitions = t.partitions;
  }

  /** The shards' topic view, for KIP-848 assignment. */
  topicInfos(): TopicInfo[] {
    return [...this.deps.cluster.topics()].map((t) => ({ name: t.name, id: t.id, partitions: t.partitions }));
  }

  partitionOf(groupId: string): number {
    return offsetsPartitionFor(groupId, this.partitions);
  }

  /** A call about one group, answered by that group's coordinator. */
  async call<C extends GroupCall>(groupId: string, call: C): Promise<ReplyOf<C['kind']>> {
    return (await this.send(this.partitionOf(groupId), call)) as ReplyOf<C['kind']>;
  }

  /** Describe-like calls over many groups: one call per partition, replies in request order. */
  async callByGroup<T extends { groupId: string }>(
    call: DescribeCall | DeleteGroupsCall | ConsumerDescribeCall,
    pick: (reply: GroupReply) => T[],
  ): Promise<T[]> {
    const byPartition = new Map<number, string[]>();
    for (const id of call.groupIds) {
      const p = this.partitionOf(id);
      let ids = byPartition.get(p);
      if (!ids) byPartition.set(p, (ids = []));
      ids.push(id);
    }
    const found = new Map<string, T>();
    await Promise.all([...byPartition].map(async ([p, groupIds]) => {
      for (const g of pick(await this.send(p, { ...call, groupIds }))) found.set(g.groupId, g);
    }));
    return call.groupIds.map((id) => found.get(id)!);
  }

  /** ListGroups: every coordinator's groups. */
  async list(call: ListCall): Promise<ReplyOf<'list'>['groups']> {
    const replies = await Promise.all(Array.from({ length: this.partitions }, (_, p) => this.send(p, call)));
    return replies.flatMap((r) => (r as ReplyOf<'list'>).groups);
  }

  private async send(partition: number, call: GroupCall): Promise<GroupReply> {
    const { cluster, partitions, router } = this.deps;
    // Asked of the wrong broker (the client's coordinator lookup is stale): it looks again.
    if (cluster.partition(OFFSETS_TOPIC, partition)?.leader !== cluster.localId) return errorReply(call, ErrorCode.NOT_COORDINATOR);
    const handle = partitions.handleOf(OFFSETS_TOPIC, partition);
    if (handle < 0) return errorReply(call, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    try {
      return await router.groupCall(handle, call);
    } catch (err) {
      if (err instanceof KafkaError) return errorReply(call, err.code, err.message);
      throw err;
    }
  }
}
