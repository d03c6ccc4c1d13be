// A PartitionRouter and two Shards on one thread, the router reaching each shard through a
// LocalShardPort (a lane of its own, no worker, no ring), while the test plays main on each
// shard's lane 0 rings: produces (acks=1 and acks=all on an RF 1 partition), a fetch that parks
// and is woken by a produce, a fetch over both shards released at the sum of its parts, offset
// lookups, a group call, and a request id both lanes use at once, each answered and released on
// its own lane.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocalShardPort } from '../../../src/actors/local_shard_port.js';
import { PartitionRouter, type FetchItem } from '../../../src/actors/partition_router.js';
import {
  FETCH_RELEASE_BYTES,
  MsgType,
  fetchBytes,
  readFetchResult,
  readProduceResult,
  writeFetch,
  writeFetchRelease,
  produceMessageBytes,
  writeProduce,
  type FetchAsk,
  type ProduceResult,
} from '../../../src/actors/ring_messages.js';
import { ShardTable } from '../../../src/actors/shard_table.js';
import { ACKS_ALL } from '../../../src/coordinator/replication/min_isr.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { BatchField } from '../../../src/protocol/record_batch.js';
import type { FrameKeeper } from '../../../src/common/frame_pool.js';
import { HostedShard } from '../../helpers/hosted_shard.js';
import { batchOf, waitFor } from '../log/log_fixture.js';
import { closedAfterEach } from '../../helpers/closed_after_each.js';

/** What main's side of a shard's lane 0 read off its outbound ring. */
type MainAnswer = { kind: 'produce'; r: ProduceResult } | { kind: 'fetch'; reqId: number; waited: boolean };

/** A hosted shard whose lane 0 the test plays main on. */
class MainLaneShard extends HostedShard {
  readonly mainAnswers: MainAnswer[] = [];

  /** Main's produce on lane 0. */
  mainProduce(reqId: number, handle: number, records: Buffer): void {
    const at = this.inbound.reserve(produceMessageBytes(records.length));
    this.inbound.publish(writeProduce(this.inbound.bytes, at, { reqId, slot: 0, handle, acks: 1, timeoutMs: 30_000, leaderEpoch: 0 }, records));
  }

  /** Main's consumer fetch on lane 0. */
  mainFetch(ask: FetchAsk): void {
    const at = this.inbound.reserve(fetchBytes(ask.partitions.length));
    writeFetch(this.inbound.bytes, at, ask);
    this.inbound.publish();
  }

  mainRelease(reqId: number): void {
    const at = this.inbound.reserve(FETCH_RELEASE_BYTES);
    writeFetchRelease(this.inbound.bytes, at, reqId);
    this.inbound.publish();
  }

  /** Every answer lane 0's outbound ring holds so far. */
  collect(): MainAnswer[] {
    const ring = this.outbound;
    for (let off = ring.peek(); off >= 0; off = ring.peek()) {
      const b = ring.bytes;
      if (b[off] === MsgType.PRODUCE_RESULT) this.mainAnswers.push({ kind: 'produce', r: readProduceResult(b, off) });
      else if (b[off] === MsgType.FETCH_RESULT) {
        const r = readFetchResult(b, off);
        this.mainAnswers.push({ kind: 'fetch', reqId: r.reqId, waited: r.waited });
      } else assert.fail(`unexpected answer type ${b[off]} on lane 0`);
      ring.release();
    }
    return this.mainAnswers;
  }
}

/** A router over two same-thread shards, one partition of topic 't' on each. */
class Rig {
  readonly table = new ShardTable(2);
  readonly router = new PartitionRouter(this.table);
  readonly hosted = [new MainLaneShard(0), new MainLaneShard(1)];
  readonly handles: number[] = [];
  // Doorbell waits do not hold the loop (in the broker the worker's control port does).
  readonly keepAlive = setInterval(() => undefined, 1000);

  constructor() {
    this.router.attach(this.hosted.map((h, i) => new LocalShardPort(h.shard, i, this.router)));
    for (let partition = 0; partition < 2; partition++) {
      const { handle, shard } = this.table.reserve();
      assert.equal(shard, partition, 'one partition per shard');
      this.hosted[shard]!.open(handle, partition);
      this.table.publish('t', partition, handle, shard);
      this.handles.push(handle);
    }
  }

  parked(shard: number): number {
    return this.hosted[shard]!.shard.introspect().parkedFetches;
  }

  async close(): Promise<void> {
    for (const h of this.hosted) await h.close();
    clearInterval(this.keepAlive);
    for (const h of this.hosted) assert.deepEqual(h.errors, []);
  }
}

const rig = closedAfterEach(() => new Rig());

const ONE_MB = 1 << 20;

function fetchItem(handle: number, fetchOffset = 0): FetchItem {
  return { handle, fetchOffset, partitionMaxBytes: ONE_MB, lastFetchedEpoch: -1, currentLeaderEpoch: -1, logStartOffset: -1 };
}

/** A consumer fetch of partition `handle` from offset 0 on lane 0, which `minBytes` keeps parked. */
function mainFetchAsk(reqId: number, handle: number, minBytes: number): FetchAsk {
  return {
    reqId, flags: 0, replicaId: -1, replicaEpoch: -1, maxWaitMs: 10_000, minBytes, maxBytes: ONE_MB,
    partitions: [{ slot: 0, handle, fetchOffset: 0, partitionMaxBytes: ONE_MB, lastFetchedEpoch: -1, currentLeaderEpoch: -1, logStartOffset: -1 }],
  };
}

// Produce timeouts short enough that an answer lost on the way fails the test quickly; group
// calls have no timeout on the router, so the test itself is bounded.
const PRODUCE_TIMEOUT_MS = 2000;
const BOUNDED = { timeout: 15_000 };

describe('LocalShardPort: a router and shards on one thread', () => {
  it('answers produces (acks=1, acks=all on RF 1), offset lookups and group calls on the local lane, none on lane 0', BOUNDED, async () => {
    const r = rig();
    const [h0, h1] = r.handles as [number, number];
    const one = await r.router.produce([{ handle: h0, records: batchOf(3, 10), leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    assert.deepEqual(one.map((o) => [o.errorCode, o.baseOffset]), [[ErrorCode.NONE, 0]]);
    const all = await r.router.produce([
      { handle: h0, records: batchOf(2, 10), leaderEpoch: 0 },
      { handle: h1, records: batchOf(4, 10), leaderEpoch: 0 },
    ], PRODUCE_TIMEOUT_MS, ACKS_ALL);
    assert.deepEqual(all.map((o) => [o.errorCode, o.baseOffset]), [[ErrorCode.NONE, 3], [ErrorCode.NONE, 0]]);
    const latest = await r.router.listOffsets([{ handle: h0, timestamp: -1 }, { handle: h1, timestamp: -1 }, { handle: h1, timestamp: -2 }]);
    assert.deepEqual(latest.map((o) => [o.errorCode, o.offset]), [[ErrorCode.NONE, 5], [ErrorCode.NONE, 4], [ErrorCode.NONE, 0]]);
    const epochEnds = await r.router.epochEndOffsets([{ handle: h0, leaderEpoch: 0 }]);
    assert.deepEqual(epochEnds.map((o) => [o.errorCode, o.leaderEpoch, o.offset]), [[ErrorCode.NONE, 0, 5]]);
    // 't' has no group coordinator: the shard's refusal comes back through the lane too.
    const reply = await r.router.groupCall(h0, { kind: 'heartbeat', groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null });
    assert.deepEqual(reply, { kind: 'heartbeat', errorCode: ErrorCode.NOT_COORDINATOR });
    for (const h of r.hosted) assert.deepEqual(h.collect(), [], 'nothing went to main\'s lane');
  });

  it('stages a batch whose frame the sender lends by reference, and lets go of it once its commit settled', BOUNDED, async () => {
    const r = rig();
    const [h0, h1] = r.handles as [number, number];
    await r.router.produce([{ handle: h0, records: batchOf(3, 10), leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    const holds: Array<{ lent: boolean }> = [];
    const keeper: FrameKeeper = {
      hold: () => {
        const h = { lent: true };
        holds.push(h);
        return () => {
          assert.ok(h.lent, 'a hold was let go twice');
          h.lent = false;
        };
      },
    };
    const lent = batchOf(2, 10);
    const copied = batchOf(2, 10);
    const produced = r.router.produce([{ handle: h0, records: lent, leaderEpoch: 0 }, { handle: h1, records: copied, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1, keeper);
    assert.equal(holds.length, 2, 'each partition\'s shard held the frame');
    assert.ok(holds.every((h) => h.lent), 'nothing is let go before the commit settles');
    const outcomes = await produced;
    assert.deepEqual(outcomes.map((o) => [o.errorCode, o.baseOffset]), [[ErrorCode.NONE, 3], [ErrorCode.NONE, 0]]);
    assert.ok(holds.every((h) => !h.lent), 'both let go by the time the produce is answered');
    // The log stamps offsets into the batch it stages: the lent bytes themselves carry them.
    assert.equal(Number(lent.readBigInt64BE(BatchField.baseOffset)), 3, 'the lent batch was staged, not a copy of it');
    // A partition the table places on a shard that does not host it: refused there, unstaged.
    const { handle: stray, shard } = r.table.reserve();
    r.table.publish('t', 2, stray, shard);
    const refused = await r.router.produce([{ handle: stray, records: batchOf(1, 10), leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1, keeper);
    assert.equal(refused[0]!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(holds.length, 3, 'the hosting shard held the frame');
    assert.ok(holds.every((h) => !h.lent), 'a produce refused before staging lets go at once');
  });

  it('parks a fetch on the local lane and answers it once a produce lands', BOUNDED, async () => {
    const r = rig();
    const [h0] = r.handles as [number];
    const fetched = r.router.fetch([fetchItem(h0)], 10_000, 1, ONE_MB);
    await waitFor(() => r.parked(0) === 1, 'the fetch parked');
    const produced = await r.router.produce([{ handle: h0, records: batchOf(2, 10), leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    assert.equal(produced[0]!.errorCode, ErrorCode.NONE);
    const answer = await fetched;
    assert.equal(answer.waited, true);
    assert.equal(answer.parts[0]!.errorCode, ErrorCode.NONE);
    assert.equal(answer.parts[0]!.highWatermark, 2);
    assert.equal(answer.parts[0]!.ranges.length, 1);
    assert.equal(r.parked(0), 0);
  });

  it('releases a fetch over both shards once their parts together hold min_bytes', BOUNDED, async () => {
    const r = rig();
    const [h0, h1] = r.handles as [number, number];
    const batch = batchOf(1, 100);
    // Either partition alone holds half of min_bytes: only main's release answers the parts.
    const fetched = r.router.fetch([fetchItem(h0), fetchItem(h1)], 10_000, batch.length * 2, ONE_MB);
    await waitFor(() => r.parked(0) === 1 && r.parked(1) === 1, 'both parts parked');
    await r.router.produce([{ handle: h0, records: batch, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(r.parked(0), 1, 'one part\'s bytes are not enough');
    await r.router.produce([{ handle: h1, records: batch, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    const answer = await fetched;
    assert.equal(answer.waited, true);
    assert.deepEqual(answer.parts.map((p) => [p.slot, p.errorCode, p.ranges.reduce((n, range) => n + range.length, 0)]), [
      [0, ErrorCode.NONE, batch.length],
      [1, ErrorCode.NONE, batch.length],
    ]);
    assert.equal(r.parked(0) + r.parked(1), 0);
  });

  it('keeps a request id both lanes use apart: each parks, is released and is answered on its own lane', BOUNDED, async () => {
    const r = rig();
    const [h0] = r.handles as [number];
    const hosted = r.hosted[0]!;
    // A fresh router's first request id is 1: main's lane 0 parks a fetch under the same id first.
    hosted.mainFetch(mainFetchAsk(1, h0, ONE_MB));
    await waitFor(() => r.parked(0) === 1, 'lane 0\'s fetch parked');
    const fetched = r.router.fetch([fetchItem(h0)], 1500, ONE_MB, ONE_MB);
    assert.equal(r.parked(0), 2, 'both fetches 1 are parked');
    // Lane 0 releases its fetch 1: the local lane's stays parked.
    hosted.mainRelease(1);
    await waitFor(() => hosted.collect().length === 1, 'lane 0\'s fetch answered');
    assert.deepEqual(hosted.mainAnswers[0], { kind: 'fetch', reqId: 1, waited: true });
    assert.equal(r.parked(0), 1, 'the local lane\'s fetch 1 still waits');
    // Both lanes produce under id 2: each gets its own answer.
    hosted.mainProduce(2, h0, batchOf(1, 10));
    await waitFor(() => hosted.collect().length === 2, 'lane 0\'s produce answered');
    const produced = await r.router.produce([{ handle: h0, records: batchOf(3, 10), leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1);
    assert.deepEqual(produced.map((o) => [o.errorCode, o.baseOffset]), [[ErrorCode.NONE, 1]]);
    const mainProduced = hosted.collect()[1]!;
    assert.equal(mainProduced.kind, 'produce');
    assert.deepEqual((({ reqId, errorCode, baseOffset }) => ({ reqId, errorCode, baseOffset }))((mainProduced as Extract<MainAnswer, { kind: 'produce' }>).r), {
      reqId: 2, errorCode: ErrorCode.NONE, baseOffset: 0,
    });
    // The local lane's fetch 1 waits out its own max_wait, untouched by lane 0's release.
    const answer = await fetched;
    assert.equal(answer.waited, true);
    assert.equal(answer.parts[0]!.highWatermark, 4);
    assert.equal(r.parked(0), 0);
    assert.equal(hosted.collect().length, 2, 'lane 0 got nothing of the local lane\'s');
  });
});
