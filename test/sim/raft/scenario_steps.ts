// The steps scripted simulation scenarios are written in (scenarios.test.ts, membership.test.ts):
// a calm cluster (lossless links, random delays and disk latencies), waiting for a stable leader,
// making commit progress, and waiting for every node to hold the committed log. Tests only.
import assert from 'node:assert/strict';
import type { NodeId } from '../../../src/coordinator/raft/types.js';
import { drawFaults } from './faults.js';
import { LEADER_BOUND_TICKS } from './run.js';
import { Simulation } from './simulation.js';

/** A started simulation on lossless links; `observers` defaults to what the seed draws. */
export function calm(seed: number, voters: number, observers?: number): Simulation {
  const plan = { ...drawFaults(seed), voters, ...(observers === undefined ? {} : { observers }), dropRate: 0, duplicateRate: 0 };
  const sim = new Simulation({ seed, plan, traceLines: 60 });
  sim.start();
  return sim;
}

/** Runs until a stable leader other than `unlike` exists, and returns it. */
export function electLeader(sim: Simulation, unlike: NodeId = -1): NodeId {
  const elected = sim.runUntil(() => {
    const l = sim.stableLeader();
    return l !== null && l !== unlike;
  }, LEADER_BOUND_TICKS);
  assert.ok(elected, `no stable leader within ${LEADER_BOUND_TICKS} ticks`);
  return sim.stableLeader() as NodeId;
}

/** The client proposes for a while and the commit moves on. */
export function makeProgress(sim: Simulation, ticks = 40): void {
  const before = sim.checker.committedEnd;
  sim.startProposing();
  sim.runFor(ticks);
  sim.stopProposing();
  sim.runUntil(() => sim.checker.committedEnd > before && sim.undecidedLivenessProposals() === 0, 100);
  assert.ok(sim.checker.committedEnd > before, `commit stuck at ${before}`);
}

/** Every node ends up holding the committed log within `ticks`. */
export function converge(sim: Simulation, ticks = 300): void {
  assert.ok(sim.runUntil(() => sim.converged(), ticks), `nodes did not converge on the committed log (end ${sim.checker.committedEnd})`);
}
