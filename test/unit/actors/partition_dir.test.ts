// Partition directories keyed by topic id: a fresh directory gets partition.metadata, one from
// before topic ids were recorded is adopted with its data, a matching one is left alone, and
// one naming another topic id (a deleted topic whose deletion was interrupted) never survives.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PARTITION_METADATA, parseTopicId, preparePartitionDir } from '../../../src/actors/partition_dir.js';

const OLD_ID = '1'.repeat(32);
const NEW_ID = '2'.repeat(32);
const SEGMENT = '00000000000000000000.log';

function withDir(run: (root: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-pdir-'));
    try {
      await run(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

const idIn = (dir: string): string | null => parseTopicId(readFileSync(join(dir, PARTITION_METADATA), 'utf8'));

describe('preparePartitionDir', () => {
  it('creates a missing directory with the topic id', withDir(async (root) => {
    const dir = join(root, 't-0');
    assert.equal(await preparePartitionDir(dir, NEW_ID), 'created');
    assert.equal(idIn(dir), NEW_ID);
  }));

  it('adopts a directory written before topic ids, keeping its data', withDir(async (root) => {
    const dir = join(root, 't-0');
    mkdirSync(dir);
    writeFileSync(join(dir, SEGMENT), 'records');
    assert.equal(await preparePartitionDir(dir, NEW_ID), 'adopted');
    assert.equal(idIn(dir), NEW_ID);
    assert.equal(readFileSync(join(dir, SEGMENT), 'utf8'), 'records');
    assert.equal(await preparePartitionDir(dir, NEW_ID), 'matched', 'the second open finds its own id');
    assert.ok(existsSync(join(dir, SEGMENT)));
  }));

  it("replaces a directory left by an earlier topic of the same name, so none of its data is served", withDir(async (root) => {
    const dir = join(root, 't-0');
    mkdirSync(dir);
    writeFileSync(join(dir, SEGMENT), 'old topic records');
    writeFileSync(join(dir, PARTITION_METADATA), `version: 0\ntopic_id: ${OLD_ID}\n`);
    assert.equal(await preparePartitionDir(dir, NEW_ID), 'replaced');
    assert.equal(idIn(dir), NEW_ID);
    assert.deepEqual(readdirSync(dir), [PARTITION_METADATA]);
    assert.deepEqual(readdirSync(root), ['t-0'], 'the old data is deleted, not kept aside');
  }));

  it('treats an unreadable metadata file as another topic', withDir(async (root) => {
    const dir = join(root, 't-0');
    mkdirSync(dir);
    writeFileSync(join(dir, SEGMENT), 'x');
    writeFileSync(join(dir, PARTITION_METADATA), 'garbage');
    assert.equal(await preparePartitionDir(dir, NEW_ID), 'replaced');
    assert.deepEqual(readdirSync(dir), [PARTITION_METADATA]);
  }));
});
