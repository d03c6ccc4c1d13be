// The shard worker parks its replica tick while no partition needs it (issue 16: an idle broker's
// wake-ups): tickReplicas says whether any leader still changes with time. A lone leader does not;
// a leader with a follower does, and its tick alone still takes a silent follower out of the ISR.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Shard, type ShardEvent } from '../../../src/actors/shard.js';
import { SpscRing } from '../../../src/actors/ring_buffer.js';
import { RingDoorbell } from '../../../src/actors/ring_doorbell.js';
import { coordinatorDeps } from '../../../src/coordinator/groups/coordinator_deps.js';
import { DEFAULT_GROUP_CONFIG } from '../../../src/coordinator/groups/group_api.js';
import { MAX_CLOSES_IN_FLIGHT } from '../../../src/log/clean_close.js';
import type { PartitionRole, ReplicaBrokerInfo } from '../../../src/coordinator/replication/types.js';
import { logConfig, removeDir, tempDir, testIoBackend } from '../log/log_fixture.js';
import { NO_FETCHING, TEST_BROKER_ID, TEST_REPLICATION_SETTINGS, TEST_TOPIC_ID, soleLeader } from '../../helpers/replica_roles.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const FOLLOWER = TEST_BROKER_ID + 1;
const TWO_BROKERS: readonly ReplicaBrokerInfo[] = [
  { id: TEST_BROKER_ID, epoch: 1, isrEligible: true, endpoint: null },
  { id: FOLLOWER, epoch: 1, isrEligible: true, endpoint: null },
];

function leaderWithFollower(): PartitionRole {
  return { kind: 'leader', topicId: TEST_TOPIC_ID, leaderEpoch: 1, partitionEpoch: 1, replicas: [TEST_BROKER_ID, FOLLOWER], isr: [TEST_BROKER_ID, FOLLOWER], minInsyncReplicas: 1 };
}

function shardWithOnePartition(events: ShardEvent[]): Shard {
  const ring = (): SpscRing => new SpscRing(SpscRing.allocate(1 << 20), RingDoorbell.loopback());
  const shard = new Shard(0, ring(), ring(), testIoBackend(), { kind: 'never' }, () => undefined, {
    offsetsTopic: '__consumer_offsets',
    deps: () => coordinatorDeps(DEFAULT_GROUP_CONFIG),
    rebalanced: () => undefined,
    badRecord: () => undefined,
  }, { settings: { ...TEST_REPLICATION_SETTINGS, replicaLagTimeMaxMs: 50 }, fetching: NO_FETCHING, events: (e) => events.push(e) });
  const dir = tempDir();
  dirs.push(dir);
  shard.openPartition(1, 't', 0, dir, logConfig());
  return shard;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Shard replica ticks', () => {
  it('a shard with no partitions, or only lone leaders, needs no ticks; a leader with a follower does until it leads alone', async () => {
    const events: ShardEvent[] = [];
    const shard = shardWithOnePartition(events);
    try {
      assert.equal(shard.tickReplicas(), false, 'a partition without a role');
      shard.setBrokers(TEST_BROKER_ID, TWO_BROKERS);
      shard.setRoles([{ handle: 1, role: soleLeader() }]);
      assert.equal(shard.tickReplicas(), false, 'a lone leader: nothing for time to change');
      shard.setRoles([{ handle: 1, role: leaderWithFollower() }]);
      assert.equal(shard.tickReplicas(), true);
      // The follower never fetches: past the lag time a tick alone proposes its removal.
      await sleep(80);
      assert.equal(shard.tickReplicas(), true);
      const proposals = events.filter((e) => e.kind === 'alterPartition');
      assert.equal(proposals.length, 1, `events: ${JSON.stringify(events.map((e) => e.kind))}`);
      shard.setRoles([{ handle: 1, role: soleLeader(2) }]);
      assert.equal(shard.tickReplicas(), false, 'the replica set shrank to this broker alone');
    } finally {
      await shard.shutdown(MAX_CLOSES_IN_FLIGHT);
    }
  });
});
