// The body of the CI seed runs (`npm run test:sim`): a range of seeds in chunks, one test per
// chunk so progress shows, each failing with the first bad seed's report (replay command, fault
// parameters, trace). Two files each run half the range so two cores share the work. Tests only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstFailure } from './run.js';

const CHUNK = 500;

export function seedSuite(name: string, from: number, count: number): void {
  describe(name, () => {
    for (let start = from; start < from + count; start += CHUNK) {
      const size = Math.min(CHUNK, from + count - start);
      it(`seeds ${start}..${start + size - 1} hold every invariant and stay live`, () => {
        const failure = firstFailure(start, size);
        assert.equal(failure, null, failure ?? undefined);
      });
    }
  });
}
