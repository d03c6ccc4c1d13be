// HeldBytes, the request-memory bound: a connection waiting for room is called back after bytes
// come back (never inside the call that gave them), waiting connections get room in the order they
// began to wait and the first that still finds none keeps the rest behind it, one that closes
// while waiting lets those behind it try, and each wait is counted once however often it retries.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HeldBytes } from '../../../src/net/connection.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A waiting connection that wants `n` bytes: its retry takes them when they fit. */
function waiter(held: HeldBytes, n: number, log: string[], name: string): () => boolean {
  return () => {
    log.push(`try ${name}`);
    if (!held.tryTake(n)) return false;
    log.push(`took ${name}`);
    return true;
  };
}

describe('HeldBytes', () => {
  it('calls a waiting connection back after bytes come back, not inside give()', async () => {
    const held = new HeldBytes(100);
    assert.ok(held.tryTake(80));
    const log: string[] = [];
    held.whenFreed(waiter(held, 50, log, 'a'));
    held.give(40);
    assert.deepEqual(log, [], 'nothing runs inside give');
    await turn();
    assert.deepEqual(log, ['try a', 'took a']);
    assert.equal(held.waiting, 0);
    assert.equal(held.used, 90);
  });

  it('gives room in the order connections began to wait; the first that still finds none keeps its place and the rest behind it', async () => {
    const held = new HeldBytes(100);
    assert.ok(held.tryTake(100));
    const log: string[] = [];
    held.whenFreed(waiter(held, 60, log, 'big'));
    held.whenFreed(waiter(held, 10, log, 'small'));
    held.give(30);
    await turn();
    assert.deepEqual(log, ['try big'], 'the small one does not pass the big one');
    assert.equal(held.waiting, 2);
    held.give(40);
    await turn();
    assert.deepEqual(log, ['try big', 'try big', 'took big', 'try small', 'took small']);
    assert.equal(held.waiting, 0);
  });

  it('lets those behind a connection that stops waiting try at once', async () => {
    const held = new HeldBytes(100);
    assert.ok(held.tryTake(90));
    const log: string[] = [];
    const big = waiter(held, 60, log, 'big');
    held.whenFreed(big);
    held.whenFreed(waiter(held, 10, log, 'small'));
    held.cancel(big);
    await turn();
    assert.deepEqual(log, ['try small', 'took small'], 'the room there was goes to the next in line');
  });

  it('counts each connection that begins to wait once, however often it asks or retries', async () => {
    let waits = 0;
    const held = new HeldBytes(100, () => waits++);
    assert.ok(held.tryTake(100));
    const log: string[] = [];
    const a = waiter(held, 50, log, 'a');
    held.whenFreed(a);
    held.whenFreed(a);
    held.give(10);
    await turn();
    held.give(10);
    await turn();
    assert.equal(waits, 1);
    held.give(40);
    await turn();
    assert.equal(held.waiting, 0);
    assert.equal(waits, 1);
  });

  it('never passes its bound and serves every waiter once the holders give back (property)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 12 }),
      async (held0, wants) => {
        const held = new HeldBytes(100);
        const holding: number[] = [];
        for (const n of held0) if (held.tryTake(n)) holding.push(n);
        const served: number[] = [];
        const order: number[] = [];
        wants.forEach((n, i) => {
          if (held.tryTake(n)) {
            holding.push(n);
            return;
          }
          order.push(i);
          held.whenFreed(() => {
            if (!held.tryTake(n)) return false;
            served.push(i);
            holding.push(n);
            return true;
          });
        });
        // Holders give back one at a time, oldest first, until nobody waits.
        for (let guard = 0; held.waiting > 0 && guard < 100; guard++) {
          assert.ok(held.used <= held.max);
          const n = holding.shift();
          if (n === undefined) break;
          held.give(n);
          await turn();
        }
        assert.equal(held.waiting, 0, 'every waiter got room');
        assert.deepEqual(served, order, 'in the order they began to wait');
        assert.ok(held.used <= held.max);
      },
    ), { numRuns: 200 });
  });
});
