// The sealed-segment handle cache: its LRU bound as a property; an idle partition log holding only
// its active segment open; and a partition log with more
// segments than the bound holding at most that many of its descriptors open, before and after a
// reopen, while every batch stays readable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HandleCache, MAX_SEALED_HANDLES } from '../../../src/log/segment_handles.js';
import { append, batchOf, logConfig, openHarness, readAll, waitFor } from './log_fixture.js';
import { openUnder } from '../../helpers/open_fds.js';

describe('HandleCache', () => {
  it('keeps at most max holders open, releases only the least recently used, never the one just used', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 9 })), { maxLength: 200 }), (max, ops) => {
        const cache = new HandleCache(max);
        const open = new Set<number>();
        // The model: most recently used last.
        let order: number[] = [];
        const holders = Array.from({ length: 10 }, (_, i) => ({ releaseHandle: () => open.delete(i) }));
        for (const [touch, i] of ops) {
          order = order.filter((x) => x !== i);
          if (touch) {
            open.add(i);
            order.push(i);
            cache.touch(holders[i]!);
            assert.ok(open.has(i), 'the holder just used stays open');
          } else {
            cache.forget(holders[i]!);
          }
          const expectedEvicted = order.splice(0, Math.max(0, order.length - max));
          for (const e of expectedEvicted) assert.ok(!open.has(e), `holder ${e} released`);
          assert.equal(cache.size, order.length);
          assert.ok(cache.size <= max);
        }
      }),
    );
  });
});

describe('PartitionLog sealed segment descriptors', () => {
  it('an idle log holds one descriptor: its active segment (the directory is opened per sync)', async () => {
    const h = openHarness();
    try {
      for (let i = 0; i < 10; i++) {
        append(h.log, batchOf(2, 150));
        await h.committer.commit(h.log);
      }
      assert.equal(openUnder(h.dir), 1);
      h.log.close();
      h.reopen();
      assert.ok(openUnder(h.dir) <= 1);
    } finally {
      await h.dispose();
    }
  });

  it('holds at most the cache bound of descriptors for a log with more segments, and reopens them to read', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000 }));
    try {
      const batches = (MAX_SEALED_HANDLES + 40) * 3;
      for (let i = 0; i < batches; i++) append(h.log, batchOf(2, 150));
      await h.committer.commit(h.log);
      assert.ok(h.log.segmentCount > MAX_SEALED_HANDLES + 20, `${h.log.segmentCount} segments`);
      // Seals run asynchronously with descriptors of their own.
      await waitFor(() => openUnder(h.dir) <= MAX_SEALED_HANDLES + 2, 'seals to finish and release descriptors');
      assert.equal(readAll(h.log).length, batches);
      assert.ok(openUnder(h.dir) <= MAX_SEALED_HANDLES + 2, `${openUnder(h.dir)} open after reading every segment`);
      h.log.close();
      assert.equal(openUnder(h.dir), 0);
      h.reopen();
      assert.ok(openUnder(h.dir) <= MAX_SEALED_HANDLES + 2, `${openUnder(h.dir)} open after a reopen`);
      assert.equal(readAll(h.log).length, batches);
      assert.ok(openUnder(h.dir) <= MAX_SEALED_HANDLES + 2);
    } finally {
      await h.dispose();
    }
  });
});
