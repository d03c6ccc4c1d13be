// Topic lifecycle on a single node: create, auto-create, add partitions, delete, and opening
// every partition's actor at startup. Main thread only. It orders the two owners involved:
// the topic table records intent durably first, then each partition's actor is opened on its
// shard, and only then is the partition routable (ShardTable.publish).
import { join } from 'node:path';
import type { PartitionRouter } from './partition_router.js';
import type { ShardTable } from './shard_table.js';
import type { BrokerConfig } from '../config.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { toLogConfig, validateTopicConfigs } from '../coordinator/topic_configs.js';
import { validateTopicName, type TopicRecord, type TopicTable } from '../coordinator/topic_table.js';

/** Topics the broker writes itself: clients may read them but never produce to or delete them. */
export const OFFSETS_TOPIC = '__consumer_offsets';

export function isInternalTopic(name: string): boolean {
  return name === OFFSETS_TOPIC;
}

/** Bound on partitions one broker hosts: every partition costs an actor, files and index memory. */
export const PARTITIONS_PER_BROKER_MAX = 100_000;

export class TopicManager {
  private readonly creating = new Map<string, Promise<TopicRecord>>();
  private partitionCount = 0;
  /** Called after every change of names, ids or partition counts (group coordinators follow topics). */
  onChange: () => void = () => {};

  constructor(
    private readonly config: BrokerConfig,
    readonly table: TopicTable,
    private readonly shards: ShardTable,
    private readonly router: PartitionRouter,
    private readonly onDirRemoved: (dir: string) => void,
  ) {}

  partitionDir(topic: string, partition: number): string {
    return join(this.config.dataDir, `${topic}-${partition}`);
  }

  async openAll(): Promise<void> {
    const opens: Promise<void>[] = [];
    for (const t of this.table.all()) {
      for (let p = 0; p < t.partitions; p++) opens.push(this.openPartition(t, p));
    }
    await Promise.all(opens);
  }

  /** Handle of an open partition, or -1. */
  handle(topic: string, partition: number): number {
    return this.shards.handleOf(topic, partition);
  }

  /** True once every partition of the topic is routable. */
  ready(t: TopicRecord): boolean {
    return this.shards.openCount(t.name) === t.partitions;
  }

  /** Creates an internal topic with configs the broker chose (not subject to client-facing validation). */
  async createInternal(name: string, partitions: number, configs: Record<string, string>): Promise<TopicRecord> {
    return this.table.get(name) ?? this.doCreate(name, partitions, configs);
  }

  async create(name: string, partitions: number, replicationFactor: number, configs: Record<string, string>, validateOnly = false): Promise<TopicRecord> {
    validateTopicName(name);
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `partition count must be at least 1, got ${partitions}`);
    }
    if (replicationFactor !== 1) {
      throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor must be 1 on a single node, got ${replicationFactor}`);
    }
    validateTopicConfigs(configs, this.config);
    this.checkCapacity(partitions);
    if (this.table.get(name) || this.creating.has(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic '${name}' already exists`);
    if (validateOnly) return { name, id: '0'.repeat(32), partitions, configs };
    const pending = this.doCreate(name, partitions, configs);
    this.creating.set(name, pending);
    try {
      return await pending;
    } finally {
      this.creating.delete(name);
    }
  }

  /** Auto-creation on Metadata/Produce: concurrent callers share one creation. */
  async ensure(name: string): Promise<TopicRecord> {
    const existing = this.table.get(name);
    if (existing) return existing;
    const inFlight = this.creating.get(name);
    if (inFlight) return inFlight;
    return this.create(name, this.config.numPartitions, 1, {});
  }

  async addPartitions(name: string, total: number, validateOnly = false): Promise<void> {
    const t = this.table.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${name}'`);
    if (isInternalTopic(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `the partition count of internal topic '${name}' is fixed: groups are placed by it`);
    if (!Number.isInteger(total) || total <= t.partitions) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `topic '${name}' has ${t.partitions} partitions; new count ${total} must be larger`);
    }
    this.checkCapacity(total - t.partitions);
    if (validateOnly) return;
    const from = t.partitions;
    await this.table.setPartitionCount(name, total);
    const opens: Promise<void>[] = [];
    for (let p = from; p < total; p++) opens.push(this.openPartition(t, p));
    await Promise.all(opens);
    this.onChange();
  }

  async delete(name: string): Promise<TopicRecord> {
    const t = this.table.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${name}'`);
    if (isInternalTopic(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `internal topic '${name}' cannot be deleted`);
    await this.table.delete(name);
    const removed = this.shards.removeTopic(name);
    this.partitionCount -= removed.length;
    await Promise.all(removed.map((r) => this.router.host(r.shard).control.closePartition(r.handle, true)));
    for (const r of removed) this.onDirRemoved(this.partitionDir(name, r.partition));
    this.onChange();
    return t;
  }

  async updateConfigs(t: TopicRecord): Promise<void> {
    const logConfig = toLogConfig(t.configs, this.config);
    const updates: Promise<void>[] = [];
    for (let p = 0; p < t.partitions; p++) {
      const handle = this.shards.handleOf(t.name, p);
      if (handle >= 0) updates.push(this.router.host(this.shards.shardOf(handle)).control.updateConfig(handle, logConfig));
    }
    await Promise.all(updates);
  }

  private async doCreate(name: string, partitions: number, configs: Record<string, string>): Promise<TopicRecord> {
    const t = await this.table.create(name, partitions, configs);
    await Promise.all(Array.from({ length: partitions }, (_, p) => this.openPartition(t, p)));
    this.onChange();
    return t;
  }

  private checkCapacity(adding: number): void {
    if (this.partitionCount + adding > PARTITIONS_PER_BROKER_MAX) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `broker would host more than ${PARTITIONS_PER_BROKER_MAX} partitions`);
    }
  }

  private async openPartition(t: TopicRecord, partition: number): Promise<void> {
    const { handle, shard } = this.shards.reserve();
    this.partitionCount++;
    try {
      await this.router.host(shard).control.openPartition(handle, t.name, partition, this.partitionDir(t.name, partition), toLogConfig(t.configs, this.config));
    } catch (err) {
      this.shards.unreserve(shard);
      this.partitionCount--;
      throw err;
    }
    this.shards.publish(t.name, partition, handle, shard);
  }
}
