// Aggregation and printing of bench results (bench process, main thread): median and min-max per
// metric over the repeats, a fixed-width text table, and the JSON file in bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { fmt, table } from '../src/bench/format.js';
import type { Metrics } from './scenarios.js';

export { fmt, table };

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export interface ScenarioReport {
  readonly name: string;
  readonly kind: string;
  readonly description: string;
  readonly params: unknown;
  readonly runs: Metrics[];
  readonly notes: string[];
  readonly errors: string[];
  readonly summary: Record<string, Spread>;
}

export function spread(values: readonly number[]): Spread {
  const xs = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const n = xs.length;
  if (n === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const median = n % 2 === 1 ? (xs[(n - 1) / 2] as number) : ((xs[n / 2 - 1] as number) + (xs[n / 2] as number)) / 2;
  return { median, min: xs[0] as number, max: xs[n - 1] as number, n };
}

export function summarize(runs: readonly Metrics[]): Record<string, Spread> {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(keys.map((k) => [k, spread(runs.map((r) => r[k] ?? NaN))]));
}

export function fmtSpread(s: Spread | undefined): string {
  if (s === undefined || s.n === 0) return 'n/a';
  return s.n === 1 ? fmt(s.median) : `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
}


/** Columns shown per scenario kind (label, metric); the JSON keeps every metric. */
const COLUMNS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  produce: [['msgs/s', 'msgs_s'], ['MB/s', 'MB_s'], ['req p50 ms', 'req_p50_ms'], ['req p99 ms', 'req_p99_ms'],
    ['req p99.9 ms', 'req_p999_ms'], ['broker CPU %', 'broker_cpu_pct'], ['broker CPU µs/msg', 'broker_cpu_us_msg'],
    ['client CPU %', 'client_cpu_pct'], ['shard lag p99 ms', 'shard_lag_p99_ms'], ['shard lag max ms', 'shard_lag_max_ms'],
    ['shard own lag p99 ms', 'shard_own_lag_p99_ms'], ['shard CPU wait %', 'shard_cpu_wait_pct']],
  catchup: [['msgs/s', 'msgs_s'], ['MB/s', 'MB_s'], ['batch MB/s', 'batch_MB_s'], ['broker CPU %', 'broker_cpu_pct'],
    ['fill msgs/s', 'fill_msgs_s']],
  e2e: [['max msgs/s', 'max_msgs_s'], ['rate msgs/s', 'rate_msgs_s'], ['e2e p50 ms', 'e2e_p50_ms'],
    ['e2e p99 ms', 'e2e_p99_ms'], ['e2e p99.9 ms', 'e2e_p999_ms'], ['e2e max ms', 'e2e_max_ms'], ['produce p99 ms', 'produce_p99_ms']],
  commit: [['commits/s', 'commits_s'], ['req/s', 'req_s'], ['req p50 ms', 'req_p50_ms'], ['req p99 ms', 'req_p99_ms'],
    ['req p99.9 ms', 'req_p999_ms'], ['broker CPU %', 'broker_cpu_pct'], ['client CPU %', 'client_cpu_pct']],
  rebalance: [['kept', 'kept'], ['moved', 'moved'], ['base gap ms', 'base_gap_ms'], ['kept gap ms', 'kept_gap_ms'], ['kept pause ms', 'kept_pause_ms'],
    ['base lat ms', 'base_lat_ms'], ['kept lat ms', 'kept_lat_ms'], ['claimed ms', 'claimed_ms'],
    ['moved first ms', 'moved_first_ms'], ['moved gap ms', 'moved_gap_ms'], ['settled ms', 'settled_ms']],
};

/**
 * Kinds whose runs measure several variants side by side: one row per (label, metric-key prefix),
 * the columns' keys taken with that prefix; a column a variant lacks shows '-'.
 */
const ROW_VARIANTS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  rebalance: [['KIP-848 (platformatic)', 'coop_'], ['eager (kafkajs)', 'eager_'], ['eager / KIP-848', 'ratio_']],
};

function scenarioRows(r: ScenarioReport, cols: readonly (readonly [string, string])[]): string[][] {
  if (r.runs.length === 0) return [[r.name, `FAILED: ${r.errors[0] ?? 'no runs'}`]];
  const variants = ROW_VARIANTS[r.kind];
  if (variants === undefined) return [[r.name, ...cols.map(([, key]) => fmtSpread(r.summary[key]))]];
  return variants.map(([label, prefix]) => [`${r.name} ${label}`, ...cols.map(([, key]) => {
    const s = r.summary[prefix + key];
    return s === undefined ? '-' : fmtSpread(s);
  })]);
}

/** One table per scenario kind: median (min–max) of each column over the runs. */
export function scenarioTables(reports: readonly ScenarioReport[]): string {
  const out: string[] = [];
  for (const [kind, cols] of Object.entries(COLUMNS)) {
    const mine = reports.filter((r) => r.kind === kind);
    if (mine.length === 0) continue;
    const rows = mine.flatMap((r) => scenarioRows(r, cols));
    out.push(table(['scenario', ...cols.map(([label]) => label)], rows));
  }
  return out.join('\n\n');
}

const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/** A fresh bench/results/<timestamp>.json path (the directory is created). */
export function newResultsPath(): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  return join(RESULTS_DIR, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
}

export function writeResults(path: string, doc: unknown): void {
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`);
}
