// The Kafka listener's per-IP bounds on random arrival and close sequences: never more open
// connections from an address than its cap, never a delay past the throttle bound, connections
// start no faster than the creation rate allows (per listener, and per address: its ip quota's
// rate when it has one, even after the full table evicted it), a refusal changes nothing, and the
// address table stays within its bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConnectionQuotas, type ConnectionQuotaOptions } from '../../../src/net/connection_quotas.js';

const IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '127.0.0.1', '::1'];

type Step = { readonly kind: 'connect'; readonly ip: number; readonly gapMs: number } | { readonly kind: 'close'; readonly pick: number; readonly gapMs: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('connect' as const), ip: fc.integer({ min: 0, max: IPS.length - 1 }), gapMs: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), pick: fc.nat(), gapMs: fc.integer({ min: 0, max: 30 }) }) },
);

/** 10.0.0.1's ip quota (connections/s), if it has one. */
const QUOTED_IP = '10.0.0.1';

const optsArb = fc.record({
  maxPerIp: fc.integer({ min: 1, max: 20 }),
  overrides: fc.constant(new Map([['127.0.0.1', 3]])),
  creationRate: fc.integer({ min: 1, max: 200 }),
  maxThrottleMs: fc.integer({ min: 0, max: 1000 }),
  maxTrackedIps: fc.integer({ min: 1, max: IPS.length }),
  quotedRate: fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
}).map(({ quotedRate, ...o }) => ({ ...o, quotedRate, ipRate: (ip: string) => (ip === QUOTED_IP ? quotedRate : undefined) })) as fc.Arbitrary<ConnectionQuotaOptions & { quotedRate?: number }>;

/** Most starts one GCRA key allows within a span of `spanMs`: the burst of one second plus the rate. */
function maxStarts(rate: number, spanMs: number): number {
  const interval = 1000 / rate;
  const tolerance = Math.max(0, 1000 - interval);
  return Math.floor((spanMs + tolerance) / interval + 1e-9) + 1;
}

function checkRate(starts: readonly number[], rate: number, what: string): void {
  const sorted = [...starts].sort((a, b) => a - b);
  // Every run of consecutive starts: no more of them than the span they cover allows.
  for (let lo = 0; lo < sorted.length; lo++) {
    for (let hi = lo; hi < sorted.length && sorted[hi]! - sorted[lo]! < 2000; hi++) {
      const n = hi - lo + 1;
      assert.ok(n <= maxStarts(rate, sorted[hi]! - sorted[lo]!), `${what}: ${n} starts within ${sorted[hi]! - sorted[lo]!} ms at ${rate}/s`);
    }
  }
}

test('caps, throttle bound, creation rate and table bound hold on any sequence', () => {
  fc.assert(
    fc.property(optsArb, fc.array(stepArb, { maxLength: 300 }), (opts, steps) => {
      const q = new ConnectionQuotas(opts);
      let now = 0;
      const open: string[] = [];
      const startsByIp = new Map<string, number[]>();
      const allStarts: number[] = [];
      for (const step of steps) {
        now += step.gapMs;
        if (step.kind === 'close') {
          if (open.length === 0) continue;
          const [ip] = open.splice(step.pick % open.length, 1);
          q.release(ip!, now);
          continue;
        }
        const ip = IPS[step.ip]!;
        const before = q.openFrom(ip);
        const verdict = q.admit(ip, now);
        if (verdict.kind === 'refuse') {
          assert.equal(q.openFrom(ip), before, 'a refusal counts nothing');
          if (verdict.reason === 'per-ip-cap') assert.equal(before, q.capOf(ip));
          continue;
        }
        assert.ok(verdict.delayMs >= 0 && verdict.delayMs <= opts.maxThrottleMs, `delay ${verdict.delayMs}`);
        open.push(ip);
        const start = now + verdict.delayMs;
        allStarts.push(start);
        startsByIp.set(ip, [...(startsByIp.get(ip) ?? []), start]);
        assert.ok(q.openFrom(ip) <= q.capOf(ip), `${q.openFrom(ip)} open from ${ip}, cap ${q.capOf(ip)}`);
        assert.ok(q.trackedIps <= opts.maxTrackedIps);
      }
      checkRate(allStarts, opts.creationRate, 'listener');
      for (const [ip, starts] of startsByIp) checkRate(starts, ip === QUOTED_IP ? opts.quotedRate ?? opts.creationRate : opts.creationRate, ip);
      for (const ip of IPS) assert.equal(q.openFrom(ip), open.filter((o) => o === ip).length);
    }),
  );
});

test('an ip quota replaces the creation rate for its address only', () => {
  const q = new ConnectionQuotas({
    maxPerIp: 1000, overrides: new Map(), creationRate: 100, maxThrottleMs: 1000, maxTrackedIps: 10, ipRate: (ip) => (ip === QUOTED_IP ? 1 : undefined),
  });
  const quoted = Array.from({ length: 5 }, () => q.admit(QUOTED_IP, 0));
  assert.deepEqual(quoted, [{ kind: 'admit', delayMs: 0 }, { kind: 'admit', delayMs: 1000 }, ...Array.from({ length: 3 }, () => ({ kind: 'refuse', reason: 'creation-rate' }))]);
  const other = Array.from({ length: 50 }, () => q.admit('10.0.0.2', 0));
  assert.ok(other.every((v) => v.kind === 'admit' && v.delayMs === 0), 'another address keeps the listener\'s rate (a burst of one second\'s worth)');
});

test('an ip evicted from a full table with its next slot ahead waits for that slot when it comes back', () => {
  const q = new ConnectionQuotas({
    maxPerIp: 1, overrides: new Map(), creationRate: 3, maxThrottleMs: 2000, maxTrackedIps: 1, ipRate: (ip) => (ip === QUOTED_IP ? 1 : undefined),
  });
  assert.deepEqual(q.admit(QUOTED_IP, 0), { kind: 'admit', delayMs: 0 });
  q.release(QUOTED_IP, 0);
  // The table holds one IP: the quoted one, idle with its next slot at 1000 ms, is evicted. The
  // new IP may be the same client, so it starts from that slot too (less its own burst of 667 ms).
  const other = q.admit('10.0.0.2', 0);
  assert.equal(other.kind, 'admit');
  assert.ok(other.kind === 'admit' && Math.abs(other.delayMs - 1000 / 3) < 1e-6, `delayed ${JSON.stringify(other)}`);
  q.release('10.0.0.2', 0);
  assert.equal(q.trackedIps, 1);
  // Evicted in turn, 10.0.0.2's next slot (1333 ms) is now where any IP outside the table starts.
  const back = q.admit(QUOTED_IP, 0);
  assert.ok(back.kind === 'admit' && back.delayMs >= 1000, `forgetting the ip gave it its slot early: ${JSON.stringify(back)}`);
});

test('a burst beyond the rate is delayed slot by slot, then refused past the throttle bound', () => {
  const q = new ConnectionQuotas({ maxPerIp: 1000, overrides: new Map(), creationRate: 10, maxThrottleMs: 500, maxTrackedIps: 10 });
  const delays: number[] = [];
  let refused = 0;
  for (let i = 0; i < 30; i++) {
    const v = q.admit('10.0.0.1', 0);
    if (v.kind === 'admit') delays.push(v.delayMs);
    else {
      assert.equal(v.reason, 'creation-rate');
      refused++;
    }
  }
  // A burst of one second's worth (10) at once, then one every 100 ms up to 500 ms.
  assert.deepEqual(delays, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 200, 300, 400, 500]);
  assert.equal(refused, 15);
});

test('the per-IP cap refuses, an override raises it, and a close frees a place', () => {
  const q = new ConnectionQuotas({ maxPerIp: 2, overrides: new Map([['10.0.0.9', 4]]), creationRate: 1e9, maxThrottleMs: 0, maxTrackedIps: 10 });
  assert.equal(q.admit('10.0.0.1', 0).kind, 'admit');
  assert.equal(q.admit('10.0.0.1', 0).kind, 'admit');
  assert.deepEqual(q.admit('10.0.0.1', 0), { kind: 'refuse', reason: 'per-ip-cap' });
  for (let i = 0; i < 4; i++) assert.equal(q.admit('10.0.0.9', 0).kind, 'admit');
  assert.equal(q.admit('10.0.0.9', 0).kind, 'refuse');
  q.release('10.0.0.1', 1);
  assert.equal(q.admit('10.0.0.1', 1).kind, 'admit');
});

test('a full table forgets idle addresses first and refuses a new one only when every entry has connections', () => {
  const q = new ConnectionQuotas({ maxPerIp: 5, overrides: new Map(), creationRate: 1e9, maxThrottleMs: 0, maxTrackedIps: 2 });
  assert.equal(q.admit('a', 0).kind, 'admit');
  assert.equal(q.admit('b', 0).kind, 'admit');
  assert.deepEqual(q.admit('c', 0), { kind: 'refuse', reason: 'ip-table-full' });
  q.release('a', 10);
  assert.equal(q.admit('c', 10).kind, 'admit');
  assert.equal(q.trackedIps, 2);
  assert.throws(() => q.release('a', 11), /no connection/);
});
