// What a request handler may use: the broker's owners on the main thread. Handlers reach
// partition state only through the router (rings to the owning shard), never directly.
import type { PartitionRouter } from '../actors/partition_router.js';
import type { BrokerConfig } from '../config.js';
import type { GroupDirectory } from '../actors/group_directory.js';
import type { ProducerIdAllocator } from '../coordinator/producer_ids.js';
import type { TopicManager } from '../actors/topic_manager.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import type { SegmentReader } from './segment_reader.js';

export interface BrokerContext {
  readonly config: BrokerConfig;
  readonly nodeId: number;
  readonly clusterId: string;
  readonly advertisedHost: string;
  /** Set once the listener is bound (the configured port may be 0). */
  advertisedPort: number;
  readonly topics: TopicManager;
  readonly router: PartitionRouter;
  readonly segments: SegmentReader;
  readonly producerIds: ProducerIdAllocator;
  readonly groups: GroupDirectory;
  readonly metrics: BrokerMetrics;
}
