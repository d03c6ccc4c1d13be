// The sparse index against a model (a list of entries): appends, truncation by either column and
// clears, checked after every step by reads, floor lookups in both columns, the persisted bytes
// (Kafka's big-endian layout, built here field by field) and their decoding back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { KEY, OFFSET_INDEX, SparseIndex, TIME_INDEX, VALUE, type IndexColumn, type IndexFormat } from '../../../src/log/sparse_index.js';

type Entry = readonly [key: number, value: number];

function expectedBytes(format: IndexFormat, entries: readonly Entry[]): Buffer {
  const out = Buffer.alloc(entries.length * format.entryBytes);
  entries.forEach(([key, value], i) => {
    const pos = i * format.entryBytes;
    if (format.wideKey) {
      out.writeBigInt64BE(BigInt(key), pos);
      out.writeUInt32BE(value, pos + 8);
    } else {
      out.writeUInt32BE(key, pos);
      out.writeUInt32BE(value, pos + 4);
    }
  });
  return out;
}

function modelFloor(entries: readonly Entry[], column: IndexColumn, x: number, limit = entries.length): number {
  let found = -1;
  for (let i = 0; i < limit; i++) if (entries[i]![column] <= x) found = i;
  return found;
}

const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('append' as const), keyStep: fc.integer({ min: 1, max: 2 ** 40 }), valueStep: fc.integer({ min: 1, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), column: fc.constantFrom(KEY, VALUE), at: fc.nat(), nudge: fc.integer({ min: -1, max: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const) }) },
);

describe('SparseIndex', () => {
  for (const format of [OFFSET_INDEX, TIME_INDEX]) {
    it(`${format.suffix}: reads, floors, persisted bytes and decoding agree with a list of entries`, () => {
      fc.assert(
        fc.property(fc.array(step, { maxLength: 120 }), fc.array(fc.double({ min: -0.1, max: 1.1, noNaN: true }), { minLength: 4, maxLength: 4 }), (steps, probes) => {
          const index = new SparseIndex(format);
          let entries: Entry[] = [];
          // Offset-index keys are u32 relative offsets; time-index keys are i64 timestamps.
          const keyLimit = format.wideKey ? 2 ** 53 : 2 ** 32 - 1;
          for (const s of steps) {
            const last = entries.at(-1) ?? [format.wideKey ? -1 : 0, 0];
            if (s.op === 'append') {
              const key = entries.length === 0 ? Math.min(s.keyStep - 1, keyLimit) : last[0] + (format.wideKey ? s.keyStep : s.keyStep % 70_000);
              const value = entries.length === 0 ? s.valueStep - 1 : last[1] + s.valueStep;
              if (key > keyLimit || (entries.length > 0 && key <= last[0])) continue;
              index.append(key, value);
              entries.push([key, value]);
            } else if (s.op === 'truncate') {
              // At, just below or just past an entry's value in that column (or past the end).
              const x = entries.length === 0 ? s.nudge + 1 : (entries[s.at % (entries.length + 1)]?.[s.column] ?? last[s.column] + 1) + s.nudge;
              index.truncateFrom(s.column, x);
              entries = entries.filter((e) => e[s.column] < x);
            } else {
              index.clear();
              entries = [];
            }
            assert.equal(index.count, entries.length);
            entries.forEach(([key, value], i) => {
              assert.equal(index.key(i), key);
              assert.equal(index.value(i), value);
            });
            assert.equal(index.lastKey(), entries.at(-1)?.[0] ?? -1);
            assert.equal(index.lastValue(), entries.at(-1)?.[1] ?? -1);
            for (const column of [KEY, VALUE] as const) {
              const top = (entries.at(-1)?.[column] ?? 0) + 1;
              const exact = entries.map((e) => e[column]);
              for (const x of [...probes.map((p) => Math.round(p * top)), ...exact.slice(0, 3), ...exact.slice(-2)]) {
                assert.equal(index.floor(column, x), modelFloor(entries, column, x), `floor(${column}, ${x})`);
                const limit = Math.floor(entries.length / 2);
                assert.equal(index.floor(column, x, limit), modelFloor(entries, column, x, limit));
              }
            }
            const bytes = index.encode();
            assert.deepEqual(bytes, expectedBytes(format, entries));
            const decoded = SparseIndex.decode(format, bytes);
            assert.ok(decoded !== null);
            assert.deepEqual(decoded.encode(), bytes);
          }
        }),
        { numRuns: 150 },
      );
    });
  }

  it('a persisted index is a copy: appends after it leave its bytes alone', () => {
    const index = new SparseIndex(OFFSET_INDEX);
    for (let i = 0; i < 16; i++) index.append(i * 10, i * 4096);
    const before = index.encode();
    const copy = Buffer.from(before);
    index.truncateFrom(KEY, 50);
    for (let i = 5; i < 40; i++) index.append(i * 10 + 1, i * 4096 + 1);
    assert.deepEqual(before, copy);
  });

  it('decoding refuses partial entries and columns that do not increase', () => {
    const index = new SparseIndex(TIME_INDEX);
    index.append(1_700_000_000_000, 0);
    index.append(1_700_000_000_005, 3);
    const bytes = index.encode();
    assert.equal(SparseIndex.decode(TIME_INDEX, bytes.subarray(0, 20)), null);
    const swapped = Buffer.concat([bytes.subarray(12), bytes.subarray(0, 12)]);
    assert.equal(SparseIndex.decode(TIME_INDEX, swapped), null);
  });
});
