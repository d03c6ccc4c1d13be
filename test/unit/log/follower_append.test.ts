// PartitionLog as a replica that receives stamped batches: appendAsFollower keeps each batch's
// epoch (an older epoch may follow a cut tail), refuses a base offset off the log end and an epoch
// behind the cache, and a log created with initialStartOffset starts there and stays there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { readBatchHeader } from '../../../src/protocol/record_batch.js';
import { PartitionLog } from '../../../src/log/partition_log.js';
import { buildBatch, makeRecords } from './batch_builder.js';
import { logConfig, openHarness, readAll, removeDir, tempDir } from './log_fixture.js';

function follow(log: PartitionLog, baseOffset: number, epoch: number, records = 2): ReturnType<PartitionLog['appendAsFollower']> {
  const batch = buildBatch({ records: makeRecords(records, 10), baseOffset, partitionLeaderEpoch: epoch });
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
