// The pure parts composed into a model consumer (window rule → tracker → key router → worker
// pool with random completion order → commits of watermark + metadata), crashed at random points
// and restarted from the last successful commit: every message is processed at least once, and
// none that a successful commit recorded as complete (below its offset or in its metadata) is
// ever processed again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyRouter } from '../../../../src/client/parallel/key_router.js';
import type { RoutedMessage } from '../../../../src/client/parallel/key_router.js';
import { decodeOffsetMetadata, encodeOffsetMetadata } from '../../../../src/client/parallel/offset_codec.js';
import { WatermarkTracker } from '../../../../src/client/parallel/watermark.js';
import { mayStart } from '../../../../src/client/parallel/window.js';

interface Commit {
  readonly offset: number;
  readonly metadata: string;
}

/** What survives a crash: the broker's log and committed offset, and the handler's records. */
interface Durable {
  readonly log: readonly RoutedMessage[];
  commit: Commit;
  /** Offsets some successful commit recorded as complete. */
  readonly committedComplete: Set<number>;
  /** Handler completions, in order (the handler's own durable record). */
  readonly processed: number[];
}

class Instance {
  private readonly tracker: WatermarkTracker;
  private readonly router = new KeyRouter<RoutedMessage>({ maxQueued: 64 });
  private readonly running: RoutedMessage[] = [];
  /** Handler finished, tracker not told yet (a crash here loses the acknowledgement). */
  private readonly finished: RoutedMessage[] = [];
  private fetchIndex: number;

  constructor(
    private readonly d: Durable,
    private readonly budget: number,
    private readonly workers: number,
  ) {
    const decoded = decodeOffsetMetadata(d.commit.metadata, d.commit.offset);
    assert.ok(decoded !== null, 'our own metadata must decode');
    this.tracker = new WatermarkTracker(d.commit.offset, 1 << 16, decoded);
    this.fetchIndex = d.log.findIndex((m) => m.offset >= d.commit.offset);
    if (this.fetchIndex < 0) this.fetchIndex = d.log.length;
  }

  get done(): boolean {
    return this.fetchIndex === this.d.log.length && this.router.size === 0 && this.finished.length === 0;
  }

  /** One fetched message into the pipeline, if the window and the router allow it. */
  fetch(): boolean {
    const m = this.d.log[this.fetchIndex];
    if (m === undefined || this.router.full || !mayStart(this.tracker, m.offset, this.budget)) return false;
    this.fetchIndex++;
    if (this.tracker.started(m.offset)) this.router.submit(m);
    return true;
  }

  start(): boolean {
    if (this.running.length >= this.workers) return false;
    const m = this.router.next();
    if (m === null) return false;
    assert.ok(!this.d.committedComplete.has(m.offset), `offset ${m.offset} reprocessed after a commit recorded it`);
    this.running.push(m);
    return true;
  }

  finish(pick: number): boolean {
    if (this.running.length === 0) return false;
    const [m] = this.running.splice(pick % this.running.length, 1) as [RoutedMessage];
    this.d.processed.push(m.offset);
    this.finished.push(m);
    return true;
  }

  acknowledge(pick: number): boolean {
    if (this.finished.length === 0) return false;
    const [m] = this.finished.splice(pick % this.finished.length, 1) as [RoutedMessage];
    this.router.done(m);
    assert.equal(this.tracker.completed(m.offset), true);
    return true;
  }

  commit(): boolean {
    const offset = this.tracker.committable();
    const metadata = encodeOffsetMetadata(offset, this.tracker.completionRuns(), this.budget);
    assert.ok(metadata !== null, 'the window rule keeps metadata within budget');
    this.d.commit = { offset, metadata };
    // What this commit records as done: everything below its offset and what its metadata marks.
    const marked = decodeOffsetMetadata(metadata, offset);
    for (const m of this.d.log) if (m.offset < offset || marked?.has(m.offset)) this.d.committedComplete.add(m.offset);
    // And it must record every completion the tracker knows of.
    for (const o of this.tracker.completedAbove()) assert.ok(marked?.has(o), `completed ${o} missing from the commit`);
    return true;
  }
}

const logArb = fc
  .array(fc.tuple(fc.nat({ max: 2 }), fc.option(fc.nat({ max: 6 }), { nil: null, freq: 6 })), { minLength: 1, maxLength: 120, size: 'large' })
  .map((specs) => {
    let offset = 0;
    return specs.map(([gap, key]): RoutedMessage => {
      offset += gap === 2 ? 3 : 1; // some gaps, as compaction or transaction markers leave
      return { partition: 0, offset, key: key === null ? null : Buffer.from([key]) };
    });
  });

describe('crash and restart', () => {
  it('processes everything at least once and nothing a commit recorded twice', () => {
    fc.assert(
      fc.property(
        logArb,
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat({ max: 20 }), fc.nat()), { minLength: 50, maxLength: 800, size: 'large' }),
        (log, budget, workers, steps) => {
          const d: Durable = { log, commit: { offset: 0, metadata: '' }, committedComplete: new Set(), processed: [] };
          let instance = new Instance(d, budget, workers);
          for (const [action, pick] of steps) {
            if (action === 0) instance = new Instance(d, budget, workers); // crash, restart from the commit
            else if (action <= 5) instance.fetch();
            else if (action <= 10) instance.start();
            else if (action <= 14) instance.finish(pick);
            else if (action <= 18) instance.acknowledge(pick);
            else instance.commit();
          }
          // Then run to the end without crashing.
          for (let guard = 0; !instance.done; guard++) {
            assert.ok(guard < 100_000, 'no progress');
            const moved = instance.fetch() || instance.start() || instance.finish(guard) || instance.acknowledge(guard);
            assert.ok(moved || instance.done, 'stuck with work left');
          }
          instance.commit();
          const processed = new Set(d.processed);
          for (const m of log) assert.ok(processed.has(m.offset), `offset ${m.offset} never processed`);
          assert.equal(d.commit.offset, (log[log.length - 1] as RoutedMessage).offset + 1);
        },
      ),
      { numRuns: 400 },
    );
  });
});
