// The on-disk cache of files the single executable carries but cannot use from memory (native
// addons must be dlopen'ed from a path). Runs on any thread, synchronously: each thread that loads
// an addon asks for its path first. Imports only node built-ins.
// Invariants: a path returned holds exactly the expected bytes (its SHA-256 was checked after the
// file was in place); a file is only ever written under a temporary name and renamed over the
// final one, so a process starting at the same time never sees a half-written file, and a
// corrupt or truncated file found in the cache is rewritten, never returned.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

/** One file to place in the cache: its name there, its bytes and their expected SHA-256 (hex). */
export interface CachedFile {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The directories to try, best first: $XDG_CACHE_HOME/sluice, ~/.cache/sluice, then a per-user
 * directory in the OS temp dir (for a home that is missing or read-only), each with `versionDir`
 * under it so that two builds never share (or fight over) one file.
 */
export function cacheDirCandidates(versionDir: string, env: NodeJS.ProcessEnv, home: string, tmp: string, uid: number): string[] {
  const roots: string[] = [];
  const xdg = env['XDG_CACHE_HOME'];
  // The XDG spec ignores relative paths: they would depend on the working directory.
  if (xdg !== undefined && xdg.startsWith('/')) roots.push(join(xdg, 'sluice'));
  if (home !== '') roots.push(join(home, '.cache', 'sluice'));
  roots.push(join(tmp, `sluice-${uid}`));
  return roots.map((root) => join(root, versionDir));
}

function holdsExpected(path: string, sha256: string): boolean {
  try {
    return sha256Hex(readFileSync(path)) === sha256;
  } catch {
    return false;
  }
}

/**
 * A directory created (or found) for this user only; a temp-dir candidate another user created
 * first is refused, since its files could be swapped between our check and the load.
 */
function ownDirectory(dir: string, uid: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const owner = statSync(dir).uid;
  if (uid >= 0 && owner !== uid) throw new Error(`${dir} belongs to uid ${owner}, not ${uid}`);
}

/** Places `file` in `dir` unless a verified copy is there already; returns its path. */
function placeIn(dir: string, file: CachedFile, uid: number): string {
  const path = join(dir, file.name);
  if (holdsExpected(path, file.sha256)) return path;
  ownDirectory(dir, uid);
  // Unique per process and thread: shard workers of one process extract concurrently too.
  const temporary = `${path}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, file.bytes, { mode: 0o755, flush: true });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
  if (!holdsExpected(path, file.sha256)) throw new Error(`${path} does not hold the expected bytes after writing it`);
  return path;
}

/**
 * The path of a verified copy of `file` in the first candidate directory that can hold one.
 * Throws, naming every directory tried and why it failed, when none can (or when the bytes
 * themselves do not match their checksum: a damaged executable).
 */
export function cachedFilePath(file: CachedFile, candidates: readonly string[], uid: number): string {
  if (sha256Hex(file.bytes) !== file.sha256) throw new Error(`embedded ${file.name} does not match its checksum: the executable is damaged`);
  const failures: string[] = [];
  for (const dir of candidates) {
    try {
      return placeIn(dir, file, uid);
    } catch (err) {
      failures.push(`${dir}: ${(err as Error).message}`);
    }
  }
  throw new Error(`cannot place ${file.name} in any cache directory (${failures.join('; ')})`);
}
