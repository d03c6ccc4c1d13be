// Scripted scenarios of the Raft simulation, after Kafka's RaftEventSimulationTest: initial
// election, a new leader after the old one fails, recovery after every node is killed, a leader
// partitioned away, progress in a 2/3 split, back-to-back leader failures; and the Raft paper's
// Figure 8 (figure_eight.ts). Each runs over several
// seeds on lossless links with random delays and disk latencies; the checker watches every event
// as in the random runs. Tests only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeId } from '../../../src/coordinator/raft/types.js';
import { InvariantViolation } from './checker.js';
import { calm, converge, electLeader, makeProgress } from './scenario_steps.js';
import { runFigureEight } from './figure_eight.js';
import { Simulation } from './simulation.js';

const SEEDS = 20;

function forSeeds(voters: number, scenario: (sim: Simulation) => void): void {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const sim = calm(seed, voters);
    try {
      scenario(sim);
    } catch (e) {
      const kind = e instanceof InvariantViolation ? 'invariant' : 'scenario';
      throw new Error(`seed ${seed} (${voters} voters), ${kind} failed: ${e instanceof Error ? e.message : String(e)}\nlast events:\n${sim.traceTail().join('\n')}`);
    }
  }
}

describe('raft simulation scenarios (after RaftEventSimulationTest)', () => {
  for (const voters of [3, 5]) {
    it(`${voters} voters elect an initial leader and commit`, () => {
      forSeeds(voters, (sim) => {
        electLeader(sim);
        makeProgress(sim);
        converge(sim, 200);
      });
    });

    it(`${voters} voters elect a new leader after the old one fails, and the old one catches up`, () => {
      forSeeds(voters, (sim) => {
        const first = electLeader(sim);
        makeProgress(sim);
        sim.crash(first);
        const second = electLeader(sim, first);
        assert.notEqual(second, first);
        makeProgress(sim);
        sim.restart(first);
        converge(sim, 200);
      });
    });

    it(`${voters} voters recover after every node is killed`, () => {
      forSeeds(voters, (sim) => {
        electLeader(sim);
        makeProgress(sim);
        for (const n of sim.nodes) sim.crash(n.id);
        sim.runFor(5);
        for (const n of sim.nodes) sim.restart(n.id);
        electLeader(sim);
        makeProgress(sim);
        converge(sim, 200);
      });
    });

    it(`${voters} voters elect a new leader after the old one is partitioned away`, () => {
      forSeeds(voters, (sim) => {
        const first = electLeader(sim);
        makeProgress(sim);
        sim.split([first], sim.nodes.map((n) => n.id).filter((id) => id !== first));
        electLeader(sim, first);
        makeProgress(sim);
        sim.heal();
        converge(sim, 200);
      });
    });

    it(`${voters} voters make progress after back-to-back leader failures`, () => {
      forSeeds(voters, (sim) => {
        const first = electLeader(sim);
        makeProgress(sim);
        sim.crash(first);
        const second = electLeader(sim, first);
        // With three voters a second failure leaves no majority: the first comes back first.
        if (voters === 3) sim.restart(first);
        sim.crash(second);
        electLeader(sim, second);
        makeProgress(sim);
        sim.restart(first);
        sim.restart(second);
        converge(sim, 200);
      });
    });
  }

  it('5 voters split 2/3: the majority side makes progress, then all converge', () => {
    forSeeds(5, (sim) => {
      const first = electLeader(sim);
      makeProgress(sim);
      // The old leader lands in the minority, so the majority must elect anew.
      const others = sim.voterIds.filter((id) => id !== first);
      const minority = [first, others[0] as NodeId];
      const majority = sim.nodes.map((n) => n.id).filter((id) => !minority.includes(id));
      sim.split(minority, majority);
      const leader = electLeader(sim, first);
      assert.ok(majority.includes(leader), `leader ${leader} is not on the majority side`);
      makeProgress(sim);
      sim.heal();
      converge(sim, 200);
    });
  });

  it('Figure 8: an old epoch\'s entry that reaches a majority under a later leader is not committed early', () => {
    let provoked = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const outcome = runFigureEight(seed);
      if (!outcome.provoked) continue;
      provoked++;
      assert.equal(outcome.violation, null, `seed ${seed}: ${outcome.violation?.message}\nlast events:\n${outcome.trace.join('\n')}`);
    }
    assert.ok(provoked >= SEEDS / 2, `the scenario arose in only ${provoked} of ${SEEDS} seeds`);
  });
});
