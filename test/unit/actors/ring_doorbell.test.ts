// RingDoorbell delivers each ring to the other end's pending wait for that signal only, drops a
// ring nobody waits for, times out, and never keeps a thread alive by itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { RingDoorbell, RingSignal } from '../../../src/actors/ring_doorbell.js';

const MODULE = fileURLToPath(new URL('../../../src/actors/ring_doorbell.js', import.meta.url));

describe('RingDoorbell', () => {
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => undefined, 1000);
  });
  after(() => clearInterval(keepAlive));

  it('wakes the other end for the signal rung, not the other signal', async () => {
    const [a, b] = RingDoorbell.pair();
    try {
      let space = false;
      void b.wait(RingSignal.space, Infinity).then(() => (space = true));
      const data = b.wait(RingSignal.data, Infinity);
      a.ring(RingSignal.data);
      await data;
      await sleep(20);
      assert.equal(space, false);
      a.ring(RingSignal.space);
      await sleep(20);
      assert.equal(space, true);
    } finally {
      a.close();
      b.close();
    }
  });

  it('drops a ring nobody waits for, so a later wait runs to its timeout', async () => {
    const [a, b] = RingDoorbell.pair();
    try {
      a.ring(RingSignal.data);
      await sleep(20); // delivered with no waiter
      const started = performance.now();
      await b.wait(RingSignal.data, 50);
      assert.ok(performance.now() - started >= 45, `woke after ${performance.now() - started} ms`);
    } finally {
      a.close();
      b.close();
    }
  });

  it('refuses a second wait for the same signal', () => {
    const bell = RingDoorbell.loopback();
    try {
      void bell.wait(RingSignal.data, 10);
      assert.throws(() => bell.wait(RingSignal.data, 10), /already has a waiter/);
    } finally {
      bell.close();
    }
  });

  it('loopback rings itself', async () => {
    const bell = RingDoorbell.loopback();
    try {
      const woken = bell.wait(RingSignal.space, Infinity);
      bell.ring(RingSignal.space);
      await woken;
    } finally {
      bell.close();
    }
  });

  it('a thread waiting on it with nothing else to do exits', () => {
    const script = `import { RingDoorbell } from ${JSON.stringify(MODULE)};
      const [a, b] = RingDoorbell.pair();
      void b.wait(0, Infinity);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 });
    assert.equal(child.error, undefined);
    assert.equal(child.status, 0, child.stderr.toString());
  });
});
