// IoBackend behaviours, run against every backend (node, and native when the addon is built):
// positioned multi-chunk writes, fdatasync, errors surfacing as StorageError with the errno,
// recovery after a failure, concurrency, ENOSPC on a tiny tmpfs, and the writes-landed report
// (once, with the bytes in the files, before the commit settles; never after a failed write).
// The native backend runs twice: writing through its ring, and writing on the calling thread.
// The native half is skipped only when the addon is missing, unless SLUICE_REQUIRE_NATIVE=1.
import assert from 'node:assert/strict';
import { closeSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { NodeIoBackend, StorageError, type IoBackend, type WriteOp } from '../../../src/log/io_backend.js';
import { loadNativeIo } from '../../../src/log/native_io.js';
import { removeDir, tempDir } from './log_fixture.js';
import { tinyTmpfs } from '../../helpers/tmpfs.js';

interface BackendKind {
  name: string;
  /** Why the suite cannot run here, or false. */
  skip: string | false;
  open(): { io: IoBackend; close(): Promise<void> };
}

const nativeProbe = loadNativeIo();
const nativeRequired = process.env['SLUICE_REQUIRE_NATIVE'] === '1';

/** The native backend writing commits of up to `inlineWriteBytes` on the calling thread (0: every write through the ring). */
const nativeKind = (name: string, inlineWriteBytes: number): BackendKind => ({
  name,
  skip: 'unavailable' in nativeProbe && !nativeRequired ? `native addon unavailable: ${nativeProbe.unavailable}` : false,
  open() {
    const loaded = loadNativeIo(inlineWriteBytes);
    if ('unavailable' in loaded) throw new Error(`SLUICE_REQUIRE_NATIVE=1 but ${loaded.unavailable}`);
    return { io: loaded.backend, close: () => loaded.backend.close() };
  },
});

const BACKENDS: readonly BackendKind[] = [
  { name: 'node', skip: false, open: () => ({ io: new NodeIoBackend(), close: async () => undefined }) },
  nativeKind('native (writes through the ring)', 0),
  // Every commit of these tests fits: the whole suite runs through the inline writes.
  nativeKind('native (inline writes)', Number.MAX_SAFE_INTEGER),
];
if ('backend' in nativeProbe) await nativeProbe.backend.close();

/** An onWritten that records, at each call, whether the commit had settled and what `look` saw then. */
function landedProbe<T>(look: () => T): { onWritten: () => void; calls: Array<{ settled: boolean; seen: T }>; settles<P>(p: Promise<P>): Promise<P> } {
  let settled = false;
  const calls: Array<{ settled: boolean; seen: T }> = [];
  return {
    onWritten: () => calls.push({ settled, seen: look() }),
    calls,
    settles: (p) => p.finally(() => (settled = true)),
  };
}

async function rejection(p: Promise<unknown>): Promise<StorageError> {
  const err = await p.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof StorageError, `expected a StorageError, got ${String(err)}`);
  return err;
}

/** Runs `body` with a fresh backend and temp dir, cleaning both up. */
function withBackend(kind: BackendKind, body: (io: IoBackend, dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = tempDir();
    const { io, close } = kind.open();
    try {
      await body(io, dir);
    } finally {
      await close();
      removeDir(dir);
    }
  };
}

for (const kind of BACKENDS) {
  describe(`IoBackend: ${kind.name}`, { skip: kind.skip }, () => {
    it('writes every op at its position and syncs the named files', withBackend(kind, async (io, dir) => {
      const a = openSync(join(dir, 'a'), 'w+');
      const b = openSync(join(dir, 'b'), 'w+');
      try {
        await io.commit(
          [
            { fd: a, chunks: [Buffer.from('hello '), Buffer.from('world')], position: 0 },
            { fd: a, chunks: [Buffer.from('!')], position: 11 },
            { fd: b, chunks: [Buffer.alloc(0)], position: 0 },
            { fd: b, chunks: [Buffer.from('xyz')], position: 4 },
          ],
          [a, b, a],
        );
        await io.commit([], [a]);
        await io.commit([], []);
        await io.commit([{ fd: a, chunks: [], position: 0 }], []);
        assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'hello world!');
        assert.deepEqual(readFileSync(join(dir, 'b')), Buffer.from([0, 0, 0, 0, 0x78, 0x79, 0x7a]));
      } finally {
        closeSync(a);
        closeSync(b);
      }
    }));

    it('rejects with a StorageError carrying the errno, after every op settled', withBackend(kind, async (io, dir) => {
      const good = openSync(join(dir, 'good'), 'w+');
      const readOnly = openSync(join(dir, 'good'), 'r');
      try {
        const err = await rejection(io.commit(
          [
            { fd: readOnly, chunks: [Buffer.from('nope')], position: 0 },
            { fd: good, chunks: [Buffer.from('data')], position: 0 },
          ],
          [good, readOnly],
        ));
        assert.equal(err.errno, 'EBADF');
        assert.equal(readFileSync(join(dir, 'good'), 'utf8'), 'data');
      } finally {
        closeSync(good);
        closeSync(readOnly);
      }
    }));

    it('keeps working after a commit to a closed fd failed with EBADF', withBackend(kind, async (io, dir) => {
      const dead = openSync(join(dir, 'dead'), 'w+');
      closeSync(dead);
      const err = await rejection(io.commit([{ fd: dead, chunks: [Buffer.from('x')], position: 0 }], [dead]));
      assert.equal(err.errno, 'EBADF');
      const syncErr = await rejection(io.commit([], [dead]));
      assert.equal(syncErr.errno, 'EBADF');
      const fd = openSync(join(dir, 'alive'), 'w+');
      try {
        await io.commit([{ fd, chunks: [Buffer.from('still fine')], position: 0 }], [fd]);
        assert.equal(readFileSync(join(dir, 'alive'), 'utf8'), 'still fine');
      } finally {
        closeSync(fd);
      }
    }));

    it('reports landed writes once, with the bytes in the files, before the commit settles', withBackend(kind, async (io, dir) => {
      assert.equal(io.reportsWritten, true);
      const a = openSync(join(dir, 'a'), 'w+');
      const b = openSync(join(dir, 'b'), 'w+');
      try {
        const files = () => [readFileSync(join(dir, 'a'), 'utf8'), readFileSync(join(dir, 'b'), 'utf8')];
        const landed = landedProbe(files);
        await landed.settles(io.commit(
          [
            { fd: a, chunks: [Buffer.from('hello '), Buffer.from('world')], position: 0 },
            { fd: b, chunks: [Buffer.alloc(64 * 1024, 0x61)], position: 0 },
            { fd: a, chunks: [Buffer.from('!')], position: 11 },
          ],
          [a, b],
          landed.onWritten,
        ));
        assert.deepEqual(landed.calls, [{ settled: false, seen: ['hello world!', 'a'.repeat(64 * 1024)] }]);
        // Nothing to write: every (no) write landed, still once and before the commit settles.
        for (const syncFds of [[a], []]) {
          const none = landedProbe(() => null);
          await none.settles(io.commit([], syncFds, none.onWritten));
          assert.deepEqual(none.calls, [{ settled: false, seen: null }], `syncFds ${syncFds.length}`);
        }
      } finally {
        closeSync(a);
        closeSync(b);
      }
    }));

    it('never reports landed writes when a write failed; does when only a sync failed', withBackend(kind, async (io, dir) => {
      const good = openSync(join(dir, 'good'), 'w+');
      const readOnly = openSync(join(dir, 'good'), 'r');
      const dead = openSync(join(dir, 'dead'), 'w+');
      closeSync(dead);
      try {
        const failedWrite = landedProbe(() => null);
        const err = await rejection(failedWrite.settles(io.commit(
          [
            { fd: good, chunks: [Buffer.from('data')], position: 0 },
            { fd: readOnly, chunks: [Buffer.from('nope')], position: 0 },
          ],
          [good],
          failedWrite.onWritten,
        )));
        assert.equal(err.errno, 'EBADF');
        assert.deepEqual(failedWrite.calls, []);
        // Nothing opened while it runs (the probe reads no file): the dead fd's number stays free.
        const failedSync = landedProbe(() => null);
        const syncErr = await rejection(failedSync.settles(io.commit([{ fd: good, chunks: [Buffer.from('more')], position: 4 }], [good, dead], failedSync.onWritten)));
        assert.equal(syncErr.errno, 'EBADF');
        assert.deepEqual(failedSync.calls, [{ settled: false, seen: null }]);
        assert.equal(readFileSync(join(dir, 'good'), 'utf8'), 'datamore');
      } finally {
        closeSync(good);
        closeSync(readOnly);
      }
    }));

    it('writes many files and ops in one commit byte-identically (property)', withBackend(kind, async (io, dir) => {
      const fileOps = fc.array(
        fc.record({
          gap: fc.nat({ max: 64 }),
          chunks: fc.array(fc.uint8Array({ minLength: 0, maxLength: 3000 }), { maxLength: 4 }),
        }),
        { maxLength: 12 },
      );
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fileOps, { minLength: 1, maxLength: 24 }), async (files) => {
          const fds = files.map((_, i) => openSync(join(dir, `r${run}-${i}`), 'w+'));
          const expected: Buffer[] = [];
          const writes: WriteOp[] = [];
          files.forEach((ops, i) => {
            const parts: Buffer[] = [];
            let position = 0;
            for (const op of ops) {
              const chunks = op.chunks.map((c) => Buffer.from(c));
              parts.push(Buffer.alloc(op.gap));
              position += op.gap;
              writes.push({ fd: fds[i]!, chunks, position });
              for (const c of chunks) position += c.length;
              parts.push(...chunks);
            }
            // Gaps after the last byte written are never written, so the file ends there.
            expected.push(Buffer.concat(parts).subarray(0, lastWrittenEnd(ops)));
          });
          try {
            await io.commit(writes, fds);
            files.forEach((_, i) => assert.deepEqual(readFileSync(join(dir, `r${run}-${i}`)), expected[i]));
          } finally {
            for (const fd of fds) closeSync(fd);
            run++;
          }
        }),
        { numRuns: 25 },
      );
    }));

    it('splits an op with more chunks than IOV_MAX', withBackend(kind, async (io, dir) => {
      const fd = openSync(join(dir, 'many'), 'w+');
      try {
        const chunks = Array.from({ length: 2500 }, (_, i) => Buffer.from([i & 0xff, (i >> 8) & 0xff]));
        await io.commit([{ fd, chunks, position: 7 }], [fd]);
        assert.deepEqual(readFileSync(join(dir, 'many')), Buffer.concat([Buffer.alloc(7), ...chunks]));
      } finally {
        closeSync(fd);
      }
    }));

    it('runs several commits concurrently', withBackend(kind, async (io, dir) => {
      const fd = openSync(join(dir, 'shared'), 'w+');
      try {
        const block = (i: number): Buffer => Buffer.alloc(64 * 1024, i + 1);
        await Promise.all(Array.from({ length: 16 }, (_, i) => io.commit([{ fd, chunks: [block(i)], position: i * 65536 }], [fd])));
        assert.deepEqual(readFileSync(join(dir, 'shared')), Buffer.concat(Array.from({ length: 16 }, (_, i) => block(i))));
      } finally {
        closeSync(fd);
      }
    }));

    it('rejects with ENOSPC on a full filesystem and succeeds once space is freed', async (t) => {
      const fs = tinyTmpfs('1m');
      if (typeof fs === 'string') return t.skip(fs);
      const { io, close } = kind.open();
      const fd = openSync(join(fs.dir, 'big'), 'w+');
      try {
        // The first writev lands partly (short write), the resumed remainder hits ENOSPC: a
        // partly landed write is not reported as landed.
        let landed = 0;
        const err = await rejection(io.commit([{ fd, chunks: [Buffer.alloc(2 << 20, 7)], position: 0 }], [fd], () => landed++));
        assert.equal(err.errno, 'ENOSPC');
        assert.equal(landed, 0);
        ftruncateSync(fd, 0);
        await io.commit([{ fd, chunks: [Buffer.from('fits now')], position: 0 }], [fd]);
        assert.equal(readFileSync(join(fs.dir, 'big'), 'utf8'), 'fits now');
      } finally {
        closeSync(fd);
        await close();
        fs.unmount();
      }
    });
  });
}

function lastWrittenEnd(ops: ReadonlyArray<{ gap: number; chunks: readonly Uint8Array[] }>): number {
  let position = 0;
  let end = 0;
  for (const op of ops) {
    position += op.gap;
    const len = op.chunks.reduce((n, c) => n + c.length, 0);
    position += len;
    if (len > 0) end = position;
  }
  return end;
}
