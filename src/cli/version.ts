// `sluice --version` (CLI process): the package version, the git commit, the Node version, the
// I/O backend this machine offers and where the code runs from. Inside the single executable the
// version and commit were baked in at build time; in a source checkout they are read at run time,
// the commit only from a git checkout (a .git beside package.json) with git on PATH — a build step
// would need a generated file that a plain `tsc` build lacks, and an installed copy has no commit
// to report ('unknown'). The backend is probed the way a shard picks it (opening an io_uring ring
// through the addon, then closing it), so 'native' means a broker with --io auto would use it.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadNativeIo } from '../log/native_io.js';
import { packageRoot } from '../native/addon.js';
import { embeddedBuild } from '../native/embedded.js';

export interface VersionInfo {
  readonly version: string;
  /** Short commit hash, or 'unknown' outside a git checkout. */
  readonly commit: string;
  readonly node: string;
  /** The I/O backend `--io auto` would pick here, and why not native when it falls back. */
  readonly io: { readonly backend: 'native' | 'node'; readonly reason: string | null };
  /** 'source tree <dir>' or 'single executable <path>'. */
  readonly from: string;
}

const UNKNOWN = 'unknown';
const GIT_TIMEOUT_MS = 2000;

function packageVersion(root: string | null): string {
  if (root === null) return UNKNOWN;
  try {
    const parsed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}

function gitCommit(root: string | null): string {
  if (root === null || !existsSync(join(root, '.git'))) return UNKNOWN;
  const git = spawnSync('git', ['-C', root, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8', timeout: GIT_TIMEOUT_MS });
  const hash = git.status === 0 ? git.stdout.trim() : '';
  return /^[0-9a-f]+$/.test(hash) ? hash : UNKNOWN;
}

async function ioBackend(): Promise<VersionInfo['io']> {
  const loaded = loadNativeIo();
  if ('unavailable' in loaded) return { backend: 'node', reason: loaded.unavailable };
  await loaded.backend.close();
  return { backend: 'native', reason: null };
}

export async function versionInfo(): Promise<VersionInfo> {
  const io = await ioBackend();
  const build = embeddedBuild();
  if (build !== null) return { version: build.version, commit: build.commit, node: process.version, io, from: `single executable ${process.execPath}` };
  const root = packageRoot();
  return { version: packageVersion(root), commit: gitCommit(root), node: process.version, io, from: `source tree ${root ?? UNKNOWN}` };
}

/** One fact a line, for people and for `grep`. */
export function versionText(info: VersionInfo): string {
  return [
    `sluice ${info.version}`,
    `commit ${info.commit}`,
    `node ${info.node}`,
    `io ${info.io.backend}${info.io.reason === null ? '' : ` (${info.io.reason})`}`,
    `from ${info.from}`,
  ].join('\n');
}
