// `sluice --version` (main thread of the CLI): the version and commit (baked into the single
// executable at build time; read from package.json and git in a source checkout), the Node
// version, where the code runs from and whether the native I/O backend works on this machine.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadNativeIo } from '../log/native_io.js';
import { embeddedBuild } from '../native/embedded.js';
import type { CliIo } from './io.js';

interface VersionFacts {
  readonly version: string;
  readonly commit: string;
  readonly from: string;
}

/** A source checkout's facts; the commit is the checkout's HEAD, or 'unknown' without git. */
function checkoutFacts(): VersionFacts {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout (an unpacked tarball) or no git installed: the commit stays unknown.
  }
  return { version: pkg.version, commit, from: `source tree ${root}` };
}

export async function runVersion(io: CliIo): Promise<number> {
  const build = embeddedBuild();
  const facts = build === null ? checkoutFacts() : { version: build.version, commit: build.commit, from: `single executable ${process.execPath}` };
  const loaded = loadNativeIo();
  const backend = 'backend' in loaded ? 'native (io_uring) available; node available' : `node only (native unavailable: ${loaded.unavailable})`;
  if ('backend' in loaded) await loaded.backend.close();
  io.out([`sluice ${facts.version} (commit ${facts.commit})`, `node ${process.version}`, `io: ${backend}`, `from: ${facts.from}`].join('\n'));
  return 0;
}
