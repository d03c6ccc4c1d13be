// Sluice / peer ratios (bench process, main thread): pairs each Sluice figure of this invocation
// (a scenario metric, or a Kafka client run against Sluice) with the peer figures measured in
// the same sitting, as in DESIGN.md §11. Medians over medians; min-max stay in the JSON.
import { FIO_FIGURE } from './peers.js';
import type { PeerFigure } from './peers.js';
import { fmt, table } from './report.js';
import type { Spread } from './report.js';

export interface RatioRow {
  readonly figure: string;
  readonly sluice: string;
  readonly sluiceValue: number;
  readonly peer: string;
  readonly peerValue: number;
  readonly ratio: number;
}

interface Comparison {
  readonly figure: string;
  /** "scenario:metric" or "peer:name". */
  readonly sluice: readonly string[];
  readonly peers: readonly string[];
  /** A figure from research/baselines.md, compared with only when no peer of the row ran in this sitting. */
  readonly reference?: { readonly name: string; readonly value: number };
}

const COMPARISONS: readonly Comparison[] = [
  {
    figure: 'produce 1 KiB acks=1, msgs/s',
    sluice: ['produce-1k-acks1:msgs_s', 'produce-1k-acks1-c4:msgs_s', 'peer:rdkafka-1k-acks1', 'peer:kcat-produce-1k-acks1'],
    peers: ['redis-xadd-1k', 'nats-js-1k'],
  },
  {
    figure: 'produce 100 B acks=1, msgs/s',
    sluice: ['produce-100b-acks1:msgs_s', 'produce-100b-acks1-c4:msgs_s', 'peer:rdkafka-100b-acks1'],
    peers: ['redis-xadd-100b', 'nats-js-100b'],
  },
  ...(['1k', '100b'] as const).flatMap((size): Comparison[] => {
    const what = `librdkafka producer ${size === '1k' ? '1 KiB' : '100 B'} acks=1`;
    const ours = (figure: string): string[] => [`peer:rdkafka-${size}-acks1-warmed${figure}`, `peer:rdkafka-${size}-acks1${figure}`];
    return [
      { figure: `${what}, msgs/s`, sluice: ours(''), peers: [`rdkafka-mock-${size}-acks1`] },
      { figure: `${what}, broker CPU µs/msg`, sluice: ours('-broker-cpu'), peers: [`rdkafka-mockproc-${size}-acks1-cpu`] },
      { figure: `${what}, broker user CPU µs/msg`, sluice: ours('-broker-user'), peers: [`rdkafka-mockproc-${size}-acks1-user`] },
    ];
  }),
  {
    figure: 'consumer catch-up 1 KiB, MB/s',
    sluice: ['catchup-1k:MB_s', 'peer:kcat-consume-1k'],
    peers: ['iperf3-1stream', 'iperf3-1stream-1m', 'redis-xrange-1k', 'node-net-1k'],
  },
  {
    figure: 'produce acks=all + fsync before ack, MB/s',
    sluice: ['produce-1k-acksall-always:MB_s', 'produce-1k-acksall-always-c4:MB_s'],
    peers: [FIO_FIGURE],
    reference: { name: 'fio 1 MiB + fdatasync (baselines.md row 1h, not this sitting)', value: 460 },
  },
];

function sluiceValue(ref: string, scenarios: ReadonlyMap<string, Record<string, Spread>>, peers: readonly PeerFigure[]): number {
  const [a, b] = ref.split(':') as [string, string];
  if (a === 'peer') return peers.find((p) => p.name === b)?.value.median ?? NaN;
  return scenarios.get(a)?.[b]?.median ?? NaN;
}

export function ratioRows(scenarios: ReadonlyMap<string, Record<string, Spread>>, peers: readonly PeerFigure[]): RatioRow[] {
  const rows: RatioRow[] = [];
  for (const c of COMPARISONS) {
    for (const ref of c.sluice) {
      const sv = sluiceValue(ref, scenarios, peers);
      if (!Number.isFinite(sv)) continue;
      const measured = c.peers.flatMap((name) => {
        const pv = peers.find((p) => p.name === name)?.value.median ?? NaN;
        return Number.isFinite(pv) ? [{ name, value: pv }] : [];
      });
      const compared = measured.length === 0 && c.reference !== undefined ? [c.reference] : measured;
      for (const p of compared) {
        rows.push({ figure: c.figure, sluice: ref.replace(/^peer:/, 'via '), sluiceValue: sv, peer: p.name, peerValue: p.value, ratio: sv / p.value });
      }
    }
  }
  return rows;
}

export function ratioTable(rows: readonly RatioRow[]): string {
  if (rows.length === 0) return '(no Sluice figure and peer figure to compare in this sitting)';
  return table(['figure', 'sluice', 'value', 'peer', 'value', 'sluice/peer'],
    rows.map((r) => [r.figure, r.sluice, fmt(r.sluiceValue), r.peer, fmt(r.peerValue), `${r.ratio.toFixed(2)}x`]));
}

export function peerTable(figures: readonly PeerFigure[]): string {
  return table(['peer figure (this sitting)', 'unit', 'median', 'min', 'max', 'n'],
    figures.map((f) => [f.name, f.unit, fmt(f.value.median), fmt(f.value.min), fmt(f.value.max), String(f.value.n)]));
}
