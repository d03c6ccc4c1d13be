// Group commits two deep under flush=always: once the head cycle's writes landed and its fdatasync
// runs, the next cycle writes its data behind it (no sync), as do requests joining it while the
// head syncs, and it syncs only once the head settled.
// Waiters are acknowledged in cycle order; a failure of the head rolls back the cycle behind it
// too (one error reported), and a failed write behind the head leaves the head acknowledged. A
// cycle's outcome reaches only what each log took in it (a log may be in a cycle with nothing
// taken, as a follower's drain before a truncation).
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { StorageError } from '../../../src/log/io_backend.js';
import { PartitionLog } from '../../../src/log/partition_log.js';
import { append, batchOf, gatedShard, readAll, waitFor, type GatedShard, type SyncGateIo } from './log_fixture.js';

const disposers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

function setUp(count: number): GatedShard {
  const shard = gatedShard(count);
  disposers.push(shard.dispose);
  return shard;
}

const fileSize = (log: PartitionLog): number => statSync(join(log.dir, '00000000000000000000.log')).size;
const shape = (io: SyncGateIo): number[][] => io.submissions.map((s) => [s.writes, s.syncFds.length]);

describe('group commits two deep (flush=always)', () => {
  it('writes the next cycle while the head syncs, syncs it after the head settled, acknowledges in order', async () => {
    const { io, committer, logs } = setUp(2);
    const [a, b] = logs as [PartitionLog, PartitionLog];
    append(a, batchOf(1, 10));
    io.holdSyncs();
    const order: string[] = [];
    const head = committer.commit(a).then(() => order.push('head'));
    await waitFor(() => io.heldSyncCount === 1, "the head's sync");
    const headBytes = fileSize(a);
    append(a, batchOf(2, 10));
    append(b, batchOf(1, 10));
    const behind = Promise.all([committer.commit(a), committer.commit(b)]).then(() => order.push('behind'));
    await waitFor(() => fileSize(b) > 0, 'the writes behind the head');
    assert.deepEqual(shape(io), [[1, 1], [2, 0]], 'the cycle behind writes without syncing');
    assert.ok(fileSize(a) > headBytes, "a's second batch is in its file while the head's sync is held");
    // A request made while the head still syncs joins the cycle behind it: written now, synced with it.
    const aBytes = fileSize(a);
    append(a, batchOf(1, 10));
    const joined = committer.commit(a).then(() => order.push('joined'));
    await waitFor(() => fileSize(a) > aBytes, 'the joining write');
    assert.deepEqual(shape(io), [[1, 1], [2, 0], [1, 0]]);
    assert.deepEqual([a.highWatermark, a.logEndOffset, b.highWatermark], [0, 4, 0]);
    const closing = committer.close();
    await assert.rejects(committer.commit(b), StorageError, 'a closing committer takes no more requests');
    let closed = false;
    void closing.then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual([order, closed], [[], false], 'nothing is acknowledged and close() waits while the head syncs');
    io.releaseSyncs();
    await Promise.all([head, behind, joined, closing]);
    assert.deepEqual(order.slice(0, 1), ['head']);
    assert.deepEqual(shape(io), [[1, 1], [2, 0], [1, 0], [0, 2]], "its syncs, of both logs' files, follow the head's");
    assert.deepEqual([a.highWatermark, b.highWatermark], [4, 1]);
    assert.deepEqual(readAll(a).map((x) => x.baseOffset), [0, 1, 3]);
  });

  it("a failed fdatasync of the head rolls back the cycle behind it too, reported once; the logs carry on", async () => {
    const { io, committer, logs, errors } = setUp(2);
    const [a, b] = logs as [PartitionLog, PartitionLog];
    append(a, batchOf(3, 10));
    await committer.commit(a);
    const durableBytes = fileSize(a);
    append(a, batchOf(2, 10));
    io.holdSyncs();
    io.failSync();
    const head = committer.commit(a);
    await waitFor(() => io.heldSyncCount === 1, "the head's sync");
    append(a, batchOf(1, 10));
    append(b, batchOf(1, 10));
    const behind = [committer.commit(a), committer.commit(b)];
    await waitFor(() => fileSize(b) > 0, 'the writes behind the head');
    io.releaseSyncs();
    for (const p of [head, ...behind]) await assert.rejects(p, StorageError);
    assert.equal(errors.length, 1);
    assert.deepEqual([a.highWatermark, a.logEndOffset, b.highWatermark, b.logEndOffset], [3, 3, 0, 0]);
    assert.deepEqual([fileSize(a), fileSize(b)], [durableBytes, 0], 'both cycles are truncated away');
    assert.deepEqual([a.isOffline, b.isOffline], [false, false]);
    assert.equal(append(a, batchOf(1, 10)).baseOffset, 3);
    assert.equal(append(b, batchOf(1, 10)).baseOffset, 0);
    await Promise.all([committer.commit(a), committer.commit(b)]);
    assert.deepEqual([a.highWatermark, b.highWatermark], [4, 1]);
  });

  it('a failed write behind the head leaves the head acknowledged and rolls back to its end', async () => {
    const { io, committer, logs, errors } = setUp(1);
    const [a] = logs as [PartitionLog];
    append(a, batchOf(1, 10));
    io.holdSyncs();
    const head = committer.commit(a);
    await waitFor(() => io.heldSyncCount === 1, "the head's sync");
    const headBytes = fileSize(a);
    io.failWrite();
    append(a, batchOf(2, 10));
    const behind = committer.commit(a);
    await waitFor(() => io.submissions.length === 2, 'the write behind the head');
    io.releaseSyncs();
    await head;
    await assert.rejects(behind, StorageError);
    assert.equal(errors.length, 1);
    assert.deepEqual([a.highWatermark, a.logEndOffset, fileSize(a), a.isOffline], [1, 1, headBytes, false]);
    assert.equal(append(a, batchOf(1, 10)).baseOffset, 1);
    await committer.commit(a);
    assert.deepEqual(readAll(a).map((x) => x.baseOffset), [0, 1]);
  });

  it('settling a cycle completes only what each log took in it: a log the head only drained keeps what it took behind the head until that cycle syncs', async () => {
    const { io, committer, logs } = setUp(2);
    const [a, b] = logs as [PartitionLog, PartitionLog];
    append(a, batchOf(1, 10));
    io.holdSyncs();
    // b has nothing staged: a drain, as a follower's before it truncates (PartitionActor.truncateAsFollower).
    const head = Promise.all([committer.commit(a), committer.commit(b)]);
    await waitFor(() => io.heldSyncCount === 1, "the head's sync");
    append(b, batchOf(2, 10));
    const behind = committer.commit(b);
    await waitFor(() => fileSize(b) > 0, 'the write behind the head');
    append(b, batchOf(1, 10));
    const joined = committer.commit(b);
    // The head's sync goes; the next one (the cycle behind's) is held again.
    io.releaseSyncs();
    io.holdSyncs();
    await head;
    await waitFor(() => io.heldSyncCount === 1, "the sync of the cycle behind");
    assert.deepEqual([b.highWatermark, b.logEndOffset], [0, 3], 'nothing b took behind the head is acknowledged before its own sync');
    io.releaseSyncs();
    await Promise.all([behind, joined]);
    assert.equal(b.highWatermark, 3);
    assert.deepEqual(readAll(b).map((x) => x.baseOffset), [0, 2]);
  });
});
