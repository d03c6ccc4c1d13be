// The package's public surface: our Kafka client (producer, consumer, parallel consumer, admin)
// for applications that import `sluice`. The broker itself starts from the CLI (`sluice start`).
// Re-exports only; any thread.
export { Cluster, isStaleCoordinatorError, isStaleMetadataError } from './client/cluster.js';
export type { ClusterOptions, PartitionMetadata, TopicMetadata } from './client/cluster.js';
export type { BackoffOptions } from './protocol/backoff.js';
export { ConnectionError, KafkaConnection } from './client/connection.js';
export { KafkaAdmin } from './client/admin.js';
export * from './client/producer/index.js';
export { Consumer } from './client/consumer/consumer.js';
export { GroupProtocol, OffsetReset } from './client/consumer/types.js';
export type {
  AssignedPartition, CommittedPosition, ConsumerMessage, ConsumerOptions, FetchedBatch, FetchSizeOptions,
  OffsetToCommit, RebalanceListener, TopicPartition,
} from './client/consumer/types.js';
export * from './client/parallel/index.js';
export { ErrorCode, KafkaError, errorName } from './protocol/errors.js';
