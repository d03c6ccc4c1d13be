// The node flags a broker starts with: V8's helper pool gets the broker's share of the cores less
// one, between 1 and Node's default of 4, and NODE_OPTIONS that size it already are left alone;
// bin/sluice (a shell script, run by `npm start`) applies the same rule: run here with a fake
// `nproc` and a fake `node` on its PATH that print what they were asked.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { brokerNodeArgs, brokerNodeOptions } from '../../../src/server/node_args.js';

const SLUICE = fileURLToPath(new URL('../../../../bin/sluice', import.meta.url));

test('a broker alone gets the cores less one, between 1 and 4; co-located ones their share less one', () => {
  assert.deepEqual(brokerNodeArgs(1, 1), ['--v8-pool-size=1']);
  assert.deepEqual(brokerNodeArgs(1, 2), ['--v8-pool-size=1']);
  assert.deepEqual(brokerNodeArgs(1, 4), ['--v8-pool-size=3']);
  assert.deepEqual(brokerNodeArgs(1, 5), ['--v8-pool-size=4']);
  assert.deepEqual(brokerNodeArgs(1, 64), ['--v8-pool-size=4']);
  assert.deepEqual(brokerNodeArgs(3, 2), ['--v8-pool-size=1']);
  assert.deepEqual(brokerNodeArgs(3, 12), ['--v8-pool-size=3']);
});

test('NODE_OPTIONS gain the pool size unless they set one', () => {
  assert.equal(brokerNodeOptions(1, ''), brokerNodeArgs(1)[0]);
  assert.equal(brokerNodeOptions(1, '--trace-gc'), `--trace-gc ${brokerNodeArgs(1)[0]!}`);
  assert.equal(brokerNodeOptions(1, '--v8-pool-size=7 --trace-gc'), '--v8-pool-size=7 --trace-gc');
});

test('bin/sluice starts node with the same pool size, and leaves one NODE_OPTIONS set alone', () => {
  const bin = mkdtempSync(join(tmpdir(), 'sluice-node-args-'));
  try {
    const fake = (name: string, body: string): void => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    fake('node', 'echo "$@"');
    const run = (cores: number, nodeOptions = ''): string => {
      fake('nproc', `echo ${cores}`);
      const env = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, NODE_OPTIONS: nodeOptions };
      return execFileSync(SLUICE, ['start', '--flush', 'always'], { env, encoding: 'utf8' }).trim();
    };
    for (const cores of [1, 2, 4, 8]) {
      const args = run(cores).split(' ');
      assert.equal(args[0], brokerNodeArgs(1, cores)[0], `${cores} cores`);
      assert.match(args[1]!, /dist\/src\/cli\/main\.js$/);
      assert.deepEqual(args.slice(2), ['start', '--flush', 'always']);
    }
    assert.match(run(2, '--v8-pool-size=3'), /^\S+dist\/src\/cli\/main\.js start --flush always$/, 'no second pool size');
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});
