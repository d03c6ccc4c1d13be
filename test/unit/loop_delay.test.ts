// Event-loop delay excludes the sampling resolution and is split by cause: a thread that blocks
// its own loop reads the block as its own delay; a thread starved of CPU by other processes reads
// a long delay that is nearly all run-queue wait. A sleeping thread is sampled less often (about
// once a second by default), and still shows a block longer than the relaxed interval.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LoopDelayMonitor, nextTickMs, type LoopDelay } from '../../src/common/loop_delay.js';

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
  it('relaxes the interval only while the thread sleeps, never past its bounds', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 1000, noNaN: true }),
      fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }),
      (base, factor, interval, ran, late) => {
        const max = base * factor;
        const elapsed = interval + late;
        const next = nextTickMs(Math.min(interval, max), base, max, ran, elapsed, late);
        assert.ok(next >= base && next <= max, `${next} outside [${base}, ${max}]`);
        const sleeping = late < Math.max(2, 0.01 * Math.min(interval, max)) && ran < 0.05 * elapsed;
        if (!sleeping) assert.equal(next, base, 'a working or late thread is sampled at full resolution');
      },
    ));
    assert.equal(nextTickMs(10, 10, 100, 0, 10, 0), 20);
    assert.equal(nextTickMs(80, 10, 100, 0, 80, 0), 100);
    assert.equal(nextTickMs(100, 10, 100, 30, 100, 0), 10);
    // On time within 1% of a long interval (timer slack), not within 2 ms only.
    assert.equal(nextTickMs(1000, 10, 1000, 1, 1003, 3), 1000);
    assert.equal(nextTickMs(1000, 10, 1000, 1, 1011, 11), 10);
    assert.equal(nextTickMs(100, 10, 1000, 1, 103, 3), 10);
  });

  it('samples a sleeping thread at the relaxed interval and still shows a block longer than it', async () => {
    const monitor = new LoopDelayMonitor(10, 100);
    try {
      await sleep(1500);
      const idle = monitor.take();
      assert.ok(idle !== null);
      // 150 ticks at a fixed 10 ms; relaxed to 100 ms after ~150 ms.
      assert.ok(idle.samples < 50, `${idle.samples} ticks in 1.5 s of sleep`);
      const until = performance.now() + 250;
      while (performance.now() < until); // block the loop longer than the relaxed interval
      await sleep(30);
      const blocked = monitor.take();
      assert.ok(blocked !== null && blocked.maxMs >= 140, `max after a 250 ms block: ${blocked?.maxMs} ms`);
    } finally {
      monitor.close();
    }
  });

  it('wakes a sleeping thread about once a second by default, and a block brings the 10 ms resolution back', async () => {
    // An idle broker's budget (issue 16) counts every wake-up of its three event loops.
    const monitor = new LoopDelayMonitor();
    try {
      // Doubling from 10 ms reaches the 1 s cap after ~1.3 s: about 10 ticks in 4 s (the 100 ms cap
      // took 35-45, a fixed 10 ms 400). A tick that runs late (other tests holding both cores of a
      // CI machine) rightly brings full resolution back, so one window can read 35; up to three
      // windows are tried, and a monitor that never relaxes fails every one of them.
      const windows: number[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        await sleep(4000);
        const idle = monitor.take();
        assert.ok(idle !== null);
        windows.push(idle.samples);
        if (idle.samples <= 24) break;
      }
      assert.ok(windows.at(-1)! <= 24, `ticks in each 4 s window of sleep: ${windows.join(', ')}`);
      const until = performance.now() + 1200;
      while (performance.now() < until); // longer than the relaxed interval: the tick due in it is late
      await sleep(300);
      const busy = monitor.take();
      assert.ok(busy !== null && busy.maxMs >= 150, `max after a 1.2 s block: ${busy?.maxMs} ms`);
      // Back at full resolution: the 300 ms after the block hold many ticks, not one.
      assert.ok(busy.samples >= 5, `${busy.samples} ticks in the 300 ms after the block`);
    } finally {
      monitor.close();
    }
  });

  it('reads an idle loop as well under the 10 ms resolution and a 60 ms block as its own delay', async () => {
    // Not relaxed (idle max = resolution): a block shorter than a relaxed interval could go unseen.
    const monitor = new LoopDelayMonitor(10, 10);
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
    // Child and spinner share CPU 0; once the child's main thread is SCHED_IDLE the spinner nearly
    // always wins. Only that thread is demoted: a main thread that waits on a starved helper thread
    // (V8's GC workers) is asleep, not runnable, and reads that wait as its own delay.
    // On a loaded 2-core CI machine one starved window can still be dominated by such a wait
    // (once: own p99 372 of 604 ms), so up to three windows are tried; broken attribution fails
    // every one of them.
    const readings: LoopDelay[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const d = await starvedReading();
      readings.push(d);
      if (d.p99Ms > 5 && d.cpuWaitRatio > 0.2 && d.ownP99Ms < d.p99Ms / 2) return;
    }
    assert.fail(`no starved window read as run-queue wait: ${readings.map((d) => `p99 ${d.p99Ms} ms, own p99 ${d.ownP99Ms} ms, cpu wait ratio ${d.cpuWaitRatio}`).join('; ')}`);
  });
});

/** The child's loop delay over 1.5 s in which a spinner holds the CPU it is pinned to. */
async function starvedReading(): Promise<LoopDelay> {
  const child = spawn('taskset', ['-c', '0', process.execPath, CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = (): Promise<string> => new Promise((resolve) => lines.once('line', resolve));
  let spinner: ChildProcess | null = null;
  try {
    assert.equal(await next(), 'ready');
    spinner = spawn('taskset', ['-c', '0', process.execPath, '-e', 'const end = Date.now() + 20000; while (Date.now() < end);'], { stdio: 'ignore' });
    execFileSync('chrt', ['--idle', '-p', '0', String(child.pid)]);
    child.stdin.write('reset\n');
    await next();
    await sleep(1500);
    spinner.kill('SIGKILL');
    child.stdin.write('take\n');
    return JSON.parse(await next()) as LoopDelay;
  } finally {
    spinner?.kill('SIGKILL');
    child.stdin.end();
    child.kill('SIGKILL');
  }
}
