// Where topic changes are proposed: the front end (CreateTopics, CreatePartitions, DeleteTopics,
// auto-creation) validates a change and hands it to a MetadataStore, which makes it durable and
// says at which view revision it shows. Opening and closing partitions is not its business: the
// reconciler follows the view. Main thread.
// Today the store is the local topic table; the metadata quorum's controller takes its place.
import type { TopicTable } from '../coordinator/topic_table.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { TopicImage } from './cluster_view.js';

/** Replica lists of consecutive partitions, each list's first broker the preferred leader. */
export type ReplicaAssignment = readonly (readonly number[])[];

export type TopicChange =
  | { readonly kind: 'createTopic'; readonly name: string; readonly configs: Readonly<Record<string, string>>; readonly assignment: ReplicaAssignment }
  /** Adds partitions after the topic's last one, one per assignment entry. */
  | { readonly kind: 'createPartitions'; readonly name: string; readonly assignment: ReplicaAssignment }
  | { readonly kind: 'deleteTopic'; readonly name: string };

export interface Committed {
  /** The view revision from which the change is visible. */
  readonly revision: number;
  /** The topic as created or grown, or as it was before deletion. */
  readonly topic: TopicImage;
}

export interface MetadataStore {
  /** Resolves once the change is durable; rejects with a KafkaError when it cannot be applied. */
  propose(change: TopicChange): Promise<Committed>;
}

/** The single-node store: the topic table, which can only place replicas on this node. */
export class LocalMetadataStore implements MetadataStore {
  constructor(
    private readonly table: TopicTable,
    private readonly localId: number,
  ) {}

  async propose(change: TopicChange): Promise<Committed> {
    switch (change.kind) {
      case 'createTopic': {
        this.checkLocal(change.assignment);
        const topic = await this.table.create(change.name, change.assignment.length, { ...change.configs });
        return { revision: this.table.revision, topic };
      }
      case 'createPartitions': {
        this.checkLocal(change.assignment);
        const t = this.table.get(change.name);
        if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${change.name}'`);
        await this.table.setPartitionCount(change.name, t.partitions + change.assignment.length);
        return { revision: this.table.revision, topic: t };
      }
      case 'deleteTopic': {
        const topic = await this.table.delete(change.name);
        return { revision: this.table.revision, topic };
      }
    }
  }

  private checkLocal(assignment: ReplicaAssignment): void {
    if (assignment.some((replicas) => replicas.length !== 1 || replicas[0] !== this.localId)) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `replicas must be exactly [${this.localId}] until the cluster has a metadata quorum`);
    }
  }
}
