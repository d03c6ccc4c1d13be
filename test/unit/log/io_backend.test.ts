// NodeIoBackend: positioned multi-chunk writes, fdatasync, and errors surfacing as StorageError.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NodeIoBackend, StorageError } from '../../../src/log/io_backend.js';
import { removeDir, tempDir } from './log_fixture.js';

describe('NodeIoBackend', () => {
  it('writes every op at its position and syncs the named files', async () => {
    const dir = tempDir();
    const a = openSync(join(dir, 'a'), 'w+');
    const b = openSync(join(dir, 'b'), 'w+');
    try {
      const io = new NodeIoBackend();
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
      assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'hello world!');
      assert.deepEqual(readFileSync(join(dir, 'b')), Buffer.from([0, 0, 0, 0, 0x78, 0x79, 0x7a]));
    } finally {
      closeSync(a);
      closeSync(b);
      removeDir(dir);
    }
  });

  it('rejects with a StorageError carrying the errno, after every op settled', async () => {
    const dir = tempDir();
    const good = openSync(join(dir, 'good'), 'w+');
    const readOnly = openSync(join(dir, 'good'), 'r');
    try {
      const io = new NodeIoBackend();
      const err = await io
        .commit(
          [
            { fd: readOnly, chunks: [Buffer.from('nope')], position: 0 },
            { fd: good, chunks: [Buffer.from('data')], position: 0 },
          ],
          [good, readOnly],
        )
        .then(
          () => null,
          (e: unknown) => e,
        );
      assert.ok(err instanceof StorageError);
      assert.equal(err.errno, 'EBADF');
      assert.equal(readFileSync(join(dir, 'good'), 'utf8'), 'data');
    } finally {
      closeSync(good);
      closeSync(readOnly);
      removeDir(dir);
    }
  });
});
