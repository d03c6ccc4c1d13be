// Properties of a follower's log start and resets under random interleavings: a real
// PartitionLeader (broker 0) whose log start retention moves up to its high watermark, which
// appends, and which is replaced now and then by a leader of the next epoch that lacks a tail of
// its log (down to below its high watermark: an unclean election); one PartitionFollower (broker 1)
// that fetches, stops for a while, or loses its disk. The driver does what the follower's actions
// say (truncate, or start over empty), appends what the leader sends, and moves its log start to
// logStartTarget, as the partition actor does.
// After every step:
//   - the follower's log start <= its high watermark <= its log end, and logStartTarget is at most
//     its high watermark;
//   - a truncation stays within the log; a reset happens only on OFFSET_OUT_OF_RANGE or a cut
//     outside the log, and leaves the log empty at its offset;
//   - without an unclean election, the follower's records below its high watermark are the leader's.
// After a calm phase (the follower fetches until nothing changes): the follower's log ends where
// the leader's does, holds the leader's records from its own log start, and starts at the leader's
// log start (or above it, only after a reset past the end of a leader that lost records).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LeaderEpochCache } from '../../../../src/log/leader_epoch_cache.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { PartitionFollower, type FollowerAction } from '../../../../src/coordinator/replication/partition_follower.js';
import { PartitionLeader, type LeaderAssignment, type LocalLog } from '../../../../src/coordinator/replication/partition_leader.js';
import { LAG_MS, RETRY_MS, TOPIC_ID } from './replication_fixture.js';

/** A replica's log in the model: the leader epoch of each record from its log start, its epoch cache. */
class StartedLog {
  constructor(
    public start: number,
    public epochs: number[],
    public cache: LeaderEpochCache,
  ) {}

  static empty(at: number): StartedLog {
    return new StartedLog(at, [], new LeaderEpochCache());
  }

  get end(): number {
    return this.start + this.epochs.length;
  }

  epochAt(offset: number): number {
    return this.epochs[offset - this.start]!;
  }

  append(epoch: number): void {
    if (epoch > this.cache.latestEpoch) this.cache.assign(epoch, this.end);
    this.epochs.push(epoch);
  }

  truncate(offset: number): void {
    assert.ok(offset >= this.start && offset <= this.end, `truncation to ${offset} outside [${this.start}, ${this.end}]`);
    this.epochs.length = offset - this.start;
    this.cache.truncateFromEnd(offset);
  }

  advanceStart(offset: number): void {
    if (offset <= this.start) return;
    this.epochs = this.epochs.slice(offset - this.start);
    this.start = offset;
    this.cache.truncateFromStart(offset);
    this.cache.truncateFromEnd(this.end);
  }

  copy(): StartedLog {
    const cache = LeaderEpochCache.of(this.cache.entries);
    if (cache === null) throw new Error('unreachable: a valid cache copies');
    return new StartedLog(this.start, [...this.epochs], cache);
  }

  /** What the replication state machines are told of this log. */
  local(): LocalLog {
    return { logStartOffset: this.start, logEndOffset: this.end, durableEndOffset: this.end, latestEpoch: this.cache.latestEpoch };
  }
}

type Cmd =
  | { t: 'append'; n: number }
  | { t: 'retain'; upTo: number }
  | { t: 'newLeader'; cut: number }
  | { t: 'fetch'; max: number }
  | { t: 'wipe' };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('append' as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('retain' as const), upTo: fc.nat({ max: 1000 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('newLeader' as const), cut: fc.nat({ max: 1000 }) }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant('fetch' as const), max: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('wipe' as const) }) },
);

function assignment(leaderEpoch: number): LeaderAssignment {
  return {
    leaderEpoch,
    partitionEpoch: leaderEpoch,
    replicas: [0, 1],
    isr: [0],
    leaderRecoveryState: 0,
    minInsyncReplicas: 1,
    brokers: new Map([0, 1].map((id) => [id, { brokerEpoch: 100 + id, isrEligible: true }])),
  };
}

class World {
  now = 0;
  leaderEpoch = 1;
  leaderLog = StartedLog.empty(0);
  leader: PartitionLeader;
  followerLog = StartedLog.empty(0);
  follower: PartitionFollower;
  unclean = false;
  /** The follower started over past the end of a leader that lost records: its log may start above the leader's. */
  resetPastLeaderEnd = false;

  constructor() {
    this.leader = this.newLeader(0);
    this.follower = this.newFollower();
  }

  private newLeader(hw: number): PartitionLeader {
    const settings = { replicaLagTimeMaxMs: LAG_MS, alterPartitionRetryMs: RETRY_MS, flushAlways: false };
    const epochEnd = (e: number, end: number) => this.leaderLog.cache.endOffsetFor(e, end);
    return new PartitionLeader({ topicId: TOPIC_ID, partitionIndex: 0, localBrokerId: 0 }, settings, assignment(this.leaderEpoch), this.leaderLocal(), hw, epochEnd, this.now);
  }

  private newFollower(): PartitionFollower {
    const log = this.followerLog;
    // The driver's epoch lookup reads whichever log it holds (a reset replaces it).
    const epochEnd = (e: number, end: number) => this.followerLog.cache.endOffsetFor(e, end);
    return new PartitionFollower({ flushAlways: false, fetchBackoffMs: 100 }, 1, 101, { leaderId: 0, leaderEpoch: this.leaderEpoch }, log.local(), log.start, epochEnd);
  }

  private leaderLocal(): LocalLog {
    return this.leaderLog.local();
  }

  run(c: Cmd): void {
    this.now += 10;
    switch (c.t) {
      case 'append':
        for (let i = 0; i < c.n; i++) this.leaderLog.append(this.leaderEpoch);
        this.leader.onLocalLog(this.leaderLocal(), this.now);
        return;
      case 'retain': {
        const log = this.leaderLog;
        log.advanceStart(Math.min(this.leader.highWatermark, log.start + (c.upTo % (log.end - log.start + 1))));
        this.leader.onLocalLog(this.leaderLocal(), this.now);
        return;
      }
      case 'newLeader': {
        // A replica holding a prefix of the leader's log (perhaps less than its high watermark) takes over.
        const log = this.leaderLog;
        const cut = log.start + (c.cut % (log.end - log.start + 1));
        if (cut < this.leader.highWatermark) this.unclean = true;
        const hw = Math.min(this.leader.highWatermark, cut);
        log.truncate(cut);
        this.leaderEpoch++;
        this.leader = this.newLeader(hw);
        this.follower.onMetadata({ leaderId: 0, leaderEpoch: this.leaderEpoch }, this.now);
        return;
      }
      case 'fetch':
        return this.fetch(c.max);
      case 'wipe':
        this.followerLog = StartedLog.empty(0);
        this.follower = this.newFollower();
        return;
    }
  }

  fetch(max: number): void {
    const position = this.follower.fetchPosition(this.now);
    if (position === null) return;
    const { answer } = this.leader.onFollowerFetch(position, this.now);
    const action = this.follower.onFetchAnswer(position, answer, this.now);
    if (action !== null) return this.apply(action, answer.errorCode);
    if (answer.errorCode !== ErrorCode.NONE) return;
    for (let o = position.fetchOffset; o < Math.min(this.leaderLog.end, position.fetchOffset + max); o++) this.followerLog.append(this.leaderLog.epochAt(o));
    this.follower.onLocalLog(this.followerLog.local());
    const startBefore = this.followerLog.start;
    const target = this.follower.logStartTarget;
    assert.ok(target <= this.follower.highWatermark, `log start target ${target} past the high watermark ${this.follower.highWatermark}`);
    this.followerLog.advanceStart(target);
    if (this.followerLog.start !== startBefore) this.follower.onLocalLog(this.followerLog.local());
  }

  private apply(action: FollowerAction, errorCode: ErrorCode): void {
    const log = this.followerLog;
    if (action.kind === 'truncate') {
      log.truncate(action.offset);
    } else {
      const outside = action.offset < log.start || action.offset > log.end;
      assert.ok(errorCode === ErrorCode.OFFSET_OUT_OF_RANGE || outside, `reset to ${action.offset} inside [${log.start}, ${log.end}] without OFFSET_OUT_OF_RANGE`);
      if (action.offset > this.leaderLog.start) this.resetPastLeaderEnd = true;
      this.followerLog = StartedLog.empty(action.offset);
      this.follower.onTruncated(this.followerLog.local());
      const position = this.follower.fetchPosition(this.now);
      assert.deepEqual([position?.fetchOffset, position?.lastFetchedEpoch], [action.offset, -1], 'a reset log fetches from its offset with no epoch');
      return;
    }
    this.follower.onTruncated(log.local());
  }

  check(): void {
    const log = this.followerLog;
    const hw = this.follower.highWatermark;
    assert.ok(log.start <= hw && hw <= log.end, `follower start ${log.start}, high watermark ${hw}, end ${log.end}`);
    if (this.unclean) return;
    for (let o = Math.max(log.start, this.leaderLog.start); o < hw; o++) {
      assert.equal(log.epochAt(o), this.leaderLog.epochAt(o), `follower differs from the leader at ${o}, below its high watermark ${hw}`);
    }
  }

  /** The follower fetches everything, past any backoff, until it and the leader's high watermark have settled. */
  calm(): void {
    for (let i = 0; i < 20; i++) {
      this.now += 200;
      this.fetch(1000);
      this.check();
    }
  }
}

const LOG_START_FOLLOWER = 'the follower, its high watermark and log start settle on the leader\'s log';

describe('follower log start and resets', () => {
  it(`${LOG_START_FOLLOWER} after random retention, appends, elections, pauses and wiped disks`, () => {
    fc.assert(
      fc.property(fc.array(cmd, { maxLength: 120, size: 'max' }), (cmds) => {
        const world = new World();
        for (const c of cmds) {
          world.run(c);
          world.check();
        }
        world.run({ t: 'append', n: 1 });
        world.calm();
        const { followerLog: f, leaderLog: l } = world;
        assert.equal(f.end, l.end, 'the follower ends where the leader does');
        if (world.resetPastLeaderEnd) assert.ok(f.start >= l.start, `follower starts at ${f.start}, below the leader's ${l.start}`);
        else assert.equal(f.start, l.start, 'the follower starts where the leader does');
        for (let o = f.start; o < f.end; o++) assert.equal(f.epochAt(o), l.epochAt(o), `record ${o} differs`);
      }),
      { numRuns: 300, includeErrorInReport: true },
    );
  });
});
