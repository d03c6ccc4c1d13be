// SegmentReader: descriptors of a dropped directory close at once unless a read or a native
// send still holds them, and then as soon as the last one lets go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { SegmentReader } from '../../../src/net/segment_reader.js';
import { openUnder } from '../../helpers/open_fds.js';

/** Waits (bounded) until no descriptor of this process is open on `path`; closes run on the thread pool. */
async function closedWithin(path: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (openUnder(path) > 0) {
    if (Date.now() > until) return false;
    await tick();
  }
  return true;
}

function fixture(): { root: string; dir: string; file: string } {
  const root = mkdtempSync(join(tmpdir(), 'segment-reader-'));
  const dir = join(root, 't-0');
  mkdirSync(dir);
  const file = join(dir, '00000000000000000000.log');
  writeFileSync(file, Buffer.from('0123456789abcdef'));
  return { root, dir, file };
}

describe('SegmentReader', () => {
  it('reads ranges, and closes a dropped directory’s descriptors at once', async () => {
    const { root, dir, file } = fixture();
    const reader = new SegmentReader();
    try {
      const bufs = await reader.readRanges([{ path: file, position: 4, length: 6 }]);
      assert.equal(Buffer.concat(bufs).toString(), '456789');
      assert.equal(openUnder(file), 1, 'the descriptor is cached');
      reader.dropDir(dir);
      assert.ok(await closedWithin(file, 1000), 'a deleted partition must not hold its files open');
    } finally {
      reader.closeAll();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('keeps a leased descriptor open across dropDir until the lease is given back', async () => {
    const { root, dir, file } = fixture();
    const reader = new SegmentReader();
    try {
      const leases: number[] = [];
      const chunks = await reader.fileRanges([{ path: file, position: 0, length: 16 }], leases);
      assert.equal(chunks.length, 1);
      reader.dropDir(dir);
      await tick();
      assert.equal(openUnder(file), 1, 'a response still refers to the descriptor');
      reader.release(leases);
      assert.ok(await closedWithin(file, 1000), 'closed once the lease is given back');
    } finally {
      reader.closeAll();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a read under way when its directory is dropped completes intact, then lets the descriptor close', async () => {
    const { root, dir, file } = fixture();
    const reader = new SegmentReader();
    try {
      const reading = reader.readRanges([{ path: file, position: 0, length: 16 }]);
      reader.dropDir(dir);
      assert.equal(Buffer.concat(await reading).toString(), '0123456789abcdef');
      assert.ok(await closedWithin(file, 1000), 'closed once the read is done');
    } finally {
      reader.closeAll();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
