// Failover help for followers (recent_leaderships.ts and PartitionRouter.leadershipBegan): a new
// leadership answers its followers' parked Fetches at once, and for a while shortens the wait of a
// follower's Fetch that leaves the new partition out, and nothing else's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PartitionRouter } from '../../../src/actors/partition_router.js';
import { CATCH_UP_FETCH_WAIT_MS, RECENT_LEADERSHIP_WINDOW_MS, RecentLeaderships } from '../../../src/actors/recent_leaderships.js';
import type { FetchAsk } from '../../../src/actors/ring_messages.js';
import type { ShardPort } from '../../../src/actors/shard_port.js';
import { ShardTable } from '../../../src/actors/shard_table.js';

test('a follower Fetch leaving out a partition it replicates, led here lately, waits briefly; others wait as asked', () => {
  const r = new RecentLeaderships();
  r.began(7, [2, 3], 1_000);
  assert.equal(r.maxWaitFor(2, new Set([1, 2]), 500, 1_010), CATCH_UP_FETCH_WAIT_MS, 'follower 2 has not asked for 7 yet');
  assert.equal(r.maxWaitFor(2, new Set([7]), 500, 1_010), 500, 'it asks for it');
  assert.equal(r.maxWaitFor(4, new Set([1]), 500, 1_010), 500, 'broker 4 does not replicate 7');
  assert.equal(r.maxWaitFor(-1, new Set([1]), 500, 1_010), 500, 'a consumer');
  assert.equal(r.maxWaitFor(3, new Set([1]), 500, 1_000 + RECENT_LEADERSHIP_WINDOW_MS), 500, 'past the window');
  assert.equal(r.size, 0, 'expired entries are dropped');
  r.began(8, [3], 5_000);
  r.ended(8);
  assert.equal(r.maxWaitFor(3, new Set(), 500, 5_001), 500, 'a leadership that ended');
});

test('property: the wait is never longer than asked, and short only for a live entry the fetch omits and the follower replicates', () => {
  const entry = fc.record({ handle: fc.integer({ min: 0, max: 20 }), followers: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }), at: fc.integer({ min: 0, max: 10_000 }) });
  fc.assert(fc.property(fc.array(entry, { maxLength: 12 }), fc.integer({ min: 1, max: 5 }), fc.uniqueArray(fc.integer({ min: 0, max: 20 })), fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 20_000 }),
    (entries, replicaId, asked, maxWait, after) => {
      const sorted = [...entries].sort((a, b) => a.at - b.at);
      const r = new RecentLeaderships();
      const live = new Map<number, { followers: number[]; at: number }>();
      for (const e of sorted) {
        r.began(e.handle, e.followers, e.at);
        live.set(e.handle, e);
      }
      const now = (sorted[sorted.length - 1]?.at ?? 0) + after;
      const got = r.maxWaitFor(replicaId, new Set(asked), maxWait, now);
      const expectShort = maxWait > CATCH_UP_FETCH_WAIT_MS && [...live].some(([h, e]) => now - e.at < RECENT_LEADERSHIP_WINDOW_MS && !asked.includes(h) && e.followers.includes(replicaId));
      assert.ok(got <= maxWait);
      assert.equal(got, expectShort ? CATCH_UP_FETCH_WAIT_MS : maxWait);
    }));
});

test('the router answers the parked Fetches of a new leadership\'s followers at once, and only theirs', () => {
  const table = new ShardTable(1);
  const a = table.reserve();
  table.publish('t', 0, a.handle, a.shard);
  const router = new PartitionRouter(table);
  const asks: FetchAsk[] = [];
  const released: number[] = [];
  const host = { fetch: (ask: FetchAsk) => asks.push(ask) > 0, release: (reqId: number) => released.push(reqId) };
  router.attach([host] as unknown as ShardPort[]);
  const item = { handle: a.handle, fetchOffset: 0, partitionMaxBytes: 1 << 20, lastFetchedEpoch: -1, currentLeaderEpoch: -1, logStartOffset: 0 };
  void router.fetch([item], 500, 1, 1 << 20, { replicaId: 2, replicaEpoch: 1 });
  void router.fetch([item], 500, 1, 1 << 20, { replicaId: 3, replicaEpoch: 1 });
  void router.fetch([item], 500, 1, 1 << 20);
  const [f2, f3, consumer] = asks;
  router.leadershipBegan(99, [3]);
  assert.deepEqual(released, [f3!.reqId], 'only follower 3\'s parked Fetch');
  assert.notEqual(consumer, undefined);
  void router.fetch([item], 500, 1, 1 << 20, { replicaId: 3, replicaEpoch: 1 });
  assert.equal(asks[3]!.maxWaitMs, CATCH_UP_FETCH_WAIT_MS, 'its next Fetch, still without partition 99, waits briefly');
  void router.fetch([item], 500, 1, 1 << 20, { replicaId: 2, replicaEpoch: 1 });
  assert.equal(asks[4]!.maxWaitMs, 500, 'follower 2 does not replicate 99');
  assert.equal(f2!.maxWaitMs, 500);
});
