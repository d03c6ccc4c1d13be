// The leader side of KIP-73 replication throttling on this broker (main thread, the only owner
// of the leader quota): a follower's fetch of a partition counts against
// `leader.replication.throttled.rate` when the topic's `leader.replication.throttled.replicas`
// lists (partition, follower) and the follower is not in the ISR; in-sync followers are never
// throttled. While the quota is exceeded such partitions are asked of the shard with no byte
// budget, so they answer no records (and do not end the fetch's wait, as Kafka's delayed fetch
// leaves throttled bytes out of min_bytes). The rate follows the metadata image on every fetch.
import { LEADER_THROTTLED_RATE, throttleRate } from '../coordinator/broker_configs.js';
import { ThrottleQuota } from '../coordinator/replication/throttle_quota.js';
import { ThrottledReplicaCache } from '../coordinator/replication/throttled_replicas.js';
import type { ClusterView, TopicImage } from '../cluster/cluster_view.js';

/** Which (partition, follower) pairs a topic's `leader.replication.throttled.replicas` lists: only their fetches can be throttled. */
export class LeaderThrottleLists {
  private readonly lists = new ThrottledReplicaCache('leader.replication.throttled.replicas');

  listed(topic: TopicImage, partition: number, replicaId: number): boolean {
    return this.lists.of(topic.configs).has(partition, replicaId);
  }
}

export class LeaderThrottle {
  private readonly quota = new ThrottleQuota();
  private readonly lists = new LeaderThrottleLists();

  constructor(
    private readonly cluster: ClusterView,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Whether follower `replicaId`'s fetch of this partition is throttled traffic. */
  applies(topic: TopicImage, partition: number, replicaId: number): boolean {
    if (!this.lists.listed(topic, partition, replicaId)) return false;
    return this.cluster.partition(topic.name, partition)?.isr.includes(replicaId) === false;
  }

  /** Whether throttled partitions get nothing in a fetch starting now, with the image's current rate. */
  exceeded(): boolean {
    const { cluster } = this;
    this.quota.setRate(throttleRate(LEADER_THROTTLED_RATE, cluster.brokerConfigs(String(cluster.localId)), cluster.brokerConfigs('')));
    return this.quota.isExceeded(this.clock());
  }

  /** Bytes sent to followers for throttled partitions. */
  record(bytes: number): void {
    this.quota.record(bytes, this.clock());
  }
}
