// The simulation bites: each deliberately broken variant of the core (RaftConfig.unsafe) must be
// caught by the invariant it breaks within a bounded number of seeds, in the scenario that
// provokes it. A checker that let one of these through would pass every seed of a broken core.
// Tests only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { Invariant, InvariantViolation } from './checker.js';
import { runFigureEight } from './figure_eight.js';
import { formatFaults } from './faults.js';
import { replayCommand, runSeed, type SeedOptions } from './run.js';

interface Caught {
  readonly violation: InvariantViolation;
  readonly report: string;
}

interface Bite {
  readonly mutation: Mutation;
  /** The invariants this mutation breaks; the first violation found must be one of them. */
  readonly expected: readonly Invariant[];
  readonly maxSeeds: number;
  readonly why: string;
  /** Runs the provoking scenario for one seed; the violation it found, if any. */
  readonly provoke: (seed: number, mutation: Mutation) => Caught | null;
}

/** A random run (both phases) of one seed with the mutation switched on. */
function randomRun(extra: SeedOptions): Bite['provoke'] {
  return (seed, mutation) => {
    const options: SeedOptions = { ...extra, mutation };
    const outcome = runSeed(seed, options);
    if (outcome.violation === null) return null;
    return { violation: outcome.violation, report: `faults: ${formatFaults(outcome.plan)}\nreplay: ${replayCommand(seed, options)}` };
  };
}

const BITES: readonly Bite[] = [
  {
    mutation: 'voteTwice', expected: ['singleVote', 'electionSafety'], maxSeeds: 100, provoke: randomRun({}),
    why: 'a voter that grants two candidates in one epoch can elect two leaders',
  },
  {
    mutation: 'countOldTermReplicas', expected: ['leaderCompleteness', 'stateMachineSafety'], maxSeeds: 100,
    why: 'committing an old epoch\'s entry by counting replicas lets a later leader overwrite it (Figure 8)',
    provoke: (seed, mutation) => {
      const outcome = runFigureEight(seed, mutation);
      if (!outcome.provoked || outcome.violation === null) return null;
      return { violation: outcome.violation, report: `figure-eight scenario, seed ${seed}\nlast events:\n${outcome.trace.join('\n')}` };
    },
  },
  {
    mutation: 'applyBeforeDurable', expected: ['applyDurable'], maxSeeds: 20, provoke: randomRun({}),
    why: 'the state machine must never run ahead of the local disk',
  },
  {
    mutation: 'skipPreVote', expected: ['liveness'], maxSeeds: 20, provoke: randomRun({ hunt: true }),
    why: 'without pre-vote a follower a flapping link cuts off its leader disrupts every epoch (livelock)',
  },
];

describe('raft simulation catches broken cores', () => {
  for (const bite of BITES) {
    it(`${bite.mutation}: ${bite.why}`, () => {
      for (let seed = 1; seed <= bite.maxSeeds; seed++) {
        const caught = bite.provoke(seed, bite.mutation);
        if (caught === null) continue;
        assert.ok(
          bite.expected.includes(caught.violation.invariant),
          `seed ${seed} reported ${caught.violation.message}; expected one of ${bite.expected.join(', ')}\n${caught.report}`,
        );
        return;
      }
      assert.fail(`no seed in 1..${bite.maxSeeds} caught ${bite.mutation}`);
    });
  }
});
