// The operator's view of the quorum: quorumReport's per-replica lag on the leader (and nothing
// per replica elsewhere), and QuorumHealth declaring the quorum lost exactly when no leader has
// been known (none named, or only by a prospective/candidate node) for longer than twice the
// election timeout, checked against a model over random sequences of leader changes and clock steps.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LeaderChange } from '../../../../src/actors/quorum/quorum_driver.js';
import { QuorumHealth, quorumReport, type LeaderSource, type QuorumSource } from '../../../../src/actors/quorum/quorum_report.js';
import type { RaftStatus } from '../../../../src/coordinator/raft/raft_node.js';

const ELECTION_TIMEOUT_MS = 1000;

function leaderStatus(): RaftStatus {
  return {
    role: 'leader', epoch: 4, leaderId: 1, votedFor: 1, highWatermark: 90, appliedOffset: 90, logStartOffset: 0, logEndOffset: 100, durableEndOffset: 100,
    voters: [1, 2, 3],
    replicas: [
      { id: 1, logEndOffset: 100, lastFetchTick: 50, lastCaughtUpTick: 50, voter: true },
      { id: 2, logEndOffset: 97, lastFetchTick: 48, lastCaughtUpTick: 40, voter: true },
      { id: 3, logEndOffset: 60, lastFetchTick: -1, lastCaughtUpTick: -1, voter: true },
      { id: 7, logEndOffset: 100, lastFetchTick: 50, lastCaughtUpTick: 50, voter: false },
    ],
  };
}

/** A driver whose core clock is at tick 50 of 10 ms, wall clock 10_000. */
function source(status: RaftStatus): QuorumSource {
  return { nodeId: 1, status: () => status, tickToMs: (tick) => (tick < 0 ? -1 : 10_000 - (50 - tick) * 10) };
}

it('the leader reports every replica with its lag behind the leader and the time since its last fetch', () => {
  const r = quorumReport(source(leaderStatus()), 10_005);
  assert.deepEqual(
    { nodeId: r.nodeId, role: r.role, epoch: r.epoch, leaderId: r.leaderId, highWatermark: r.highWatermark, logEndOffset: r.logEndOffset, voters: r.voters },
    { nodeId: 1, role: 'leader', epoch: 4, leaderId: 1, highWatermark: 90, logEndOffset: 100, voters: [1, 2, 3] },
  );
  assert.deepEqual(r.replicas, [
    { id: 1, voter: true, logEndOffset: 100, lagOffsets: 0, lastFetchMsAgo: 5 },
    { id: 2, voter: true, logEndOffset: 97, lagOffsets: 3, lastFetchMsAgo: 25 },
    { id: 3, voter: true, logEndOffset: 60, lagOffsets: 40, lastFetchMsAgo: -1 },
    { id: 7, voter: false, logEndOffset: 100, lagOffsets: 0, lastFetchMsAgo: 5 },
  ]);
});

it('a follower reports no replicas: only the leader tracks them', () => {
  const r = quorumReport(source({ ...leaderStatus(), role: 'follower', leaderId: 2, replicas: [] }));
  assert.equal(r.role, 'follower');
  assert.equal(r.leaderId, 2);
  assert.equal(r.replicas, undefined);
});

/** A driver's leader-change surface under the test's control. */
class FakeLeader implements LeaderSource {
  leader: LeaderChange;
  readonly electionTimeoutMs = ELECTION_TIMEOUT_MS;
  private readonly listeners: ((c: LeaderChange) => void)[] = [];
  constructor(leaderId: number) {
    this.leader = { epoch: 1, leaderId, role: leaderId < 0 ? 'unattached' : 'follower' };
  }
  onLeaderChange(listener: (c: LeaderChange) => void): void {
    this.listeners.push(listener);
  }
  change(leaderId: number): void {
    this.leader = { epoch: this.leader.epoch + 1, leaderId, role: leaderId < 0 ? 'candidate' : 'follower' };
    for (const l of this.listeners) l(this.leader);
  }
  /** The fetch timeout passed: a pre-election in the same epoch, still naming the old leader. */
  prospective(): void {
    this.leader = { ...this.leader, role: 'prospective' };
    for (const l of this.listeners) l(this.leader);
  }
}

it('the quorum is lost once no leader has been known for more than twice the election timeout, and found again with a leader', () => {
  let now = 0;
  const driver = new FakeLeader(2);
  const health = new QuorumHealth(driver, () => now);
  assert.equal(health.check().state, 'ok');
  driver.change(-1);
  now = 2 * ELECTION_TIMEOUT_MS;
  assert.deepEqual(health.check(), { state: 'ok', leaderId: -1, epoch: 2, role: 'candidate', leaderlessMs: 2000 });
  now += 1;
  assert.equal(health.check().state, 'lost');
  // A second leaderless change (a new epoch's election) does not restart the count.
  driver.change(-1);
  assert.equal(health.check().state, 'lost');
  driver.change(3);
  assert.deepEqual(health.check(), { state: 'ok', leaderId: 3, epoch: 4, role: 'follower', leaderlessMs: 0 });
  // A prospective node that still names leader 3 has stopped hearing from it.
  driver.prospective();
  now += 2 * ELECTION_TIMEOUT_MS + 1;
  assert.deepEqual(health.check(), { state: 'lost', leaderId: 3, epoch: 4, role: 'prospective', leaderlessMs: 2001 });
});

it('property: lost exactly when the model has been leaderless for more than 2 x the election timeout', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 1500 }) }),
    fc.record({ kind: fc.constant('leader' as const), id: fc.integer({ min: -1, max: 3 }) }),
    fc.constant({ kind: 'prospective' as const }),
  );
  fc.assert(fc.property(fc.integer({ min: -1, max: 3 }), fc.array(step, { maxLength: 40 }), (initial, steps) => {
    let now = 0;
    const driver = new FakeLeader(initial);
    const health = new QuorumHealth(driver, () => now);
    let since: number | null = initial < 0 ? 0 : null;
    for (const s of steps) {
      if (s.kind === 'wait') now += s.ms;
      else if (s.kind === 'prospective') {
        driver.prospective();
        since ??= now;
      } else {
        driver.change(s.id);
        if (s.id >= 0) since = null;
        else since ??= now;
      }
      const lost = since !== null && now - since > 2 * ELECTION_TIMEOUT_MS;
      assert.equal(health.check().state, lost ? 'lost' : 'ok');
    }
  }));
});
