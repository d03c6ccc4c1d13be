// The cluster view of a single node, answered from the local topic table: this broker is the
// only live broker and the controller, and it leads every partition (replicas = ISR = [this
// node], epochs 0, as nothing ever changes leadership here). Main thread.
// The metadata quorum replaces this class with one reading its metadata image.
import type { TopicTable } from '../coordinator/topic_table.js';
import type { BrokerEndpoint, ClusterView, PartitionRecord, TopicImage } from './cluster_view.js';

const NONE: readonly number[] = [];

export class LocalClusterView implements ClusterView {
  private self: BrokerEndpoint;
  /** Every partition's replicas and ISR: shared, so a lookup on the request path allocates only its record. */
  private readonly onlySelf: readonly number[];

  constructor(
    readonly clusterId: string,
    self: BrokerEndpoint,
    private readonly table: TopicTable,
  ) {
    this.self = self;
    this.onlySelf = [self.id];
  }

  /** The listener's port is known only once bound (the configured one may be 0). */
  setAdvertisedPort(port: number): void {
    this.self = { ...this.self, port };
  }

  get localId(): number {
    return this.self.id;
  }

  get revision(): number {
    return this.table.revision;
  }

  brokers(): readonly BrokerEndpoint[] {
    return [this.self];
  }

  controllerId(): number {
    return this.self.id;
  }

  topics(): Iterable<TopicImage> {
    return this.table.all();
  }

  topic(name: string): TopicImage | undefined {
    return this.table.get(name);
  }

  topicById(id: string): TopicImage | undefined {
    return this.table.getById(id);
  }

  partition(topic: string, partition: number): PartitionRecord | undefined {
    const t = this.table.get(topic);
    if (t === undefined || !Number.isInteger(partition) || partition < 0 || partition >= t.partitions) return undefined;
    const only = this.onlySelf;
    return { topicId: t.id, partition, replicas: only, isr: only, removingReplicas: NONE, addingReplicas: NONE, leader: this.self.id, leaderEpoch: 0, partitionEpoch: 0 };
  }
}
