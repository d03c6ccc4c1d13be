// Scenario tests of the follower side of partition replication: fetch positions (durable only
// under flush-always), the high watermark, truncation on a diverging epoch (each branch of the
// rule), reset or truncation on OFFSET_OUT_OF_RANGE (below the leader's log start, past its end),
// a cut below the log start as a reset, where the log start may advance to, backing off on
// refusals, stale answers and images.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { PartitionFollower, type FollowerLog } from '../../../../src/coordinator/replication/partition_follower.js';
import type { ReplicaFetchAnswer } from '../../../../src/coordinator/replication/types.js';
import { epochCache } from './replication_fixture.js';

const BACKOFF_MS = 100;

function followerLog(logEndOffset: number, durableEndOffset = logEndOffset, latestEpoch = 5, logStartOffset = 0): FollowerLog {
  return { logStartOffset, logEndOffset, durableEndOffset, latestEpoch };
}

/** Follower 1 of leader 0 at leader epoch 6; its own log holds epochs 2 (from 0), 4 (from 20), 5 (from 30). */
function followerAt(log: FollowerLog, hw: number, flushAlways = false, epochs: readonly (readonly [number, number])[] = [[2, 0], [4, 20], [5, 30]]): PartitionFollower {
  const cache = epochCache(epochs);
  return new PartitionFollower({ flushAlways, fetchBackoffMs: BACKOFF_MS }, 1, 101, { leaderId: 0, leaderEpoch: 6 }, log, hw, (e, end) =>
    cache.endOffsetFor(e, end),
  );
}

function records(highWatermark: number): ReplicaFetchAnswer {
  return { errorCode: ErrorCode.NONE, highWatermark, logStartOffset: 0, divergingEpoch: null };
}

function outOfRange(highWatermark: number, logStartOffset: number): ReplicaFetchAnswer {
  return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, highWatermark, logStartOffset, divergingEpoch: null };
}

function diverging(epoch: number, endOffset: number): ReplicaFetchAnswer {
  return { errorCode: ErrorCode.NONE, highWatermark: 10, logStartOffset: 0, divergingEpoch: { epoch, endOffset } };
}

describe('PartitionFollower: fetching', () => {
  it('fetches from its log end with its latest epoch, replica identity and the leader epoch it knows', () => {
    const f = followerAt(followerLog(40), 10);
    assert.deepEqual(f.fetchPosition(0), { replicaId: 1, replicaEpoch: 101, currentLeaderEpoch: 6, fetchOffset: 40, lastFetchedEpoch: 5, logStartOffset: 0 });
  });

  it('under flush-always, fetches only once everything it appended is durable', () => {
    const f = followerAt(followerLog(40, 35), 10, true);
    assert.equal(f.fetchPosition(0), null);
    f.onLocalLog(followerLog(40, 40));
    assert.equal(f.fetchPosition(0)?.fetchOffset, 40);
    assert.equal(followerAt(followerLog(40, 35), 10, false).fetchPosition(0)?.fetchOffset, 40, 'without flush-always the log end counts');
  });

  it('takes the leader high watermark capped by its own log end (durable end under flush-always), never lower', () => {
    const f = followerAt(followerLog(40), 10);
    f.onFetchAnswer(f.fetchPosition(0)!, records(60), 0);
    assert.equal(f.highWatermark, 40);
    f.onLocalLog(followerLog(50));
    assert.equal(f.highWatermark, 50);
    f.onFetchAnswer(f.fetchPosition(0)!, records(45), 1);
    assert.equal(f.highWatermark, 50, 'a lower leader high watermark does not move it back');
    const durable = followerAt(followerLog(40), 10, true);
    durable.onFetchAnswer(durable.fetchPosition(0)!, records(60), 0);
    durable.onLocalLog(followerLog(50, 44));
    assert.equal(durable.highWatermark, 44);
  });
});

describe('PartitionFollower: truncation', () => {
  it('knows the diverging epoch: cuts to the smaller of the leader end and its own end of that epoch', () => {
    const f = followerAt(followerLog(40), 10);
    assert.deepEqual(f.onFetchAnswer(f.fetchPosition(0)!, diverging(4, 25), 0), { kind: 'truncate', offset: 25, belowHighWatermark: false });
    assert.equal(f.state.kind, 'truncating');
    assert.equal(f.fetchPosition(1), null);
    f.onTruncated(followerLog(25, 25, 4));
    assert.equal(f.state.kind, 'fetching');
    assert.deepEqual([f.fetchPosition(1)?.fetchOffset, f.fetchPosition(1)?.lastFetchedEpoch], [25, 4]);
    const g = followerAt(followerLog(40), 10);
    assert.equal((g.onFetchAnswer(g.fetchPosition(0)!, diverging(4, 35), 0) as { offset: number }).offset, 30, 'its own epoch 4 ends at 30');
  });

  it('does not know the epoch: cuts to the end of its largest epoch below it, and asks again from there', () => {
    const f = followerAt(followerLog(40), 10);
    assert.equal((f.onFetchAnswer(f.fetchPosition(0)!, diverging(3, 28), 0) as { offset: number }).offset, 20, 'its epoch 2 ends at 20');
  });

  it('has only later epochs: its whole log differs; has no epochs: cuts to the leader end; the leader knows no such epoch: cuts to its high watermark', () => {
    const later = followerAt(followerLog(40), 0);
    assert.equal((later.onFetchAnswer(later.fetchPosition(0)!, diverging(1, 15), 0) as { offset: number }).offset, 0, 'its epoch 2 starts at 0');
    const f = followerAt(followerLog(40, 40, -1), 10, false, []);
    assert.equal((f.onFetchAnswer(f.fetchPosition(0)!, diverging(1, 15), 0) as { offset: number }).offset, 15);
    const g = followerAt(followerLog(40), 10);
    assert.equal((g.onFetchAnswer(g.fetchPosition(0)!, diverging(-1, -1), 0) as { offset: number }).offset, 10);
  });

  it('flags a truncation below its high watermark', () => {
    const f = followerAt(followerLog(40), 30);
    assert.deepEqual(f.onFetchAnswer(f.fetchPosition(0)!, diverging(4, 25), 0), { kind: 'truncate', offset: 25, belowHighWatermark: true });
    f.onTruncated(followerLog(25, 25, 4));
    assert.equal(f.highWatermark, 25);
  });

  it('behind the leader log start (OFFSET_OUT_OF_RANGE): starts over empty there', () => {
    const f = followerAt(followerLog(40), 10);
    assert.deepEqual(f.onFetchAnswer(f.fetchPosition(0)!, outOfRange(90, 70), 0), { kind: 'reset', offset: 70, belowHighWatermark: false });
    assert.equal(f.fetchPosition(0), null, 'no fetch until the reset is done');
    f.onTruncated(followerLog(70, 70, -1, 70));
    assert.equal(f.highWatermark, 70);
    assert.deepEqual([f.fetchPosition(0)?.fetchOffset, f.fetchPosition(0)?.lastFetchedEpoch], [70, -1]);
  });

  it('past the leader log end (OFFSET_OUT_OF_RANGE): cuts to the leader high watermark, or starts over there below its own log start', () => {
    const f = followerAt(followerLog(40), 10);
    assert.deepEqual(f.onFetchAnswer(f.fetchPosition(0)!, outOfRange(25, 0), 0), { kind: 'truncate', offset: 25, belowHighWatermark: false });
    const g = followerAt(followerLog(40, 40, -1, 35), 35, false, []);
    assert.deepEqual(g.onFetchAnswer(g.fetchPosition(0)!, outOfRange(20, 5), 0), { kind: 'reset', offset: 20, belowHighWatermark: true });
    g.onTruncated(followerLog(20, 20, -1, 20));
    assert.deepEqual([g.highWatermark, g.fetchPosition(0)?.fetchOffset], [20, 20]);
  });

  it('an OFFSET_OUT_OF_RANGE without usable leader offsets backs off instead of cutting', () => {
    for (const answer of [outOfRange(-1, -1), outOfRange(50, 0), outOfRange(-1, 5)]) {
      const f = followerAt(followerLog(40), 10);
      assert.equal(f.onFetchAnswer(f.fetchPosition(0)!, answer, 1000), null);
      assert.equal(f.state.kind, 'awaitingMetadata');
      assert.equal(f.fetchPosition(1000 + BACKOFF_MS)?.fetchOffset, 40);
    }
  });

  it('a diverging epoch that ends below its log start: starts over empty there', () => {
    const f = followerAt(followerLog(40, 40, 5, 30), 30, false, [[5, 30]]);
    assert.deepEqual(f.onFetchAnswer(f.fetchPosition(0)!, diverging(4, 25), 0), { kind: 'reset', offset: 25, belowHighWatermark: true });
  });
});

describe('PartitionFollower: log start', () => {
  it('may advance to the leader log start, bounded by its high watermark; nothing before an answer or after a leader change', () => {
    const f = followerAt(followerLog(40), 10);
    assert.equal(f.logStartTarget, -1);
    f.onFetchAnswer(f.fetchPosition(0)!, { ...records(60), logStartOffset: 30 }, 0);
    assert.deepEqual([f.highWatermark, f.logStartTarget], [40, 30]);
    f.onFetchAnswer(f.fetchPosition(0)!, { ...records(60), logStartOffset: 55 }, 0);
    assert.equal(f.logStartTarget, 40, 'not past its own high watermark');
    f.onMetadata({ leaderId: 2, leaderEpoch: 7 }, 1);
    assert.equal(f.logStartTarget, -1, 'the new leader has not said yet');
    f.onFetchAnswer(f.fetchPosition(1)!, { ...records(60), logStartOffset: 10, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }, 1);
    assert.equal(f.logStartTarget, -1, 'a refusal carries no log start');
  });
});

describe('PartitionFollower: refusals and staleness', () => {
  for (const code of [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH]) {
    it(`waits for metadata after code ${code}, or retries after the backoff`, () => {
      const f = followerAt(followerLog(40), 10);
      assert.equal(f.onFetchAnswer(f.fetchPosition(0)!, { ...records(0), errorCode: code }, 1000), null);
      assert.equal(f.state.kind, 'awaitingMetadata');
      assert.equal(f.fetchPosition(1000 + BACKOFF_MS - 1), null);
      assert.equal(f.fetchPosition(1000 + BACKOFF_MS)?.fetchOffset, 40);
      const g = followerAt(followerLog(40), 10);
      g.onFetchAnswer(g.fetchPosition(0)!, { ...records(0), errorCode: code }, 1000);
      g.onMetadata({ leaderId: 2, leaderEpoch: 7 }, 1001);
      assert.deepEqual([g.fetchPosition(1001)?.currentLeaderEpoch, g.leaderId], [7, 2]);
    });
  }

  it('ignores answers to fetches it no longer stands behind, and images of older leader epochs', () => {
    const f = followerAt(followerLog(40), 10);
    const sent = f.fetchPosition(0)!;
    f.onLocalLog(followerLog(45));
    assert.equal(f.onFetchAnswer(sent, diverging(4, 25), 0), null, 'the log moved since');
    const g = followerAt(followerLog(40), 10);
    const old = g.fetchPosition(0)!;
    g.onMetadata({ leaderId: 2, leaderEpoch: 7 }, 0);
    assert.equal(g.onFetchAnswer(old, diverging(4, 25), 0), null, 'sent to the previous leader');
    g.onMetadata({ leaderId: 0, leaderEpoch: 6 }, 0);
    assert.deepEqual([g.leaderId, g.leaderEpoch], [2, 7]);
  });
});
