// Split commits under flush=always: a replicated leader's log (PartitionLog.earlyReads) is told
// when its writes landed, within the one submission that also syncs them (the backend's
// writes-landed report), or between a write and a sync submission on a backend without that
// report; followers may read what is written before the leader's fdatasync, while the high
// watermark and acknowledgements still wait for it. A sync that fails after followers could read
// the bytes takes the log offline.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DeadlineWheel } from '../../../src/actors/deadline_wheel.js';
import { MAIN_LANE } from '../../../src/actors/lanes.js';
import { PartitionActor, type ActorPorts, type Expirable } from '../../../src/actors/partition_actor.js';
import type { ProduceResult } from '../../../src/actors/ring_messages.js';
import { ACKS_ALL } from '../../../src/coordinator/replication/min_isr.js';
import { GroupCommitter } from '../../../src/log/group_commit.js';
import { StorageError } from '../../../src/log/io_backend.js';
import { PartitionLog, type PartitionLogOptions } from '../../../src/log/partition_log.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { TEST_BROKER_ID, TEST_TOPIC_ID, testReplicaContext } from '../../helpers/replica_roles.js';
import { append, batchOf, Clock, gatedShard, logConfig, removeDir, SyncGateIo, tempDir, waitFor, type GatedShard } from './log_fixture.js';

const disposers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

function setUp(count: number, options: PartitionLogOptions = {}, reportsWritten = true): GatedShard {
  const shard = gatedShard(count, options, reportsWritten);
  disposers.push(shard.dispose);
  return shard;
}

/** What a follower's fetch from offset 0 gets: the bytes readable to the written end. */
const followerBytes = (log: PartitionLog): number => log.read(0, 1 << 20, true, 'log-end').bytes;
const consumerBytes = (log: PartitionLog): number => log.read(0, 1 << 20, true).bytes;

describe('split commits (flush=always, replicated leader)', () => {
  it('one submission: write, then tell the log (followers may read), then sync; the waiter waits for the sync', async () => {
    const { io, committer, logs } = setUp(2);
    const [leader, plain] = logs as [PartitionLog, PartitionLog];
    const seen: Array<{ written: number; durable: number; follower: number; consumer: number }> = [];
    leader.earlyReads = () => seen.push({ written: leader.writtenOffset, durable: leader.durableOffset, follower: followerBytes(leader), consumer: consumerBytes(leader) });
    append(leader, batchOf(3, 40));
    append(plain, batchOf(2, 40));
    io.holdSyncs();
    let done = false;
    const both = Promise.all([committer.commit(leader), committer.commit(plain)]).then(() => (done = true));
    await waitFor(() => io.heldSyncCount === 1, 'the held sync');
    assert.equal(seen.length, 1, 'told once, after the writes and before the sync');
    assert.equal(seen[0]!.written, 3);
    assert.equal(seen[0]!.durable, 0);
    assert.ok(seen[0]!.follower > 0, 'a follower reads the written, unsynced batch');
    assert.equal(seen[0]!.consumer, 0, 'a consumer does not: the high watermark waits for the sync');
    assert.deepEqual([plain.writtenOffset, plain.durableOffset, plain.highWatermark], [2, 0, 0], 'a log in the same cycle is written with it');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(done, false, 'no waiter resolves before its sync');
    io.releaseSyncs();
    await both;
    assert.deepEqual(io.submissions.map((s) => [s.writes, s.syncFds.length, s.reportsWritten]), [[2, 2, true]], 'writes and both logs\' syncs in one submission, with the report');
    for (const log of logs) assert.equal(log.durableOffset, log.writtenOffset);
    assert.deepEqual([leader.highWatermark, plain.highWatermark], [3, 2]);
  });

  it('on a backend without the writes-landed report: the writes, then the log is told, then a sync-only submission', async () => {
    const { io, committer, logs } = setUp(1, {}, false);
    const [leader] = logs as [PartitionLog];
    const seen: number[] = [];
    leader.earlyReads = () => seen.push(followerBytes(leader));
    append(leader, batchOf(3, 40));
    io.holdSyncs();
    const done = committer.commit(leader);
    await waitFor(() => io.heldSyncCount === 1, 'the held sync submission');
    assert.equal(seen.length, 1, 'told once, before the sync');
    assert.ok(seen[0]! > 0, 'a follower reads the written, unsynced batch');
    io.releaseSyncs();
    await done;
    assert.deepEqual(io.submissions.map((s) => [s.writes, s.syncFds.length, s.reportsWritten]), [[1, 0, false], [0, 1, false]]);
    assert.deepEqual([leader.durableOffset, leader.highWatermark], [3, 3]);
  });

  it('a cycle without a log that reads early writes and syncs in one submission, its landed writes told to no log', async () => {
    const { io, committer, logs } = setUp(1);
    const [log] = logs as [PartitionLog];
    append(log, batchOf(1, 10));
    let landed = -1;
    io.onLanded = () => (landed = log.writtenOffset);
    await committer.commit(log);
    // The report is asked for (a next cycle may start its writes then), yet the log learns of the writes only with the sync.
    assert.deepEqual(io.submissions.map((s) => [s.writes, s.syncFds.length, s.reportsWritten]), [[1, 1, true]]);
    assert.equal(landed, 0);
    assert.equal(log.writtenOffset, 1);
  });

  it('a sync failing after the write takes the log offline: it serves no reads, not even of what it acknowledged', async () => {
    const { io, committer, logs, errors } = setUp(1, { highWatermark: 'owner' });
    const [log] = logs as [PartitionLog];
    log.earlyReads = () => undefined;
    append(log, batchOf(1, 10));
    await committer.commit(log);
    assert.equal(log.durableOffset, 1);
    append(log, batchOf(2, 10));
    io.failSync();
    await assert.rejects(committer.commit(log), StorageError);
    assert.equal(errors.length, 1);
    assert.equal(log.isOffline, true);
    assert.deepEqual([log.durableOffset, log.writtenOffset, log.logEndOffset], [1, 1, 1]);
    // The written-but-unsynced batch stays in the file, past the log end: nothing is read from it.
    assert.equal(log.updateHighWatermark(3), 1);
    assert.equal(log.read(0, 1 << 20, true, 'log-end').error, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal(log.read(0, 1 << 20, true).error, ErrorCode.KAFKA_STORAGE_ERROR);
  });

  it('a write failing is never reported as landed: the commit rolls back and the log stays online', async () => {
    const { io, committer, logs, errors } = setUp(1, { highWatermark: 'owner' });
    const [log] = logs as [PartitionLog];
    let told = 0;
    log.earlyReads = () => told++;
    append(log, batchOf(1, 10));
    await committer.commit(log);
    assert.equal(told, 1);
    append(log, batchOf(2, 10));
    io.failWrite();
    await assert.rejects(committer.commit(log), StorageError);
    assert.equal(told, 1, 'not told of the failed writes');
    assert.equal(errors.length, 1);
    assert.equal(log.isOffline, false);
    assert.deepEqual([log.durableOffset, log.writtenOffset, log.logEndOffset], [1, 1, 1]);
    assert.ok(followerBytes(log) > 0, 'what was synced is still read');
    append(log, batchOf(1, 10));
    await committer.commit(log);
    assert.deepEqual([log.durableOffset, log.writtenOffset, told], [2, 2, 2]);
  });
});

describe('a replicated leader actor', () => {
  interface Leader {
    actor: PartitionActor;
    io: SyncGateIo;
    woken: number[];
    results: ProduceResult[];
  }

  function leaderOf(replicas: number[]): Leader {
    const io = new SyncGateIo();
    const committer = new GroupCommitter(io, { kind: 'always' }, () => undefined);
    const dir = tempDir();
    const clock = new Clock();
    const log = PartitionLog.open(dir, logConfig(), io, clock.now, { highWatermark: 'owner' });
    const deadlines = new DeadlineWheel<Expirable>(10, (e) => e.expire(performance.now()));
    const woken: number[] = [];
    const results: ProduceResult[] = [];
    const ports: ActorPorts = {
      committer,
      deadlines,
      sendProduceResult: (r) => results.push(r),
      fetchMayProceed: (reqId) => woken.push(reqId),
      sendAlterPartition: () => undefined,
      followingChanged: () => undefined,
    };
    const context = testReplicaContext();
    const brokers = new Map(context.brokers);
    for (const id of replicas) brokers.set(id, { id, epoch: 1, isrEligible: true, endpoint: null });
    const actor = new PartitionActor(1, 't', 0, log, logConfig(), ports, { ...context, brokers });
    actor.setRole({ kind: 'leader', topicId: TEST_TOPIC_ID, leaderEpoch: 1, partitionEpoch: 1, replicas, isr: replicas, minInsyncReplicas: 1 });
    disposers.push(async () => {
      io.releaseSyncs(); // a failed test may leave one held
      await committer.close();
      deadlines.close();
      log.close();
      removeDir(dir);
    });
    return { actor, io, woken, results };
  }

  const ask = { reqId: 1, slot: 0, handle: 1, acks: ACKS_ALL, timeoutMs: 30_000, leaderEpoch: 1 };

  it('wakes parked follower fetches once a produce is written, before the leader syncs it; acks=all waits for both syncs', async () => {
    const follower = TEST_BROKER_ID + 1;
    const l = leaderOf([TEST_BROKER_ID, follower]);
    l.actor.waiters.add(7);
    l.io.holdSyncs();
    l.actor.produce(MAIN_LANE, ask, batchOf(4, 100), () => undefined);
    await waitFor(() => l.io.heldSyncCount === 1, 'the leader sync submission');
    assert.deepEqual(l.woken, [7], 'the parked fetch was told before the sync');
    const read = l.actor.readForReplica(0, 1 << 20, true, 1);
    assert.equal(read.error, ErrorCode.NONE);
    assert.ok(read.bytes > 0, 'the follower reads the unsynced batch');
    // The follower made it durable and fetches again from its end while the leader still syncs.
    const answer = l.actor.replicaFetch({ replicaId: follower, replicaEpoch: 1, currentLeaderEpoch: 1, fetchOffset: 4, lastFetchedEpoch: 1, logStartOffset: 0 });
    assert.equal(answer.errorCode, ErrorCode.NONE);
    assert.equal(answer.highWatermark, 0, 'the high watermark waits for the leader sync');
    assert.equal(l.results.length, 0, `acks=all is not answered before the leader sync: ${JSON.stringify(l.results)}`);
    l.io.releaseSyncs();
    await waitFor(() => l.results.length === 1, 'the produce answer');
    assert.equal(l.results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(l.actor.log.highWatermark, 4);
  });

  it('a sole replica writes and syncs in one submission', async () => {
    const l = leaderOf([TEST_BROKER_ID]);
    l.actor.produce(MAIN_LANE, ask, batchOf(1, 10), () => undefined);
    await waitFor(() => l.results.length === 1, 'the produce answer');
    assert.equal(l.io.submissions.length, 1);
    assert.equal(l.actor.log.highWatermark, 1);
  });
});
