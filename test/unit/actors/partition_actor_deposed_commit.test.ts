// A leader deposed while its last commit is still in flight becomes a follower whose log end is
// ahead of its durable end; under flush=always such a follower fetches nothing until the two
// meet. When that commit lands, the follower must learn it, or it never fetches again: it is
// neither truncated to the new leader's history nor back in the ISR (seen once in 51 rounds of
// the SIGSTOP-leader fault row: the resumed old leader kept its unreplicated epoch-0 tail).
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { DeadlineWheel } from '../../../src/actors/deadline_wheel.js';
import { PartitionActor, type ActorPorts, type Expirable } from '../../../src/actors/partition_actor.js';
import type { ProduceResult } from '../../../src/actors/ring_messages.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { TEST_BROKER_ID, TEST_TOPIC_ID, testReplicaContext } from '../../helpers/replica_roles.js';
import { batchOf, logConfig, openHarness, type LogHarness } from '../log/log_fixture.js';

let h: LogHarness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const NEW_LEADER = TEST_BROKER_ID + 1;

test('a leader deposed with a commit in flight fetches as a follower once that commit lands', async () => {
  h = openHarness(logConfig(), { kind: 'always' }, undefined, { highWatermark: 'owner' });
  const harness = h;
  const results: ProduceResult[] = [];
  const deadlines = new DeadlineWheel<Expirable>(10, (e) => e.expire(performance.now()), { now: () => performance.now(), after: () => () => undefined });
  const ports: ActorPorts = {
    committer: harness.committer,
    deadlines,
    sendProduceResult: (r) => results.push(r),
    fetchMayProceed: () => undefined,
    sendAlterPartition: () => undefined,
    followingChanged: () => undefined,
  };
  const actor = new PartitionActor(0, 'deposed', 0, harness.log, logConfig(), ports, testReplicaContext());
  const replicas = [TEST_BROKER_ID, NEW_LEADER];
  actor.setRole({ kind: 'leader', topicId: TEST_TOPIC_ID, leaderEpoch: 0, partitionEpoch: 0, replicas, isr: replicas, minInsyncReplicas: 1 });

  // The commit of this produce is held (a paused process, a slow disk) while the leadership moves.
  harness.io.hold();
  actor.produce(0, { reqId: 1, slot: 0, handle: 0, acks: 1, timeoutMs: 5_000, leaderEpoch: 0 }, batchOf(3, 10), () => undefined);
  actor.setRole({ kind: 'follower', topicId: TEST_TOPIC_ID, leaderId: NEW_LEADER, leaderEpoch: 1, throttled: false });
  assert.equal(actor.fetchPosition(performance.now()), null, 'nothing is fetched while the log end is not durable');

  harness.io.release();
  const deadline = Date.now() + 5_000;
  while (results.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.NONE], 'the produce\'s commit landed');
  const position = actor.fetchPosition(performance.now());
  assert.ok(position !== null, 'the follower fetches once its log is durable');
  assert.equal(position.fetchOffset, 3);
  assert.equal(position.lastFetchedEpoch, 0);
  assert.equal(position.currentLeaderEpoch, 1);
});
