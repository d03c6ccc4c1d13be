// Scripted scenarios of the Raft simulation for the transport's unreachable reports
// (RaftNode.reportUnreachable): a crashed leader whose connections reset is replaced well within
// the fetch timeout, and reports about healthy peers (a connection blip) depose nobody. Each runs
// over several seeds on lossless links with short delays; the checker watches every event. The
// bound is shown to bite by the `ignoreUnreachable` mutation, which leaves the election to the
// fetch timeout. Tests only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { NodeId } from '../../../src/coordinator/raft/types.js';
import { InvariantViolation } from './checker.js';
import { drawFaults } from './faults.js';
import { electLeader, makeProgress } from './scenario_steps.js';
import { FETCH_TIMEOUT_TICKS, FETCH_WAIT_TICKS, Simulation } from './simulation.js';

const SEEDS = 20;
/** A leader whose connections reset must be replaced within half the fetch timeout. */
const REPORTED_ELECTION_BOUND_TICKS = FETCH_TIMEOUT_TICKS / 2;
/** Spurious reports come one at a time, further apart than a parked fetch takes to be answered. */
const SPURIOUS_EVERY_TICKS = 2 * FETCH_WAIT_TICKS;
/** One-way message delay bound in these scenarios: under a tenth of the election timeout. */
const MAX_DELAY = 0.6;

/** A started simulation on lossless links with short delays. */
function quick(seed: number, voters: number, mutation?: Mutation): Simulation {
  const drawn = drawFaults(seed);
  const plan = { ...drawn, voters, dropRate: 0, duplicateRate: 0, spikeRate: 0, minDelay: 0.05, maxDelay: MAX_DELAY, maxDiskDelay: Math.min(drawn.maxDiskDelay, 0.5) };
  const sim = new Simulation({ seed, plan, mutation, traceLines: 80 });
  sim.start();
  return sim;
}

function forSeeds(voters: number, scenario: (sim: Simulation) => void, mutation?: Mutation): void {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const sim = quick(seed, voters, mutation);
    try {
      scenario(sim);
    } catch (e) {
      const kind = e instanceof InvariantViolation ? 'invariant' : 'scenario';
      throw new Error(`seed ${seed} (${voters} voters), ${kind} failed: ${e instanceof Error ? e.message : String(e)}\nlast events:\n${sim.traceTail().join('\n')}`);
    }
  }
}

/** Crashes the leader, every survivor hears its connection reset, and the ticks until a new stable leader (or null past the bound). */
function killLeader(sim: Simulation): number | null {
  const first = electLeader(sim);
  makeProgress(sim);
  const start = sim.now;
  sim.crash(first);
  // A reset reaches a peer after the bytes the process wrote before it died, as on TCP.
  for (const n of sim.nodes) if (n.id !== first) sim.reportUnreachable(n.id, first, MAX_DELAY);
  const elected = sim.runUntil(() => {
    const l = sim.stableLeader();
    return l !== null && l !== first;
  }, REPORTED_ELECTION_BOUND_TICKS);
  return elected ? sim.now - start : null;
}

describe('raft simulation: unreachable reports', () => {
  for (const voters of [3, 5]) {
    it(`${voters} voters replace a crashed leader within ${REPORTED_ELECTION_BOUND_TICKS} ticks once its connections reset`, () => {
      forSeeds(voters, (sim) => {
        const ticks = killLeader(sim);
        assert.ok(ticks !== null, `no new stable leader within ${REPORTED_ELECTION_BOUND_TICKS} ticks of the reports`);
        makeProgress(sim);
      });
    });

    it(`${voters} voters keep a healthy leader through spurious reports`, () => {
      forSeeds(voters, (sim) => {
        const leader = electLeader(sim);
        // Every follower has fetched from the leader: before that it grants pre-votes anyway (KIP-996).
        makeProgress(sim);
        const epoch = sim.maxEpoch();
        const followers = sim.voterIds.filter((id) => id !== leader);
        const others = sim.nodes.map((n) => n.id).filter((id) => !sim.voterIds.includes(id));
        for (let round = 0; round < 20; round++) {
          const follower = followers[round % followers.length] as NodeId;
          // Mostly the follower's own leader; now and then a report a node must ignore: about a
          // fellow follower, to the leader about a follower, or to an observer about its leader.
          const kind = round % 5;
          if (kind === 1) sim.reportUnreachable(follower, followers.find((id) => id !== follower) as NodeId);
          else if (kind === 3) sim.reportUnreachable(leader, follower);
          else if (kind === 4 && others.length > 0) sim.reportUnreachable(others[round % others.length] as NodeId, leader);
          else sim.reportUnreachable(follower, leader);
          makeProgress(sim, SPURIOUS_EVERY_TICKS);
        }
        assert.equal(sim.maxEpoch(), epoch, 'a spurious report forced an election');
        assert.equal(sim.stableLeader(), leader);
        assert.ok(sim.runUntil(() => sim.converged(), 100), 'observers and followers converge after the reports');
      });
    });
  }

  it('without acting on reports (ignoreUnreachable), a crashed leader outlives the bound: the bound bites', () => {
    let late = 0;
    for (let seed = 1; seed <= SEEDS; seed++) if (killLeader(quick(seed, 3, 'ignoreUnreachable')) === null) late++;
    assert.ok(late >= SEEDS / 2, `only ${late} of ${SEEDS} seeds missed the bound with reports ignored`);
  });
});
