// Where topic changes are proposed: the front end (CreateTopics, CreatePartitions, DeleteTopics,
// auto-creation) validates a change and hands it to a MetadataStore, which makes it durable and
// says at which view revision it shows. Opening and closing partitions is not its business: the
// reconciler follows the view. Main thread.
// The store is the metadata quorum's controller (forwarding_store.ts).
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
  /**
   * Resolves once the change is durable; rejects with a KafkaError when it cannot be applied, and
   * with REQUEST_TIMED_OUT when it has not completed within `timeoutMs` (it may still complete
   * later). `timeoutMs` <= 0 starts the change and rejects with REQUEST_TIMED_OUT at once, as
   * Kafka answers a request that asked not to wait; undefined is the store's own default (the
   * broker's auto-creations and internal topics).
   */
  propose(change: TopicChange, timeoutMs?: number): Promise<Committed>;
}
