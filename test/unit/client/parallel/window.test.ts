// In-flight window rule: under any completion order, a consumer that starts only what the rule
// allows always has commit metadata that fits its budget, and it always makes progress.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bitmapEncodedLength, decodeOffsetMetadata, encodeOffsetMetadata } from '../../../../src/client/parallel/offset_codec.js';
import { WatermarkTracker } from '../../../../src/client/parallel/watermark.js';
import { maxWindowSpan, mayStart } from '../../../../src/client/parallel/window.js';

describe('window rule', () => {
  it('finds the largest span whose worst case fits', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat({ max: 200 }), fc.nat({ max: 2 ** 52 })), fc.integer({ min: 0, max: 5000 }), (base, budget) => {
        const span = maxWindowSpan(base, budget);
        assert.ok(span >= 1);
        if (span >= 2) assert.ok(bitmapEncodedLength(base, span) <= budget);
        assert.ok(bitmapEncodedLength(base, span + 1) > budget);
      }),
    );
    // Kafka's default offset.metadata.max.bytes leaves room for ~24k offsets in flight.
    assert.ok(maxWindowSpan(0, 4096) > 24_000);
  });

  it('keeps the encoding within budget under any completion order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 120 }),
        fc.array(fc.oneof(fc.constant(-1), fc.nat()), { minLength: 1, maxLength: 600, size: 'large' }),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 20 }),
        (budget, ops, gaps) => {
          const tracker = new WatermarkTracker(1_000_000);
          let next = 1_000_000;
          for (let i = 0; i < ops.length; i++) {
            const op = ops[i] as number;
            const open = tracker.incomplete();
            if (op === -1 || open.length === 0) {
              if (mayStart(tracker, next, budget)) {
                tracker.started(next);
                next += 1 + (gaps[i % gaps.length] as number);
              } else {
                assert.ok(tracker.inFlight > 0, 'refused to start with nothing in flight');
              }
            } else {
              tracker.completed(open[op % open.length] as number);
            }
            const text = encodeOffsetMetadata(tracker.committable(), tracker.completionRuns(), budget);
            assert.notEqual(text, null, `metadata over budget ${budget}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a resumed consumer within budget under any completion order', () => {
    const longRuns = fc
      .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 5000 })), { minLength: 1, maxLength: 8 })
      .map((pairs) => pairs.flat());
    fc.assert(
      fc.property(longRuns, fc.integer({ min: 0, max: 40 }), fc.array(fc.nat(), { minLength: 50, maxLength: 1500, size: 'large' }), (runs, extra, ops) => {
        const base = 5000;
        const metadata = encodeOffsetMetadata(base, runs, 1e9) as string;
        const budget = metadata.length + extra;
        const tracker = new WatermarkTracker(base, 1 << 16, decodeOffsetMetadata(metadata, base));
        let next = base;
        for (const op of ops) {
          const open = tracker.incomplete();
          if (op % 3 !== 0 || open.length === 0) {
            if (mayStart(tracker, next, budget)) {
              // Unfetched offsets the metadata marks done are skipped; walk a few at a time.
              tracker.started(next);
              next += tracker.alreadyComplete(next + 1) ? 1 + (op % 50) : 1;
              while (next < tracker.resumedEnd && tracker.alreadyComplete(next) && op % 2 === 0) next += 1;
            }
          } else {
            tracker.completed(open[op % open.length] as number);
          }
          const text = encodeOffsetMetadata(tracker.committable(), tracker.completionRuns(), budget);
          assert.notEqual(text, null, `metadata over budget ${budget} (${metadata.length} at resume)`);
        }
      }),
      { numRuns: 300, endOnFailure: true },
    );
  });

  it('always allows the next offset of an empty window', () => {
    const tracker = new WatermarkTracker(5);
    assert.equal(mayStart(tracker, 1_000_000, 0), true);
    tracker.started(1_000_000);
    assert.equal(mayStart(tracker, 1_000_001, 0), false); // budget 0: one message at a time
    tracker.completed(1_000_000);
    assert.equal(mayStart(tracker, 1_000_001, 0), true);
  });

  it('limits by the tracker capacity too', () => {
    const tracker = new WatermarkTracker(0, 3);
    for (const o of [0, 1, 2]) tracker.started(o);
    assert.equal(mayStart(tracker, 3, 4096), false);
    tracker.completed(0);
    assert.equal(mayStart(tracker, 3, 4096), true);
  });

  it('lets a resumed consumer work past a long span its metadata covers in few runs', () => {
    // The last commit: offset 0 pending, 1..99_999 done, 100_000.. not reached.
    const metadata = encodeOffsetMetadata(0, [1, 99_999], 100) as string;
    const tracker = new WatermarkTracker(0, 1 << 16, decodeOffsetMetadata(metadata, 0));
    assert.equal(tracker.started(0), true);
    assert.equal(tracker.started(1), false);
    assert.equal(mayStart(tracker, 100_000, 100), true); // far past any bitmap window
    assert.equal(tracker.started(100_000), true);
    assert.notEqual(encodeOffsetMetadata(tracker.committable(), tracker.completionRuns(), 100), null);
  });
});
