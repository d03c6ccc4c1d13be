// The image's persistent map: any sequence of sets and deletes over generations of builders
// reads like a plain Map, and an earlier generation never sees a later one's changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SharedMap } from '../../../../src/cluster/metadata/shared_map.js';

const sorted = (m: ReadonlyMap<string | number, number>): [string | number, number][] => [...m.entries()].sort(([a], [b]) => `${typeof a}:${a}`.localeCompare(`${typeof b}:${b}`));

describe('SharedMap', () => {
  it('behaves like a Map across generations, each generation unchanged by the next', () => {
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -5, max: 600 }));
    const op = fc.tuple(fc.boolean(), key, fc.integer());
    fc.assert(fc.property(fc.array(fc.array(op, { maxLength: 12 }), { maxLength: 8 }), (generations) => {
      let shared = SharedMap.empty<string | number, number>();
      let model = new Map<string | number, number>();
      const history: [SharedMap<string | number, number>, [string | number, number][]][] = [];
      for (const ops of generations) {
        const b = shared.builder();
        model = new Map(model);
        for (const [set, k, v] of ops) {
          if (set) {
            b.set(k, v);
            model.set(k, v);
          } else {
            b.delete(k);
            model.delete(k);
          }
          assert.equal(b.get(k), model.get(k));
        }
        shared = b.build();
        history.push([shared, sorted(model)]);
        assert.equal(shared.size, model.size);
        for (const k of model.keys()) assert.equal(shared.get(k), model.get(k));
      }
      for (const [m, content] of history) {
        assert.deepStrictEqual(sorted(m), content);
        assert.equal(m.size, content.length);
        assert.equal([...m.keys()].length, content.length);
        assert.equal([...m.values()].length, content.length);
      }
    }), { numRuns: 300 });
  });
});
