// The simulation bites: each deliberately broken variant of the core (RaftConfig.unsafe) must be
// caught by the invariant it breaks within a bounded number of seeds. A checker that let one of
// these through would pass every seed of a broken core. Tests only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { Invariant } from './checker.js';
import { formatFaults } from './faults.js';
import { replayCommand, runSeed, type SeedOptions } from './run.js';

interface Bite {
  readonly mutation: Mutation;
  /** The invariants this mutation breaks; the first violation found must be one of them. */
  readonly expected: readonly Invariant[];
  /** The scenario that provokes it. */
  readonly options: SeedOptions;
  readonly why: string;
}

const MAX_SEEDS = 300;

const BITES: readonly Bite[] = [
  { mutation: 'voteTwice', expected: ['singleVote', 'electionSafety'], options: {}, why: 'a voter that grants two candidates in one epoch can elect two leaders' },
  {
    mutation: 'countOldTermReplicas', expected: ['leaderCompleteness', 'stateMachineSafety'], options: {},
    why: 'committing an old epoch\'s entry by counting replicas (Figure 8) lets a later leader overwrite it',
  },
  { mutation: 'applyBeforeDurable', expected: ['applyDurable'], options: {}, why: 'the state machine must never run ahead of the local disk' },
  {
    mutation: 'skipPreVote', expected: ['liveness'], options: { hunt: true },
    why: 'without pre-vote a follower cut off its leader by a flapping link disrupts every epoch',
  },
];

describe('raft simulation catches broken cores', () => {
  for (const bite of BITES) {
    it(`${bite.mutation}: ${bite.why}`, () => {
      const options: SeedOptions = { ...bite.options, mutation: bite.mutation };
      for (let seed = 1; seed <= MAX_SEEDS; seed++) {
        const outcome = runSeed(seed, options);
        const v = outcome.violation;
        if (v === null) continue;
        assert.ok(
          bite.expected.includes(v.invariant),
          `seed ${seed} reported ${v.message}; expected one of ${bite.expected.join(', ')}\nfaults: ${formatFaults(outcome.plan)}\nreplay: ${replayCommand(seed, options)}`,
        );
        return;
      }
      assert.fail(`no seed in 1..${MAX_SEEDS} caught ${bite.mutation}`);
    });
  }
});
