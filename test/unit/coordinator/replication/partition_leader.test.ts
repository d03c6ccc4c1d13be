// Scenario tests of the leader side of partition replication, one rule each: the high watermark,
// the caught-up rule and ISR shrink/expand, one AlterPartition in flight and its outcomes, stale
// state, fetch validation and truncation answers, min ISR and flush-always.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { LAG_MS, RETRY_MS, accepted, assignment, brokers, failed, fetchFrom, isrOf, leaderAt, localLog } from './replication_fixture.js';

describe('PartitionLeader: high watermark', () => {
  it('a new leadership waits for every ISR follower to fetch, then moves to the smallest fetch offset', () => {
    const leader = leaderAt(50, 30);
    assert.equal(leader.tick(0).highWatermark, 30);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 50), 1).output.highWatermark, 30, 'follower 2 not heard from yet');
    const { answer, output } = leader.onFollowerFetch(fetchFrom(2, 45), 2);
    assert.equal(output.highWatermark, 45);
    assert.equal(answer.highWatermark, 45, 'the answer carries the high watermark after this fetch');
    assert.equal(output.acksChanged, true);
  });

  it('never moves back, even when an ISR follower fetches from lower down', () => {
    const leader = leaderAt(50, 30);
    leader.onFollowerFetch(fetchFrom(1, 50), 1);
    leader.onFollowerFetch(fetchFrom(2, 50), 1);
    assert.equal(leader.highWatermark, 50);
    assert.equal(leader.onFollowerFetch(fetchFrom(2, 42), 2).output.highWatermark, 50);
  });

  it('counts only durable records of its own under flush-always', () => {
    const leader = leaderAt(50, 30, { isr: [0], replicas: [0] }, true);
    assert.equal(leader.onLocalLog(localLog(60, 55), 1).highWatermark, 55);
    assert.equal(leader.onLocalLog(localLog(60, 60), 2).highWatermark, 60);
  });

  it('does not move while the committed ISR is below min ISR (strict min ISR)', () => {
    const leader = leaderAt(50, 30, { isr: [0], minInsyncReplicas: 2 });
    assert.equal(leader.onLocalLog(localLog(60), 1).highWatermark, 30);
  });

  it('waits for a follower whose addition is in flight (maximal ISR)', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1] });
    const joining = leader.onFollowerFetch(fetchFrom(2, 50), 1);
    assert.deepEqual(isrOf(joining.output.alterPartition), [0, 1, 2]);
    assert.deepEqual(leader.maximalIsr, [0, 1, 2]);
    leader.onLocalLog(localLog(60), 2);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 60), 3).output.highWatermark, 50, 'not 60: follower 2 is in the maximal ISR');
  });

  it('waits for a caught-up follower that could join while another proposal blocks its addition', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1] });
    const first = leader.onFollowerFetch(fetchFrom(2, 50), 1).output.alterPartition!;
    leader.onAlterPartitionResult(first, failed(first, ErrorCode.INVALID_UPDATE_VERSION), 2);
    leader.onMetadata(assignment({ isr: [0, 1], partitionEpoch: 11 }), 3); // the image knows better: 2 stays out
    assert.deepEqual(leader.maximalIsr, [0, 1]);
    leader.onLocalLog(localLog(60), 4);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 60), 5).output.highWatermark, 50, 'follower 2 is caught up and eligible');
  });
});

describe('PartitionLeader: ISR changes', () => {
  it('keeps a follower that trails a steady stream of appends but reaches each previous log end', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1], replicas: [0, 1] });
    let end = 50;
    for (let now = 0; now <= 4 * LAG_MS; now += 500) {
      const fetchOffset = end; // what the leader had at the previous fetch
      end += 10;
      leader.onLocalLog(localLog(end), now);
      const out = leader.onFollowerFetch(fetchFrom(1, fetchOffset), now).output;
      assert.equal(out.alterPartition, null, `no shrink at ${now}`);
    }
  });

  it('proposes removing a follower that stopped fetching once the lag time has passed, and commits it', () => {
    const leader = leaderAt(50, 30);
    leader.onFollowerFetch(fetchFrom(1, 50), 0);
    leader.onFollowerFetch(fetchFrom(2, 50), 0);
    leader.onLocalLog(localLog(60), 10);
    for (let now = 100; now <= LAG_MS + 10; now += 100) leader.onFollowerFetch(fetchFrom(1, 60), now);
    const before = leader.tick(LAG_MS);
    assert.equal(before.alterPartition, null, 'lag time not yet passed (last caught up at 0)');
    const shrink = leader.tick(LAG_MS + 1).alterPartition;
    assert.deepEqual(isrOf(shrink), [0, 1]);
    assert.equal(shrink!.partitionEpoch, 10);
    assert.equal(shrink!.leaderEpoch, 5);
    assert.deepEqual(shrink!.newIsrWithEpochs, [{ brokerId: 0, brokerEpoch: 100 }, { brokerId: 1, brokerEpoch: 101 }]);
    assert.equal(leader.highWatermark, 50, 'the member being removed still counts');
    const out = leader.onAlterPartitionResult(shrink!, accepted(shrink!), LAG_MS + 2);
    assert.deepEqual(leader.isr, [0, 1]);
    assert.equal(leader.partitionEpoch, 11);
    assert.equal(out.highWatermark, 60);
  });

  it('a follower of a new leadership that never fetches leaves after the lag time', () => {
    const leader = leaderAt(50, 30);
    leader.onFollowerFetch(fetchFrom(1, 50), 1);
    assert.equal(leader.tick(LAG_MS).alterPartition, null);
    assert.deepEqual(isrOf(leader.tick(LAG_MS + 1).alterPartition), [0, 1]);
  });

  it('adds a follower only once it reaches the high watermark and the leadership start offset', () => {
    const leader = leaderAt(50, 30, { isr: [0] });
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 20, { lastFetchedEpoch: 3 }), 1).output.alterPartition, null, 'below the high watermark');
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 45), 2).output.alterPartition, null, 'below the leadership start (50)');
    assert.deepEqual(isrOf(leader.onFollowerFetch(fetchFrom(1, 50), 3).output.alterPartition), [0, 1]);
  });

  it('does not add a fenced or shutting-down broker, nor one whose fetch carries another broker epoch', () => {
    const fenced = leaderAt(50, 50, { isr: [0], brokers: brokers([1]) });
    assert.equal(fenced.onFollowerFetch(fetchFrom(1, 50), 1).output.alterPartition, null);
    const newer = leaderAt(50, 50, { isr: [0] });
    assert.equal(newer.onFollowerFetch(fetchFrom(1, 50, { replicaEpoch: 999 }), 1).output.alterPartition, null);
    const unversioned = leaderAt(50, 50, { isr: [0] });
    const item = unversioned.onFollowerFetch(fetchFrom(1, 50, { replicaEpoch: -1 }), 1).output.alterPartition;
    assert.deepEqual(item?.newIsrWithEpochs, [{ brokerId: 0, brokerEpoch: 100 }, { brokerId: 1, brokerEpoch: 101 }], 'the registered epoch stands in');
  });

  it('marks an expansion RECOVERED and a shrink with the current recovery state', () => {
    const recovering = leaderAt(50, 50, { isr: [0], leaderRecoveryState: 1 });
    assert.equal(recovering.onFollowerFetch(fetchFrom(1, 50), 1).output.alterPartition?.leaderRecoveryState, 0);
  });
});

describe('PartitionLeader: AlterPartition in flight', () => {
  function withShrinkInFlight() {
    const leader = leaderAt(50, 30);
    leader.onFollowerFetch(fetchFrom(1, 50), 0);
    leader.onLocalLog(localLog(60), 1);
    leader.onFollowerFetch(fetchFrom(1, 60), LAG_MS);
    const item = leader.tick(LAG_MS + 1).alterPartition!;
    assert.deepEqual(isrOf(item), [0, 1]);
    return { leader, item };
  }

  it('proposes nothing else while one is in flight', () => {
    const { leader, item } = withShrinkInFlight();
    assert.equal(leader.tick(LAG_MS * 3).alterPartition, null);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 60), LAG_MS * 3).output.alterPartition, null);
    assert.equal(leader.inFlight, item);
  });

  it('sends the same proposal again after the backoff when the controller may not have seen it', () => {
    const { leader, item } = withShrinkInFlight();
    const t = LAG_MS + 10;
    assert.equal(leader.onAlterPartitionResult(item, failed(item, ErrorCode.REQUEST_TIMED_OUT), t).alterPartition, null);
    assert.equal(leader.inFlight, item, 'still counted: the controller may have applied it');
    assert.equal(leader.tick(t + RETRY_MS - 1).alterPartition, null);
    assert.equal(leader.tick(t + RETRY_MS).alterPartition, item);
  });

  it('proposes afresh after the backoff when the controller refused without applying', () => {
    const leader = leaderAt(50, 50, { isr: [0] });
    const item = leader.onFollowerFetch(fetchFrom(1, 50), 1).output.alterPartition!;
    leader.onAlterPartitionResult(item, failed(item, ErrorCode.INELIGIBLE_REPLICA), 2);
    assert.equal(leader.inFlight, null);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 50), 2 + RETRY_MS - 1).output.alterPartition, null);
    const again = leader.onFollowerFetch(fetchFrom(1, 50), 2 + RETRY_MS).output.alterPartition;
    assert.deepEqual(isrOf(again), [0, 1]);
    assert.notEqual(again, item);
  });

  it('after a stale rejection, waits for the image and keeps the proposal counted', () => {
    const { leader, item } = withShrinkInFlight();
    leader.onAlterPartitionResult(item, failed(item, ErrorCode.INVALID_UPDATE_VERSION), LAG_MS + 10);
    assert.equal(leader.tick(LAG_MS * 10).alterPartition, null);
    assert.equal(leader.inFlight, item);
    // The image at a newer partition epoch (say broker 2 was fenced and dropped) unblocks.
    const out = leader.onMetadata(assignment({ isr: [0, 1], partitionEpoch: 12 }), LAG_MS * 10);
    assert.equal(leader.inFlight, null);
    assert.deepEqual(leader.isr, [0, 1]);
    assert.equal(out.alterPartition, null, 'nothing left to change');
  });

  it('ignores an answer to a proposal it no longer has, and a success older than its state', () => {
    const { leader, item } = withShrinkInFlight();
    // Same ISR at a newer partition epoch: the proposal is void and is made again on that epoch.
    const again = leader.onMetadata(assignment({ partitionEpoch: 11 }), LAG_MS + 5).alterPartition!;
    assert.equal(again.partitionEpoch, 11);
    leader.onAlterPartitionResult(item, accepted(item, 11), LAG_MS + 7);
    assert.deepEqual(leader.isr, [0, 1, 2], 'the void proposal answer changes nothing');
    assert.equal(leader.inFlight, again);
    leader.onAlterPartitionResult(again, accepted(again, 11), LAG_MS + 8);
    assert.deepEqual(leader.isr, [0, 1, 2], 'a success at no newer partition epoch does not apply');
    assert.equal(leader.partitionEpoch, 11);
  });

  it('ignores an image older than its state', () => {
    const { leader, item } = withShrinkInFlight();
    leader.onAlterPartitionResult(item, accepted(item), LAG_MS + 5);
    assert.equal(leader.partitionEpoch, 11);
    leader.onMetadata(assignment({ partitionEpoch: 10 }), LAG_MS + 6);
    leader.onMetadata(assignment({ leaderEpoch: 4, partitionEpoch: 20 }), LAG_MS + 6);
    assert.deepEqual(leader.isr, [0, 1]);
    assert.equal(leader.partitionEpoch, 11);
    assert.equal(leader.leaderEpoch, 5);
  });

  it('a new leader epoch restarts the bookkeeping: followers must fetch again', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1], replicas: [0, 1] });
    leader.onFollowerFetch(fetchFrom(1, 50), 1);
    assert.equal(leader.highWatermark, 50);
    leader.onLocalLog(localLog(70), 2);
    leader.onMetadata(assignment({ isr: [0, 1], replicas: [0, 1], leaderEpoch: 6, partitionEpoch: 11 }), 3);
    assert.equal(leader.follower(1)?.logEndOffset, -1);
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 70, { currentLeaderEpoch: 6 }), 4).output.highWatermark, 70);
  });
});

describe('PartitionLeader: fetch validation', () => {
  it('refuses a non-replica, a stale or future leader epoch, a stale broker incarnation, an offset outside the log', () => {
    const leader = leaderAt(50, 30);
    const code = (p: Parameters<typeof leader.onFollowerFetch>[0]) => leader.onFollowerFetch(p, 1).answer.errorCode;
    assert.equal(code(fetchFrom(7, 50)), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(code(fetchFrom(0, 50)), ErrorCode.NOT_LEADER_OR_FOLLOWER, 'the leader does not fetch from itself');
    assert.equal(code(fetchFrom(1, 50, { currentLeaderEpoch: 4 })), ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(code(fetchFrom(1, 50, { currentLeaderEpoch: 6 })), ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(code(fetchFrom(1, 50, { replicaEpoch: 99 })), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(code(fetchFrom(1, 51, { lastFetchedEpoch: -1 })), ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(leader.follower(1)?.logEndOffset, -1, 'refused fetches change nothing');
    const trimmed = leaderAt(50, 30);
    trimmed.onLocalLog(localLog(50, 50, 20), 1);
    const out = trimmed.onFollowerFetch(fetchFrom(1, 10, { lastFetchedEpoch: 3 }), 2).answer;
    assert.deepEqual([out.errorCode, out.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 20]);
  });

  it('answers a diverging epoch where the follower history parts from its own (KIP-320)', () => {
    const leader = leaderAt(50, 30);
    // The follower has epoch 3 up to 45; the leader's epoch 3 ends at 40.
    const older = leader.onFollowerFetch(fetchFrom(1, 45, { lastFetchedEpoch: 3 }), 1).answer;
    assert.deepEqual(older.divergingEpoch, { epoch: 3, endOffset: 40 });
    // An epoch 4 the leader never had: its history up to epoch 4 is epoch 3, ending at 40.
    assert.deepEqual(leader.onFollowerFetch(fetchFrom(1, 44, { lastFetchedEpoch: 4 }), 1).answer.divergingEpoch, { epoch: 3, endOffset: 40 });
    // Same epoch, ahead of the leader's end: cut back to it.
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 55), 1).answer.divergingEpoch?.endOffset, 50);
    assert.equal(leader.follower(1)?.logEndOffset, -1, 'a diverging fetch acknowledges nothing');
    // Consistent histories fetch normally.
    assert.equal(leader.onFollowerFetch(fetchFrom(1, 38, { lastFetchedEpoch: 3 }), 1).answer.divergingEpoch, null);
    assert.equal(leader.follower(1)?.logEndOffset, 38);
  });
});

describe('PartitionLeader: acks=all and min ISR', () => {
  it('refuses acks=all before appending while the committed ISR is below min ISR; acks=1 passes', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1], minInsyncReplicas: 3 });
    assert.equal(leader.admit(-1), ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(leader.admit(1), ErrorCode.NONE);
    assert.equal(leaderAt(50, 30, { minInsyncReplicas: 3 }).admit(-1), ErrorCode.NONE);
    assert.equal(leaderAt(50, 30, { replicas: [0, 1], isr: [0, 1], minInsyncReplicas: 3 }).admit(-1), ErrorCode.NONE, 'min ISR is capped at the replication factor');
  });

  it('completes a waiting acks=all produce once the high watermark covers it', () => {
    const leader = leaderAt(50, 50, { minInsyncReplicas: 2 });
    leader.onLocalLog(localLog(55), 1);
    assert.equal(leader.acksAllOutcome(55), 'waiting');
    leader.onFollowerFetch(fetchFrom(1, 55), 2);
    assert.equal(leader.acksAllOutcome(55), 'waiting');
    leader.onFollowerFetch(fetchFrom(2, 55), 3);
    assert.equal(leader.acksAllOutcome(55), ErrorCode.NONE);
  });

  it('fails waiting acks=all produces with NOT_ENOUGH_REPLICAS_AFTER_APPEND once the ISR shrinks below min ISR', () => {
    const leader = leaderAt(50, 50, { isr: [0, 1], replicas: [0, 1], minInsyncReplicas: 2 });
    leader.onFollowerFetch(fetchFrom(1, 50), 0);
    leader.onLocalLog(localLog(55), 1);
    const shrink = leader.tick(LAG_MS + 2).alterPartition!;
    assert.equal(leader.acksAllOutcome(55), 'waiting', 'the shrink is not committed yet');
    const out = leader.onAlterPartitionResult(shrink, accepted(shrink), LAG_MS + 3);
    assert.equal(out.acksChanged, true);
    assert.equal(leader.acksAllOutcome(55), ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    assert.equal(leader.admit(-1), ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(out.highWatermark, 50, 'frozen below min ISR');
  });
});

// The shard stops its replica tick when no leader is time-driven (issue 16: an idle broker's
// wake-ups), so timeDriven false must mean that no tick, however late, changes anything.
describe('PartitionLeader: timeDriven', () => {
  it('a lone leader is not time-driven, and ticks at any later time change nothing', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 })), { maxLength: 5 }),
      fc.array(fc.integer({ min: 0, max: 100 * LAG_MS }), { minLength: 1, maxLength: 5 }),
      fc.boolean(),
      (appends, later, flushAlways) => {
        const leader = leaderAt(50, 30, { isr: [0], replicas: [0] }, flushAlways);
        let end = 50;
        let now = 0;
        leader.onLocalLog(localLog(end), now); // as the actor does on becoming leader
        for (const [n, durableLag] of appends) {
          end += n;
          leader.onLocalLog(localLog(end, Math.max(50, end - durableLag)), ++now);
        }
        assert.equal(leader.timeDriven, false);
        const hw = leader.highWatermark;
        for (const dt of later.sort((a, b) => a - b)) {
          const out = leader.tick(now + dt);
          assert.deepEqual(out, { highWatermark: hw, acksChanged: false, alterPartition: null });
        }
      },
    ));
  });

  it('a leader with followers is time-driven: a silent follower leaves the ISR on a tick alone', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1], replicas: [0, 1] });
    assert.equal(leader.timeDriven, true);
    assert.deepEqual(isrOf(leader.tick(LAG_MS + 1).alterPartition), [0]);
  });

  it('an ISR member outside the replicas, and a proposal to resend, keep a lone leader time-driven until settled', () => {
    const leader = leaderAt(50, 30, { isr: [0, 1], replicas: [0] });
    assert.equal(leader.timeDriven, true, 'broker 1 in the ISR without progress counts as lagging');
    const shrink = leader.tick(1).alterPartition!;
    assert.deepEqual(isrOf(shrink), [0]);
    leader.onAlterPartitionResult(shrink, failed(shrink, ErrorCode.REQUEST_TIMED_OUT), 2);
    assert.equal(leader.timeDriven, true, 'the same proposal is due again after the retry time');
    const again = leader.tick(2 + RETRY_MS).alterPartition;
    assert.deepEqual(isrOf(again), [0], 'the resend comes from a tick alone');
    leader.onAlterPartitionResult(again!, accepted(again!), 3 + RETRY_MS);
    assert.equal(leader.timeDriven, false);
  });
});
