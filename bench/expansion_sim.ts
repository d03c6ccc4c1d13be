// Expansion simulation at the requirements' scale (issue 15 item 6): a cluster of `--brokers`
// brokers grown by `--added`, `--partitions` partitions at RF 3, planned by a plan function and run
// by the real executor against modelled brokers (test/sim/expansion/model.ts states the load and
// p99 models). Reports, for the plan and a comparison plan: moves, bytes moved, batches, pauses,
// simulated duration under the byte budget, the simulated p99 against the baseline, and the wall
// time of planning and of the simulation.
// `runExpansionComparison` takes the plans as functions `(input) => { moves, leadershipChanges }`
// so that the real planner and the naive plan plug in; run as a script it uses the stand-ins of
// test/sim/expansion/plans.ts (a sticky fill and Kafka's `--generate` shape).
// Usage: node dist/bench/expansion_sim.js [--brokers 100] [--added 20] [--partitions 1000000]
//        [--batch-gib 64] [--per-broker 8] [--observe-s 10] [--step-ms 5000]
// The step defaults to the 5 s metrics interval here (copies finish on a step; 1 s in the tests).
import type { LeadershipChange, PartitionMove, PlanInput } from '../src/cluster/expansion/model.js';
import { SIM_DEFAULTS, simulateExpansion, type SimOptions, type SimResult } from '../test/sim/expansion/model.js';
import { naiveReassignment, planReassignment } from '../src/cluster/expansion/planner.js';
import { clusterInput } from '../test/sim/expansion/plans.js';

export type PlanFunction = (input: PlanInput) => { readonly moves: readonly PartitionMove[]; readonly leadershipChanges: readonly LeadershipChange[] };

export interface PlanRun {
  readonly name: string;
  readonly planMs: number;
  readonly result: SimResult;
}

export function runExpansionComparison(input: PlanInput, plans: readonly { name: string; plan: PlanFunction }[], options: SimOptions): PlanRun[] {
  return plans.map(({ name, plan }) => {
    const t0 = performance.now();
    const p = plan(input);
    const planMs = performance.now() - t0;
    return { name, planMs, result: simulateExpansion(input, p, options) };
  });
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

function report(runs: readonly PlanRun[], lowerBound: number): void {
  const gib = (b: number): string => (b / 1024 ** 3).toFixed(0);
  const hours = (s: number): string => (s / 3600).toFixed(2);
  console.log(`lower bound on replica moves: ${lowerBound}`);
  console.log('plan         moves  replica moves  x bound  leader-chg  GiB moved  batches  pauses  sim hours  p99 base  p99 max (x)    p99 mean  plan ms  sim wall s  state');
  for (const { name, planMs, result: r } of runs) {
    console.log(
      [
        name.padEnd(11),
        String(r.moves).padStart(7),
        String(r.replicaMoves).padStart(14),
        (r.replicaMoves / Math.max(1, lowerBound)).toFixed(2).padStart(8),
        String(r.leadershipChanges).padStart(10),
        gib(r.bytesMoved).padStart(10),
        String(r.batches).padStart(8),
        String(r.pauses).padStart(7),
        hours(r.simulatedSeconds).padStart(10),
        r.baselineP99Ms.toFixed(2).padStart(9),
        `${r.maxP99Ms.toFixed(2)} (${r.maxP99Ratio.toFixed(2)})`.padStart(13),
        r.meanP99Ms.toFixed(2).padStart(10),
        planMs.toFixed(0).padStart(8),
        (r.wallMs / 1000).toFixed(1).padStart(11),
        ` ${r.state}`,
      ].join(' '),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const brokers = flag('brokers', 100);
  const added = flag('added', 20);
  const partitions = flag('partitions', 1_000_000);
  const t0 = performance.now();
  const input = clusterInput({ brokers, added, partitions, replication: 3, racks: 10, seed: 1, meanSizeBytes: 100e6, meanBytesInPerSec: 10e3 });
  console.log(`input: ${brokers} -> ${brokers + added} brokers, ${partitions} partitions at RF 3 (${((performance.now() - t0) / 1000).toFixed(1)} s to build)`);
  const options: SimOptions = {
    ...SIM_DEFAULTS,
    stepMs: flag('step-ms', 5000),
    executor: { ...SIM_DEFAULTS.executor, batchBytes: flag('batch-gib', 64) * 1024 ** 3, perBrokerMoves: flag('per-broker', 8), observationMs: flag('observe-s', 10) * 1000 },
  };
  const replicas = partitions * 3;
  const runs = runExpansionComparison(input, [{ name: 'planner', plan: (i) => planReassignment(i) }, { name: '--generate', plan: naiveReassignment }], options);
  report(runs, added * Math.floor(replicas / (brokers + added)));
}
