// Prints the simulated failover time distribution (failover.ts) and, for the seeds slower than
// --over ms, their replay line; with --trace, the events of those seeds from the crash on:
// `node dist/test/sim/raft/failover_report.js [--seeds 500] [--from 1] [--voters 3] [--kind reset|silent]
// [--over 1000] [--trace] [--lines 400] [--mutation M]`. Tests only.
import { parseArgs } from 'node:util';
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import { formatSummary, measureFailover, measureSeeds, type CrashKind } from './failover.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '500' },
    from: { type: 'string', default: '1' },
    voters: { type: 'string', default: '3' },
    kind: { type: 'string', default: 'reset' },
    over: { type: 'string', default: '1000' },
    trace: { type: 'boolean', default: false },
    lines: { type: 'string', default: '400' },
    mutation: { type: 'string' },
  },
});
const kind = values.kind as CrashKind;
if (kind !== 'reset' && kind !== 'silent') {
  console.error('--kind is reset or silent');
  process.exit(2);
}
const from = Number(values.from);
const seeds = Array.from({ length: Number(values.seeds) }, (_, i) => from + i);
const voters = Number(values.voters);
const over = Number(values.over);
const options = values.mutation === undefined ? {} : { mutation: values.mutation as Mutation };
const summary = measureSeeds(seeds, voters, kind, options);
console.log(formatSummary(summary, voters, kind));
const slow = summary.runs.filter((r) => r.ms === null || r.ms > over);
console.log(`${slow.length} seeds over ${over} ms${slow.length > 0 ? `: ${slow.map((r) => `${r.seed} (${r.ms ?? 'none'})`).join(', ')}` : ''}`);
if (values.trace) {
  for (const r of slow) {
    const traced = measureFailover(r.seed, voters, kind, { ...options, traceLines: Number(values.lines) });
    const crash = traced.trace.findIndex((l) => / crash /.test(l));
    console.log(`\nseed ${r.seed}: ${traced.ms ?? 'none'} ms`);
    console.log(traced.trace.slice(Math.max(0, crash)).map((l) => `  ${l}`).join('\n'));
  }
}
