// StagingArea.absorb, by which a commit cycle behind the head adds data staged later to the area it
// took: the later runs follow the area's own (a run continuing the last one in the same segment
// included) without touching the chunk lists that the area's earlier writes, maybe still in
// flight, hold; endIn reads the last run in a segment; the absorbed area is left empty.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Segment } from '../../../src/log/segment.js';
import { StagingArea } from '../../../src/log/staging.js';

const segA = { name: 'a' } as unknown as Segment;
const segB = { name: 'b' } as unknown as Segment;
const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

describe('StagingArea.absorb', () => {
  it('appends the later runs, leaves the earlier writes alone, ends each segment at its last run, empties the other area', () => {
    const taken = new StagingArea();
    taken.add(segA, 100, bytes(10, 1), 0, 2, 50);
    const inFlight = taken.writes();
    const later = new StagingArea();
    later.add(segA, 110, bytes(20, 2), 2, 5, 70);
    later.add(segB, 0, bytes(5, 3), 5, 6, 60);
    taken.absorb(later);
    assert.deepEqual(inFlight.map((w) => [w.position, w.chunks.length]), [[100, 1]], 'the writes in flight are untouched');
    assert.deepEqual(taken.writes().map((w) => [w.position, w.chunks.length]), [[100, 1], [110, 1], [0, 1]]);
    assert.deepEqual(taken.runs.map((r) => [r.seg, r.position, r.end, r.nextOffset]), [[segA, 100, 110, 2], [segA, 110, 130, 5], [segB, 0, 5, 6]]);
    assert.deepEqual([taken.bytes, taken.endOffset, taken.endIn(segA), taken.endIn(segB)], [35, 6, 130, 5]);
    assert.deepEqual([later.isEmpty, later.bytes, later.endOffset], [true, 0, -1]);
    taken.absorb(new StagingArea());
    assert.deepEqual([taken.runs.length, taken.bytes, taken.endOffset], [3, 35, 6]);
  });
});
