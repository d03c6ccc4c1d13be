// The bench's Sluice/peer ratios (bench/ratios.ts) and the fio peer's report parsing: the durable
// row compares with fio as measured in the sitting when it ran, and falls back to the baselines'
// reference, named as such, only when it did not; fio's JSON is read past any notes printed before
// it, and a report without a write rate is no figure rather than a zero.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FIO_FIGURE, fioWriteMBps } from '../../../bench/peers.js';
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
