// Tests of the replication bench's lag arithmetic (bench/load/replica_lag.ts): from the replica
// lists of several brokers, per partition the leader's log end minus each follower's, and minus
// the leader's high watermark; other topics, partitions without a leader in the sample and
// followers that answered after the leader (ahead of it) are handled as documented.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReplicaState } from '../../../src/bench/broker_process.js';
import { replicaLag } from '../../../bench/load/replica_lag.js';

const replica = (topic: string, partition: number, role: string, logEndOffset: number, highWatermark: number): ReplicaState =>
  ({ topic, partition, role, logEndOffset, highWatermark });

test('replicaLag: each follower against its own partition leader, and the leader against its high watermark', () => {
  const broker1 = [replica('t', 0, 'leader', 100, 90), replica('t', 1, 'follower', 40, 40), replica('other', 0, 'leader', 1000, 0)];
  const broker2 = [replica('t', 0, 'follower', 95, 90), replica('t', 1, 'leader', 50, 45), replica('other', 0, 'follower', 0, 0)];
  const broker3 = [replica('t', 0, 'follower', 100, 90), replica('t', 1, 'follower', 48, 45)];
  const lag = replicaLag([broker1, broker2, broker3], 't');
  assert.deepEqual(lag.followerLag, [5, 0, 10, 2]);
  assert.deepEqual(lag.hwLag, [10, 5]);
});

test('replicaLag: a follower sampled after the leader (ahead of it) counts 0; a partition without its leader in the sample counts nothing', () => {
  const lag = replicaLag([[replica('t', 0, 'leader', 100, 100)], [replica('t', 0, 'follower', 104, 100), replica('t', 1, 'follower', 7, 7)]], 't');
  assert.deepEqual(lag.followerLag, [0]);
  assert.deepEqual(lag.hwLag, [0]);
});
