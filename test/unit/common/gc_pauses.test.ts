// GcPauses: the calling thread's scavenges arrive as minor pauses, in the disk timings' buckets,
// each take() starts over, and close() stops the recording.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GC_PAUSE_BOUNDS, GcPauses } from '../../../src/common/gc_pauses.js';
import { churnYoungGeneration } from '../../helpers/young_gc.js';

/** 'gc' entries reach their observer asynchronously, after the pause. */
const delivered = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

describe('GcPauses', () => {
  it('counts this thread\'s scavenges as minor pauses, per take()', async () => {
    const gc = new GcPauses();
    try {
      churnYoungGeneration();
      await delivered();
      const first = new Map(gc.take());
      const minor = first.get('minor');
      assert.ok(minor !== undefined && minor.count > 0, `minor pauses: ${JSON.stringify([...first.keys()])}`);
      assert.equal(minor.counts.length, GC_PAUSE_BOUNDS.length + 1);
      assert.equal(minor.counts.reduce((a, b) => a + b), minor.count);
      assert.ok(minor.sum > 0 && minor.sum < 5, `${minor.sum} s of pauses`);
      churnYoungGeneration();
      await delivered();
      const second = new Map(gc.take()).get('minor');
      assert.ok(second !== undefined && second.count > 0, 'the next take() holds the pauses after the first');
    } finally {
      gc.close();
    }
  });

  it('records nothing once closed', async () => {
    const gc = new GcPauses();
    gc.close();
    churnYoungGeneration();
    await delivered();
    assert.deepEqual(gc.take(), []);
  });
});
