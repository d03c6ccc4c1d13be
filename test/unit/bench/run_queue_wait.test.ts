// The bench's CPU-wait sampler (src/bench/run_queue_wait.ts) reads how long a process waited for
// a CPU, not how long it ran: three busy loops pinned to one core each run a third of the time and
// wait two thirds, and a sleeping process waits next to nothing; a process gone before the first
// sample gives no figure.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunQueueWaitSampler } from '../../../src/bench/run_queue_wait.js';

const hasTaskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;

function started(cmd: string, args: readonly string[]): ChildProcess {
  const child = spawn(cmd, args, { stdio: 'ignore' });
  assert.ok(child.pid !== undefined, `${cmd} started`);
  return child;
}

describe('bench: run-queue wait sampler', () => {
  it('counts the time a process was ready to run without a CPU', { skip: !hasTaskset && 'taskset is not installed' }, async () => {
    const busy = [0, 1, 2].map(() => started('taskset', ['-c', '0', 'sh', '-c', 'while :; do :; done']));
    const idle = started('sleep', ['30']);
    try {
      await sleep(200); // taskset has exec'd the loop
      const busyWaits = new RunQueueWaitSampler(busy[0]!.pid!, 100);
      const idleWaits = new RunQueueWaitSampler(idle.pid!, 100);
      await sleep(1500);
      const waited = busyWaits.stop();
      // Sharing one core with two others, a loop runs about 333 ms a second and waits about
      // 667 (more if other work lands on that core); its run time would read about 333.
      assert.ok(waited > 450 && waited <= 1000 * 1.05, `busy loop waited ${waited} ms/s`);
      const slept = idleWaits.stop();
      assert.ok(slept >= 0 && slept < 50, `sleeping process waited ${slept} ms/s`);
    } finally {
      for (const c of [...busy, idle]) c.kill('SIGKILL');
    }
  });

  it('gives no figure for a process that is gone', async () => {
    const gone = started('true', []);
    await new Promise((resolve) => gone.once('exit', resolve));
    await sleep(50); // reaped
    assert.ok(Number.isNaN(new RunQueueWaitSampler(gone.pid!, 100).stop()));
  });
});
