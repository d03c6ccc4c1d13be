// Tests of the group benches' other pure pieces: group ids spread over the offsets partitions as
// the broker places them, the first error of a commit answer, and the report's variant rows (one
// row per protocol for the rebalance scenario; other kinds keep one row per scenario).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { firstCommitError } from '../../../bench/load/commit_load.js';
import { spreadGroupIds } from '../../../bench/load/group_ids.js';
import { scenarioTables, summarize } from '../../../bench/report.js';
import type { ScenarioReport } from '../../../bench/report.js';
import type { Metrics } from '../../../bench/scenarios.js';
import { offsetsPartitionFor } from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode } from '../../../src/protocol/errors.js';

test('group ids are distinct and every offsets partition gets floor or ceil of its share', () => {
  const partitionCounts = fc.integer({ min: 1, max: 100 }).filter((n) => n % 31 !== 0);
  fc.assert(fc.property(fc.integer({ min: 0, max: 400 }), partitionCounts, (count, partitions) => {
    const ids = spreadGroupIds('g', count, partitions);
    assert.equal(ids.length, count);
    assert.equal(new Set(ids).size, count);
    const per = new Map<number, number>();
    for (const id of ids) per.set(offsetsPartitionFor(id, partitions), (per.get(offsetsPartitionFor(id, partitions)) ?? 0) + 1);
    for (let p = 0; p < partitions; p++) {
      const n = per.get(p) ?? 0;
      assert.ok(n === Math.floor(count / partitions) || n === Math.ceil(count / partitions), `partition ${p}: ${n}`);
    }
  }), { numRuns: 100 });
});

test('modulo a multiple of 31 the hash depends on the last character only, so ids cannot spread: a clear error', () => {
  assert.throws(() => spreadGroupIds('g', 31, 31), /multiples of 31/);
});

test('100 group ids over 16 offsets partitions use every partition, 6 or 7 each', () => {
  const ids = spreadGroupIds('bench-commit', 100, 16);
  const per = new Array<number>(16).fill(0);
  for (const id of ids) per[offsetsPartitionFor(id, 16)]++;
  assert.ok(per.every((n) => n === 6 || n === 7), per.join(','));
});

test('the first partition error of a commit answer is reported, NONE when all succeeded', () => {
  const answer = (codes: number[][]): Parameters<typeof firstCommitError>[0] => ({
    throttleTimeMs: 0,
    topics: codes.map((ps, t) => ({ name: `t${t}`, partitions: ps.map((errorCode, partitionIndex) => ({ partitionIndex, errorCode })) })),
  });
  assert.equal(firstCommitError(answer([[0, 0], [0]])), ErrorCode.NONE);
  assert.equal(firstCommitError(answer([[0, 0], [0, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_MEMBER_ID]])), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(firstCommitError(answer([])), ErrorCode.NONE);
});

function report(name: string, kind: string, runs: Metrics[]): ScenarioReport {
  return { name, kind, description: '', params: {}, runs, notes: [], errors: [], summary: summarize(runs) };
}

test('the rebalance table has a row per protocol and one for the ratios; other kinds one row per scenario', () => {
  const runs = [1, 2, 3].map((i) => ({ coop_kept_gap_ms: 30 + i, eager_kept_gap_ms: 90 + i, ratio_kept_gap_ms: 3, coop_kept: 9, eager_kept: 3 }));
  const text = scenarioTables([report('rebalance', 'rebalance', runs), report('commit-rate', 'commit', [{ commits_s: 45_000 }])]);
  const lines = text.split('\n');
  const row = (label: string): string[] => (lines.find((l) => l.startsWith(label)) ?? '').slice(label.length).trim().split(/\s{2,}/);
  const keptGapColumn = 3; // kept, moved, base gap ms, kept gap ms
  assert.equal(row('rebalance KIP-848 (platformatic)')[keptGapColumn], '32.0 (31.0–33.0)');
  assert.equal(row('rebalance eager (kafkajs)')[keptGapColumn], '92.0 (91.0–93.0)');
  assert.equal(row('rebalance eager / KIP-848')[keptGapColumn], '3.00 (3.00–3.00)');
  assert.equal(row('rebalance eager / KIP-848')[0], '-', 'no ratio of partition counts');
  assert.equal(row('commit-rate')[0], '45.0k');
});
