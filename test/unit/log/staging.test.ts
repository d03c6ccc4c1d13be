// StagingArea.absorb, by which a commit cycle behind the head adds data staged later to the area it
// took: a run continuing the last one in the same segment extends it without touching the chunk
// list the area's earlier writes (maybe still in flight) hold; a run elsewhere is appended; the
// absorbed area is left empty.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Segment } from '../../../src/log/segment.js';
import { StagingArea } from '../../../src/log/staging.js';

const segA = { name: 'a' } as unknown as Segment;
const segB = { name: 'b' } as unknown as Segment;
const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

describe('StagingArea.absorb', () => {
  it('extends a continued run in a new run object, appends a run in another segment, empties the other area', () => {
    const taken = new StagingArea();
    taken.add(segA, 100, bytes(10, 1), 0, 2, 50);
    const inFlight = taken.writes();
    const later = new StagingArea();
    later.add(segA, 110, bytes(20, 2), 2, 5, 70);
    later.add(segB, 0, bytes(5, 3), 5, 6, 60);
    const laterWrites = later.writes();
    taken.absorb(later);
    assert.deepEqual(inFlight[0]!.chunks.map((c) => c.length), [10], 'the chunk list of writes in flight is untouched');
    assert.deepEqual(laterWrites.map((w) => [w.position, w.chunks.length]), [[110, 1], [0, 1]]);
    assert.deepEqual(taken.runs.map((r) => [r.seg, r.position, r.end, r.nextOffset, r.chunks.length, r.maxTimestamp, r.offsetOfMaxTimestamp]),
      [[segA, 100, 130, 5, 2, 70, 2], [segB, 0, 5, 6, 1, 60, 5]]);
    assert.deepEqual([taken.bytes, taken.endOffset, taken.endIn(segA), taken.endIn(segB)], [35, 6, 130, 5]);
    assert.deepEqual([later.isEmpty, later.bytes, later.endOffset], [true, 0, -1]);
  });

  it('keeps the earlier maximum timestamp when the later run has none higher; a gap in the segment starts a new run', () => {
    const taken = new StagingArea();
    taken.add(segA, 0, bytes(10, 1), 0, 1, 90);
    const later = new StagingArea();
    later.add(segA, 10, bytes(10, 2), 1, 2, 40);
    taken.absorb(later);
    assert.deepEqual(taken.runs.map((r) => [r.end, r.maxTimestamp, r.offsetOfMaxTimestamp]), [[20, 90, 0]]);
    const gap = new StagingArea();
    gap.add(segA, 30, bytes(10, 3), 2, 3, 100);
    taken.absorb(gap);
    assert.deepEqual(taken.runs.map((r) => [r.position, r.end]), [[0, 20], [30, 40]]);
    taken.absorb(new StagingArea());
    assert.deepEqual([taken.bytes, taken.endOffset], [30, 3]);
  });
});
