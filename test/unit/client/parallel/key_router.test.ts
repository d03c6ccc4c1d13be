// KeyRouter under a simulated worker pool with random completion orders: no message starts
// before its lane predecessor finished, lanes run in submission order, everything runs once;
// plus null keys, modes, depth/hot keys and the bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyRouter, Ordering } from '../../../../src/client/parallel/key_router.js';
import type { RoutedMessage } from '../../../../src/client/parallel/key_router.js';

interface Msg extends RoutedMessage {
  readonly id: number;
}

const orderingArb = fc.constantFrom<Ordering>('key', 'partition', 'unordered');

function laneOf(m: Msg, fallback: Ordering): string | null {
  const mode = m.ordering ?? fallback;
  if (mode === 'unordered') return null;
  if (mode === 'partition' || m.key === null) return `p${m.partition}`;
  return `p${m.partition}/${m.key.toString('hex')}`;
}

describe('KeyRouter', () => {
  it('never starts a message before its lane predecessor finished (worker pool model)', () => {
    fc.assert(
      fc.property(
        orderingArb,
        fc.array(
          fc.record({
            partition: fc.nat({ max: 2 }),
            key: fc.option(fc.nat({ max: 5 }), { nil: null, freq: 5 }),
            ordering: fc.option(orderingArb, { nil: undefined, freq: 2 }),
          }),
          { maxLength: 200, size: 'large' },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 50 }),
        (fallback, specs, workers, choices) => {
          const router = new KeyRouter<Msg>({ ordering: fallback, maxQueued: 1000 });
          const msgs: Msg[] = specs.map((s, id) => ({
            id,
            partition: s.partition,
            offset: id,
            key: s.key === null ? null : Buffer.from([s.key]),
            ...(s.ordering === undefined ? {} : { ordering: s.ordering }),
          }));
          const runningLanes = new Set<string>();
          const lastStarted = new Map<string, number>();
          const running: Msg[] = [];
          const finished = new Set<number>();
          let submitted = 0;
          const submit = (): boolean => {
            if (submitted === msgs.length) return false;
            router.submit(msgs[submitted++] as Msg);
            return true;
          };
          const start = (): boolean => {
            if (running.length >= workers) return false;
            const m = router.next();
            if (m === null) return false;
            const lane = laneOf(m, fallback);
            if (lane !== null) {
              assert.ok(!runningLanes.has(lane), `lane ${lane} already running`);
              assert.ok((lastStarted.get(lane) ?? -1) < m.id, `lane ${lane} out of order`);
              runningLanes.add(lane);
              lastStarted.set(lane, m.id);
            }
            running.push(m);
            return true;
          };
          const finish = (choice: number): boolean => {
            if (running.length === 0) return false;
            const [m] = running.splice(choice % running.length, 1) as [Msg];
            const lane = laneOf(m, fallback);
            if (lane !== null) runningLanes.delete(lane);
            assert.ok(!finished.has(m.id));
            finished.add(m.id);
            router.done(m);
            return true;
          };
          // Interleave submissions, starts and completions in an order the choices pick.
          for (let step = 0; finished.size < msgs.length; step++) {
            const choice = choices[step % choices.length] as number;
            const actions = [submit, start, () => finish(choice)];
            let progressed = false;
            for (let i = 0; i < 3 && !progressed; i++) progressed = (actions[(choice + i) % 3] as () => boolean)();
            assert.ok(progressed, 'work left but nothing can run');
          }
          assert.equal(router.size, 0);
          assert.equal(router.next(), null);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('runs different keys concurrently and one key serially', () => {
    const router = new KeyRouter<Msg>({ maxQueued: 10 });
    const a1 = { id: 1, partition: 0, offset: 1, key: Buffer.from('a') };
    const a2 = { id: 2, partition: 0, offset: 2, key: Buffer.from('a') };
    const b1 = { id: 3, partition: 0, offset: 3, key: Buffer.from('b') };
    [a1, a2, b1].forEach((m) => router.submit(m));
    assert.equal(router.next(), a1);
    assert.equal(router.next(), b1);
    assert.equal(router.next(), null);
    assert.equal(router.depth(Buffer.from('a'), 0), 2);
    router.done(a1);
    assert.equal(router.next(), a2);
    assert.throws(() => router.done(a1), /not running/);
  });

  it('orders null keys per partition in key mode, shared with partition-mode messages', () => {
    const router = new KeyRouter<Msg>({ maxQueued: 10 });
    const n1 = { id: 1, partition: 0, offset: 1, key: null };
    const p2 = { id: 2, partition: 0, offset: 2, key: Buffer.from('k'), ordering: Ordering.partition };
    const other = { id: 3, partition: 1, offset: 3, key: null };
    [n1, p2, other].forEach((m) => router.submit(m));
    assert.equal(router.next(), n1);
    assert.equal(router.next(), other);
    assert.equal(router.next(), null);
    router.done(n1);
    assert.equal(router.next(), p2);
  });

  it('reports depth and the hottest keys', () => {
    const router = new KeyRouter<Msg>({ maxQueued: 100 });
    let id = 0;
    for (const [key, n] of [['hot', 5], ['warm', 3], ['cool', 1]] as const) {
      for (let i = 0; i < n; i++) router.submit({ id: id++, partition: 7, offset: id, key: Buffer.from(key) });
    }
    const hot = router.hotKeys(2);
    assert.deepEqual(hot.map((h) => [h.partition, h.key?.toString(), h.depth]), [[7, 'hot', 5], [7, 'warm', 3]]);
    assert.equal(router.depth(Buffer.from('cool'), 7), 1);
    assert.equal(router.depth(Buffer.from('cool'), 8), 0);
    assert.equal(router.depth(Buffer.from('none'), 7), 0);
    assert.deepEqual(router.hotKeys(0), []);
  });

  it('refuses messages past its bound', () => {
    const router = new KeyRouter<Msg>({ maxQueued: 2, ordering: 'unordered' });
    router.submit({ id: 1, partition: 0, offset: 1, key: null });
    router.submit({ id: 2, partition: 0, offset: 2, key: null });
    assert.equal(router.full, true);
    assert.throws(() => router.submit({ id: 3, partition: 0, offset: 3, key: null }), /router full/);
    const m = router.next() as Msg;
    assert.equal(router.full, true); // running messages count against the bound
    router.done(m);
    assert.equal(router.full, false);
  });
});
