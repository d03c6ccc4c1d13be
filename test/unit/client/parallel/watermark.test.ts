// WatermarkTracker against a naive set-based model over random start/complete interleavings
// (with offset gaps), the committed-offset ≤ every-incomplete-offset property, completion runs,
// bounded memory over a long partition life, and the error cases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CompletedOffsets } from '../../../../src/client/parallel/offset_codec.js';
import { WatermarkTracker } from '../../../../src/client/parallel/watermark.js';

/** Ops: start the next message (after `gap` missing offsets) or complete the i-th incomplete one. */
const opArb = fc.oneof(
  fc.record({ kind: fc.constant('start' as const), gap: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: 5 })) }),
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }),
);

class Model {
  readonly started: number[] = [];
  readonly done = new Set<number>();
  next: number;
  constructor(readonly start: number) {
    this.next = start;
  }
  committable(): number {
    const lowest = this.started.find((o) => !this.done.has(o));
    return lowest ?? this.next;
  }
  incomplete(): number[] {
    return this.started.filter((o) => !this.done.has(o));
  }
  completedAbove(): number[] {
    const w = this.committable();
    return this.started.filter((o) => o >= w && this.done.has(o));
  }
}

/** Expands runs back into the complete offsets they mark (gaps included). */
function completeFromRuns(base: number, runs: readonly number[]): Set<number> {
  const out = new Set<number>();
  let at = base;
  runs.forEach((run, i) => {
    if (i % 2 === 1) for (let o = at; o < at + run; o++) out.add(o);
    at += run;
  });
  return out;
}

describe('WatermarkTracker', () => {
  it('matches the model and never commits past an incomplete offset', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 40 }), fc.array(opArb, { maxLength: 400, size: 'large' }), (start, ops) => {
        const tracker = new WatermarkTracker(start);
        const model = new Model(start);
        for (const op of ops) {
          if (op.kind === 'start') {
            const offset = model.next + op.gap;
            tracker.started(offset);
            model.started.push(offset);
            model.next = offset + 1;
          } else {
            const open = model.incomplete();
            if (open.length === 0) continue;
            const offset = open[op.pick % open.length] as number;
            assert.equal(tracker.completed(offset), true);
            model.done.add(offset);
          }
          const committed = tracker.committable();
          assert.equal(committed, model.committable());
          for (const o of model.incomplete()) assert.ok(committed <= o, `committed ${committed} > incomplete ${o}`);
          for (const o of model.started) if (o < committed) assert.ok(model.done.has(o));
        }
        assert.deepEqual(tracker.incomplete(), model.incomplete());
        assert.deepEqual(tracker.completedAbove(), model.completedAbove());
        assert.equal(tracker.inFlight, model.incomplete().length);
        // Runs mark every completed offset above the watermark and no incomplete one.
        const runs = tracker.completionRuns();
        assert.equal(runs.length % 2, 0);
        assert.ok(runs.every((r) => r >= 1));
        const marked = completeFromRuns(tracker.committable(), runs);
        for (const o of model.completedAbove()) assert.ok(marked.has(o), `completed ${o} not in runs`);
        for (const o of model.incomplete()) assert.ok(!marked.has(o), `incomplete ${o} marked complete`);
      }),
      { numRuns: 300 },
    );
  });

  it('commits the next offset to consume', () => {
    const t = new WatermarkTracker(100);
    assert.equal(t.committable(), 100);
    for (const o of [100, 101, 102, 105, 106]) t.started(o);
    assert.equal(t.completed(101), true);
    assert.equal(t.completed(105), true);
    assert.equal(t.committable(), 100);
    assert.deepEqual(t.incomplete(), [100, 102, 106]);
    assert.deepEqual(t.completedAbove(), [101, 105]);
    assert.deepEqual(t.completionRuns(), [1, 1, 3, 1]); // 100 | 101 | 102..104 (gap) | 105
    assert.equal(t.completed(100), true);
    assert.equal(t.committable(), 102);
    assert.equal(t.completed(102), true);
    assert.equal(t.committable(), 106);
    assert.deepEqual(t.completionRuns(), []);
    assert.equal(t.completed(106), true);
    assert.equal(t.committable(), 107); // last started + 1
    assert.equal(t.windowSize, 0);
  });

  it('carries resumed completions until the watermark passes them', () => {
    // Resumed from a commit at 10 whose metadata marks 12, 13 and 16 complete.
    const t = new WatermarkTracker(10, 100, new CompletedOffsets(10, [2, 2, 2, 1]));
    assert.deepEqual(t.completionRuns(), [2, 2, 2, 1]); // a commit right away keeps them
    assert.equal(t.started(10), true);
    assert.equal(t.started(12), false); // 11 was a gap; 12 is skipped
    assert.equal(t.started(13), false);
    assert.equal(t.started(14), true);
    assert.deepEqual(t.completionRuns(), [2, 2, 2, 1]);
    assert.equal(t.completed(10), true);
    assert.equal(t.committable(), 14);
    assert.deepEqual(t.completionRuns(), [2, 1]); // 14, 15 pending; 16 done
    assert.equal(t.completed(14), true);
    assert.equal(t.committable(), 15); // 15 not fetched yet: it may hold a message
    assert.equal(t.started(16), false);
    assert.equal(t.committable(), 17);
    assert.equal(t.alreadyComplete(16), false); // dropped once passed
    assert.throws(() => new WatermarkTracker(11, 100, new CompletedOffsets(10, [1, 1])), /another commit/);
  });

  it('holds memory to the window over a long life', () => {
    const t = new WatermarkTracker(0, 256);
    for (let o = 0; o < 200_000; o++) {
      t.started(o);
      if (o >= 100) assert.equal(t.completed(o - 100), true);
    }
    assert.equal(t.windowSize, 100);
    assert.equal(t.committable(), 200_000 - 100);
  });

  it('rejects out-of-order starts, unknown completions and a full window', () => {
    const t = new WatermarkTracker(10, 2);
    t.started(10);
    assert.throws(() => t.started(10), RangeError);
    t.started(12);
    assert.throws(() => t.started(13), /window full/);
    assert.throws(() => t.completed(11), /never started/);
    assert.throws(() => t.completed(20), /never started/);
    assert.equal(t.completed(12), true);
    assert.equal(t.completed(12), false);
    assert.equal(t.completed(10), true);
    assert.equal(t.completed(10), false); // below the watermark now
    assert.equal(t.completed(5), false);
    assert.throws(() => new WatermarkTracker(-1), RangeError);
  });
});
