// awaitReplicated (the group coordinator's acks=all wait on its own appends) settles on the
// commit it follows, not on a replica tick: the shard no longer ticks a lone leader (issue 16),
// and a single node's offset commits must not wait out REPLICATION_TIMEOUT_MS for one.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { DeadlineWheel } from '../../../src/actors/deadline_wheel.js';
import { PartitionActor, type ActorPorts, type Expirable } from '../../../src/actors/partition_actor.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { soleLeader, testReplicaContext } from '../../helpers/replica_roles.js';
import { batchOf, logConfig, openHarness, type LogHarness } from '../log/log_fixture.js';

let h: LogHarness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

function ports(harness: LogHarness, deadlines: DeadlineWheel<Expirable>): ActorPorts {
  return {
    committer: harness.committer,
    deadlines,
    sendProduceResult: () => assert.fail('no produce requests here'),
    fetchMayProceed: () => undefined,
    sendAlterPartition: () => assert.fail('a lone leader proposes no ISR change'),
    followingChanged: () => undefined,
  };
}

test('a lone leader\'s own committed append is replicated at once, with no replica tick', async () => {
  // As the shard opens partitions: the high watermark moves only as the replication leader says.
  h = openHarness(logConfig(), { kind: 'always' }, undefined, { highWatermark: 'owner' });
  // A wheel whose timer never fires: nothing here may settle by a deadline.
  const deadlines = new DeadlineWheel<Expirable>(10, (e) => e.expire(performance.now()), { now: () => performance.now(), after: () => () => undefined });
  const actor = new PartitionActor(0, '__consumer_offsets', 0, h.log, logConfig(), ports(h, deadlines), testReplicaContext());
  actor.setRole(soleLeader());
  for (let round = 1; round <= 3; round++) {
    const appended = actor.append(batchOf(2, 10));
    assert.equal(appended.kind, 'appended');
    if (appended.kind !== 'appended') return;
    await h.committer.commit(h.log);
    const started = performance.now();
    // No tick() anywhere: the wait must settle on what the commit made durable.
    const code = await actor.awaitReplicated(appended.lastOffset + 1, 5_000);
    assert.equal(code, ErrorCode.NONE);
    assert.ok(performance.now() - started < 1_000, `round ${round}: replicated after ${Math.round(performance.now() - started)} ms`);
    assert.equal(h.log.highWatermark, appended.lastOffset + 1);
  }
});
