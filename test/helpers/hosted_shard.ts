// One Shard on the test's own thread, run as a worker runs it (its lane 0 ring pair, a drain
// loop), hosting partitions of topic 't' that this broker leads alone. For tests that reach a
// shard through same-thread lanes (LocalShardPort, PlacedServing); the ring pair stays there for
// a test that also plays main on lane 0. Test-only.
import assert from 'node:assert/strict';
import { RingDoorbell } from '../../src/actors/ring_doorbell.js';
import { SpscRing } from '../../src/actors/ring_buffer.js';
import { Shard } from '../../src/actors/shard.js';
import { coordinatorDeps } from '../../src/coordinator/groups/coordinator_deps.js';
import { DEFAULT_GROUP_CONFIG } from '../../src/coordinator/groups/group_api.js';
import { MAX_CLOSES_IN_FLIGHT } from '../../src/log/clean_close.js';
import { logConfig, removeDir, tempDir, testIoBackend } from '../unit/log/log_fixture.js';
import { SOLE_BROKER, TEST_BROKER_ID, soleLeader, testShardReplication } from './replica_roles.js';

export const HOSTED_TOPIC = 't';

export class HostedShard {
  readonly inbound = new SpscRing(SpscRing.allocate(1 << 20), RingDoorbell.loopback());
  readonly outbound = new SpscRing(SpscRing.allocate(1 << 20), RingDoorbell.loopback());
  readonly shard: Shard;
  readonly errors: unknown[] = [];
  readonly dirs: string[] = [];
  private readonly running: Promise<void>;

  constructor(index: number) {
    this.shard = new Shard(index, this.inbound, this.outbound, testIoBackend(), { kind: 'always' }, (_m, err) => this.errors.push(err), {
      offsetsTopic: '__consumer_offsets',
      deps: () => coordinatorDeps(DEFAULT_GROUP_CONFIG),
      rebalanced: () => undefined,
      badRecord: () => undefined,
    }, testShardReplication());
    this.shard.setBrokers(TEST_BROKER_ID, SOLE_BROKER);
    this.running = this.shard.run();
  }

  /** Opens partition `partition` of HOSTED_TOPIC as `handle`, led here at epoch 0, in a fresh directory (returned). */
  open(handle: number, partition: number): string {
    const dir = tempDir();
    this.dirs.push(dir);
    this.shard.openPartition(handle, HOSTED_TOPIC, partition, dir, logConfig());
    this.shard.setRoles([{ handle, role: soleLeader() }]);
    return dir;
  }

  async close(): Promise<void> {
    await this.shard.shutdown(MAX_CLOSES_IN_FLIGHT);
    // An empty message wakes run() so it sees it was stopped.
    assert.ok(this.inbound.reserve(0) >= 0);
    this.inbound.publish();
    await this.running;
    this.dirs.forEach(removeDir);
  }
}
