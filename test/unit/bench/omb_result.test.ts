// The OMB recorder (pure, clock injected) and the ramp's step verdict: windows partition the run
// (per-window counts add up to the totals, whatever the event times), backlog is published minus
// consumed at each window's end, aggregated percentiles are ordered and cover every window's
// samples, and a ramp step fails on a missed rate, a p99 over the limit, or a left-over backlog.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OmbRecorder } from '../../../src/bench/omb_result.js';
import { rampStepOk } from '../../../src/bench/workloads.js';

const SHAPE = { workload: 'w', driver: 'd', messageSize: 100, partitions: 1, consumers: 1 };

type Event = { kind: 'ack'; at: number; records: number; latencyMs: number } | { kind: 'consume'; at: number; latencyMs: number };

const events = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('ack' as const), at: fc.integer({ min: 0, max: 9_999 }), records: fc.integer({ min: 1, max: 50 }), latencyMs: fc.double({ min: 0.001, max: 5_000, noNaN: true }) }),
  fc.record({ kind: fc.constant('consume' as const), at: fc.integer({ min: 0, max: 9_999 }), latencyMs: fc.double({ min: 0.001, max: 5_000, noNaN: true }) }),
), { maxLength: 200 });

function record(windowMs: number, list: readonly Event[]): { rec: OmbRecorder; end: number } {
  const start = 1_000;
  const rec = new OmbRecorder(windowMs, start);
  const sorted = [...list].sort((a, b) => a.at - b.at);
  for (const e of sorted) {
    if (e.kind === 'ack') rec.acked(start + e.at, e.records, e.latencyMs, 0);
    else rec.consumedOne(start + e.at, e.latencyMs);
  }
  return { rec, end: start + 10_000 };
}

describe('OmbRecorder', () => {
  it('windows add up to the totals and backlog is published minus consumed', () => {
    fc.assert(fc.property(fc.integer({ min: 100, max: 5_000 }), events, (windowMs, list) => {
      const { rec, end } = record(windowMs, list);
      const r = rec.result(SHAPE, end);
      const windows = Math.ceil(10_000 / windowMs);
      assert.equal(r.publishRate.length, windows);
      const seconds = (i: number): number => Math.min(windowMs, 10_000 - i * windowMs) / 1000;
      const published = r.publishRate.reduce((a, rate, i) => a + rate * seconds(i), 0);
      const consumed = r.consumeRate.reduce((a, rate, i) => a + rate * seconds(i), 0);
      const acks = list.reduce((a, e) => a + (e.kind === 'ack' ? e.records : 0), 0);
      const consumes = list.filter((e) => e.kind === 'consume').length;
      assert.ok(Math.abs(published - acks) < 1e-6 * Math.max(1, acks));
      assert.ok(Math.abs(consumed - consumes) < 1e-6 * Math.max(1, consumes));
      assert.equal(r.backlog.length, windows);
      assert.equal(r.backlog.at(-1), Math.max(0, acks - consumes), 'never negative: a message consumed before its ack is not backlog');
    }));
  });

  it('aggregated percentiles are ordered and bound every window', () => {
    fc.assert(fc.property(fc.integer({ min: 100, max: 5_000 }), events, (windowMs, list) => {
      const { rec, end } = record(windowMs, list);
      const r = rec.result(SHAPE, end);
      for (const s of ['PublishLatency', 'EndToEndLatency']) {
        const p = ['50pct', '75pct', '95pct', '99pct', '999pct', '9999pct', '99999pct', 'Max'].map((c) => r[`aggregated${s}${c}`] as number);
        for (let i = 1; i < p.length; i++) assert.ok((p[i] as number) >= (p[i - 1] as number), `${s}: ${p.join(' ')}`);
        const windowMax = (r[`${s[0]?.toLowerCase()}${s.slice(1)}Max`] as number[]);
        assert.ok(Math.max(0, ...windowMax) <= (p.at(-1) as number) * 1.001 + 0.001);
      }
    }));
  });

  it('keeps sub-millisecond latencies and reports them in ms', () => {
    const rec = new OmbRecorder(1_000, 0);
    rec.acked(10, 4, 0.25, 0.05);
    rec.consumedOne(20, 0.5);
    const r = rec.result(SHAPE, 1_000);
    assert.equal(r['aggregatedPublishLatency50pct'], 0.25);
    assert.equal(r['aggregatedEndToEndLatency50pct'], 0.5);
    assert.equal(r['aggregatedPublishDelayLatency50pct'], 50, 'publish delay in µs, as OMB');
    assert.deepEqual(r.publishRate, [4]);
  });
});

describe('rampStepOk', () => {
  it('passes a step that kept the rate with a bounded p99 and backlog, and fails any that did not', () => {
    const ok = { targetRate: 10_000, achievedRate: 9_950, p99Ms: 40, backlog: 0 };
    assert.equal(rampStepOk(ok, 200), true);
    assert.equal(rampStepOk({ ...ok, achievedRate: 8_000 }, 200), false);
    assert.equal(rampStepOk({ ...ok, p99Ms: 250 }, 200), false);
    assert.equal(rampStepOk({ ...ok, backlog: 5_000 }, 200), false);
  });
});
