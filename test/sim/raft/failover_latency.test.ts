// The metadata quorum's failover time in the simulation (failover.ts): from a leader's crash to a
// new leader's first commit, over many seeds, under the modelled host (loopback delays with
// jitter, fsyncs, stalled event loops). With the crash reported as the transport reports a killed
// process (reset, then refused), p99 must stay under REPORTED_P99_BOUND_MS; a silent crash is left
// to the fetch timeout (2 s) and only has to end with a leader. Each prints its distribution.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QUORUM_DEFAULTS } from '../../../src/actors/quorum/quorum_driver.js';
import { formatSummary, measureSeeds, TICK_MS, type CrashKind, type FailoverSummary } from './failover.js';

const SEEDS = Array.from({ length: 300 }, (_, i) => i + 1);
const SILENT_SEEDS = SEEDS.slice(0, 100);
/**
 * The model's budget for a reported crash: a reset heard, a stall of up to 150 ms on the node
 * that must act, the survivors' staggered pre-votes (a 50 ms slot each), one lost round's backoff,
 * and two round trips with fsyncs. Measured p99 with the retry backoff: about 240 ms; without it
 * (a lost round waits the election timeout, 1-2 s), p99 about 1.3 s.
 */
const REPORTED_P99_BOUND_MS = 400;
/** A silent crash: the fetch timeout, then at worst a split vote's election timeout (1-2 s) twice. */
const SILENT_BOUND_MS = (QUORUM_DEFAULTS.fetchTimeoutTicks + 4 * QUORUM_DEFAULTS.electionTimeoutTicks) * TICK_MS;

function report(summary: FailoverSummary, voters: number, kind: CrashKind, over: number): string {
  const slow = summary.runs.filter((r) => r.ms === null || r.ms > over);
  return [
    formatSummary(summary, voters, kind),
    ...slow.map((r) => `  seed ${r.seed}: ${r.ms === null ? 'no new leader' : `${Math.round(r.ms)} ms`}; replay: node dist/test/sim/raft/failover_report.js --from ${r.seed} --seeds 1 --voters ${voters} --kind ${kind} --over 0 --trace`),
  ].join('\n');
}

describe('raft simulation: failover time after a leader crash (10 ms ticks, KRaft timers)', () => {
  for (const voters of [3, 5]) {
    it(`${voters} voters, crash reported by the transport: p99 under ${REPORTED_P99_BOUND_MS} ms`, (t) => {
      const summary = measureSeeds(SEEDS, voters, 'reset');
      t.diagnostic(formatSummary(summary, voters, 'reset'));
      assert.ok(summary.p99 <= REPORTED_P99_BOUND_MS, report(summary, voters, 'reset', REPORTED_P99_BOUND_MS));
    });

    it(`${voters} voters, silent crash: a new leader within ${SILENT_BOUND_MS} ms`, (t) => {
      const summary = measureSeeds(SILENT_SEEDS, voters, 'silent');
      t.diagnostic(formatSummary(summary, voters, 'silent'));
      assert.ok(summary.max <= SILENT_BOUND_MS, report(summary, voters, 'silent', SILENT_BOUND_MS));
    });
  }
});
