// Replays one seed of the Raft simulation and prints its outcome, fault parameters and (with
// --trace) the last events: `node dist/test/sim/raft/replay.js --seed N [--mutation M] [--hunt] [--trace]`.
// Exit status 1 when the seed violates an invariant. Tests only.
import { parseArgs } from 'node:util';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import { formatFaults } from './faults.js';
import { formatFailure, MUTATIONS, runSeed, type SeedOptions } from './run.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    mutation: { type: 'string' },
    hunt: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    lines: { type: 'string', default: '200' },
  },
});
const seed = Number(values.seed);
if (values.seed === undefined || !Number.isSafeInteger(seed)) {
  console.error('usage: replay.js --seed N [--mutation voteTwice|countOldTermReplicas|applyBeforeDurable|skipPreVote] [--hunt] [--trace] [--lines 200]');
  process.exit(2);
}
const mutation = values.mutation as Mutation | undefined;
if (mutation !== undefined && !MUTATIONS.includes(mutation)) {
  console.error(`unknown mutation ${mutation}; one of ${MUTATIONS.join(', ')}`);
  process.exit(2);
}
const options: SeedOptions = { mutation, ...(values.hunt ? { hunt: true } : {}), traceLines: values.trace ? Number(values.lines) : 0 };
const outcome = runSeed(seed, options);
if (outcome.violation === null) {
  console.log(`seed ${seed}: all invariants held\nfaults: ${formatFaults(outcome.plan)} huntInLiveness=${outcome.hunt}`);
  if (values.trace) console.log(['last events:', ...outcome.trace.map((l) => `  ${l}`)].join('\n'));
} else {
  console.log(formatFailure(outcome, options));
  process.exitCode = 1;
}
