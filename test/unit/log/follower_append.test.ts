// PartitionLog as a replica that receives stamped batches: appendAsFollower keeps each batch's
// epoch (an older epoch may follow a cut tail), refuses a base offset off the log end and an epoch
// behind the cache, and a log created with initialStartOffset starts there and stays there.
// resetTo (a follower starting over outside its leader's log) leaves an empty log at the new
// offset, forward or backward, with no epochs, producer state or snapshots, across a reopen and a
// crash between its steps.
import assert from 'node:assert/strict';
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { readBatchHeader } from '../../../src/protocol/record_batch.js';
import { PartitionLog } from '../../../src/log/partition_log.js';
import { writeCheckpoint } from '../../../src/log/log_checkpoint.js';
import { buildBatch, makeRecords } from './batch_builder.js';
import { append, logConfig, openHarness, readAll, removeDir, tempDir } from './log_fixture.js';

function follow(log: PartitionLog, baseOffset: number, epoch: number, records = 2, producer: { producerId: number; producerEpoch: number; baseSequence: number } | null = null): ReturnType<PartitionLog['appendAsFollower']> {
  const batch = buildBatch({ records: makeRecords(records, 10), baseOffset, partitionLeaderEpoch: epoch, ...producer });
  return log.appendAsFollower(batch, readBatchHeader(batch, 0));
}

describe('PartitionLog.appendAsFollower', () => {
  it('keeps the batch epochs, lets an older epoch follow a truncated tail, and refuses off-end offsets and epochs behind the cache', async () => {
    const h = openHarness(logConfig({ segmentBytes: 400 }));
    try {
      assert.equal(follow(h.log, 0, 3).kind, 'appended');
      assert.equal(follow(h.log, 2, 4).kind, 'appended');
      assert.equal(follow(h.log, 4, 5).kind, 'appended');
      await h.committer.commit(h.log);
      assert.deepEqual(h.log.epochEntries, [{ epoch: 3, startOffset: 0 }, { epoch: 4, startOffset: 2 }, { epoch: 5, startOffset: 4 }]);
      assert.deepEqual(follow(h.log, 7, 5), { kind: 'error', code: ErrorCode.OFFSET_OUT_OF_RANGE });
      assert.deepEqual(follow(h.log, 6, 4), { kind: 'error', code: ErrorCode.FENCED_LEADER_EPOCH });
      // The epoch-5 tail diverged: cut it, then the leader's epoch-4 history continues.
      assert.equal(h.log.truncateTo(4), 4);
      assert.equal(follow(h.log, 4, 4).kind, 'appended');
      assert.equal(follow(h.log, 6, 6).kind, 'appended');
      await h.committer.commit(h.log);
      const expected = [{ epoch: 3, startOffset: 0 }, { epoch: 4, startOffset: 2 }, { epoch: 6, startOffset: 6 }];
      assert.deepEqual(h.log.epochEntries, expected);
      assert.deepEqual(readAll(h.log).map((b) => [b.baseOffset, b.bytes.readInt32BE(12)]), [[0, 3], [2, 4], [4, 4], [6, 6]]);
      h.log.close();
      assert.deepEqual(h.reopen().epochEntries, expected);
    } finally {
      await h.dispose();
    }
  });
});

describe('PartitionLog initialStartOffset', () => {
  it('an empty directory opens at the given offset, appends continue from it, and a reopen without the option keeps it', async () => {
    const dir = tempDir();
    removeDir(dir);
    const h = openHarness(logConfig(), { kind: 'always' }, dir, { initialStartOffset: 1234 });
    try {
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.highWatermark], [1234, 1234, 1234]);
      assert.equal(follow(h.log, 1234, 2).kind, 'appended');
      await h.committer.commit(h.log);
      h.log.close();
      h.log = PartitionLog.open(dir, logConfig(), h.io, h.clock.now);
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset], [1234, 1236]);
    } finally {
      await h.dispose();
    }
  });
});

describe('PartitionLog.resetTo', () => {
  const producer = { producerId: 77, producerEpoch: 0, baseSequence: 0 };

  async function filled(): Promise<ReturnType<typeof openHarness>> {
    const h = openHarness(logConfig({ segmentBytes: 300 }), { kind: 'always' }, tempDir(), { highWatermark: 'owner' });
    for (let offset = 0; offset < 20; offset += 2) assert.equal(follow(h.log, offset, offset < 10 ? 3 : 4, 2, offset === 0 ? producer : null).kind, 'appended');
    await h.committer.commit(h.log);
    h.log.updateHighWatermark(16);
    assert.ok(h.log.segmentCount > 2);
    return h;
  }

  it('past the log end: an empty log at the offset, no epochs or producer state, appends continue there, and a reopen keeps it', async () => {
    const h = await filled();
    try {
      h.log.resetTo(50);
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.durableOffset, h.log.highWatermark], [50, 50, 50, 50]);
      assert.deepEqual([h.log.epochEntries, h.log.segmentCount], [[], 1]);
      assert.equal(h.log.read(10, 1 << 20, true, 'log-end').error, ErrorCode.OFFSET_OUT_OF_RANGE);
      assert.deepEqual(readdirSync(h.dir).filter((n) => n.endsWith('.log') || n.endsWith('.snapshot')), ['00000000000000000050.log']);
      // The producer's first batch was forgotten with the log: its sequence 0 is new again.
      h.log.setLeaderEpoch(5);
      append(h.log, buildBatch({ records: makeRecords(2, 10), ...producer }));
      await h.committer.commit(h.log);
      assert.deepEqual(h.log.epochEntries, [{ epoch: 5, startOffset: 50 }]);
      h.log.close();
      const reopened = h.reopen();
      assert.deepEqual([reopened.logStartOffset, reopened.logEndOffset, reopened.epochEntries], [50, 52, [{ epoch: 5, startOffset: 50 }]]);
    } finally {
      await h.dispose();
    }
  });

  it('below the log start: the log starts over lower down', async () => {
    const dir = tempDir();
    removeDir(dir);
    const h = openHarness(logConfig(), { kind: 'always' }, dir, { initialStartOffset: 100, highWatermark: 'owner' });
    try {
      assert.equal(follow(h.log, 100, 2).kind, 'appended');
      await h.committer.commit(h.log);
      h.log.resetTo(40);
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.highWatermark, h.log.epochEntries], [40, 40, 40, []]);
      assert.equal(follow(h.log, 40, 3).kind, 'appended');
      await h.committer.commit(h.log);
      h.log.close();
      assert.deepEqual([h.reopen().logStartOffset, h.log.logEndOffset], [40, 42]);
    } finally {
      await h.dispose();
    }
  });

  it('refuses while appends are staged', async () => {
    const h = await filled();
    try {
      assert.equal(follow(h.log, 20, 4).kind, 'appended');
      assert.throws(() => h.log.resetTo(50), /staged/);
      await h.committer.commit(h.log);
      h.log.resetTo(50);
      assert.equal(h.log.logEndOffset, 50);
    } finally {
      await h.dispose();
    }
  });

  it('a crash once the new start is checkpointed opens a valid log: a suffix of the old segments, or an empty one at the new start', async () => {
    const h = await filled();
    try {
      h.log.close();
      // A crash right after the checkpoint: the old segments are all still there.
      writeCheckpoint(h.dir, { clean: false, logStartOffset: 50, recoveryPoint: 0 }, true);
      const suffix = h.reopen();
      const last = Math.max(...readdirSync(h.dir).filter((n) => n.endsWith('.log')).map((n) => Number(n.slice(0, 20))));
      assert.deepEqual([suffix.logStartOffset, suffix.logEndOffset, suffix.segmentCount], [last, 20, 1]);
      suffix.updateHighWatermark(20);
      assert.equal(readAll(suffix).at(-1)?.lastOffset, 19);
      suffix.close();
      // A crash after every segment went, before the new one was made.
      writeCheckpoint(h.dir, { clean: false, logStartOffset: 50, recoveryPoint: 0 }, true);
      for (const n of readdirSync(h.dir)) if (n.endsWith('.log')) unlinkSync(join(h.dir, n));
      const emptied = h.reopen();
      assert.deepEqual([emptied.logStartOffset, emptied.logEndOffset, emptied.epochEntries], [50, 50, []]);
    } finally {
      await h.dispose();
    }
  });
});
