// The staged clean close (closeLogsTogether, PartitionLog.stageClose): files that exist are
// rewritten in place rather than replaced (no inode created or freed: that is what made closing
// thousands of partitions slow), the next open still trusts nothing but a finished close, and a
// close cut short after its in-place writes leaves a log the next open fully recovers.
import assert from 'node:assert/strict';
import { fdatasyncSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { closeLogsTogether } from '../../../src/log/clean_close.js';
import { CHECKPOINT_FILE, HIGH_WATERMARK_FILE, readCheckpoint } from '../../../src/log/log_checkpoint.js';
import type { StorageError } from '../../../src/log/io_backend.js';
import { append, batchOf, openHarness, readAll, type LogHarness } from './log_fixture.js';

/** Each file of the directory with its inode: a file replaced by rename shows a new one. */
function inodes(dir: string): Map<string, number> {
  return new Map(readdirSync(dir).sort().map((name) => [name, statSync(join(dir, name)).ino]));
}

async function closeTogether(h: LogHarness): Promise<void> {
  const errors: StorageError[] = [];
  await closeLogsTogether([h.log], h.io, (err) => errors.push(err));
  assert.deepEqual(errors, []);
}

/** A log with two committed batches, closed cleanly once and reopened (so its state files exist). */
async function reopenedAfterCleanClose(): Promise<LogHarness> {
  const h = openHarness();
  append(h.log, batchOf(2, 50));
  append(h.log, batchOf(3, 50));
  await h.committer.commit(h.log);
  await closeTogether(h);
  h.reopen();
  assert.equal(h.log.recovery.clean, true);
  return h;
}

it('an idle log closes by rewriting its marker in place: no file created, replaced or removed', async () => {
  const h = await reopenedAfterCleanClose();
  try {
    const before = inodes(h.dir);
    await closeTogether(h);
    assert.deepEqual(inodes(h.dir), before);
    assert.deepEqual(readCheckpoint(h.dir), { clean: true, logStartOffset: 0, recoveryPoint: 5 });
    const log = h.reopen();
    assert.equal(log.recovery.clean, true);
    assert.equal(log.recovery.scannedSegments, 0);
  } finally {
    await h.dispose();
  }
});

it('a written log closes by rewriting its existing state and index files in place, and reopens without a scan', async () => {
  const h = await reopenedAfterCleanClose();
  try {
    append(h.log, batchOf(4, 50));
    await h.committer.commit(h.log);
    const records = readAll(h.log).map((b) => b.bytes);
    const before = inodes(h.dir);
    await closeTogether(h);
    const after = inodes(h.dir);
    for (const name of [CHECKPOINT_FILE, HIGH_WATERMARK_FILE, '00000000000000000000.index', '00000000000000000000.timeindex']) {
      assert.equal(after.get(name), before.get(name), `${name} was replaced`);
    }
    assert.equal(readFileSync(join(h.dir, HIGH_WATERMARK_FILE), 'utf8'), '0\n1\n9\n');
    const log = h.reopen();
    assert.equal(log.recovery.clean, true);
    assert.equal(log.recovery.scannedSegments, 0);
    assert.equal(log.recovery.replayedBatches, 0);
    assert.deepEqual(readAll(log).map((b) => b.bytes), records);
    assert.equal(append(log, batchOf(1, 1)).baseOffset, 9);
  } finally {
    await h.dispose();
  }
});

it('a close cut short after its in-place writes leaves a marker that trusts nothing, even if the open\'s unclean one was lost', async () => {
  const h = await reopenedAfterCleanClose();
  try {
    // The open's unclean marker is not synced: a power loss may bring back the clean one it replaced.
    const cleanMarker = readFileSync(join(h.dir, CHECKPOINT_FILE));
    writeFileSync(join(h.dir, CHECKPOINT_FILE), Buffer.from(cleanMarker));
    append(h.log, batchOf(4, 50));
    await h.committer.commit(h.log);
    const records = readAll(h.log).map((b) => b.bytes);
    let step = h.log.stageClose();
    for (let i = 0; i < 2 && step !== null; i++) {
      for (const fd of step.fds) fdatasyncSync(fd);
      step = step.next();
    }
    assert.notEqual(step, null, 'the close is still short of its marker');
    step!.abandon();
    assert.equal(readCheckpoint(h.dir)?.clean, false);
    const log = h.reopen();
    assert.equal(log.recovery.clean, false);
    assert.deepEqual(readAll(log).map((b) => b.bytes), records);
  } finally {
    await h.dispose();
  }
});
