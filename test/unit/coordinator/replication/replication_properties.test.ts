// Properties of partition replication under random interleavings: one leader (broker 0, leader
// epoch 2) and two followers whose logs start diverged from it (follower 1 holds an unreplicated
// epoch-1 tail, follower 2 an epoch-0 tail), random produces (acks=1 and acks=all), flushes,
// fetches, ticks, a controller that applies AlterPartition with its partition epoch as the
// compare-and-set token (sometimes losing the answer, sometimes not the controller), fencing,
// images delivered in order with skips and stale images replayed, and followers that stop.
// After every step:
//   - the leader's high watermark never decreases;
//   - it is at most every maximal-ISR member's acknowledged offset (the real log end, the durable
//     end under flush-always), each of them holds the leader's records below it, and under
//     flush-always it is at most the leader's durable end;
//   - an acks=all produce completes with NONE only when every maximal-ISR member holds its
//     records, and a produce's fate changes only on an output that says acks changed;
//   - the committed ISR and every proposal contain the leader;
//   - a new proposal leaves only when none was in flight (or it is the same one sent again);
//   - the leader's ISR is the controller's ISR at the leader's partition epoch (no stale
//     overwrite), and the partition epoch never decreases;
//   - followers never truncate below their high watermark, and theirs never passes the leader's.
// Then a calm phase (controller answers, images arrive, every live follower fetches, the clock
// ticks): a follower that stopped fetching leaves the ISR within the lag time plus one tick, and
// every other follower ends up in the ISR with the high watermark at the leader's log end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LeaderEpochCache } from '../../../../src/log/leader_epoch_cache.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { PartitionFollower } from '../../../../src/coordinator/replication/partition_follower.js';
import { PartitionLeader, type LeaderAssignment, type LeaderOutput } from '../../../../src/coordinator/replication/partition_leader.js';
import type { AlterPartitionItem, AlterPartitionResult } from '../../../../src/coordinator/replication/types.js';
import { LAG_MS, RETRY_MS, TOPIC_ID, epochCache } from './replication_fixture.js';

const LEADER_EPOCH = 2;
const TICK_MS = 500;
const FOLLOWERS = [1, 2] as const;

type Cmd =
  | { t: 'fetch'; f: number; max: number }
  | { t: 'flushF'; f: number }
  | { t: 'produce'; n: number; acksAll: boolean }
  | { t: 'flushL' }
  | { t: 'tick'; ms: number }
  | { t: 'control'; lost: boolean; notController: boolean }
  | { t: 'dropRequest' }
  | { t: 'reply'; i: number }
  | { t: 'image'; skip: boolean }
  | { t: 'staleImage'; i: number }
  | { t: 'fence'; f: number; on: boolean }
  | { t: 'stop'; f: number };

const f = fc.constantFrom(...FOLLOWERS);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ t: fc.constant('fetch' as const), f, max: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('flushF' as const), f }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant('produce' as const), n: fc.integer({ min: 1, max: 3 }), acksAll: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('flushL' as const) }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 1500 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('control' as const), lost: fc.boolean(), notController: fc.integer({ min: 0, max: 5 }).map((x) => x === 0) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('dropRequest' as const) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('reply' as const), i: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('image' as const), skip: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('staleImage' as const), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('fence' as const), f, on: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('stop' as const), f }) },
);

/** A replica's log in the model: the leader epoch of each record, how much is durable, its epoch cache. */
class ModelLog {
  constructor(
    readonly epochs: number[],
    public durable: number,
    readonly cache: LeaderEpochCache,
  ) {}

  static of(epochs: number[]): ModelLog {
    const cache = new LeaderEpochCache();
    epochs.forEach((e, offset) => cache.assign(e, offset));
    return new ModelLog(epochs, epochs.length, cache);
  }

  get end(): number {
    return this.epochs.length;
  }

  append(epoch: number): void {
    this.cache.assign(epoch, this.epochs.length);
    this.epochs.push(epoch);
  }

  truncate(offset: number): void {
    this.epochs.length = Math.min(this.epochs.length, offset);
    this.durable = Math.min(this.durable, this.epochs.length);
    this.cache.truncateFromEnd(offset);
  }

  /** What the replica acknowledges of itself: its durable end under flush-always, else its end. */
  acked(flushAlways: boolean): number {
    return flushAlways ? this.durable : this.end;
  }

  local(): { logStartOffset: number; logEndOffset: number; durableEndOffset: number; latestEpoch: number } {
    return { logStartOffset: 0, logEndOffset: this.end, durableEndOffset: this.durable, latestEpoch: this.cache.latestEpoch };
  }
}

/** The active controller of the model: partition state, its history by partition epoch, and what it publishes. */
class Controller {
  partitionEpoch = 10;
  isr: number[];
  readonly fenced = new Set<number>();
  readonly history = new Map<number, number[]>();
  readonly images: LeaderAssignment[] = [];
  readonly published: LeaderAssignment[] = [];

  constructor(
    isr: number[],
    readonly minInsyncReplicas: number,
  ) {
    this.isr = isr;
    this.history.set(this.partitionEpoch, [...isr]);
  }

  image(): LeaderAssignment {
    return {
      leaderEpoch: LEADER_EPOCH,
      partitionEpoch: this.partitionEpoch,
      replicas: [0, 1, 2],
      isr: [...this.isr],
      leaderRecoveryState: 0,
      minInsyncReplicas: this.minInsyncReplicas,
      brokers: new Map([0, 1, 2].map((id) => [id, { brokerEpoch: 100 + id, isrEligible: !this.fenced.has(id) }])),
    };
  }

  private publish(): void {
    const image = this.image();
    this.images.push(image);
    this.published.push(image);
  }

  private changeIsr(isr: number[]): void {
    this.partitionEpoch++;
    this.isr = isr;
    this.history.set(this.partitionEpoch, [...isr]);
    this.publish();
  }

  alterPartition(item: AlterPartitionItem): AlterPartitionResult {
    const isr = item.newIsrWithEpochs.map((m) => m.brokerId);
    const answer = (errorCode: ErrorCode): AlterPartitionResult => ({
      partitionIndex: 0, errorCode, leaderId: 0, leaderEpoch: LEADER_EPOCH, isr: [...this.isr], leaderRecoveryState: 0, partitionEpoch: this.partitionEpoch,
    });
    if (item.leaderEpoch !== LEADER_EPOCH || item.partitionEpoch > this.partitionEpoch) return answer(ErrorCode.NOT_CONTROLLER);
    if (item.partitionEpoch < this.partitionEpoch) return answer(ErrorCode.INVALID_UPDATE_VERSION);
    if (!isr.includes(0) || isr.some((id) => id < 0 || id > 2)) return answer(ErrorCode.INVALID_REQUEST);
    if (isr.some((id) => this.fenced.has(id))) return answer(ErrorCode.INELIGIBLE_REPLICA);
    this.changeIsr(isr);
    return answer(ErrorCode.NONE);
  }

  fence(id: number, on: boolean): void {
    if (on) this.fenced.add(id);
    else this.fenced.delete(id);
    if (on && this.isr.includes(id)) this.changeIsr(this.isr.filter((m) => m !== id));
    else this.publish();
  }
}

function failure(errorCode: ErrorCode): AlterPartitionResult {
  return { partitionIndex: 0, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 };
}

interface Waiter {
  readonly endOffset: number;
}

class World {
  now = 0;
  readonly leaderLog = ModelLog.of([0, 0, 0, 1, 1]);
  readonly logs = new Map<number, ModelLog>([
    [1, ModelLog.of([0, 0, 0, 1, 1, 1, 1])],
    [2, ModelLog.of([0, 0, 0, 0, 0, 0])],
  ]);
  readonly leader: PartitionLeader;
  readonly followers = new Map<number, PartitionFollower>();
  readonly controller: Controller;
  readonly requests: AlterPartitionItem[] = [];
  readonly replies: { sent: AlterPartitionItem; result: AlterPartitionResult }[] = [];
  waiters: Waiter[] = [];
  readonly stoppedAt = new Map<number, number>();
  private lastHw: number;
  private lastPartitionEpoch: number;

  constructor(
    readonly flushAlways: boolean,
    isr: number[],
    minInsyncReplicas: number,
  ) {
    this.controller = new Controller(isr, minInsyncReplicas);
    this.leaderLog.cache.assign(LEADER_EPOCH, this.leaderLog.end); // a new leader notes its epoch at once
    const settings = { replicaLagTimeMaxMs: LAG_MS, alterPartitionRetryMs: RETRY_MS, flushAlways };
    const leaderCache = this.leaderLog.cache;
    this.leader = new PartitionLeader(
      { topicId: TOPIC_ID, partitionIndex: 0, localBrokerId: 0 },
      settings,
      this.controller.image(),
      this.leaderLog.local(),
      3,
      (epoch, end) => leaderCache.endOffsetFor(epoch, end),
      0,
    );
    for (const id of FOLLOWERS) {
      const log = this.logs.get(id)!;
      const follower = new PartitionFollower({ flushAlways, fetchBackoffMs: 100 }, id, 100 + id, { leaderId: 0, leaderEpoch: LEADER_EPOCH }, log.local(), 3, (epoch, end) =>
        log.cache.endOffsetFor(epoch, end),
      );
      this.followers.set(id, follower);
    }
    this.lastHw = this.leader.highWatermark;
    this.lastPartitionEpoch = this.leader.partitionEpoch;
  }

  acked(id: number): number {
    return id === 0 ? this.leaderLog.acked(this.flushAlways) : this.logs.get(id)!.acked(this.flushAlways);
  }

  /**
   * Feeds a leader output to the model, checking what every output must satisfy. `released`: the
   * input answered the proposal in flight before it, or brought an image that voids it.
   */
  private take(inFlightBefore: AlterPartitionItem | null, out: LeaderOutput, released = false): void {
    if (out.alterPartition !== null) {
      const allowed = inFlightBefore === null || inFlightBefore === out.alterPartition || released;
      assert.ok(allowed, 'a second AlterPartition while one is in flight');
      assert.ok(out.alterPartition.newIsrWithEpochs.some((m) => m.brokerId === 0), 'a proposal without the leader');
      this.requests.push(out.alterPartition);
    }
    this.settleWaiters(out.acksChanged);
  }

  private settleWaiters(changed: boolean): void {
    const waiting: Waiter[] = [];
    for (const w of this.waiters) {
      const outcome = this.leader.acksAllOutcome(w.endOffset);
      if (outcome === 'waiting') {
        waiting.push(w);
        continue;
      }
      assert.ok(changed, `acks=all to ${w.endOffset} settled (${outcome}) on an output that did not say so`);
      if (outcome === ErrorCode.NONE) {
        for (const m of this.leader.maximalIsr) {
          assert.ok(this.acked(m) >= w.endOffset, `acks=all to ${w.endOffset} acknowledged while ISR member ${m} has ${this.acked(m)}`);
        }
      }
    }
    this.waiters = waiting;
  }

  private drive(input: () => LeaderOutput, released = false): void {
    this.take(this.leader.inFlight, input(), released);
  }

  fetch(id: number, max: number): void {
    if (this.stoppedAt.has(id)) return;
    const follower = this.followers.get(id)!;
    const log = this.logs.get(id)!;
    const position = follower.fetchPosition(this.now);
    if (position === null) return;
    const before = this.leader.inFlight;
    const { answer, output } = this.leader.onFollowerFetch(position, this.now);
    this.take(before, output);
    const action = follower.onFetchAnswer(position, answer, this.now);
    if (action !== null) {
      assert.equal(action.kind, 'truncate', 'no reset: every fetch offset is within the leader log');
      if (action.kind === 'truncate') assert.ok(!action.belowHighWatermark, `follower ${id} truncating to ${action.offset} below its high watermark ${follower.highWatermark}`);
      log.truncate(action.offset);
      follower.onTruncated(log.local());
      return;
    }
    if (answer.errorCode !== ErrorCode.NONE) return;
    for (let o = position.fetchOffset; o < Math.min(this.leaderLog.end, position.fetchOffset + max); o++) log.append(this.leaderLog.epochs[o]!);
    if (!this.flushAlways) log.durable = log.end;
    follower.onLocalLog(log.local());
  }

  flushFollower(id: number): void {
    const log = this.logs.get(id)!;
    log.durable = log.end;
    this.followers.get(id)!.onLocalLog(log.local());
  }

  produce(n: number, acksAll: boolean): void {
    if (acksAll && this.leader.admit(-1) !== ErrorCode.NONE) {
      assert.ok(this.leader.isr.length < Math.min(this.controller.minInsyncReplicas, 3));
      return;
    }
    for (let i = 0; i < n; i++) this.leaderLog.append(LEADER_EPOCH);
    this.drive(() => this.leader.onLocalLog(this.leaderLog.local(), this.now));
    if (acksAll) {
      this.waiters.push({ endOffset: this.leaderLog.end });
      this.settleWaiters(true);
    }
  }

  flushLeader(): void {
    this.leaderLog.durable = this.leaderLog.end;
    this.drive(() => this.leader.onLocalLog(this.leaderLog.local(), this.now));
  }

  tick(ms: number): void {
    this.now += ms;
    this.drive(() => this.leader.tick(this.now));
  }

  /** The controller takes the oldest request; its answer may be lost (the sender sees a timeout). */
  control(lost: boolean, notController: boolean): void {
    const sent = this.requests.shift();
    if (sent === undefined) return;
    const result = notController ? failure(ErrorCode.NOT_CONTROLLER) : this.controller.alterPartition(sent);
    this.replies.push({ sent, result: lost ? failure(ErrorCode.REQUEST_TIMED_OUT) : result });
  }

  /** The oldest request never reaches the controller. */
  dropRequest(): void {
    const sent = this.requests.shift();
    if (sent !== undefined) this.replies.push({ sent, result: failure(ErrorCode.REQUEST_TIMED_OUT) });
  }

  reply(i: number): void {
    if (this.replies.length === 0) return;
    const [{ sent, result }] = this.replies.splice(i % this.replies.length, 1) as [{ sent: AlterPartitionItem; result: AlterPartitionResult }];
    this.drive(() => this.leader.onAlterPartitionResult(sent, result, this.now), sent === this.leader.inFlight);
  }

  image(skip: boolean): void {
    const images = this.controller.images;
    const next = skip ? images.splice(0, images.length).pop() : images.shift();
    if (next !== undefined) this.drive(() => this.leader.onMetadata(next, this.now), next.partitionEpoch > this.leader.partitionEpoch);
  }

  staleImage(i: number): void {
    const older = this.controller.published.filter((img) => img.partitionEpoch < this.leader.partitionEpoch);
    if (older.length > 0) this.drive(() => this.leader.onMetadata(older[i % older.length]!, this.now));
  }

  stop(id: number): void {
    if (!this.stoppedAt.has(id)) this.stoppedAt.set(id, this.now);
  }

  run(c: Cmd): void {
    switch (c.t) {
      case 'fetch': return this.fetch(c.f, c.max);
      case 'flushF': return this.flushFollower(c.f);
      case 'produce': return this.produce(c.n, c.acksAll);
      case 'flushL': return this.flushLeader();
      case 'tick': return this.tick(c.ms);
      case 'control': return this.control(c.lost, c.notController);
      case 'dropRequest': return this.dropRequest();
      case 'reply': return this.reply(c.i);
      case 'image': return this.image(c.skip);
      case 'staleImage': return this.staleImage(c.i);
      case 'fence': return this.controller.fence(c.f, c.on);
      case 'stop': return this.stop(c.f);
    }
  }

  /** What must hold between any two steps. */
  check(): void {
    const hw = this.leader.highWatermark;
    assert.ok(hw >= this.lastHw, `high watermark moved back from ${this.lastHw} to ${hw}`);
    this.lastHw = hw;
    for (const m of this.leader.maximalIsr) {
      assert.ok(hw <= this.acked(m), `high watermark ${hw} past ISR member ${m} at ${this.acked(m)}`);
      const log = m === 0 ? this.leaderLog : this.logs.get(m)!;
      assert.deepEqual(log.epochs.slice(0, hw), this.leaderLog.epochs.slice(0, hw), `ISR member ${m} differs from the leader below the high watermark`);
    }
    if (this.flushAlways) assert.ok(hw <= this.leaderLog.durable, `high watermark ${hw} past the durable end ${this.leaderLog.durable}`);
    assert.ok(this.leader.isr.includes(0), `ISR ${this.leader.isr} without the leader`);
    assert.ok(this.leader.partitionEpoch >= this.lastPartitionEpoch, 'partition epoch moved back');
    this.lastPartitionEpoch = this.leader.partitionEpoch;
    assert.deepEqual([...this.leader.isr], this.controller.history.get(this.leader.partitionEpoch), `ISR at partition epoch ${this.leader.partitionEpoch}`);
    for (const [id, follower] of this.followers) {
      assert.ok(follower.highWatermark <= hw, `follower ${id} high watermark ${follower.highWatermark} past the leader's ${hw}`);
      assert.ok(follower.highWatermark <= this.logs.get(id)!.end, `follower ${id} high watermark past its log end`);
    }
  }

  /** Everyone behaves: answers arrive, images arrive, live followers fetch everything, time passes. */
  calmRound(): void {
    // An acks=1 record always lands: a stopped follower that had everything is caught up until
    // the leader's log moves on (Kafka's rule), and acks=all may be refused below min ISR.
    this.produce(1, false);
    this.produce(1, true);
    this.flushLeader();
    for (const id of FOLLOWERS) {
      for (let i = 0; i < 4; i++) {
        this.fetch(id, 1000);
        this.flushFollower(id);
      }
    }
    while (this.requests.length > 0) this.control(false, false);
    while (this.replies.length > 0) this.reply(0);
    this.image(true);
    this.tick(TICK_MS);
  }
}

const scenario = fc.record({
  flushAlways: fc.boolean(),
  isr: fc.constantFrom([0], [0, 1], [0, 2], [0, 1, 2]),
  minIsr: fc.integer({ min: 1, max: 3 }),
  cmds: fc.array(cmd, { maxLength: 150, size: 'max' }),
  stopInCalm: fc.constantFrom(0, 1, 2),
});

describe('partition replication properties', () => {
  it('hold over random interleavings of fetches, produces, controller answers, images and ticks', () => {
    fc.assert(
      fc.property(scenario, ({ flushAlways, isr, minIsr, cmds, stopInCalm }) => {
        const world = new World(flushAlways, [...isr], minIsr);
        world.check();
        for (const c of cmds) {
          world.run(c);
          world.check();
        }
        // Calm: unfence everyone, maybe stop one more follower, and let the protocol settle.
        for (const id of FOLLOWERS) if (world.controller.fenced.has(id)) world.controller.fence(id, false);
        if (stopInCalm !== 0) world.stop(stopInCalm);
        const calmFrom = world.now;
        while (world.now <= calmFrom + LAG_MS + 4 * TICK_MS) {
          world.calmRound();
          world.check();
        }
        for (const [id, stoppedAt] of world.stoppedAt) {
          assert.ok(!world.leader.isr.includes(id), `follower ${id} stopped at ${stoppedAt} still in the ISR at ${world.now}`);
        }
        for (const id of FOLLOWERS) {
          if (world.stoppedAt.has(id)) continue;
          assert.ok(world.leader.isr.includes(id), `live follower ${id} not back in the ISR ${world.leader.isr}`);
        }
        const live = world.leader.isr.length >= Math.min(minIsr, 3);
        if (live) assert.equal(world.leader.highWatermark, world.leaderLog.end, 'a calm ISR commits everything');
      }),
      { numRuns: 300, includeErrorInReport: true },
    );
  });

  it('a follower that stops fetching leaves the ISR within the lag time plus one tick', () => {
    const world = new World(false, [0, 1, 2], 1);
    for (let i = 0; i < 4; i++) world.calmRound();
    world.stop(2);
    const stoppedAt = world.now;
    let leftAt = -1;
    while (leftAt < 0 && world.now <= stoppedAt + 2 * LAG_MS) {
      world.calmRound();
      if (!world.leader.isr.includes(2)) leftAt = world.now;
    }
    assert.ok(leftAt > stoppedAt + LAG_MS - TICK_MS && leftAt <= stoppedAt + LAG_MS + TICK_MS, `left at ${leftAt}, stopped at ${stoppedAt}`);
  });
});

describe('property harness', () => {
  it('starts from diverged follower logs', () => {
    const world = new World(false, [0, 1, 2], 1);
    assert.deepEqual(epochCache([[0, 0], [1, 3]]).entries, world.logs.get(1)!.cache.entries);
    world.fetch(1, 10);
    assert.equal(world.logs.get(1)!.end, 5, 'follower 1 cut its epoch-1 tail back to the leader end');
    world.fetch(2, 10);
    assert.equal(world.logs.get(2)!.end, 3, 'follower 2 cut its epoch-0 tail back to where epoch 1 began');
  });
});
