// Tests of the replication bench's lag arithmetic (bench/load/replica_lag.ts): from the replica
// lists of several brokers, per partition the leader's log end minus each follower's, and minus
// the leader's high watermark; other topics, partitions without a leader in the sample and
// followers that answered after the leader (ahead of it) are handled as documented. And the
// sampler's worker thread against two admin endpoints served here: its samples reach stop().
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { ReplicaState } from '../../../src/bench/broker_process.js';
import { LagSampler, replicaLag } from '../../../bench/load/replica_lag.js';

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

test('LagSampler: its worker samples every admin endpoint until stop(), which returns the samples', async (t) => {
  const serve = (actors: ReplicaState[]): Promise<Server> => new Promise((resolve) => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/v1/actors' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify([{ shard: 0, actors }]));
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
  const leader = await serve([replica('t', 0, 'leader', 100, 97)]);
  const follower = await serve([replica('t', 0, 'follower', 96, 90)]);
  t.after(() => {
    leader.close();
    follower.close();
  });
  const port = (s: Server): number => (s.address() as AddressInfo).port;
  const sampler = new LagSampler([{ adminPort: port(leader) }, { adminPort: port(follower) }], 't', 10);
  sampler.start(0);
  await new Promise((r) => setTimeout(r, 300));
  const got = await sampler.stop();
  assert.ok(got.samples >= 3, `samples: ${got.samples}`);
  assert.equal(got.failedSamples, 0);
  assert.deepEqual(new Set(got.followerLag), new Set([4]));
  assert.deepEqual(new Set(got.hwLag), new Set([3]));
  assert.equal(got.followerLag.length, got.samples);
});
