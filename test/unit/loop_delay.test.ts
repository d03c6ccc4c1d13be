// Event-loop delay excludes the sampling resolution and is split by cause: a thread that blocks
// its own loop reads the block as its own delay; a thread starved of CPU by other processes reads
// a long delay that is nearly all run-queue wait.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { LoopDelayMonitor, type LoopDelay } from '../../src/common/loop_delay.js';

/** This thread's cumulative run-queue wait (schedstat's second field), 0 where there is none. */
function runQueueWaitMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

const CHILD = fileURLToPath(new URL('../helpers/loop_delay_child.js', import.meta.url));

function hasTools(): boolean {
  try {
    execFileSync('taskset', ['-c', '0', 'chrt', '--idle', '0', 'true']);
    return true;
  } catch {
    return false;
  }
}

describe('LoopDelayMonitor', () => {
  it('reads an idle loop as well under the 10 ms resolution and a 60 ms block as its own delay', async () => {
    const monitor = new LoopDelayMonitor(10);
    try {
      await sleep(300);
      const idle = monitor.take();
      assert.ok(idle !== null);
      // Node's raw timer spacing is >= 10 ms here (the resolution itself).
      assert.ok(idle.meanMs < 8, `idle mean ${idle.meanMs} ms`);
      await sleep(30);
      const waitBefore = runQueueWaitMs();
      const until = performance.now() + 60;
      while (performance.now() < until); // block the loop
      // Other tests may take the CPU from this spin; that part is run-queue wait, not own delay.
      const preempted = runQueueWaitMs() - waitBefore;
      await sleep(30);
      // A peek (the console's actors page) sees the block and leaves it for the scrape's take.
      const peeked = monitor.peek();
      assert.ok(peeked !== null && peeked.maxMs >= 45, `peek after a 60 ms block: ${peeked?.maxMs} ms`);
      const blocked = monitor.take();
      assert.ok(blocked !== null);
      assert.ok(blocked.maxMs >= 45, `max after a 60 ms block: ${blocked.maxMs} ms`);
      assert.ok(blocked.ownMaxMs >= 45 - preempted, `own max after a 60 ms block (${preempted} ms preempted): ${blocked.ownMaxMs} ms`);
    } finally {
      monitor.close();
    }
  });

  it('attributes delay to run-queue wait when another process holds the only CPU', { skip: hasTools() ? false : 'needs taskset and chrt (util-linux)' }, async () => {
    // Child and spinner share CPU 0; once the child is SCHED_IDLE the spinner nearly always wins.
    const child = spawn('taskset', ['-c', '0', process.execPath, CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const next = (): Promise<string> => new Promise((resolve) => lines.once('line', resolve));
    let spinner: ChildProcess | null = null;
    try {
      assert.equal(await next(), 'ready');
      spinner = spawn('taskset', ['-c', '0', process.execPath, '-e', 'const end = Date.now() + 20000; while (Date.now() < end);'], { stdio: 'ignore' });
      execFileSync('chrt', ['--all-tasks', '--idle', '-p', '0', String(child.pid)]);
      child.stdin.write('reset\n');
      await next();
      await sleep(1500);
      spinner.kill('SIGKILL');
      child.stdin.write('take\n');
      const d = JSON.parse(await next()) as LoopDelay;
      assert.ok(d.p99Ms > 5, `starved p99 ${d.p99Ms} ms`);
      assert.ok(d.cpuWaitRatio > 0.2, `cpu wait ratio ${d.cpuWaitRatio}`);
      assert.ok(d.ownP99Ms < d.p99Ms / 2, `own p99 ${d.ownP99Ms} ms of ${d.p99Ms} ms`);
    } finally {
      spinner?.kill('SIGKILL');
      child.stdin.end();
      child.kill('SIGKILL');
    }
  });
});
