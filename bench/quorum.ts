// Metadata-quorum bench (issue 13): what a Raft commit costs and how long an election takes.
// 1. Commit latency and throughput with fsync: three MetadataQuorum nodes in this process (real
//    quorum storage with fdatasync in tmp dirs, real TCP transport and controller listeners on
//    loopback: test/unit/actors/quorum/quorum_fixture.ts, whose timers are shortened to a 200 ms
//    election timeout). The leader proposes one-record metadata batches (NoOp) through its
//    QuorumDriver; a commit is counted when the driver resolves the proposal (a majority holds it
//    durably). First one proposal at a time (latency), then `--inflight` at a time for `--seconds`
//    (throughput, and latency under load).
// 2. Election time: three `sluice start` processes with the default timeouts (election 1 s, fetch
//    2 s) from `sluice dev cluster`; kill -9 of the leader, then DescribeQuorum polled on the
//    survivors' controller listeners (every 50 ms) until one of them leads a newer epoch. The
//    killed node is restarted between kills.
// Usage: node dist/bench/quorum.js [--commits N] [--inflight N] [--seconds S] [--kills N] [--skip commit|election]

import { encodeBatch } from '../src/cluster/metadata/records.js';
import { QuorumFixture } from '../test/unit/actors/quorum/quorum_fixture.js';
import { CLUSTER_UNAVAILABLE, ProcessCluster, percentile } from '../test/cluster/process_cluster.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

const skip = ((): string | undefined => {
  const i = process.argv.indexOf('--skip');
  return i < 0 ? undefined : process.argv[i + 1];
})();

const ms = (v: number): string => `${v.toFixed(1)} ms`;
const summary = (values: readonly number[]): string =>
  `n=${values.length} p50=${ms(percentile(values, 50))} p99=${ms(percentile(values, 99))} max=${ms(Math.max(...values))}`;

const NOOP_BATCH = new Uint8Array(encodeBatch([{ type: 'noOp' }]));

async function commitBench(commits: number, inflight: number, seconds: number): Promise<void> {
  const fixture = await QuorumFixture.create({ voters: [1, 2, 3], nodes: [1, 2, 3] });
  try {
    for (const id of [1, 2, 3]) await fixture.start(id);
    const leader = await fixture.waitForLeader();
    const driver = leader.quorum.driver;
    const one = async (): Promise<number> => {
      const t0 = performance.now();
      await driver.propose(NOOP_BATCH);
      return performance.now() - t0;
    };
    for (let i = 0; i < 20; i++) await one(); // warm-up: connections, JIT, segment files
    const sequential: number[] = [];
    for (let i = 0; i < commits; i++) sequential.push(await one());
    console.log(`commit latency, 1 in flight: ${summary(sequential)}`);

    const loaded: number[] = [];
    const until = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(Array.from({ length: inflight }, async () => {
      while (performance.now() < until) loaded.push(await one());
    }));
    const elapsed = (performance.now() - started) / 1000;
    console.log(`commit throughput, ${inflight} in flight for ${seconds} s: ${(loaded.length / elapsed).toFixed(0)} commits/s; latency ${summary(loaded)}`);
    if (fixture.fatal.length > 0) throw new Error(`a quorum node failed: ${String(fixture.fatal[0])}`);
  } finally {
    await fixture.close();
  }
}

async function electionBench(kills: number): Promise<void> {
  if (CLUSTER_UNAVAILABLE !== false) {
    console.log(`election bench skipped: ${CLUSTER_UNAVAILABLE}`);
    return;
  }
  const cluster = await ProcessCluster.start(3);
  try {
    const times: number[] = [];
    for (let k = 0; k < kills; k++) {
      const before = await cluster.waitForLeader(cluster.ids, () => true, 30_000);
      const survivors = cluster.ids.filter((id) => id !== before.leaderId);
      const t0 = performance.now();
      await cluster.kill9(before.leaderId);
      await cluster.waitForLeader(survivors, (q) => q.epoch > before.epoch, 30_000);
      times.push(performance.now() - t0);
      await cluster.restart(before.leaderId);
    }
    console.log(`election after kill -9 of the leader (default timeouts, 3 processes): ${summary(times)} (target p99 < 1000 ms)`);
  } finally {
    await cluster.dispose();
  }
}

async function main(): Promise<void> {
  console.log(`# node ${process.argv.slice(1).join(' ')}`);
  if (skip !== 'commit') await commitBench(flag('commits', 500), flag('inflight', 64), flag('seconds', 3));
  if (skip !== 'election') await electionBench(flag('kills', 20));
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
