// The addon's dupFd: a new descriptor for the same open file that outlives the original (how
// main hands an accepted socket to a shard), and a typed errno error for a bad one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAddon, type NativeAddon } from '../../../src/native/addon.js';

const addon = loadAddon();
const dupFd = typeof addon === 'string' ? undefined : (addon as NativeAddon).dupFd;

describe('dupFd', { skip: dupFd === undefined ? 'addon without dupFd' : false }, () => {
  it('gives a distinct descriptor that still reads the file once the original is closed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dupfd-'));
    try {
      const path = join(dir, 'f');
      writeFileSync(path, 'handed over');
      const fd = openSync(path, 'r');
      const copy = dupFd!(fd);
      assert.notEqual(copy, fd);
      closeSync(fd);
      const buf = Buffer.alloc(32);
      const n = readSync(copy, buf, 0, buf.length, 0);
      closeSync(copy);
      assert.equal(buf.subarray(0, n).toString(), 'handed over');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('throws with the errno name for a descriptor that is not open', () => {
    assert.throws(() => dupFd!(1 << 30), (err: NodeJS.ErrnoException) => err.code === 'EBADF');
  });
});
