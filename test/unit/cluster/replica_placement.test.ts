// Placement of new partitions by load (no-move expansion): brokers holding the fewest replicas
// and leaderships take new partitions first, racks still distinct where possible, the result
// deterministic and its balance never worse than round robin (the placement that ignores load);
// on the controller a broker just added takes CreatePartitions' new partitions first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { placeBalanced, type PlacementBroker } from '../../../src/cluster/replica_placement.js';
import { placementBrokers } from '../../../src/cluster/metadata/placement_load.js';
import type { ControllerReply } from '../../../src/cluster/metadata/controller.js';
import { Harness } from '../../helpers/controller_harness.js';

/** Totals per broker (what each held plus what the placement adds), replicas or leaders. */
function totals(brokers: readonly PlacementBroker[], lists: readonly (readonly number[])[], leadersOnly: boolean): number[] {
  const m = new Map(brokers.map((b) => [b.id, (leadersOnly ? b.leaders : b.replicas) ?? 0]));
  for (const l of lists) for (const id of leadersOnly ? l.slice(0, 1) : l) m.set(id, m.get(id)! + 1);
  return [...m.values()];
}

const loadedCluster = fc.integer({ min: 1, max: 16 }).chain((n) => fc.record({
  brokers: fc.tuple(
    fc.array(fc.nat({ max: 60 }), { minLength: n, maxLength: n }),
    fc.array(fc.nat({ max: 20 }), { minLength: n, maxLength: n }),
    fc.integer({ min: 0, max: 4 }),
  ).map(([replicas, leaders, racks]): PlacementBroker[] => replicas.map((r, i) => ({
    id: i * 2 + 1, rack: racks === 0 ? null : `r${i % racks}`, replicas: r, leaders: Math.min(r, leaders[i]!),
  }))),
  rf: fc.integer({ min: 1, max: Math.min(n, 3) }),
  count: fc.integer({ min: 1, max: 120 }),
  rotation: fc.nat({ max: 1000 }),
}));

const unloaded = (brokers: readonly PlacementBroker[]): PlacementBroker[] => brokers.map((b) => ({ id: b.id, rack: b.rack }));

describe('placeBalanced by load', () => {
  it('is deterministic and places distinct brokers on as many racks as there are', () => {
    fc.assert(fc.property(loadedCluster, ({ brokers, rf, count, rotation }) => {
      const placed = placeBalanced(brokers, count, rf, rotation);
      assert.deepEqual(placeBalanced(brokers, count, rf, rotation), placed);
      const rackCount = new Set(brokers.map((b) => b.rack)).size;
      const rackOf = new Map(brokers.map((b) => [b.id, b.rack]));
      for (const l of placed) {
        assert.equal(new Set(l).size, rf);
        assert.equal(new Set(l.map((id) => rackOf.get(id))).size, Math.min(rf, rackCount));
      }
    }), { numRuns: 300 });
  });

  it('after an expansion, never leaves the busiest broker holding more replicas than round robin would, nor leading more than one above it', () => {
    // Loads as a cluster has them: old brokers holding topics placed earlier (by this rule), then
    // brokers added empty. Racks come before load, so the comparison is made without them.
    const expansion = fc.record({
      old: fc.integer({ min: 1, max: 10 }), added: fc.integer({ min: 0, max: 5 }), rf: fc.integer({ min: 1, max: 3 }),
      earlier: fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 6 }), count: fc.integer({ min: 1, max: 120 }), rotation: fc.nat({ max: 1000 }),
    }).filter((x) => x.rf <= x.old);
    fc.assert(fc.property(expansion, ({ old, added, rf, earlier, count, rotation }) => {
      let brokers: PlacementBroker[] = Array.from({ length: old }, (_, i) => ({ id: i, rack: null }));
      for (const [t, partitions] of earlier.entries()) {
        const lists = placeBalanced(brokers, partitions, rf, t);
        const replicas = totals(brokers, lists, false);
        const leaders = totals(brokers, lists, true);
        brokers = brokers.map((b, i) => ({ ...b, replicas: replicas[i]!, leaders: leaders[i]! }));
      }
      brokers = [...brokers, ...Array.from({ length: added }, (_, i) => ({ id: old + i, rack: null }))];
      const byLoad = placeBalanced(brokers, count, rf, rotation);
      const roundRobin = placeBalanced(unloaded(brokers), count, rf, rotation);
      // A partition's leader is the one of its brokers leading fewest, so leaders may end one
      // above round robin's busiest (preferred elections even them out without moving data).
      for (const [leadersOnly, slack] of [[false, 0], [true, 1]] as const) {
        const busiest = (lists: readonly (readonly number[])[]): number => Math.max(...totals(brokers, lists, leadersOnly));
        assert.ok(busiest(byLoad) <= busiest(roundRobin) + slack, leadersOnly ? 'leaders' : 'replicas');
      }
    }), { numRuns: 500 });
  });

  it('fills brokers just added first: the empty ones take every leadership until they catch up', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 5, max: 40 }), (old, added, held) => {
      const brokers: PlacementBroker[] = [
        ...Array.from({ length: old }, (_, i) => ({ id: i, rack: null, replicas: held * 2, leaders: held })),
        ...Array.from({ length: added }, (_, i) => ({ id: old + i, rack: null })),
      ];
      const count = added * held;
      const placed = placeBalanced(brokers, count, 2, 0);
      for (const l of placed) assert.ok(l[0]! >= old, `partition led by old broker ${l[0]}`);
    }), { numRuns: 100 });
  });

  it('is round robin when nothing is held yet', () => {
    const brokers = [1, 2, 3, 4].map((id) => ({ id, rack: null }));
    assert.deepEqual(placeBalanced(brokers, 4, 1, 1).map((l) => l[0]), [2, 3, 4, 1]);
  });
});

describe('placement on the controller', () => {
  it('puts new partitions of an existing topic on a broker that joined after it, moving nothing', () => {
    const h = new Harness();
    h.brokers([1, 2, 3]);
    h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 6, replicationFactor: 2, assignment: null, configs: {} }], false, next));
    const before = h.c.image.topicsByName.get('t')!.table;
    const original = Array.from({ length: 6 }, (_, p) => before.replicas(p));
    h.brokers([4]);
    const r = h.now<Extract<ControllerReply, { kind: 'topics' }>>((next) => h.c.createPartitions([{ name: 't', count: 9, assignment: null }], false, next));
    assert.equal(r.results[0]!.errorCode, 0);
    const after = h.c.image.topicsByName.get('t')!.table;
    for (let p = 0; p < 6; p++) assert.deepEqual(after.replicas(p), original[p], `partition ${p} moved`);
    for (let p = 6; p < 9; p++) assert.ok(after.replicas(p).includes(4), `new partition ${p} is not on broker 4: [${after.replicas(p).join(', ')}]`);
    assert.equal(after.replicas(6)[0], 4, 'broker 4 leads nothing yet, so it is the first replica of the first new partition');
    const load = placementBrokers(h.c.image).find((b) => b.id === 4)!;
    assert.equal(load.replicas, 3);
  });
});
