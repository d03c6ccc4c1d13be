// The shard's drain loop yields its thread while its inbound ring stays full: other macrotasks
// (commit completions, timers, fetch deadlines) must not wait for the whole backlog.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Shard } from '../../../src/actors/shard.js';
import { SpscRing } from '../../../src/actors/ring_buffer.js';
import { RingDoorbell } from '../../../src/actors/ring_doorbell.js';
import { produceMessageBytes, writeProduce } from '../../../src/actors/ring_messages.js';
import { coordinatorDeps } from '../../../src/coordinator/groups/coordinator_deps.js';
import { DEFAULT_GROUP_CONFIG } from '../../../src/coordinator/groups/group_api.js';
import { MAX_CLOSES_IN_FLIGHT } from '../../../src/log/clean_close.js';
import { batchOf, logConfig, removeDir, tempDir, testIoBackend } from '../log/log_fixture.js';
import { SOLE_BROKER, TEST_BROKER_ID, soleLeader, testShardReplication } from '../../helpers/replica_roles.js';

const MESSAGES = 20_000;
const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

describe('Shard drain loop', () => {
  it('lets a timer run before a backlog of produce messages is drained', async () => {
    // This test plays main's side of both rings with the same objects the shard uses.
    const inbound = new SpscRing(SpscRing.allocate(16 << 20), RingDoorbell.loopback());
    const outbound = new SpscRing(SpscRing.allocate(16 << 20), RingDoorbell.loopback());
    const errors: unknown[] = [];
    const shard = new Shard(0, inbound, outbound, testIoBackend(), { kind: 'never' }, (_msg, err) => errors.push(err), {
      offsetsTopic: '__consumer_offsets',
      deps: () => coordinatorDeps(DEFAULT_GROUP_CONFIG),
      rebalanced: () => undefined,
      badRecord: () => undefined,
    }, testShardReplication());
    const dir = tempDir();
    dirs.push(dir);
    shard.openPartition(1, 't', 0, dir, logConfig());
    shard.setBrokers(TEST_BROKER_ID, SOLE_BROKER);
    shard.setRoles([{ handle: 1, role: soleLeader() }]);
    const batch = batchOf(1, 20);
    for (let i = 0; i < MESSAGES; i++) {
      const at = inbound.reserve(produceMessageBytes(batch.length));
      assert.ok(at >= 0, 'inbound ring too small for the backlog');
      inbound.publish(writeProduce(inbound.bytes, at, { reqId: i, slot: 0, handle: 1, acks: 1, timeoutMs: 30_000, leaderEpoch: 0 }, batch));
    }
    let handledAtTimer = -1;
    const timer = new Promise<void>((resolve) => setTimeout(() => {
      handledAtTimer = shard.introspect().handled;
      resolve();
    }, 0));
    // Doorbell waits do not hold the loop (in the broker the worker's control port does).
    const keepAlive = setInterval(() => undefined, 1000);
    const running = shard.run();
    await timer;
    // Drain the results so the outbound ring never fills, then stop once everything was handled.
    while (shard.introspect().handled < MESSAGES) {
      for (let off = outbound.peek(); off >= 0; off = outbound.peek()) outbound.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await shard.shutdown(MAX_CLOSES_IN_FLIGHT);
    // An empty message wakes run() so it sees it was stopped (it is not dispatched).
    assert.ok(inbound.reserve(0) >= 0);
    inbound.publish();
    await running;
    clearInterval(keepAlive);
    assert.deepEqual(errors, []);
    assert.ok(handledAtTimer > 0 && handledAtTimer < MESSAGES, `timer ran after ${handledAtTimer} of ${MESSAGES} messages`);
  });
});
