// The bench's CPU clock (src/bench/process_cpu.ts) checked against this process's own getrusage
// (process.cpuUsage, exact to the µs for every thread, living or exited): finer than stat's 10 ms
// tick, still counting a thread that exited between two readings, and NaN once the process is gone.
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { ProcessCpuClock } from '../../../src/bench/process_cpu.js';

describe('bench: process CPU clock', () => {
  const rusageSeconds = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const burn = (ms: number): void => {
    const r0 = rusageSeconds();
    while ((rusageSeconds() - r0) * 1e3 < ms) { /* spin */ }
  };

  it('reads a process\'s CPU finer than a clock tick', () => {
    // A 4 ms burn moves stat's tick counts by 0, 10 or 20 ms: 4 ms or more off every time.
    const clock = new ProcessCpuClock(process.pid);
    for (let round = 0; round < 5; round++) {
      const cpu0 = clock.seconds();
      const r0 = rusageSeconds();
      burn(4);
      const read = clock.seconds() - cpu0;
      const expected = rusageSeconds() - r0;
      assert.ok(Math.abs(read - expected) < 0.002, `round ${round}: read ${read * 1e3} ms for ${expected * 1e3} ms`);
    }
  });

  it('keeps the CPU of a thread that exited between two readings', async () => {
    const clock = new ProcessCpuClock(process.pid);
    const cpu0 = clock.seconds();
    const r0 = rusageSeconds();
    const worker = new Worker('const t = process.hrtime.bigint(); while (process.hrtime.bigint() - t < 60_000_000n) {}', { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    const read = clock.seconds() - cpu0;
    const expected = rusageSeconds() - r0;
    // Within the two ticks stat truncates by; the live threads alone miss the worker's 60 ms or more.
    assert.ok(Math.abs(read - expected) < 0.021, `read ${read * 1e3} ms, getrusage ${expected * 1e3} ms`);
  });

  it('reads NaN once the process is gone', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    const clock = new ProcessCpuClock(child.pid ?? -1);
    assert.ok(clock.seconds() >= 0);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.ok(Number.isNaN(clock.seconds()));
  });
});
