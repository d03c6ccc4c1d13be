// Test helper: fast-check generators of the Raft core's vocabulary (entries, offsets and epochs),
// shared by the entry-batch and quorum-wire property tests. Pure.
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { encodeVoters } from '../../../../src/coordinator/raft/entry_batches.js';
import type { Entry, EntryKind, OffsetAndEpoch } from '../../../../src/coordinator/raft/types.js';

export const nodeId = fc.integer({ min: 0, max: 2 ** 31 - 1 });
export const epoch = fc.integer({ min: 0, max: 2 ** 31 - 1 });
export const offset = fc.integer({ min: 0, max: 2 ** 48 });

export const voterSet: Arbitrary<number[]> = fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 7 });

/** A `voters` entry's bytes (a snapshot's votersRecord): a voter set, some voters with listener endpoints. */
export const votersRecord: Arbitrary<Uint8Array> = voterSet.chain((voters) =>
  fc.array(fc.array(fc.record({ name: fc.string({ maxLength: 8 }), host: fc.string({ maxLength: 16 }), port: fc.integer({ min: 1, max: 65535 }) }), { maxLength: 2 }),
    { minLength: voters.length, maxLength: voters.length })
    .map((endpoints) => encodeVoters(voters, new Map(voters.map((id, i) => [id, endpoints[i]!])))),
);

export const offsetAndEpoch: Arbitrary<OffsetAndEpoch> = fc.record({ endOffset: offset, epoch }, { noNullPrototype: true });

const entryShape: Arbitrary<{ kind: EntryKind; data: Uint8Array }> = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 40 }).map((data) => ({ kind: 'data' as const, data })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'leaderChange' as const, data: new Uint8Array(0) }) },
  { weight: 1, arbitrary: voterSet.map((v) => ({ kind: 'voters' as const, data: encodeVoters(v) })) },
);

/** Contiguous entries from a random base offset, epochs never decreasing (as a Raft log's are). */
export const entries: Arbitrary<Entry[]> = fc.record({
  base: offset,
  firstEpoch: fc.integer({ min: 0, max: 1000 }),
  steps: fc.array(fc.tuple(entryShape, fc.nat({ max: 2 })), { maxLength: 12 }),
}).map(({ base, firstEpoch, steps }) => {
  let e = firstEpoch;
  return steps.map(([shape, bump], i) => {
    e += bump;
    return { offset: base + i, epoch: e, kind: shape.kind, data: shape.data };
  });
});
