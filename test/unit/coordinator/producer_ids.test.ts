// Producer id blocks: ids never repeat across restarts, concurrent callers share one block write.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ProducerIdAllocator } from '../../../src/coordinator/producer_ids.js';

describe('ProducerIdAllocator', () => {
  it('hands out distinct ids to concurrent callers and never repeats one after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-pid-'));
    try {
      const first = new ProducerIdAllocator(dir);
      const ids = await Promise.all(Array.from({ length: 2500 }, () => first.allocate()));
      assert.equal(new Set(ids).size, ids.length);
      assert.equal(Number(readFileSync(join(dir, 'producer_id_block'), 'utf8')), 3000);
      // A restart (crash) resumes after the persisted block end: skipped ids, never reused ones.
      const second = new ProducerIdAllocator(dir);
      const after = await Promise.all(Array.from({ length: 10 }, () => second.allocate()));
      assert.ok(after.every((id) => id >= 3000 && !ids.includes(id)), `ids after restart: ${after.join(',')}`);
      assert.equal(new Set(after).size, after.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
