// The dynamic replication throttle: the rate it gives keeps every resource of a broker under its
// target and uses at least the configured share (≥ 80%) of the binding resource's headroom, backs
// off when a broker is over its target, stays in its bounds, and the link types and per-link caps
// follow racks and AZs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_THROTTLE, azOf, brokerRate, checkThrottleOptions, linkType, throttleRates, type BrokerUsage } from '../../../../src/cluster/expansion/throttle.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';

const GB = 1e9;

const usageArb: fc.Arbitrary<BrokerUsage> = fc.record({
  id: fc.nat(10),
  cpu: fc.double({ min: 0, max: 1, noNaN: true }),
  nic: fc.double({ min: 0, max: 1, noNaN: true }),
  disk: fc.double({ min: 0, max: 1, noNaN: true }),
  cpuBytesPerSec: fc.double({ min: 0.1 * GB, max: 4 * GB, noNaN: true }),
  nicBytesPerSec: fc.double({ min: 0.1 * GB, max: 4 * GB, noNaN: true }),
  diskBytesPerSec: fc.double({ min: 0.1 * GB, max: 4 * GB, noNaN: true }),
  replicationBytesPerSec: fc.double({ min: 0, max: 0.05 * GB, noNaN: true }),
});

describe('dynamic throttle', () => {
  it('keeps each resource under its target and gives the copy at least 80% of the headroom left', () => {
    fc.assert(
      fc.property(usageArb, (u0) => {
        const o = DEFAULT_THROTTLE;
        // The copy's own share of each resource is part of its utilisation.
        const u = { ...u0, cpu: Math.max(u0.cpu, u0.replicationBytesPerSec / u0.cpuBytesPerSec), nic: Math.max(u0.nic, u0.replicationBytesPerSec / u0.nicBytesPerSec), disk: Math.max(u0.disk, u0.replicationBytesPerSec / u0.diskBytesPerSec) };
        const rate = brokerRate(u, o);
        assert.ok(rate >= o.minBytesPerSec && rate <= o.maxBytesPerSec);
        const after = (used: number, capacity: number): number => used + (rate - u.replicationBytesPerSec) / capacity;
        const resources = [
          { used: u.cpu, capacity: u.cpuBytesPerSec, target: o.targets.cpu },
          { used: u.nic, capacity: u.nicBytesPerSec, target: o.targets.nic },
          { used: u.disk, capacity: u.diskBytesPerSec, target: o.targets.disk },
        ];
        if (rate > o.minBytesPerSec) {
          for (const r of resources) if (r.used <= r.target) assert.ok(after(r.used, r.capacity) <= r.target + 1e-9, 'a resource pushed over its target');
        }
        if (rate < o.maxBytesPerSec && resources.every((r) => r.used <= r.target)) {
          // The binding resource is the one with the least room left, in bytes/s; 1 KiB is the rate's rounding.
          const binding = Math.min(...resources.map((r) => (r.target - r.used) * r.capacity));
          assert.ok(rate - u.replicationBytesPerSec >= 0.8 * binding - 1024 || rate === o.minBytesPerSec);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('backs off below the current copy rate when a broker is over a target', () => {
    const u: BrokerUsage = { id: 1, cpu: 0.2, nic: 0.9, disk: 0.1, cpuBytesPerSec: GB, nicBytesPerSec: GB, diskBytesPerSec: GB, replicationBytesPerSec: 300e6 };
    const rate = brokerRate(u, DEFAULT_THROTTLE);
    // 300 MB/s + 0.8 × (0.7 − 0.9) × 1 GB/s = 140 MB/s, in whole KiB.
    assert.equal(rate, Math.floor(140e6 / 1024) * 1024);
    assert.equal(brokerRate({ ...u, nic: 1, replicationBytesPerSec: 0 }, DEFAULT_THROTTLE), DEFAULT_THROTTLE.minBytesPerSec);
  });

  it('classifies links by rack and AZ (a prefix before "/" or a mapping) and caps a broker by the sum of its streams', () => {
    assert.equal(azOf('use1-az1/r7', {}), 'use1-az1');
    assert.equal(azOf('r7', { r7: 'az2' }), 'az2');
    assert.equal(azOf('r7', {}), 'r7');
    assert.equal(linkType('az1/r1', 'az1/r1', {}), 'same-rack');
    assert.equal(linkType('az1/r1', 'az1/r2', {}), 'same-az');
    assert.equal(linkType('az1/r1', 'az2/r1', {}), 'cross-az');
    assert.equal(linkType('r1', 'r2', { r1: 'a', r2: 'a' }), 'same-az');
    assert.equal(linkType(null, null, {}), 'same-rack');
    assert.equal(linkType(null, 'r1', {}), 'cross-az');
    const racks = new Map<number, string | null>([[1, 'az1/r1'], [2, 'az1/r2'], [3, 'az2/r1']]);
    const idle = (id: number): BrokerUsage => ({ id, cpu: 0, nic: 0, disk: 0, cpuBytesPerSec: 100 * GB, nicBytesPerSec: 100 * GB, diskBytesPerSec: 100 * GB, replicationBytesPerSec: 0 });
    const usage = new Map([1, 2, 3].map((id) => [id, idle(id)]));
    const o = { ...DEFAULT_THROTTLE, linkCaps: { 'same-rack': 400e6, 'same-az': 200e6, 'cross-az': 50e6 } };
    const rates = throttleRates([{ from: 1, to: 2 }, { from: 1, to: 3 }], racks, usage, o);
    const kib = (x: number): number => Math.floor(x / 1024) * 1024;
    assert.deepEqual([...rates], [[1, kib(250e6)], [2, kib(200e6)], [3, kib(50e6)]]);
    // Before any sample a broker gets the initial rate, under its link cap.
    assert.deepEqual([...throttleRates([{ from: 1, to: 3 }], racks, new Map(), o)], [[1, 10 * 1024 ** 2], [3, 10 * 1024 ** 2]]);
  });

  it('refuses options outside the promised bounds with INVALID_CONFIG', () => {
    for (const bad of [{ headroomShare: 0.5 }, { intervalMs: 10_000 }, { minBytesPerSec: 10 }, { targets: { cpu: 0.7, nic: 1.5, disk: 0.8 } }]) {
      assert.throws(() => checkThrottleOptions({ ...DEFAULT_THROTTLE, ...bad }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_CONFIG);
    }
    checkThrottleOptions(DEFAULT_THROTTLE);
  });
});
