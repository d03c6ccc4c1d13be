// The SIGSTOP-leader scenario on the pure replication state machines: a leader paused past the
// session timeout wrote a tail in its epoch that no other replica fetched, a follower was elected
// in its place, and on resume the deposed leader follows it. The new leader has not appended in
// its own epoch yet (its leader-epoch cache gains an epoch only with the epoch's first batch), so
// it has never seen the deposed leader's last epoch. Kafka's leader answers from a cache that
// holds its epoch from the leadership's start; these tests hold Sluice's answer to that, through
// the wire's encoding of the diverging epoch (-1/-1 is "none" on the wire, replica_fetcher.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PartitionFollower } from '../../../../src/coordinator/replication/partition_follower.js';
import { PartitionLeader } from '../../../../src/coordinator/replication/partition_leader.js';
import type { ReplicaFetchAnswer } from '../../../../src/coordinator/replication/types.js';
import type { LeaderEpochCache } from '../../../../src/log/leader_epoch_cache.js';
import { TOPIC_ID, assignment, epochCache, fetchFrom, isrOf, localLog, settings } from './replication_fixture.js';

/** The answer as the follower receives it: the Fetch response field cannot say -1/-1 apart from "no divergence". */
function overTheWire(answer: ReplicaFetchAnswer): ReplicaFetchAnswer {
  const d = answer.divergingEpoch;
  return d !== null && d.epoch < 0 && d.endOffset < 0 ? { ...answer, divergingEpoch: null } : answer;
}

/** Broker 0 elected at leader epoch 5 with ISR [0, 2]; its log ends at `end` and its cache holds `epochs`, none of them 5. */
function newLeader(epochs: readonly (readonly [number, number])[], end: number): PartitionLeader {
  const cache = epochCache(epochs);
  const latest = epochs.length === 0 ? -1 : (epochs[epochs.length - 1] as readonly [number, number])[0];
  return new PartitionLeader(
    { topicId: TOPIC_ID, partitionIndex: 0, localBrokerId: 0 },
    settings(),
    assignment({ isr: [0, 2] }),
    { ...localLog(end), latestEpoch: latest },
    end,
    (epoch, logEnd) => cache.endOffsetFor(epoch, logEnd),
    0,
  );
}

/** Broker 1, the deposed leader, now following broker 0 at epoch 5, with its log `cache` ending at `end`. */
class DeposedReplica {
  readonly follower: PartitionFollower;

  constructor(private readonly cache: LeaderEpochCache, private end: number, hw: number) {
    this.follower = new PartitionFollower({ flushAlways: false, fetchBackoffMs: 100 }, 1, 101, { leaderId: 0, leaderEpoch: 5 }, this.log(), hw, (e, logEnd) =>
      cache.endOffsetFor(e, logEnd),
    );
  }

  log(): { logStartOffset: number; logEndOffset: number; durableEndOffset: number; latestEpoch: number } {
    return { logStartOffset: 0, logEndOffset: this.end, durableEndOffset: this.end, latestEpoch: this.cache.latestEpoch };
  }

  /** One fetch to `leader` at time `now`, the answer applied as the partition actor applies it (no records move here). */
  fetchOnce(leader: PartitionLeader, now: number): { offset: number; answer: ReplicaFetchAnswer } {
    const position = this.follower.fetchPosition(now);
    assert.ok(position !== null, 'the follower has a fetch to send');
    const answer = overTheWire(leader.onFollowerFetch(position, now).answer);
    const action = this.follower.onFetchAnswer(position, answer, now);
    if (action?.kind === 'truncate') {
      this.end = Math.min(this.end, action.offset);
      this.cache.truncateFromEnd(this.end);
      this.follower.onTruncated(this.log());
    }
    return { offset: position.fetchOffset, answer };
  }

  get logEnd(): number {
    return this.end;
  }
}

describe('a deposed leader following the leader elected in its place', () => {
  it('is told where its unreplicated epoch parts from the new leader before the new leader appends', () => {
    // Epoch 3 from 0; the deposed leader of epoch 4 wrote 40..48 that nobody fetched.
    const leader = newLeader([[3, 0]], 40);
    const deposed = new DeposedReplica(epochCache([[3, 0], [4, 40]]), 48, 40);
    const first = deposed.fetchOnce(leader, 1);
    assert.deepEqual(first.answer.divergingEpoch, { epoch: 3, endOffset: 40 }, 'epoch 4 ends where epoch 5 began, told with epoch 3');
    assert.equal(deposed.logEnd, 40, 'its epoch-4 tail is cut');
    assert.equal(leader.follower(1)?.logEndOffset, -1, 'a diverging fetch acknowledges nothing');
    const second = deposed.fetchOnce(leader, 2);
    assert.deepEqual([second.offset, second.answer.divergingEpoch], [40, null]);
    assert.equal(leader.follower(1)?.logEndOffset, 40);
    assert.deepEqual(isrOf(leader.inFlight), [0, 2, 1], 'caught up, from the leadership start on: it rejoins');
  });

  it('loses its whole log when the topic was new and the new leader had nothing of it', () => {
    const leader = newLeader([], 0);
    const deposed = new DeposedReplica(epochCache([[0, 0]]), 12, 0);
    assert.deepEqual(deposed.fetchOnce(leader, 1).answer.divergingEpoch, { epoch: 0, endOffset: 0 });
    assert.equal(deposed.logEnd, 0);
    assert.equal(deposed.fetchOnce(leader, 2).answer.divergingEpoch, null);
    assert.deepEqual(isrOf(leader.inFlight), [0, 2, 1]);
  });

  it('keeps a prefix the new leader shares, however far back its own epoch started', () => {
    // The deposed leader's epoch 4 began at 30 and the new leader fetched it up to 36 before the pause.
    const leader = newLeader([[3, 0], [4, 30]], 36);
    const deposed = new DeposedReplica(epochCache([[3, 0], [4, 30]]), 45, 36);
    assert.deepEqual(deposed.fetchOnce(leader, 1).answer.divergingEpoch, { epoch: 4, endOffset: 36 });
    assert.equal(deposed.logEnd, 36);
    assert.equal(deposed.fetchOnce(leader, 2).answer.divergingEpoch, null);
  });

  it('is told its fetch in the current epoch ends at the log end, before any batch of that epoch', () => {
    const leader = newLeader([[3, 0]], 40);
    assert.equal(leader.onFollowerFetch(fetchFrom(2, 40, { lastFetchedEpoch: 5 }), 1).answer.divergingEpoch, null);
    assert.deepEqual(leader.onFollowerFetch(fetchFrom(2, 44, { lastFetchedEpoch: 5 }), 1).answer.divergingEpoch, { epoch: 5, endOffset: 40 });
  });
});
