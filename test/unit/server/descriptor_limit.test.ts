// Reading the descriptor limit: the /proc/self/limits line, and, with the addon, the soft limit
// raised to the hard one in a child started with a lower soft limit.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { loadAddon } from '../../../src/native/addon.js';
import { parseProcLimits } from '../../../src/server/descriptor_limit.js';

const MODULE = new URL('../../../src/server/descriptor_limit.js', import.meta.url).href;

describe('descriptor limit', () => {
  it('parses the "Max open files" line of /proc/<pid>/limits, unlimited included', () => {
    const text = 'Limit                     Soft Limit           Hard Limit           Units     \n' +
      'Max processes             63448                63448                processes \n' +
      'Max open files            1024                 524288               files     \n';
    assert.deepEqual(parseProcLimits(text), { soft: 1024, hard: 524288 });
    assert.deepEqual(parseProcLimits('Max open files            unlimited            unlimited            files'), { soft: 1 << 30, hard: 1 << 30 });
    assert.equal(parseProcLimits('Max processes 1 1 processes'), null);
  });

  it('raises the soft limit to the hard one through the addon', { skip: typeof loadAddon() === 'string' || typeof (loadAddon() as { raiseNofile?: unknown }).raiseNofile !== 'function' }, () => {
    const script = `import(${JSON.stringify(MODULE)}).then((m) => { const l = m.nofileLimit(); const fs = require('node:fs'); console.log(JSON.stringify({ ...l, proc: /Max open files\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'))[1] })); })`;
    const out = execFileSync('prlimit', ['--nofile=500:4000', '--', process.execPath, '-e', script], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), { soft: 4000, hard: 4000, source: 'addon', proc: '4000' });
  });
});
