// The Raft paper's Figure 8, scripted over the simulation with five voters and one-entry fetches:
// an entry X of an old epoch reaches a majority only under a later leader, which is cut off before
// its own epoch's first entry (the leaderChange) is replicated; then a node whose log lacks X but
// ends in a higher epoch campaigns. A core that lets the high watermark pass X before its epoch
// start (the `countOldTermReplicas` mutation) has committed X, and that node's leadership breaks
// leader completeness; a correct core never commits X that early, so the run holds. Tests only.
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { NodeId } from '../../../src/coordinator/raft/types.js';
import { InvariantViolation } from './checker.js';
import { drawFaults } from './faults.js';
import { LEADER_BOUND_TICKS } from './run.js';
import { Simulation } from './simulation.js';

export type FigureEightOutcome =
  | { readonly provoked: false; readonly step: string }
  | { readonly provoked: true; readonly violation: InvariantViolation | null; readonly trace: readonly string[] };

function leaderIn(sim: Simulation, ids: readonly NodeId[], aboveEpoch: number): NodeId | null {
  for (const id of ids) {
    const s = sim.node(id).raft?.status();
    if (s !== undefined && s.role === 'leader' && s.epoch > aboveEpoch) return id;
  }
  return null;
}

function isolate(sim: Simulation, ...isolated: NodeId[]): void {
  sim.heal();
  const all = sim.nodes.map((n) => n.id);
  for (const id of isolated) sim.split([id], all.filter((other) => other !== id));
}

/**
 * One seed of the scenario. `provoked` is false when the seed's timing took another path (e.g. a
 * node without X won an election): nothing is wrong then, the scenario just did not arise.
 */
export function runFigureEight(seed: number, mutation?: Mutation): FigureEightOutcome {
  // One entry per fetch response, so X and the leaderChange after it replicate separately.
  const plan = { ...drawFaults(seed), voters: 5, observers: 0, dropRate: 0, duplicateRate: 0, maxFetchBytes: 30 };
  const sim = new Simulation({ seed, plan, mutation, traceLines: 80 });
  const all = sim.nodes.map((n) => n.id);
  try {
    sim.start();
    if (!sim.runUntil(() => sim.stableLeader() !== null, LEADER_BOUND_TICKS)) return { provoked: false, step: 'no first leader' };
    const first = sim.stableLeader() as NodeId;
    const firstEpoch = sim.node(first).raft?.status().epoch ?? 0;
    // X reaches only the first leader and one partner.
    const partner = all.find((id) => id !== first) as NodeId;
    const rest = all.filter((id) => id !== first && id !== partner);
    sim.split([first, partner], rest);
    const x = sim.node(first).raft?.propose(new TextEncoder().encode('X'));
    if (x === undefined || !x.ok) return { provoked: false, step: 'X refused' };
    sim.runUntil(() => (sim.node(partner).raft?.status().durableEndOffset ?? 0) > x.offset, 20);
    // The other three elect a leader whose epoch entry is cut off at once.
    const second = sim.runUntil(() => leaderIn(sim, rest, firstEpoch) !== null, LEADER_BOUND_TICKS) ? leaderIn(sim, rest, firstEpoch) : null;
    if (second === null) return { provoked: false, step: 'no leader on the majority side' };
    const secondEpoch = sim.node(second).raft?.status().epoch ?? 0;
    isolate(sim, second);
    // A holder of X leads again and X reaches a majority; cut that leader off the moment its high
    // watermark passes X.
    const holders = [first, partner];
    const third = sim.runUntil(() => leaderIn(sim, all.filter((id) => id !== second), secondEpoch) !== null, LEADER_BOUND_TICKS)
      ? leaderIn(sim, all.filter((id) => id !== second), secondEpoch)
      : null;
    if (third === null || !holders.includes(third)) return { provoked: false, step: 'X was not kept by the third leader' };
    const hw = (): number => sim.node(third).raft?.status().highWatermark ?? 0;
    if (!sim.runUntil(() => hw() > x.offset, LEADER_BOUND_TICKS)) return { provoked: false, step: 'X never committed' };
    isolate(sim, third);
    // The second leader, whose log ends in a higher epoch than X's, campaigns among the rest.
    sim.runUntil(() => sim.stableLeader() !== null, LEADER_BOUND_TICKS);
    return { provoked: true, violation: null, trace: sim.traceTail() };
  } catch (e) {
    if (e instanceof InvariantViolation) return { provoked: true, violation: e, trace: sim.traceTail() };
    throw e;
  }
}
