// The bench's Sluice/peer ratios (bench/ratios.ts) and the peers' report parsing: the durable
// row compares with fio as measured in the sitting when it ran, and falls back to the baselines'
// reference, named as such, only when it did not; fio's JSON is read past any notes printed before
// it, and a report without a write rate is no figure rather than a zero. iperf3's one-stream
// loopback summaries become MB/s figures the catch-up row compares with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FIO_FIGURE, fioWriteMBps, scriptPeerFigures } from '../../../bench/peers.js';
import type { PeerFigure } from '../../../bench/peers.js';
import { ratioRows } from '../../../bench/ratios.js';
import type { Spread } from '../../../bench/report.js';

const spreadOf = (median: number): Spread => ({ median, min: median, max: median, n: 3 });
const durable = new Map<string, Record<string, Spread>>([['produce-1k-acksall-always', { MB_s: spreadOf(280) }]]);
const durableRows = (peers: readonly PeerFigure[]) =>
  ratioRows(durable, peers).filter((r) => r.figure.startsWith('produce acks=all'));

describe('bench ratios: the durable row', () => {
  it('compares with fio measured in this sitting when it ran', () => {
    const rows = durableRows([{ name: FIO_FIGURE, unit: 'MB/s', value: spreadOf(350) }]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.peer, FIO_FIGURE);
    assert.equal(rows[0]?.ratio, 280 / 350);
  });

  it('falls back to the baselines reference, labelled as not this sitting, only without a measured fio', () => {
    const rows = durableRows([]);
    assert.equal(rows.length, 1);
    assert.match(rows[0]?.peer ?? '', /not this sitting/);
    assert.equal(rows[0]?.peerValue, 460);
  });
});

describe('bench peers: fio report', () => {
  const report = JSON.stringify({ jobs: [{ jobname: 'fdatasync-each-1m', write: { bw_bytes: 352_000_000 } }] });

  it('reads the first job\'s write rate in MB/s, past notes printed before the JSON', () => {
    assert.equal(fioWriteMBps(report), 352);
    assert.equal(fioWriteMBps(`note: both iodepth >= 1 and synchronous I/O engine are selected\n${report}`), 352);
  });

  it('gives no figure for output without a positive write rate', () => {
    assert.equal(fioWriteMBps(''), null);
    assert.equal(fioWriteMBps('fio: engine psync not loadable'), null);
    assert.equal(fioWriteMBps(JSON.stringify({ jobs: [] })), null);
    assert.equal(fioWriteMBps(JSON.stringify({ jobs: [{ write: { bw_bytes: 0 } }] })), null);
    assert.equal(fioWriteMBps('{"jobs": [ truncated'), null);
  });
});

describe('bench peers: iperf3 loopback', () => {
  // 01-iperf3.sh's summary lines (per-run lines come before them), receiver-side Gbit/s.
  const out = [
    'len=128K P=1 run=1 Gbit/s=20.1 client_cpu%=80 server_cpu%=60',
    'len=128K P=1 Gbit/s median/min/max/n: 20.1 18.9 21.5 3',
    'len=128K P=2 Gbit/s median/min/max/n: 25.0 24.1 26.2 3',
    'len=1M P=1 Gbit/s median/min/max/n: 22.4 21.0 23.0 3',
    'len=1M P=2 Gbit/s median/min/max/n: 27.0 26.0 28.0 3',
  ].join('\n');

  it('reads the one-stream medians, not the two-stream ones, as MB/s', () => {
    const figures = scriptPeerFigures('iperf3', out);
    assert.deepEqual(figures.map((f) => [f.name, f.unit, f.value?.median, f.value?.min, f.value?.max, f.value?.n]), [
      ['iperf3-1stream', 'MB/s', 2512.5, 2362.5, 2687.5, 3],
      ['iperf3-1stream-1m', 'MB/s', 2800, 2625, 2875, 3],
    ]);
  });

  it('sets the catch-up row against them', () => {
    const peers = scriptPeerFigures('iperf3', out).map((f) => ({ name: f.name, unit: f.unit, value: f.value! }));
    const rows = ratioRows(new Map([['catchup-1k', { MB_s: spreadOf(1256.25) }]]), peers).filter((r) => r.figure.startsWith('consumer catch-up'));
    assert.deepEqual(rows.map((r) => [r.peer, r.ratio]), [['iperf3-1stream', 0.5], ['iperf3-1stream-1m', 1256.25 / 2800]]);
  });

  it('gives no figure when the script printed no summary', () => {
    assert.deepEqual(scriptPeerFigures('iperf3', 'iperf3: error - unable to connect').map((f) => f.value), [null, null]);
  });
});
