// Event-loop delay excludes the sampling resolution: an idle loop reads near zero, a blocked one
// reads the block.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { LoopDelayMonitor } from '../../src/loop_delay.js';

describe('LoopDelayMonitor', () => {
  it('reads an idle loop as well under the 10 ms resolution and a 60 ms block as about 60 ms', async () => {
    const monitor = new LoopDelayMonitor(10);
    try {
      await sleep(300);
      const idle = monitor.take();
      assert.ok(idle !== null);
      // Node's raw histogram reads >= 10 ms here (the resolution itself).
      assert.ok(idle.meanMs < 8, `idle mean ${idle.meanMs} ms`);
      await sleep(30);
      const until = performance.now() + 60;
      while (performance.now() < until); // block the loop
      await sleep(30);
      const blocked = monitor.take();
      assert.ok(blocked !== null);
      assert.ok(blocked.maxMs >= 45, `max after a 60 ms block: ${blocked.maxMs} ms`);
    } finally {
      monitor.close();
    }
  });
});
