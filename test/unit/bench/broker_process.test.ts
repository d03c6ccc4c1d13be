// The bench's broker launcher (src/bench/broker_process.ts) starts the build that
// SLUICE_BENCH_BROKER_CLI names instead of its own, with the same arguments, so one sitting can
// measure a before and an after build: here a stand-in CLI records its arguments, announces
// itself on ports of its own and answers the health check, and the launcher takes it as the broker.
// Its CPU reading is checked against this process's own getrusage: finer than stat's 10 ms tick,
// and still counting the threads that have exited.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { BrokerProcess, ProcessCpuClock } from '../../../src/bench/broker_process.js';

// A CLI that serves /v1/health on a free port, says it is ready with kafka port 1 (no real broker
// picks it), writes its argv beside itself and stays up until it is stopped.
const STAND_IN = `
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./argv.json', import.meta.url), JSON.stringify(process.argv.slice(2)));
const admin = createServer((req, res) => { res.statusCode = req.url === '/v1/health' ? 200 : 404; res.end('{}'); });
admin.listen(0, '127.0.0.1', () => console.log('sluice ready kafka=127.0.0.1:1 admin=127.0.0.1:' + admin.address().port));
process.on('SIGTERM', () => admin.close(() => process.exit(0)));
`;

describe('bench: broker launcher', () => {
  it('starts the build SLUICE_BENCH_BROKER_CLI names, with the arguments it gives its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-cli-'));
    const cli = join(dir, 'main.mjs');
    writeFileSync(cli, STAND_IN);
    process.env['SLUICE_BENCH_BROKER_CLI'] = cli;
    let broker: BrokerProcess | undefined;
    try {
      broker = await BrokerProcess.start({ flush: 'always', shards: 2, startTimeoutMs: 10_000 });
      assert.equal(broker.kafkaPort, 1, 'the ready line came from the named build');
      assert.equal(await broker.stop(), 0);
      const argv = JSON.parse(readFileSync(join(dir, 'argv.json'), 'utf8')) as string[];
      assert.equal(argv[0], 'start');
      for (const [flag, value] of [['--shards', '2'], ['--flush', 'always']] as const) {
        assert.equal(argv[argv.indexOf(flag) + 1], value, `${flag} passed on`);
      }
    } finally {
      // A failed assertion must not leave the stand-in running (stop() again is a no-op wait).
      await broker?.stop();
      delete process.env['SLUICE_BENCH_BROKER_CLI'];
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // getrusage (process.cpuUsage) is exact to the µs for every thread, living or exited.
  const rusageSeconds = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const burn = (ms: number): void => {
    const t = process.cpuUsage();
    while ((process.cpuUsage(t).user + process.cpuUsage(t).system) / 1e3 < ms) { /* spin */ }
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
