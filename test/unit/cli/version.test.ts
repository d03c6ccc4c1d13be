// `sluice --version`: the package version, the checkout's commit, the Node version and the I/O
// backend a broker with --io auto would pick here, one per line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadNativeIo } from '../../../src/log/native_io.js';
import { versionInfo, versionText } from '../../../src/cli/version.js';
import { sluice } from '../../helpers/cli_run.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const packageVersion = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version;

/** The commit as git itself prints it, when this is a checkout. */
function checkoutCommit(): string | null {
  if (!existsSync(`${ROOT}.git`)) return null;
  try {
    return execFileSync('git', ['-C', ROOT, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

describe('sluice --version', () => {
  it('prints the version, commit, Node version and I/O backend, and exits 0', async () => {
    const run = await sluice(['--version']);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 5, run.stdout);
    assert.equal(lines[0], `sluice ${packageVersion}`);
    assert.equal(lines[1], `commit ${checkoutCommit() ?? 'unknown'}`);
    assert.equal(lines[2], `node ${process.version}`);
    const native = loadNativeIo();
    if ('unavailable' in native) assert.equal(lines[3], `io node (${native.unavailable})`);
    else {
      await native.backend.close();
      assert.equal(lines[3], 'io native');
    }
    assert.equal(lines[4], `from source tree ${ROOT.replace(/\/$/, '')}`);
  });

  it('versionInfo() is what the text shows', async () => {
    const info = await versionInfo();
    assert.equal(info.version, packageVersion);
    assert.equal(info.node, process.version);
    assert.match(info.commit, /^([0-9a-f]{12}|unknown)$/);
    assert.ok(info.io.backend === 'native' ? info.io.reason === null : typeof info.io.reason === 'string');
    assert.equal(versionText(info).split('\n')[3], `io ${info.io.backend}${info.io.reason === null ? '' : ` (${info.io.reason})`}`);
  });

  it('says why the backend is node when the native one is unavailable', () => {
    const text = versionText({ version: '1.2.3', commit: 'unknown', node: 'v20.0.0', io: { backend: 'node', reason: 'native addon not built' }, from: 'source tree /x' });
    assert.equal(text, 'sluice 1.2.3\ncommit unknown\nnode v20.0.0\nio node (native addon not built)\nfrom source tree /x');
  });
});
