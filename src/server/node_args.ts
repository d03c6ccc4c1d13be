// The node flags a broker process starts with, for the launchers that start one (the process
// that spawns it, or bin/sluice, which computes the same from nproc and which `npm start` runs):
// V8's helper pool is sized when node starts, before any of the broker's code runs.
import { availableParallelism } from 'node:os';

/** Node's own pool size, whatever the machine. */
const NODE_DEFAULT_POOL = 4;

/**
 * V8's helper pool (concurrent marking and sweeping, parallel scavenges, optimising compiles) for
 * one of `count` brokers sharing this machine: the broker's share of the cores less one, which its
 * own main and shard threads need, between 1 and Node's default of 4. Node's 4 helpers run in
 * bursts that preempt the threads serving clients:
 * - three brokers on two cores ran twelve helpers. In one sitting (RF 3, acks=all, flush always,
 *   1 KiB, two runs per rate and side), a pool of one per broker took e2e p99 from 19.2-24.5 to
 *   18.0-20.4 ms and p99.9 from 34.5-48.9 to 25.3-32.5 ms at 2000 and 10000 msgs/s.
 * - one broker on two cores (librdkafka e2e, 100k msgs/s, acks=1, flush always, 15 s, 7
 *   alternating pairs): p99 5.47 -> 4.53 ms and p99.9 12.3 -> 9.50 ms (medians; 6 of 7 pairs
 *   better on each), at the same CPU per message. `perf sched` showed the four helpers take 142 of
 *   the 300 ms of CPU in one 150 ms window, while the shard's and the client's threads waited up to
 *   10 ms for a core.
 * Machines of five cores or more keep Node's default.
 */
export function brokerNodeArgs(count = 1, cores = availableParallelism()): string[] {
  const pool = Math.min(NODE_DEFAULT_POOL, Math.max(1, Math.floor(cores / count) - 1));
  return [`--v8-pool-size=${pool}`];
}

/** NODE_OPTIONS for a broker process: the inherited ones, plus the pool size unless they set one. */
export function brokerNodeOptions(count = 1, inherited = process.env['NODE_OPTIONS'] ?? ''): string {
  if (inherited.includes('--v8-pool-size')) return inherited;
  return [inherited, ...brokerNodeArgs(count)].filter((o) => o !== '').join(' ');
}
