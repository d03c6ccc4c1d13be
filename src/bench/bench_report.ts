// What `sluice bench` writes (bench driver, main thread): the text tables it prints (results, and
// Sluice/peer ratios for the workloads both ran in this sitting) and a self-contained HTML report
// whose plots (latency percentiles, throughput over time, the max-rate ramp) are Vega-Lite specs
// compiled and rendered to SVG here by vega, then inlined: the page needs no network to view.
// vega and vega-lite load on first use, so other CLI verbs never pay for them.
import type { TopLevelSpec } from 'vega-lite';
import { fmt, table } from './format.js';
import type { BenchResult } from './workloads.js';

export interface RatioRow {
  readonly workload: string;
  readonly metric: string;
  readonly peer: string;
  readonly sluice: number;
  readonly peerValue: number;
  /** Sluice / peer. */
  readonly ratio: number;
}

const num = (r: BenchResult, field: string): number => {
  const v = r[field];
  return typeof v === 'number' ? v : NaN;
};

/** The figures compared per workload kind: [metric label, how to read it]. */
const COMPARED: ReadonlyArray<readonly [string, (r: BenchResult) => number, BenchResult['kind']]> = [
  ['publish msgs/s', (r) => r.achievedPublishRate, 'fixed-rate'],
  ['publish p99 ms', (r) => num(r, 'aggregatedPublishLatency99pct'), 'fixed-rate'],
  ['e2e p50 ms', (r) => num(r, 'aggregatedEndToEndLatency50pct'), 'fixed-rate'],
  ['e2e p99 ms', (r) => num(r, 'aggregatedEndToEndLatency99pct'), 'fixed-rate'],
  ['e2e p99.99 ms', (r) => num(r, 'aggregatedEndToEndLatency9999pct'), 'fixed-rate'],
  ['cpu µs/msg', (r) => r.cpuMicrosPerMessage ?? NaN, 'fixed-rate'],
  ['max sustainable msgs/s', (r) => r.maxSustainableRate ?? NaN, 'max-rate'],
  ['cpu µs/msg', (r) => r.cpuMicrosPerMessage ?? NaN, 'max-rate'],
  ['drain msgs/s', (r) => r.drainRate ?? NaN, 'backlog-drain'],
  ['cpu ms/MB', (r) => r.cpuMillisPerMB ?? NaN, 'backlog-drain'],
];

/** Sluice against each peer on every workload both ran (same name: same size, rate and acks). */
export function ratioRows(results: readonly BenchResult[]): RatioRow[] {
  const rows: RatioRow[] = [];
  for (const s of results.filter((r) => r.driver === 'sluice')) {
    for (const p of results.filter((r) => r.driver !== 'sluice' && r.workload === s.workload)) {
      for (const [metric, read, kind] of COMPARED) {
        if (kind !== s.kind) continue;
        const a = read(s);
        const b = read(p);
        if (Number.isFinite(a) && Number.isFinite(b) && b > 0) rows.push({ workload: s.workload, metric, peer: p.driver, sluice: a, peerValue: b, ratio: a / b });
      }
    }
  }
  return rows;
}

export function ratioTable(rows: readonly RatioRow[]): string {
  return table(['workload', 'metric', 'sluice', 'peer', 'peer value', 'sluice/peer'],
    rows.map((r) => [r.workload, r.metric, fmt(r.sluice), r.peer, fmt(r.peerValue), `${r.ratio.toFixed(2)}x`]));
}

export function resultTable(results: readonly BenchResult[]): string {
  return table(['workload', 'driver', 'msgs/s', 'pub p99', 'e2e p50', 'e2e p99', 'e2e p99.9', 'e2e p99.99', 'cpu µs/msg', 'cpu ms/MB'],
    results.map((r) => {
      // A drained backlog carries no send stamps worth reading: its records waited by design.
      const e2e = (col: string): string => (r.kind === 'backlog-drain' ? '-' : fmt(num(r, `aggregatedEndToEndLatency${col}`)));
      return [
        r.workload, r.driver,
        fmt(r.kind === 'max-rate' ? (r.maxSustainableRate ?? NaN) : r.kind === 'backlog-drain' ? (r.drainRate ?? NaN) : r.achievedPublishRate),
        fmt(num(r, 'aggregatedPublishLatency99pct')), e2e('50pct'), e2e('99pct'), e2e('999pct'), e2e('9999pct'),
        fmt(r.cpuMicrosPerMessage ?? NaN), fmt(r.cpuMillisPerMB ?? NaN),
      ];
    }));
}

const PERCENTILE_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ['p50', '50pct'], ['p75', '75pct'], ['p95', '95pct'], ['p99', '99pct'], ['p99.9', '999pct'], ['p99.99', '9999pct'],
];

function percentileChart(results: readonly BenchResult[], series: 'PublishLatency' | 'EndToEndLatency', title: string): TopLevelSpec {
  const values = results.filter((r) => r.kind === 'fixed-rate').flatMap((r) => PERCENTILE_COLUMNS.map(([label, col], order) => ({
    run: `${r.driver} ${r.workload}`, percentile: label, order, ms: Math.max(0.001, num(r, `aggregated${series}${col}`)),
  })));
  return {
    title, width: 560, height: 280, data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'percentile', type: 'ordinal', sort: PERCENTILE_COLUMNS.map(([l]) => l), title: 'percentile' },
      y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'latency (ms, log scale)' },
      color: { field: 'run', type: 'nominal', title: 'driver and workload' },
    },
  };
}

function throughputChart(results: readonly BenchResult[]): TopLevelSpec {
  const values = results.flatMap((r) => (['publishRate', 'consumeRate'] as const).flatMap((series) =>
    r[series].map((rate, i) => ({ run: `${r.driver} ${r.workload}`, series: series === 'publishRate' ? 'publish' : 'consume', t: i * r.sampleIntervalSeconds, rate }))));
  return {
    title: 'Throughput per sample interval', width: 560, height: 280, data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'seconds into the workload' },
      y: { field: 'rate', type: 'quantitative', title: 'msgs/s' },
      color: { field: 'run', type: 'nominal', title: 'driver and workload' },
      strokeDash: { field: 'series', type: 'nominal', title: 'series' },
    },
  };
}

function rampChart(results: readonly BenchResult[]): TopLevelSpec {
  const values = results.flatMap((r) => (r.rampSteps ?? []).map((s) => ({ run: `${r.driver} ${r.workload}`, target: s.targetRate, achieved: s.achievedRate, p99: s.p99Ms, ok: s.ok ? 'kept up' : 'fell behind' })));
  return {
    title: 'Max-rate ramp: end-to-end p99 per step', width: 560, height: 240, data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'achieved', type: 'quantitative', title: 'achieved msgs/s' },
      y: { field: 'p99', type: 'quantitative', scale: { type: 'log' }, title: 'e2e p99 (ms, log scale)' },
      color: { field: 'run', type: 'nominal', title: 'driver and workload' },
    },
  };
}

/** A Vega-Lite spec rendered to an SVG document (no DOM, no network). */
async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ReportContext {
  readonly title: string;
  readonly facts: readonly string[];
  readonly skipped: readonly string[];
}

/** The self-contained HTML report: facts, plots as inline SVG, and the two tables. */
export async function htmlReport(results: readonly BenchResult[], ctx: ReportContext): Promise<string> {
  const plots = await Promise.all([
    percentileChart(results, 'EndToEndLatency', 'End-to-end latency percentiles (fixed rates)'),
    percentileChart(results, 'PublishLatency', 'Publish latency percentiles (fixed rates)'),
    throughputChart(results),
    rampChart(results),
  ].map(renderSvg));
  const ratios = ratioRows(results);
  const pre = (text: string): string => `<pre>${escapeHtml(text)}</pre>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(ctx.title)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}pre{font-size:12px;overflow-x:auto}figure{margin:1.5em 0}</style>
</head><body>
<h1>${escapeHtml(ctx.title)}</h1>
<ul>${ctx.facts.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}${ctx.skipped.map((s) => `<li>skipped: ${escapeHtml(s)}</li>`).join('')}</ul>
${plots.map((svg) => `<figure>${svg}</figure>`).join('\n')}
<h2>Results</h2>
${pre(resultTable(results))}
<h2>Sluice / peer</h2>
${ratios.length === 0 ? '<p>No peer ran in this sitting.</p>' : pre(ratioTable(ratios))}
</body></html>
`;
}
