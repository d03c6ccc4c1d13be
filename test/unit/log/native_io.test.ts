// The native I/O addon beyond the shared IoBackend suite (io_backend.test.ts): backend selection,
// CRC-32C against @node-rs/crc32 (one stream and three), ring limits, an addon older than the
// writes-landed report, writeback ranges (advisory: never failing a commit), a large inline
// commit copied a slice per loop turn (each synced slice started to disk before the next), close,
// per-thread instances that do not keep an idle thread alive, completions delivered from the
// thread's own event loop (promise reactions right after, a throw to uncaughtException), and a
// ring's teardown by a terminated worker or the GC. Skipped when the addon is not built, unless
// SLUICE_REQUIRE_NATIVE=1.
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { crc32c } from '@node-rs/crc32';
import fc from 'fast-check';
import { StorageError } from '../../../src/log/io_backend.js';
import { loadAddon, nativeCrc32cFunction, type NativeAddon } from '../../../src/native/addon.js';
import { INLINE_WRITE_BYTES, loadNativeIo, NativeIoBackend, selectIoBackend } from '../../../src/log/native_io.js';
import { removeDir, tempDir, waitFor } from './log_fixture.js';

const probe = loadNativeIo();
if ('backend' in probe) await probe.backend.close();
const required = process.env['SLUICE_REQUIRE_NATIVE'] === '1';
const skip = 'unavailable' in probe && !required ? `native addon unavailable: ${probe.unavailable}` : false;

/** The worker's messages and exit code, once it exited (terminated after it posts `terminateOn`); fails after 10 s. */
async function untilExit(worker: Worker, terminateOn?: string): Promise<{ messages: unknown[]; exitCode: number }> {
  const messages: unknown[] = [];
  worker.on('message', (m) => {
    messages.push(m);
    if (m === terminateOn) void worker.terminate();
  });
  const exitCode = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker did not exit')), 10_000);
    worker.once('error', reject);
    worker.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { messages, exitCode };
}

/** A native backend whose writes all go through its ring (none written inline), which is what these tests are about. */
function nativeBackend(): NativeIoBackend {
  const loaded = loadNativeIo(0);
  if ('unavailable' in loaded) throw new Error(loaded.unavailable);
  return loaded.backend;
}

describe('selectIoBackend', () => {
  it('node mode always gives the node backend', () => {
    const { backend, note } = selectIoBackend('node');
    assert.equal(backend.name, 'node');
    assert.equal(note, 'io=node');
  });

  it('auto mode gives native when available, else node with the reason', async () => {
    const { backend, note } = selectIoBackend('auto');
    if ('backend' in probe) {
      assert.equal(backend.name, 'native');
      assert.equal(note, '');
      await (backend as NativeIoBackend).close();
    } else {
      assert.equal(backend.name, 'node');
      assert.equal(note, probe.unavailable);
    }
  });

  it('native mode never falls back', async () => {
    if ('unavailable' in probe) {
      assert.throws(() => selectIoBackend('native'), /native I\/O backend is unavailable/);
      return;
    }
    const { backend } = selectIoBackend('native');
    assert.equal(backend.name, 'native');
    await (backend as NativeIoBackend).close();
  });

  it('is active when SLUICE_REQUIRE_NATIVE=1', { skip: required ? false : 'SLUICE_REQUIRE_NATIVE is not 1' }, () => {
    assert.ok('backend' in probe, `native backend required but unavailable: ${'unavailable' in probe ? probe.unavailable : ''}`);
  });
});

describe('native addon', { skip }, () => {
  it('computes CRC-32C exactly like @node-rs/crc32 (property)', () => {
    const nativeCrc32c = nativeCrc32cFunction()!;
    assert.equal(nativeCrc32c(Buffer.from('123456789')), 0xe3069283);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.nat({ max: 7 }), (bytes, skipBytes) => {
        const view = Buffer.from(bytes).subarray(Math.min(skipBytes, bytes.length)); // unaligned starts too
        assert.equal(nativeCrc32c(view), crc32c(view));
      }),
      { numRuns: 300 },
    );
    // Past 768 bytes the addon runs three streams over 256 B or 4 KiB blocks and joins them.
    const big = Buffer.from(Array.from({ length: 40_000 }, (_, i) => Math.imul(i, 2_654_435_761) >>> 13));
    fc.assert(
      fc.property(fc.nat({ max: 39_000 }), fc.nat({ max: 7 }), fc.nat({ max: 39_999 }), (length, start, flip) => {
        const view = Buffer.from(big.subarray(start, start + length));
        if (length > 0) view[flip % length] ^= 0x5a;
        assert.equal(nativeCrc32c(view), crc32c(view));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a commit larger than the ring with a clear error, and stays usable', async () => {
    const dir = tempDir();
    const io = nativeBackend();
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      const writes = Array.from({ length: 5000 }, (_, i) => ({ fd, chunks: [Buffer.from('x')], position: i }));
      const err = await io.commit(writes, [fd]).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof StorageError);
      assert.equal(err.errno, 'ERR_SLUICE_COMMIT_TOO_LARGE');
      assert.match(err.message, /exceeds the ring's limits/);
      await io.commit([{ fd, chunks: [Buffer.from('ok')], position: 0 }], [fd]);
      assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'ok');
    } finally {
      closeSync(fd);
      await io.close();
      removeDir(dir);
    }
  });

  it('over an addon built before the writes-landed report, says so and refuses onWritten rather than drop it', async () => {
    const addon = loadAddon() as NativeAddon;
    const older: NativeAddon = { ...addon, reportsWritten: undefined };
    const io = new NativeIoBackend(older, older.openRing(8, 1 << 20));
    const dir = tempDir();
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      assert.equal(io.reportsWritten, false);
      let landed = 0;
      await assert.rejects(io.commit([{ fd, chunks: [Buffer.from('x')], position: 0 }], [fd], () => landed++), StorageError);
      assert.equal(landed, 0);
      await io.commit([{ fd, chunks: [Buffer.from('ok')], position: 0 }], [fd]);
      assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'ok');
    } finally {
      closeSync(fd);
      await io.close();
      removeDir(dir);
    }
  });

  it('starts writeback of written ranges without failing anything, even on a bad descriptor, and close waits for it', async () => {
    const dir = tempDir();
    const io = nativeBackend();
    const fd = openSync(join(dir, 'f'), 'w+');
    const gone = openSync(join(dir, 'g'), 'w+');
    closeSync(gone);
    try {
      await io.commit([{ fd, chunks: [Buffer.alloc(4 << 20, 7)], position: 0 }], []);
      // EBADF for the closed descriptor is the kernel's answer to an advisory op: nothing fails.
      io.startWriteback([{ fd, offset: 0, length: 4 << 20 }, { fd: gone, offset: 0, length: 4096 }]);
      await io.commit([{ fd, chunks: [Buffer.from('after')], position: 4 << 20 }], [fd]);
      await io.close();
      const bytes = readFileSync(join(dir, 'f'));
      assert.equal(bytes.length, (4 << 20) + 5);
      assert.equal(bytes.subarray(4 << 20).toString(), 'after');
    } finally {
      closeSync(fd);
      removeDir(dir);
    }
  });

  it('writes a range back when asked, long before the kernel\'s flusher would', async () => {
    // Dirty page-cache bytes of the whole machine (/proc/meminfo), in MiB: the flusher leaves
    // fresh dirty pages alone for dirty_expire_centisecs (30 s by default) while they stay under
    // the background threshold (10 % of memory), so 128 MiB stays dirty unless written back.
    const dirtyMiB = (): number => Number(/^Dirty:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? NaN) / 1024;
    const dir = tempDir();
    const io = nativeBackend();
    const fd = openSync(join(dir, 'f'), 'w+');
    const bytes = 128 << 20;
    try {
      await io.commit([{ fd, chunks: [Buffer.alloc(bytes, 3)], position: 0 }], []);
      const written = dirtyMiB();
      io.startWriteback([{ fd, offset: 0, length: bytes }]);
      await waitFor(() => written - dirtyMiB() >= 96, 'most of the range written back', 10_000);
    } finally {
      await io.close();
      closeSync(fd);
      removeDir(dir);
    }
  });

  it('refuses a writeback range that is not one, and leaves writeback to the kernel on an addon built before it', () => {
    const addon = loadAddon() as NativeAddon;
    const ring = addon.openRing(8, 1 << 20);
    try {
      const done = (): void => assert.fail('a refused commit has no completion');
      assert.throws(() => addon.commit(ring, new Float64Array(0), [], new Int32Array(0), done, undefined, new Float64Array([-1, 0, 4096])), /invalid fd, offset or length/);
      assert.throws(() => addon.commit(ring, new Float64Array(0), [], new Int32Array(0), done, undefined, new Float64Array([3, 0])), /multiple of 3/);
    } finally {
      addon.close(ring);
    }
    let commits = 0;
    const older: NativeAddon = { ...addon, startsWriteback: undefined, commit: (...args) => (commits++, addon.commit(...args)) };
    const io = new NativeIoBackend(older, older.openRing(8, 1 << 20));
    io.startWriteback([{ fd: 0, offset: 0, length: 4096 }]);
    assert.equal(commits, 0, 'no commit was submitted');
    return io.close();
  });

  it('copies a large inline commit a slice per loop turn, starting each synced slice to disk before the next, and close waits for it', async () => {
    const addon = loadAddon() as NativeAddon;
    const events: string[] = [];
    const recording: NativeAddon = {
      ...addon,
      commit: (ring, meta, chunks, syncFds, done, written, writeback) => {
        if (writeback !== undefined) events.push(`writeback ${[...writeback].join(' ')}`);
        else if (syncFds.length > 0) events.push('sync');
        return addon.commit(ring, meta, chunks, syncFds, done, written, writeback);
      },
    };
    const slice = 64 << 10;
    const io = new NativeIoBackend(recording, recording.openRing(64, 64 << 20), INLINE_WRITE_BYTES, slice);
    const dir = tempDir();
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      // 160 KiB at 4096 in 48 KiB chunks (slices cut inside them): 64 + 64 + 32 KiB. The loop runs
      // between slices; the first two go to disk as soon as they are copied, the last with the sync.
      const chunks = Array.from({ length: 4 }, (_, i) => Buffer.alloc(i < 3 ? 48 << 10 : 16 << 10, i + 1));
      let landed = 0;
      setImmediate(() => events.push('loop turn'));
      const committed = io.commit([{ fd, chunks, position: 4096 }], [fd], () => landed++);
      events.push('commit returned');
      await committed;
      assert.deepEqual(events, [
        `writeback ${fd} 4096 ${slice}`, 'commit returned', 'loop turn', `writeback ${fd} ${4096 + slice} ${slice}`, 'sync',
      ]);
      assert.equal(landed, 1);
      assert.deepEqual(readFileSync(join(dir, 'f')).subarray(4096), Buffer.concat(chunks));
      // close() right after such a commit waits for its slices still to copy and the sync after them.
      const again = io.commit([{ fd, chunks: chunks.map((c) => Buffer.alloc(c.length, 0x7e)), position: 0 }], [fd]);
      events.length = 0;
      await io.close();
      assert.ok(readFileSync(join(dir, 'f')).subarray(0, 160 << 10).every((b) => b === 0x7e));
      assert.deepEqual(events, ['sync']);
      await again;
    } finally {
      await io.close();
      closeSync(fd);
      removeDir(dir);
    }
  });

  it('copies an inline commit of one slice, or one not to be synced, without starting writeback itself', async () => {
    const addon = loadAddon() as NativeAddon;
    let writebacks = 0;
    const recording: NativeAddon = {
      ...addon,
      commit: (ring, meta, chunks, syncFds, done, written, writeback) => {
        if (writeback !== undefined) writebacks++;
        return addon.commit(ring, meta, chunks, syncFds, done, written, writeback);
      },
    };
    const io = new NativeIoBackend(recording, recording.openRing(64, 64 << 20), INLINE_WRITE_BYTES, 64 << 10);
    const dir = tempDir();
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      const big = Buffer.alloc(200 << 10, 9);
      await io.commit([{ fd, chunks: [big], position: 0 }], []); // the committer's writeback ranges cover these
      await io.commit([{ fd, chunks: [Buffer.alloc(64 << 10, 8)], position: big.length }], [fd]);
      assert.equal(writebacks, 0);
      const bytes = readFileSync(join(dir, 'f'));
      assert.equal(bytes.length, big.length + (64 << 10));
      assert.ok(bytes.subarray(0, big.length).every((b) => b === 9) && bytes.subarray(big.length).every((b) => b === 8));
    } finally {
      await io.close();
      closeSync(fd);
      removeDir(dir);
    }
  });

  it('close waits for in-flight commits, then refuses new ones', async () => {
    const dir = tempDir();
    const io = nativeBackend();
    const fd = openSync(join(dir, 'f'), 'w+');
    try {
      let committed = false;
      const pending = io.commit([{ fd, chunks: [Buffer.alloc(1 << 20, 1)], position: 0 }], [fd]).then(() => {
        committed = true;
      });
      await io.close();
      assert.equal(committed, true);
      await pending;
      await assert.rejects(io.commit([], [fd]), StorageError);
    } finally {
      closeSync(fd);
      removeDir(dir);
    }
  });

  it('works in a worker thread with its own ring and lets the idle worker exit', async () => {
    const dir = tempDir();
    const moduleUrl = new URL('../../../src/log/native_io.js', import.meta.url).href;
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      const fs = require('node:fs');
      import(workerData.moduleUrl).then(async ({ loadNativeIo }) => {
        const loaded = loadNativeIo();
        if (!loaded.backend) throw new Error(loaded.unavailable);
        const fd = fs.openSync(workerData.file, 'w+');
        await loaded.backend.commit([{ fd, chunks: [Buffer.from('from worker')], position: 0 }], [fd]);
        parentPort.postMessage('committed'); // the ring is left open: it must not keep the worker alive
      });`;
    try {
      const { messages, exitCode } = await untilExit(new Worker(code, { eval: true, workerData: { moduleUrl, file: join(dir, 'w') } }));
      assert.equal(exitCode, 0);
      assert.deepEqual(messages, ['committed']);
      assert.equal(readFileSync(join(dir, 'w'), 'utf8'), 'from worker');
    } finally {
      removeDir(dir);
    }
  });

  /** Runs `body` (CommonJS, with `addon`, `fd` and `post` in scope) in a worker; its messages and exit code. */
  async function inWorker(body: string, terminateOn?: string): Promise<{ messages: unknown[]; exitCode: number }> {
    const dir = tempDir();
    const addonPath = new URL('../../../../native/sluice_native.node', import.meta.url).pathname;
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      const addon = require(workerData.addonPath);
      const fd = require('node:fs').openSync(workerData.file, 'w+');
      const post = (m) => parentPort.postMessage(m);
      ${body}`;
    try {
      return await untilExit(new Worker(code, { eval: true, workerData: { addonPath, file: join(dir, 'w') } }), terminateOn);
    } finally {
      removeDir(dir);
    }
  }

  it('delivers completions from the thread\'s event loop: promise reactions run right after each callback, and a throw reaches uncaughtException', async () => {
    const { messages, exitCode } = await inWorker(`
      const events = [];
      process.on('uncaughtException', (err) => {
        events.push('uncaught ' + err.message);
        addon.close(ring);
        post(events);
      });
      const ring = addon.openRing(8, 1 << 20);
      const commit = (done) => addon.commit(ring, new Float64Array([fd, 0, 1]), [Buffer.from('x')], Int32Array.of(fd), done, () => events.push('written'));
      commit((errno) => {
        events.push('done ' + errno);
        Promise.resolve().then(() => events.push('reaction'));
        process.nextTick(() => events.push('tick'));
        setImmediate(() => {
          events.push('next macrotask');
          commit(() => {
            throw new Error('from the callback');
          });
        });
      });`);
    assert.equal(exitCode, 0);
    assert.deepEqual(messages, [['written', 'done null', 'tick', 'reaction', 'next macrotask', 'written', 'uncaught from the callback']]);
  });

  it('runs the promise reactions of one completion before the next completion\'s callback, when several arrive together', async () => {
    const { messages, exitCode } = await inWorker(`
      const events = [];
      const ring = addon.openRing(8, 1 << 20);
      const commit = (tag) => addon.commit(ring, new Float64Array([fd, 0, 1]), [Buffer.from(tag)], Int32Array.of(fd), () => {
        events.push('done ' + tag);
        Promise.resolve().then(() => events.push('reaction ' + tag));
      });
      commit('a');
      commit('b');
      // Both finish while this thread is busy, so the loop finds them together.
      for (const until = Date.now() + 200; Date.now() < until;);
      setTimeout(() => {
        addon.close(ring);
        post(events);
      }, 200);`);
    assert.equal(exitCode, 0);
    const [events] = messages as [string[]];
    // The two syncs may finish in either order; each callback's reaction comes right after it.
    const first = events[0] === 'done a' ? 'a' : 'b';
    const second = first === 'a' ? 'b' : 'a';
    assert.deepEqual(events, [`done ${first}`, `reaction ${first}`, `done ${second}`, `reaction ${second}`]);
  });

  it('lets a worker be terminated with commits in flight or an idle ring open, and a closed one whose handle is still closing', async () => {
    const inflight = await inWorker(`
      const ring = addon.openRing(64, 64 << 20);
      for (let i = 0; i < 16; i++) addon.commit(ring, new Float64Array([fd, i << 16, 1]), [Buffer.alloc(1 << 16, i)], Int32Array.of(fd), () => {});
      post('submitted');
      setInterval(() => {}, 1000);`, 'submitted');
    assert.deepEqual(inflight.messages, ['submitted']);
    assert.equal(inflight.exitCode, 1, 'terminated, not aborted');
    const closing = await inWorker(`
      addon.openRing(8, 1 << 20);
      addon.close(addon.openRing(8, 1 << 20));
      post('open');
      setInterval(() => {}, 1000);`, 'open');
    assert.deepEqual(closing.messages, ['open']);
    assert.equal(closing.exitCode, 1);
  });

  it('closes a ring the GC collected: its descriptors are released', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const addon = loadAddon() as NativeAddon;
    const fds = (): number => readdirSync('/proc/self/fd').length;
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    const before = fds();
    for (let i = 0; i < 64; i++) addon.openRing(8, 1 << 20);
    assert.ok(fds() >= before + 128, 'each ring holds its io_uring and eventfd descriptors');
    await waitFor(() => {
      gc();
      return fds() <= before + 8;
    }, 'the collected rings\' descriptors closed', 10_000);
  });
});
