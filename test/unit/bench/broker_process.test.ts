// The bench's broker launcher (src/bench/broker_process.ts) starts the build that
// SLUICE_BENCH_BROKER_CLI names instead of its own, with the same arguments, so one sitting can
// measure a before and an after build: here a stand-in CLI records its arguments, announces
// itself on ports of its own and answers the health check, and the launcher takes it as the broker.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess } from '../../../src/bench/broker_process.js';

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
});
