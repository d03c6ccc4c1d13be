// Replication roles and contexts for tests that drive shards and partition actors directly: a
// broker that leads its partitions alone (RF 1), as a single node does, unless a test says more.
import type { ReplicaContext } from '../../src/actors/partition_actor.js';
import type { FollowerFetching, ShardEvent, ShardReplication } from '../../src/actors/shard.js';
import type { PartitionRole, ReplicaBrokerInfo } from '../../src/coordinator/replication/types.js';

export const TEST_BROKER_ID = 1;
export const TEST_TOPIC_ID = 'ab'.repeat(16);

export const TEST_REPLICATION_SETTINGS: ReplicaContext['settings'] = {
  replicaLagTimeMaxMs: 10_000,
  alterPartitionRetryMs: 500,
  fetchBackoffMs: 100,
  flushAlways: true,
};

/** The only registered broker: this one. */
export const SOLE_BROKER: readonly ReplicaBrokerInfo[] = [{ id: TEST_BROKER_ID, epoch: 1, isrEligible: true, endpoint: null }];

/** This broker leads the partition alone at `leaderEpoch`. */
export function soleLeader(leaderEpoch = 0, topicId = TEST_TOPIC_ID): PartitionRole {
  return { kind: 'leader', topicId, leaderEpoch, partitionEpoch: leaderEpoch, replicas: [TEST_BROKER_ID], isr: [TEST_BROKER_ID], minInsyncReplicas: 1 };
}

export function testReplicaContext(): ReplicaContext {
  return {
    localBrokerId: TEST_BROKER_ID,
    brokers: new Map(SOLE_BROKER.map((b) => [b.id, b])),
    settings: TEST_REPLICATION_SETTINGS,
    now: () => performance.now(),
  };
}

/** Follows nobody: shards under test host leaders only. */
export const NO_FETCHING: FollowerFetching = {
  follow: () => undefined,
  unfollow: () => undefined,
  close: () => Promise.resolve(),
};

export function testShardReplication(events: (e: ShardEvent) => void = () => undefined): ShardReplication {
  return { settings: TEST_REPLICATION_SETTINGS, fetching: NO_FETCHING, events };
}
