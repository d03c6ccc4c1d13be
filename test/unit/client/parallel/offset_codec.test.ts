// Commit-metadata codec: round trips in both formats, the budget (null exactly when the
// shortest encoding does not fit), the bitmap bound, and that foreign, corrupt or mismatched
// strings decode to null without throwing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  CompletedOffsets,
  bitmapEncodedLength,
  decodeOffsetMetadata,
  encodeOffsetMetadata,
} from '../../../../src/client/parallel/offset_codec.js';

const runLength = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 2 ** 20 }));
const runsArb = fc.array(fc.tuple(runLength, runLength), { maxLength: 60, size: 'medium' }).map((pairs) => pairs.flat());
const baseArb = fc.oneof(fc.nat({ max: 1000 }), fc.nat({ max: 2 ** 52 }));

function spanOf(runs: readonly number[]): number {
  return runs.reduce((a, b) => a + b, 0);
}

describe('offset metadata codec', () => {
  it('round-trips and fits the budget it was given', () => {
    fc.assert(
      fc.property(baseArb, runsArb, fc.integer({ min: 0, max: 600 }), (base, runs, budget) => {
        const unlimited = encodeOffsetMetadata(base, runs, Number.MAX_SAFE_INTEGER) as string;
        const decoded = decodeOffsetMetadata(unlimited, base);
        assert.ok(decoded !== null);
        assert.deepEqual(decoded.runs, runs);
        assert.equal(decoded.base, base);
        const text = encodeOffsetMetadata(base, runs, budget);
        if (text === null) assert.ok(unlimited.length > budget);
        else {
          assert.equal(text, unlimited);
          assert.ok(text.length <= budget);
        }
        assert.ok(/^[\x20-\x7e]*$/.test(unlimited), 'metadata is printable ASCII');
        if (runs.length > 0) assert.ok(unlimited.length <= bitmapEncodedLength(base, spanOf(runs)));
      }),
      { numRuns: 500 },
    );
  });

  it('answers membership like the runs say, in any query order', () => {
    fc.assert(
      fc.property(fc.nat({ max: 1000 }), runsArb.map((r) => r.map((x) => Math.min(x, 50))), fc.array(fc.nat({ max: 3000 })), (base, runs, queries) => {
        const decoded = decodeOffsetMetadata(encodeOffsetMetadata(base, runs, 1e9), base) as CompletedOffsets;
        const complete = new Set<number>();
        let at = base;
        runs.forEach((run, i) => {
          if (i % 2 === 1) for (let o = at; o < at + run; o++) complete.add(o);
          at += run;
        });
        for (const q of [...queries, ...[...queries].sort((a, b) => a - b)]) assert.equal(decoded.has(base + q - 100), complete.has(base + q - 100));
        assert.equal(decoded.count, complete.size);
      }),
    );
  });

  it('uses the bitmap when runs are short and runs when they are long', () => {
    const alternating = Array.from({ length: 200 }, () => 1);
    const bitmap = encodeOffsetMetadata(0, alternating, 4096) as string;
    assert.equal(Buffer.from(bitmap.slice(3), 'base64url')[0], 2);
    assert.equal(bitmap.length, bitmapEncodedLength(0, 200));
    const long = encodeOffsetMetadata(0, [1, 100_000], 4096) as string;
    assert.equal(Buffer.from(long.slice(3), 'base64url')[0], 1);
    assert.ok(long.length < 20);
  });

  it('encodes nothing complete as the empty string', () => {
    assert.equal(encodeOffsetMetadata(42, [], 0), '');
    assert.deepEqual(decodeOffsetMetadata('', 42)?.runs, []);
    assert.deepEqual(decodeOffsetMetadata(null, 42)?.runs, []);
    assert.equal(decodeOffsetMetadata(null, 42)?.has(42), false);
  });

  it('never throws on foreign strings and rejects every corruption', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.nat(), (s, base) => {
        const decoded = decodeOffsetMetadata(s, base);
        if (decoded !== null) assert.ok(s === '' || s.startsWith('sl:'));
        const prefixed = decodeOffsetMetadata('sl:' + s, base);
        assert.ok(prefixed === null || prefixed instanceof CompletedOffsets);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(baseArb, runsArb.filter((r) => r.length > 0), fc.nat(), fc.integer({ min: 1, max: 63 }), (base, runs, at, flip) => {
        const text = encodeOffsetMetadata(base, runs, 1e9) as string;
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const i = 3 + (at % (text.length - 3));
        const replaced = alphabet[(alphabet.indexOf(text[i] as string) + flip) % 64] as string;
        const corrupt = text.slice(0, i) + replaced + text.slice(i + 1);
        assert.equal(decodeOffsetMetadata(corrupt, base), null);
        assert.equal(decodeOffsetMetadata(text.slice(0, -1), base), null);
        assert.equal(decodeOffsetMetadata(text + 'A', base), null);
        assert.equal(decodeOffsetMetadata(text, base + 1), null, 'written for another committed offset');
      }),
      { numRuns: 500 },
    );
  });

  it('rejects malformed runs when encoding', () => {
    assert.throws(() => encodeOffsetMetadata(0, [1], 100), RangeError);
    assert.throws(() => encodeOffsetMetadata(0, [1, 0], 100), RangeError);
    assert.throws(() => encodeOffsetMetadata(-1, [1, 1], 100), RangeError);
  });
});
