// Test helper: a broker child process's /v1/health `placedRequests`, the requests its shards
// served for their placed connections and those they forwarded to main, per shard
// (--connection-placement shards). Shards report once a second, so counts lag by up to that.
import assert from 'node:assert/strict';
import { sleep, type BrokerProcess } from './broker_process.js';

export interface PlacedRequests {
  served: number[];
  forwarded: number[];
}

export async function placedRequests(broker: BrokerProcess): Promise<PlacedRequests> {
  const res = await fetch(`http://127.0.0.1:${broker.adminPort}/v1/health`, { signal: AbortSignal.timeout(5000) });
  const health = (await res.json()) as { placedRequests: PlacedRequests | null };
  assert.ok(health.placedRequests !== null, 'the broker places connections');
  return health.placedRequests;
}

export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Polls (bounded: shards report once a second) until the shards served at least `want` requests; the last counts seen. */
export async function waitServed(broker: BrokerProcess, want: number, timeoutMs = 5000): Promise<PlacedRequests> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await placedRequests(broker);
    if (sum(r.served) >= want || Date.now() >= deadline) return r;
    await sleep(100);
  }
}
