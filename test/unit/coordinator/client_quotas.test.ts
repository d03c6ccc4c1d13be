// Client quotas as Kafka's ClientQuotaManager applies them: the most specific configured entity
// wins (user+client-id first, default client-id last), a <default> gives each user or client id
// its own rate while a named entity is shared, and KIP-219's delay holds a client that honours it
// (or is muted for it) to its quota in the long run while a client under its quota is never
// throttled. The clock is simulated.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ClientQuotas, quotaEntityKey, quotaEntityOf, resolveConnectionRate, resolveQuota, type QuotaEntity, type QuotaValues,
} from '../../../src/coordinator/client_quotas.js';

function configs(entries: ReadonlyArray<[QuotaEntity, QuotaValues]>): Map<string, QuotaValues> {
  return new Map(entries.map(([e, v]) => [quotaEntityKey(e), v]));
}

describe('quota entities', () => {
  it('writes each entity as one distinct key and reads it back', () => {
    const entities: QuotaEntity[] = [
      { user: 'a' }, { user: null }, { clientId: 'a' }, { clientId: null }, { user: 'a', clientId: 'b' },
      { user: null, clientId: 'b' }, { user: 'a', clientId: null }, { user: null, clientId: null }, { user: '"0"' },
      { ip: '10.0.0.1' }, { ip: null },
    ];
    const keys = entities.map(quotaEntityKey);
    assert.equal(new Set(keys).size, entities.length);
    assert.deepEqual(keys.map(quotaEntityOf), entities);
  });

  it('resolves an address\'s connection rate: its own ip quota, else the <default> ip\'s, else none', () => {
    const both = configs([[{ ip: '10.0.0.1' }, { connection_creation_rate: 2 }], [{ ip: null }, { connection_creation_rate: 7 }], [{ user: '10.0.0.3' }, { producer_byte_rate: 1 }]]);
    assert.equal(resolveConnectionRate(both, '10.0.0.1'), 2);
    assert.equal(resolveConnectionRate(both, '10.0.0.3'), 7);
    assert.equal(resolveConnectionRate(configs([[{ ip: '10.0.0.1' }, { connection_creation_rate: 2 }]]), '10.0.0.3'), undefined);
  });

  it('resolves by Kafka precedence, most specific first', () => {
    // Each level, most specific first; removing it reveals the next.
    const levels: Array<[QuotaEntity, string]> = [
      [{ user: 'u', clientId: 'c' }, '["u","c"]'],
      [{ user: 'u', clientId: null }, '["u","c"]'],
      [{ user: 'u' }, '["u",0]'],
      [{ user: null, clientId: 'c' }, '["u","c"]'],
      [{ user: null, clientId: null }, '["u","c"]'],
      [{ user: null }, '["u",0]'],
      [{ clientId: 'c' }, '[0,"c"]'],
      [{ clientId: null }, '[0,"c"]'],
    ];
    for (let i = 0; i < levels.length; i++) {
      const map = configs(levels.slice(i).map(([e], j) => [e, { producer_byte_rate: 1000 * (i + j + 1) }]));
      const r = resolveQuota(map, 'producer_byte_rate', 'u', 'c');
      assert.equal(r?.entity, quotaEntityKey(levels[i]![0]), `level ${i}`);
      assert.equal(r?.bound, 1000 * (i + 1));
      assert.equal(r?.sensor, `producer_byte_rate:${levels[i]![1]}`);
    }
    assert.equal(resolveQuota(configs([[{ user: 'other' }, { producer_byte_rate: 1 }]]), 'producer_byte_rate', 'u', 'c'), null);
  });

  it('resolves each key on its own: a more specific entity without the key does not hide a general one with it', () => {
    const map = configs([[{ user: 'u', clientId: 'c' }, { consumer_byte_rate: 5 }], [{ clientId: null }, { producer_byte_rate: 7 }]]);
    assert.equal(resolveQuota(map, 'producer_byte_rate', 'u', 'c')?.bound, 7);
    assert.equal(resolveQuota(map, 'consumer_byte_rate', 'u', 'c')?.bound, 5);
  });

  it('gives every client id its own rate under a default, and one shared rate under a named entity', () => {
    const q = new ClientQuotas(() => configs([[{ clientId: null }, { producer_byte_rate: 1000 }], [{ user: 'team' }, { producer_byte_rate: 1000 }]]));
    // Ten windows of the rate in one go: right at the bound, so not throttled; more is.
    assert.equal(q.record('producer_byte_rate', 'ANONYMOUS', 'a', 10_000, 0), 0);
    assert.equal(q.record('producer_byte_rate', 'ANONYMOUS', 'b', 10_000, 0), 0, 'client b has a rate of its own');
    assert.ok(q.record('producer_byte_rate', 'ANONYMOUS', 'a', 1000, 0) > 0);
    assert.equal(q.record('producer_byte_rate', 'team', 'x', 10_000, 0), 0);
    assert.ok(q.record('producer_byte_rate', 'team', 'y', 1000, 0) > 0, 'x and y share the user quota of team');
  });

  it('asks (rate - quota) / quota of the window span, capped at the whole window', () => {
    const q = new ClientQuotas(() => configs([[{ clientId: null }, { producer_byte_rate: 1000 }]]));
    // 20 000 bytes over a 10 s span: 2000/s, twice the quota, so 10 s more are needed.
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 20_000, 0), 10_000);
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 1_000_000, 0), q.maxDelayMs);
  });

  it('counts request time as a percentage of one thread', () => {
    const q = new ClientQuotas(() => configs([[{ clientId: null }, { request_percentage: 10 }]]));
    // 10 % of a thread over the 10 s span is 1000 ms of work.
    assert.equal(q.record('request_percentage', 'u', 'c', 1000, 0), 0);
    assert.ok(q.record('request_percentage', 'u', 'c', 100, 0) > 0);
  });

  it('costs nothing and throttles nothing with no quota', () => {
    const q = new ClientQuotas(() => new Map());
    assert.equal(q.active, false);
    assert.equal(q.record('producer_byte_rate', 'u', 'c', 1e12, 0), 0);
    assert.equal(q.sensorCount, 0);
  });

  it('bounds the rates it keeps', () => {
    const q = new ClientQuotas(() => configs([[{ clientId: null }, { producer_byte_rate: 1000 }]]), { windowMs: 1000, windows: 11, maxSensors: 10 });
    for (let i = 0; i < 100; i++) q.record('producer_byte_rate', 'u', `c${i}`, 1, i);
    assert.ok(q.sensorCount <= 10);
  });
});

describe('KIP-219 throttling (properties)', () => {
  const RUN_MS = 120_000;

  /**
   * A client offering `offered` bytes/s in requests of `chunk` bytes, which waits out each throttle
   * time before its next request (it honours KIP-219, or the broker's mute makes it). Returns the
   * bytes admitted and the largest delay asked.
   */
  function run(q: ClientQuotas, offered: number, chunk: number): { bytes: number; maxDelay: number } {
    const interval = (chunk * 1000) / offered;
    let bytes = 0;
    let maxDelay = 0;
    for (let t = 0; t < RUN_MS;) {
      const delay = q.record('producer_byte_rate', 'u', 'c', chunk, t);
      bytes += chunk;
      maxDelay = Math.max(maxDelay, delay);
      t += Math.max(interval, delay);
    }
    return { bytes, maxDelay };
  }

  it('holds any offered rate above the quota to within ±20% of it in the long run', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1_000, max: 50_000_000 }),
      fc.double({ min: 1.2, max: 50, noNaN: true }),
      // A request carries up to a second of the quota.
      fc.double({ min: 0.001, max: 1, noNaN: true }),
      (quota, overload, chunkShare) => {
        const q = new ClientQuotas(() => configs([[{ clientId: null }, { producer_byte_rate: quota }]]));
        const chunk = Math.max(1, Math.round(quota * chunkShare));
        const { bytes } = run(q, quota * overload, chunk);
        const rate = (bytes * 1000) / RUN_MS;
        assert.ok(rate >= quota * 0.8 && rate <= quota * 1.2, `admitted ${rate.toFixed(0)}/s against a quota of ${quota}/s (offered ${overload.toFixed(2)}x)`);
      },
    ), { numRuns: 200 });
  });

  it('never throttles a client under its quota', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1_000, max: 50_000_000 }),
      fc.double({ min: 0.01, max: 0.9, noNaN: true }),
      fc.double({ min: 0.001, max: 1, noNaN: true }),
      (quota, share, chunkShare) => {
        const q = new ClientQuotas(() => configs([[{ clientId: null }, { producer_byte_rate: quota }]]));
        const chunk = Math.max(1, Math.floor(quota * chunkShare));
        if (chunk * 1000 > quota * share * RUN_MS) return;
        assert.equal(run(q, quota * share, chunk).maxDelay, 0);
      },
    ), { numRuns: 200 });
  });
});
