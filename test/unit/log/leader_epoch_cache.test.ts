// LeaderEpochCache as a pure state machine: invariants under random assign/truncate sequences,
// OffsetsForLeaderEpoch answers against a per-offset model of the log, and its checkpoint text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LeaderEpochCache, UNDEFINED_EPOCH, type EpochEntry } from '../../../src/log/leader_epoch_cache.js';

function assertInvariants(entries: readonly EpochEntry[]): void {
  for (let i = 1; i < entries.length; i++) {
    assert.ok(entries[i]!.epoch > entries[i - 1]!.epoch, `epochs strictly increase: ${JSON.stringify(entries)}`);
    assert.ok(entries[i]!.startOffset >= entries[i - 1]!.startOffset, `start offsets never decrease: ${JSON.stringify(entries)}`);
  }
}

type Op = { kind: 'assign'; epochStep: number; offsetStep: number } | { kind: 'end' | 'start'; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('assign' as const), epochStep: fc.nat({ max: 3 }), offsetStep: fc.nat({ max: 20 }) }),
  fc.record({ kind: fc.constantFrom('end' as const, 'start' as const), at: fc.nat({ max: 200 }) }),
);

describe('LeaderEpochCache', () => {
  it('property: assign and truncations keep the invariants; truncation from the end keeps a prefix, from the start a moved suffix', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const cache = new LeaderEpochCache();
        let nextOffset = 0;
        for (const o of ops) {
          const before = cache.entries.map((e) => ({ ...e }));
          if (o.kind === 'assign') {
            const epoch = Math.max(0, cache.latestEpoch) + o.epochStep;
            // A log's end never falls below its start, which truncateFromStart may have moved up.
            nextOffset = Math.max(nextOffset, before.at(-1)?.startOffset ?? 0) + o.offsetStep;
            const added = cache.assign(epoch, nextOffset);
            assert.equal(added, epoch !== before.at(-1)?.epoch);
            assert.deepEqual(cache.entries, added ? [...before, { epoch, startOffset: nextOffset }] : before);
          } else if (o.kind === 'end') {
            cache.truncateFromEnd(o.at);
            assert.deepEqual(cache.entries, before.filter((e) => e.startOffset < o.at));
          } else {
            cache.truncateFromStart(o.at);
            const kept = before.filter((e) => e.startOffset > o.at);
            const covering = before.filter((e) => e.startOffset <= o.at).at(-1);
            assert.deepEqual(cache.entries, covering ? [{ epoch: covering.epoch, startOffset: o.at }, ...kept] : kept);
          }
          assertInvariants(cache.entries);
        }
      }),
    );
  });

  it('property: endOffsetFor agrees with a model that knows the epoch of every offset', () => {
    const log = fc.record({
      firstOffset: fc.nat({ max: 50 }),
      epochs: fc.array(fc.record({ gap: fc.integer({ min: 1, max: 3 }), batches: fc.integer({ min: 1, max: 6 }) }), { maxLength: 8 }),
    });
    fc.assert(
      fc.property(log, ({ firstOffset, epochs }) => {
        const cache = new LeaderEpochCache();
        const epochOf: number[] = []; // epochOf[o - firstOffset]
        let epoch = -1;
        for (const e of epochs) {
          epoch += e.gap;
          cache.assign(epoch, firstOffset + epochOf.length);
          for (let i = 0; i < e.batches; i++) epochOf.push(epoch);
        }
        const logEnd = firstOffset + epochOf.length;
        for (let requested = -1; requested <= epoch + 2; requested++) {
          const firstAfter = epochOf.findIndex((x) => x > requested);
          const seen = epochOf.filter((x) => x <= requested);
          let expected: { epoch: number; endOffset: number };
          if (requested === UNDEFINED_EPOCH) expected = { epoch: -1, endOffset: -1 };
          else if (firstAfter >= 0) expected = { epoch: seen.length > 0 ? seen.at(-1)! : requested, endOffset: firstOffset + firstAfter };
          else if (requested === epoch) expected = { epoch, endOffset: logEnd };
          else expected = { epoch: -1, endOffset: -1 };
          assert.deepEqual(cache.endOffsetFor(requested, logEnd), expected, `epoch ${requested} in ${JSON.stringify(cache.entries)}`);
        }
      }),
    );
  });

  it('refuses an epoch or start offset that goes back', () => {
    const cache = new LeaderEpochCache();
    cache.assign(3, 10);
    assert.throws(() => cache.assign(2, 20), RangeError);
    assert.throws(() => cache.assign(4, 9), RangeError);
    assert.equal(cache.assign(3, 15), false);
    assert.deepEqual(cache.entries, [{ epoch: 3, startOffset: 10 }]);
  });

  it('checkpoints in Kafka text layout; damaged or inconsistent files read as absent', () => {
    const cache = LeaderEpochCache.of([
      { epoch: 0, startOffset: 0 },
      { epoch: 4, startOffset: 17 },
    ])!;
    const text = cache.encode().toString();
    assert.equal(text, '0\n2\n0 0\n4 17\n');
    assert.deepEqual(LeaderEpochCache.decode(Buffer.from(text))!.entries, cache.entries);
    for (const bad of ['', '0\n2\n0 0\n', '1\n1\n0 0\n', '0\n1\n0 0', '0\n2\n4 0\n0 17\n', '0\n1\n-1 0\n', '0\n1\n0 x\n', '0\n1\n0 0 0\n']) {
      assert.equal(LeaderEpochCache.decode(Buffer.from(bad)), null, JSON.stringify(bad));
    }
  });

  it('property: decoding any bytes never throws and yields a cache that keeps the invariants', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 3 }), (garbage, prefix) => {
        const head = ['', '0\n', '0\n1\n', '0\n2\n1 '][prefix]!;
        const cache = LeaderEpochCache.decode(Buffer.concat([Buffer.from(head), garbage]));
        if (cache) assertInvariants(cache.entries);
      }),
    );
  });
});
