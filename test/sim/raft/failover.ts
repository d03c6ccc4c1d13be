// Failover time of the metadata quorum in the deterministic simulation, in the real driver's
// units: a settled cluster under a steady stream of proposals loses its leader, and the clock runs
// until a new leader has committed its first entry (its epoch's leaderChange, after which the
// controller can act). Timers are the quorum driver's (QUORUM_DEFAULTS: 10 ms ticks, election
// timeout 1 s, fetch timeout 2 s); links are loopback-like with jitter, fsyncs take a while, and
// event loops stall now and then as on busy shared cores. Two kinds of crash: `reset`, where each
// survivor's transport sees the connection reset after whatever the dead process had already sent
// it (TCP's order), and every later connection refused (a process killed on a live host), and
// `silent`, where nothing tells them (a host lost). `failover_report.ts` prints the distribution
// and the slow seeds' events. Tests only, one thread.
import { QUORUM_DEFAULTS } from '../../../src/actors/quorum/quorum_driver.js';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import { percentile } from '../../cluster/process_cluster.js';
import { drawFaults, type FaultPlan } from './faults.js';
import { SimRandom } from './random.js';
import { Simulation, type Starvation } from './simulation.js';

export type CrashKind = 'reset' | 'silent';

/** One simulated tick is one driver tick. */
export const TICK_MS = QUORUM_DEFAULTS.tickMs;

/**
 * The modelled host, in ticks: one-way delays 0.1-3 ms with 5% of messages ten times later (a
 * busy event loop), fsyncs up to 15 ms, and each node's event loop stalled for up to 150 ms about
 * every 500 ms (three brokers and their load on two cores).
 */
export const FAILOVER_MODEL = {
  minDelay: 0.01,
  maxDelay: 0.3,
  spikeRate: 0.05,
  spikeFactor: 10,
  maxDiskDelay: 1.5,
  starvation: { stallEvery: 50, maxStall: 15, maxCatchUpTicks: 20 } satisfies Starvation,
} as const;

/** Ticks a cluster gets to elect its first leader, and a new one after the crash. */
const ELECTION_BOUND_TICKS = 1000;

export interface FailoverRun {
  readonly seed: number;
  readonly voters: number;
  readonly kind: CrashKind;
  /** Crash to the new leader's first commit, or null when none came within the bound. */
  readonly ms: number | null;
  readonly trace: readonly string[];
}

export interface FailoverOptions {
  readonly traceLines?: number;
  readonly mutation?: Mutation;
}

function failoverPlan(seed: number, voters: number): FaultPlan {
  const m = FAILOVER_MODEL;
  return { ...drawFaults(seed), voters, observers: 0, dropRate: 0, duplicateRate: 0, minDelay: m.minDelay, maxDelay: m.maxDelay, spikeRate: m.spikeRate, spikeFactor: m.spikeFactor, maxDiskDelay: m.maxDiskDelay, proposeEvery: 2 };
}

/** Whether some leader of an epoch after `epoch` has committed an entry of its own epoch. */
function newLeaderCommitted(sim: Simulation, epoch: number): boolean {
  return sim.nodes.some((n) => {
    const s = n.raft?.status();
    return s !== undefined && s.role === 'leader' && s.epoch > epoch && n.log.entryAt(s.highWatermark - 1)?.epoch === s.epoch;
  });
}

export function measureFailover(seed: number, voters: number, kind: CrashKind, options: FailoverOptions = {}): FailoverRun {
  const sim = new Simulation({
    seed,
    plan: failoverPlan(seed, voters),
    timers: { electionTimeoutTicks: QUORUM_DEFAULTS.electionTimeoutTicks, fetchTimeoutTicks: QUORUM_DEFAULTS.fetchTimeoutTicks, fetchWaitTicks: QUORUM_DEFAULTS.fetchWaitTicks },
    starvation: FAILOVER_MODEL.starvation,
    refuseToCrashed: kind === 'reset',
    mutation: options.mutation,
    traceLines: options.traceLines ?? 0,
  });
  const run = (ms: number | null): FailoverRun => ({ seed, voters, kind, ms, trace: sim.traceTail() });
  sim.start();
  if (!sim.runUntil(() => sim.stableLeader() !== null, ELECTION_BOUND_TICKS)) throw new Error(`seed ${seed}: no first leader within ${ELECTION_BOUND_TICKS} ticks`);
  // Load, and a crash at a random phase of the followers' fetches.
  sim.startProposing();
  sim.runFor(QUORUM_DEFAULTS.fetchWaitTicks * (2 + SimRandom.derived(seed, 7).float()));
  const leader = sim.leader();
  if (leader === null) return run(null);
  const epoch = leader.raft?.status().epoch ?? 0;
  const start = sim.now;
  sim.crash(leader.id, false);
  if (kind === 'reset') {
    const random = SimRandom.derived(seed, 8);
    for (const n of sim.nodes) {
      if (n.id === leader.id) continue;
      const after = sim.inFlightUntil(leader.id, n.id) - sim.now + random.between(FAILOVER_MODEL.minDelay, FAILOVER_MODEL.maxDelay);
      sim.reportUnreachable(n.id, leader.id, after);
    }
  }
  const done = sim.runUntil(() => newLeaderCommitted(sim, epoch), ELECTION_BOUND_TICKS);
  return run(done ? (sim.now - start) * TICK_MS : null);
}

export interface FailoverSummary {
  readonly runs: readonly FailoverRun[];
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Runs with no new leader within the bound. */
  readonly stuck: number;
}

export function measureSeeds(seeds: readonly number[], voters: number, kind: CrashKind, options: FailoverOptions = {}): FailoverSummary {
  const runs = seeds.map((seed) => measureFailover(seed, voters, kind, options));
  const ms = runs.map((r) => r.ms ?? Infinity);
  return { runs, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms), stuck: runs.filter((r) => r.ms === null).length };
}

export function formatSummary(s: FailoverSummary, voters: number, kind: CrashKind): string {
  const f = (x: number): string => (Number.isFinite(x) ? `${Math.round(x)} ms` : 'none');
  return `${voters} voters, ${kind} crash, ${s.runs.length} seeds: p50 ${f(s.p50)}, p99 ${f(s.p99)}, max ${f(s.max)}${s.stuck > 0 ? `, ${s.stuck} without a new leader` : ''}`;
}
