// The single executable's addon cache (src/native/asset_cache.ts): where it looks, that a cached
// file whose checksum does not match is rewritten and never returned, that an unusable directory
// falls through to the next, and that extractions racing on one file (as shard workers and two
// processes started at once do) all get the right bytes while a reader never sees a partial file.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { cacheDirCandidates, cachedFilePath, sha256Hex, type CachedFile } from '../../../src/native/asset_cache.js';
import type { RacerData, RacerReport } from '../../helpers/asset_cache_racer.js';

const uid = process.getuid?.() ?? -1;

function fileOf(bytes: Uint8Array, name = 'addon.node'): CachedFile {
  return { name, bytes, sha256: sha256Hex(bytes) };
}

describe('cacheDirCandidates', () => {
  it('tries $XDG_CACHE_HOME, then ~/.cache, then a per-user temp directory, each with the version directory', () => {
    assert.deepEqual(cacheDirCandidates('0.1.0-abc', { XDG_CACHE_HOME: '/x/cache' }, '/home/u', '/tmp', 1000), [
      '/x/cache/sluice/0.1.0-abc',
      '/home/u/.cache/sluice/0.1.0-abc',
      '/tmp/sluice-1000/0.1.0-abc',
    ]);
  });

  it('ignores a relative $XDG_CACHE_HOME and a missing home', () => {
    assert.deepEqual(cacheDirCandidates('v', { XDG_CACHE_HOME: 'rel/cache' }, '', '/tmp', 7), ['/tmp/sluice-7/v']);
  });
});

describe('cachedFilePath', () => {
  let root = '';
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sluice-asset-cache-'));
  });
  afterEach(() => {
    chmodSync(root, 0o700);
    rmSync(root, { recursive: true, force: true });
  });

  it('writes the file once into the first candidate and then reuses it', () => {
    const file = fileOf(randomBytes(4096));
    const dir = join(root, 'a', 'v1');
    const path = cachedFilePath(file, [dir], uid);
    assert.equal(path, join(dir, 'addon.node'));
    assert.deepEqual(readFileSync(path), Buffer.from(file.bytes));
    writeFileSync(join(dir, 'marker'), '');
    assert.equal(cachedFilePath(file, [dir], uid), path);
    assert.deepEqual(readdirSync(dir).sort(), ['addon.node', 'marker'], 'no temporary file is left behind');
  });

  for (const [what, damage] of [
    ['a truncated (partial) file', (p: string) => truncateSync(p, 100)],
    ['a file of other bytes of the same length', (p: string) => writeFileSync(p, Buffer.alloc(4096, 7))],
    ['an empty file', (p: string) => writeFileSync(p, '')],
  ] as const) {
    it(`rewrites ${what} instead of returning it`, () => {
      const file = fileOf(randomBytes(4096));
      const path = cachedFilePath(file, [join(root, 'v1')], uid);
      damage(path);
      assert.equal(cachedFilePath(file, [join(root, 'v1')], uid), path);
      assert.deepEqual(readFileSync(path), Buffer.from(file.bytes));
    });
  }

  it('falls through to the next candidate when a directory cannot be written', { skip: uid === 0 ? 'root writes through permissions' : false }, () => {
    const readOnly = join(root, 'home');
    writeFileSync(join(root, 'placeholder'), '');
    chmodSync(root, 0o500);
    const file = fileOf(randomBytes(64));
    const fallback = mkdtempSync(join(tmpdir(), 'sluice-asset-fallback-'));
    try {
      assert.equal(cachedFilePath(file, [join(readOnly, 'v1'), join(fallback, 'v1')], uid), join(fallback, 'v1', 'addon.node'));
    } finally {
      rmSync(fallback, { recursive: true, force: true });
    }
  });

  it('falls through when the candidate path is taken by a file', () => {
    writeFileSync(join(root, 'taken'), 'not a directory');
    const file = fileOf(randomBytes(64));
    assert.equal(cachedFilePath(file, [join(root, 'taken', 'v1'), join(root, 'ok')], uid), join(root, 'ok', 'addon.node'));
  });

  it('names every directory tried when none works', () => {
    writeFileSync(join(root, 'taken'), '');
    assert.throws(() => cachedFilePath(fileOf(randomBytes(64)), [join(root, 'taken', 'a'), join(root, 'taken', 'b')], uid), (err: Error) => {
      assert.match(err.message, /cannot place addon\.node in any cache directory/);
      assert.ok(err.message.includes(join(root, 'taken', 'a')) && err.message.includes(join(root, 'taken', 'b')), err.message);
      return true;
    });
  });

  it('refuses embedded bytes that do not match their checksum (a damaged executable) and writes nothing', () => {
    const bytes = randomBytes(64);
    assert.throws(() => cachedFilePath({ name: 'addon.node', bytes, sha256: sha256Hex(randomBytes(64)) }, [join(root, 'v1')], uid), /damaged/);
    assert.deepEqual(readdirSync(root), []);
  });

  it('refuses a directory another user owns', { skip: uid !== 0 ? 'needs root to own a directory as another user' : false }, () => {
    const dir = join(root, 'theirs');
    cachedFilePath(fileOf(randomBytes(64)), [dir], uid);
    assert.throws(() => cachedFilePath(fileOf(randomBytes(64), 'other.node'), [dir], 4242), /belongs to uid 0, not 4242/);
  });
});

describe('concurrent extraction', () => {
  const EXTRACTORS = 4;
  const ROUNDS = 25;

  it('gives every racer the right bytes and never shows a reader a partial file', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-asset-race-'));
    const dir = join(root, 'v1');
    const file = fileOf(randomBytes(4 << 20));
    // What the main thread leaves between rounds: a file of other bytes (replaced atomically, so a
    // watcher may see it whole); every round the racers must replace it again.
    const corrupt = randomBytes(3 << 20);
    const control = new SharedArrayBuffer(12);
    const flags = new Int32Array(control);
    const racer = (role: RacerData['role']): { worker: Worker; report: Promise<RacerReport> } => {
      const data: RacerData = { role, name: file.name, bytes: file.bytes, sha256: file.sha256, alsoValid: [corrupt], candidates: [dir], uid, rounds: ROUNDS, control };
      const worker = new Worker(new URL('../../helpers/asset_cache_racer.js', import.meta.url), { workerData: data });
      const report = new Promise<RacerReport>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      return { worker, report };
    };
    try {
      const watcher = racer('watch');
      const extractors = Array.from({ length: EXTRACTORS }, () => racer('extract'));
      for (let round = 1; round <= ROUNDS; round++) {
        if (round > 1) {
          writeFileSync(join(root, 'corrupt.tmp'), corrupt);
          renameSync(join(root, 'corrupt.tmp'), join(dir, file.name));
        }
        Atomics.store(flags, 0, round);
        Atomics.notify(flags, 0);
        const target = round * EXTRACTORS;
        const deadline = Date.now() + 30_000;
        while (Atomics.load(flags, 1) < target) {
          assert.ok(Date.now() < deadline, `round ${round}: the extractors did not finish within 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      }
      Atomics.store(flags, 2, 1);
      const reports = await Promise.all([watcher, ...extractors].map((r) => r.report));
      for (const report of reports) assert.deepEqual(report.wrong, []);
      assert.ok((reports[0]?.reads ?? 0) > 0, 'the watcher read the file at least once');
      assert.deepEqual(readFileSync(join(dir, file.name)), Buffer.from(file.bytes));
      assert.deepEqual(readdirSync(dir), [file.name], 'no temporary file is left behind');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
