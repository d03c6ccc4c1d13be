// The replica fetcher against a fake leader listener (test/helpers/fake_fetch_leader.ts): the
// request carries each partition's position, this broker's replica state and the sessionless
// Fetch v17 fields; answers reach the partition they belong to with records cut to whole batches;
// no fetch leaves while an answer of the last one is still being applied; a removed partition gets nothing new; a reset
// connection, an error answer and an oversized answer are survived by reconnecting; close() is
// prompt; wake() asks at once; throttled partitions are left out while the follower quota is
// exceeded and count their bytes; a large answer's frame is reused only once its partitions are
// done with it; a running fetcher holds no memory per fetch. ReplicaFetchers
// keeps one fetcher per leader.
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { REPLICA_FETCH_VERSION, ReplicaFetcher, ReplicaFetchers, type FollowedPartition, type ReplicaFetcherSettings } from '../../../src/actors/replica_fetcher.js';
import { PLAINTEXT_PEER } from '../../../src/common/peer_socket.js';
import type { ReplicaFetchAnswer, ReplicaFetchPosition } from '../../../src/coordinator/replication/types.js';
import { ThrottleQuota } from '../../../src/coordinator/replication/throttle_quota.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { stampBatch, wholeBatchesLength } from '../../../src/protocol/record_batch.js';
import { encodeRecordBatch } from '../../../src/protocol/records.js';
import { FakeFetchLeader, answerPartition, fetchResponse, testBatch, type FetchReply, type SeenFetch } from '../../helpers/fake_fetch_leader.js';

const TOPIC_A = 'a'.repeat(32);
const TOPIC_B = '0123456789abcdef0123456789abcdef';

const SETTINGS: ReplicaFetcherSettings = {
  replicaId: 7,
  clientId: 'sluice-replica-7-shard-0',
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 10 << 20,
  partitionMaxBytes: 1 << 20,
  backoffMs: 20,
  requestTimeoutMs: 2000,
  connectTimeoutMs: 1000,
  security: PLAINTEXT_PEER,
};

interface Delivered {
  sent: ReplicaFetchPosition;
  answer: ReplicaFetchAnswer;
  records: Buffer | null;
}

/** A followed partition that asks from `position` and records every answer; `hold` keeps answers unsettled. */
class FakePartition implements FollowedPartition {
  position: ReplicaFetchPosition | null;
  readonly answers: Delivered[] = [];
  positionCalls = 0;
  hold = false;
  throttled = false;
  private held: Array<() => void> = [];

  constructor(readonly topicId: string, readonly partition: number, fetchOffset = 0) {
    this.position = { replicaId: 7, replicaEpoch: 42, currentLeaderEpoch: 3, fetchOffset, lastFetchedEpoch: 2, logStartOffset: 0 };
  }

  fetchPosition(): ReplicaFetchPosition | null {
    this.positionCalls++;
    return this.position;
  }

  onFetchAnswer(sent: ReplicaFetchPosition, answer: ReplicaFetchAnswer, records: Buffer | null): Promise<boolean> {
    this.answers.push({ sent, answer, records: records === null ? null : Buffer.from(records) });
    if (!this.hold) return Promise.resolve(true);
    return new Promise((resolve) => this.held.push(() => resolve(true)));
  }

  release(): void {
    const held = this.held;
    this.held = [];
    for (const r of held) r();
  }
}

const EMPTY_ANSWER = (seen: SeenFetch): FetchReply =>
  fetchResponse(seen.request.topics.map((t) => ({ topic: '', topicId: t.topicId, partitions: t.partitions.map((p) => answerPartition(p.partition, { highWatermark: p.fetchOffset })) })));

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function partitionsOf(seen: SeenFetch): string[] {
  return seen.request.topics.flatMap((t) => t.partitions.map((p) => `${t.topicId.slice(0, 4)}-${p.partition}`)).sort();
}

const open: Array<{ close(): Promise<void> }> = [];
function track<T extends { close(): Promise<void> }>(x: T): T {
  open.push(x);
  return x;
}
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

describe('wholeBatchesLength', () => {
  it('ends after the last whole batch and before a partial one or a bad length', () => {
    const a = testBatch(0, 2);
    const b = testBatch(2, 3);
    assert.equal(wholeBatchesLength(Buffer.concat([a, b])), a.length + b.length);
    assert.equal(wholeBatchesLength(Buffer.concat([a, b.subarray(0, b.length - 1)])), a.length);
    assert.equal(wholeBatchesLength(Buffer.concat([a, b.subarray(0, 10)])), a.length);
    const bad = Buffer.from(b);
    bad.writeInt32BE(5, 8);
    assert.equal(wholeBatchesLength(Buffer.concat([a, bad])), a.length);
    assert.equal(wholeBatchesLength(Buffer.alloc(0)), 0);
  });
});

describe('ReplicaFetcher against a fake leader', () => {
  it('sends each position as given in a sessionless Fetch v17 with this broker as the replica', async () => {
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start(() => 'hang'));
    const p0 = new FakePartition(TOPIC_A, 0, 100);
    const p1 = new FakePartition(TOPIC_B, 4, 7);
    p1.position = { ...p1.position!, currentLeaderEpoch: 9, lastFetchedEpoch: -1, logStartOffset: 5 };
    const idle = new FakePartition(TOPIC_A, 1);
    idle.position = null;
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(p0);
    fetcher.add(p1);
    fetcher.add(idle);
    const [seen] = await leader.requests(1);
    assert.ok(seen !== undefined);
    assert.equal(REPLICA_FETCH_VERSION, 17);
    assert.equal(seen.header.apiKey, 1);
    assert.equal(seen.header.apiVersion, 17);
    assert.equal(seen.header.clientId, SETTINGS.clientId);
    const req = seen.request;
    assert.deepEqual(req.replicaState, { replicaId: 7, replicaEpoch: 42 });
    assert.equal(req.maxWaitMs, 500);
    assert.equal(req.minBytes, 1);
    assert.equal(req.maxBytes, 10 << 20);
    assert.equal(req.isolationLevel, 0);
    assert.equal(req.sessionId, 0);
    assert.equal(req.sessionEpoch, -1);
    assert.deepEqual(req.forgottenTopicsData, []);
    const byTopic = new Map(req.topics.map((t) => [t.topicId, t.partitions]));
    assert.deepEqual([...byTopic.keys()].sort(), [TOPIC_B, TOPIC_A].sort());
    assert.deepEqual(byTopic.get(TOPIC_A)?.map(({ partition, currentLeaderEpoch, fetchOffset, lastFetchedEpoch, logStartOffset, partitionMaxBytes }) => ({ partition, currentLeaderEpoch, fetchOffset, lastFetchedEpoch, logStartOffset, partitionMaxBytes })),
      [{ partition: 0, currentLeaderEpoch: 3, fetchOffset: 100, lastFetchedEpoch: 2, logStartOffset: 0, partitionMaxBytes: 1 << 20 }]);
    assert.deepEqual(byTopic.get(TOPIC_B)?.map(({ partition, currentLeaderEpoch, fetchOffset, lastFetchedEpoch, logStartOffset }) => ({ partition, currentLeaderEpoch, fetchOffset, lastFetchedEpoch, logStartOffset })),
      [{ partition: 4, currentLeaderEpoch: 9, fetchOffset: 7, lastFetchedEpoch: -1, logStartOffset: 5 }]);
    assert.equal(fetcher.stats().requests, 1);
    assert.equal(fetcher.stats().connected, true);
  });

  it('hands each partition its own answer, records cut after the last whole batch', async () => {
    const b0 = testBatch(10, 2, 2);
    const b1 = testBatch(12, 3, 3);
    const b2 = testBatch(15, 4, 3);
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start((seen) => seen.connection === 1 && leader.seen.length === 1
      ? fetchResponse([
        { topic: '', topicId: TOPIC_A, partitions: [
          answerPartition(0, { highWatermark: 14, logStartOffset: 3, records: Buffer.concat([b0, b1, b2.subarray(0, b2.length - 7)]) }),
          answerPartition(1, { errorCode: ErrorCode.FENCED_LEADER_EPOCH, highWatermark: -1, logStartOffset: -1 }),
          answerPartition(9, { records: b0 }),
        ] },
        { topic: '', topicId: TOPIC_B, partitions: [answerPartition(0, { highWatermark: 30, divergingEpoch: { epoch: 4, endOffset: 21 }, records: b2.subarray(0, 20) })] },
      ])
      : 'hang'));
    const a0 = new FakePartition(TOPIC_A, 0, 10);
    const a1 = new FakePartition(TOPIC_A, 1, 50);
    const bb0 = new FakePartition(TOPIC_B, 0, 25);
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    for (const p of [a0, a1, bb0]) fetcher.add(p);
    await until('all three answered', () => a0.answers.length + a1.answers.length + bb0.answers.length === 3);
    assert.deepEqual(a0.answers[0]?.answer, { errorCode: ErrorCode.NONE, highWatermark: 14, logStartOffset: 3, divergingEpoch: null });
    assert.deepEqual(a0.answers[0]?.records, Buffer.concat([b0, b1]));
    assert.equal(a0.answers[0]?.sent.fetchOffset, 10);
    assert.deepEqual(a1.answers[0]?.answer, { errorCode: ErrorCode.FENCED_LEADER_EPOCH, highWatermark: -1, logStartOffset: -1, divergingEpoch: null });
    assert.equal(a1.answers[0]?.records, null);
    assert.deepEqual(bb0.answers[0]?.answer.divergingEpoch, { epoch: 4, endOffset: 21 });
    assert.equal(bb0.answers[0]?.records, null, 'a lone partial batch is no records');
    assert.equal(bb0.answers[0]?.sent.fetchOffset, 25);
    assert.equal(fetcher.stats().bytes, b0.length + b1.length);
  });

  it('leaves throttled partitions out while the follower quota is exceeded, counting only their bytes', async () => {
    const batch = testBatch(0, 200);
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start((seen) => fetchResponse(seen.request.topics.map((t) => ({
      topic: '', topicId: t.topicId, partitions: t.partitions.map((p) => answerPartition(p.partition, { highWatermark: 1000, records: batch })),
    })))));
    const quota = new ThrottleQuota();
    quota.setRate(batch.length / 20);
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0, undefined, quota));
    const moving = new FakePartition(TOPIC_A, 0);
    moving.throttled = true;
    const inSync = new FakePartition(TOPIC_A, 1);
    fetcher.add(moving);
    fetcher.add(inSync);
    const seen = await leader.requests(4);
    assert.deepEqual(partitionsOf(seen[0]!), ['aaaa-0', 'aaaa-1'], 'under the quota both are asked');
    assert.equal(quota.rate(0), (batch.length * 1000) / 10_000, "only the throttled partition's bytes count");
    for (const later of seen.slice(1)) assert.deepEqual(partitionsOf(later), ['aaaa-1'], 'over it only the in-sync one');
    quota.setRate(Infinity);
    const asked = leader.seen.length;
    await leader.requests(asked + 2);
    assert.deepEqual(partitionsOf(leader.seen[asked + 1]!), ['aaaa-0', 'aaaa-1'], 'a lifted throttle applies at once');
  });

  it('fetches again only once every answer of the last response is applied, then asks every partition', async () => {
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start(EMPTY_ANSWER));
    const slow = new FakePartition(TOPIC_A, 0);
    const quick = new FakePartition(TOPIC_A, 1);
    slow.hold = true;
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(slow);
    fetcher.add(quick);
    await leader.requests(1);
    assert.deepEqual(partitionsOf(leader.seen[0]!), ['aaaa-0', 'aaaa-1']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A fetch of the other partitions alone would wait at the leader while this one's offsets wait too.
    assert.equal(leader.seen.length, 1, 'no fetch while an answer is still being applied');
    assert.equal(slow.answers.length, 1);
    slow.hold = false;
    slow.release();
    await leader.requests(2);
    assert.deepEqual(partitionsOf(leader.seen[1]!), ['aaaa-0', 'aaaa-1']);
  });

  it('drops the in-flight answer of a removed partition and of a removed-then-added one', async () => {
    let answerNow: (() => void) | null = null;
    // Each answer's high watermark is the number of the request it answers.
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start(async (seen) => {
      const n: number = leader.seen.indexOf(seen) + 1;
      if (n === 1) await new Promise<void>((r) => { answerNow = r; });
      return fetchResponse(seen.request.topics.map((t) => ({ topic: '', topicId: t.topicId, partitions: t.partitions.map((q) => answerPartition(q.partition, { highWatermark: n })) })));
    }));
    const gone = new FakePartition(TOPIC_A, 0);
    const back = new FakePartition(TOPIC_A, 1);
    const stays = new FakePartition(TOPIC_A, 2);
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    for (const p of [gone, back, stays]) fetcher.add(p);
    await until('first request parked', () => answerNow !== null);
    assert.deepEqual(partitionsOf(leader.seen[0]!), ['aaaa-0', 'aaaa-1', 'aaaa-2']);
    fetcher.remove(gone);
    fetcher.remove(back);
    fetcher.add(back);
    assert.equal(fetcher.size, 2);
    answerNow!();
    await until('the re-added partition answered', () => back.answers.length >= 1);
    assert.equal(stays.answers[0]?.answer.highWatermark, 1, 'the followed partition got the first answer');
    assert.equal(gone.answers.length, 0);
    assert.ok(back.answers.every((a) => a.answer.highWatermark >= 2), 'no answer to the first add() reached the second');
    assert.ok(leader.seen.slice(1).every((s) => !partitionsOf(s).includes('aaaa-0')));
  });

  it('survives a reset connection and an error answer: no answers from them, reconnects, goes on', async () => {
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start((seen) => {
      const n = leader.seen.length;
      if (n === 1) return 'reset';
      if (n === 2) return fetchResponse([], ErrorCode.UNKNOWN_SERVER_ERROR);
      return EMPTY_ANSWER(seen);
    }));
    const p = new FakePartition(TOPIC_A, 0);
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(p);
    await until('an answer after the failures', () => p.answers.length >= 1);
    assert.equal(leader.seen[0]?.connection, 1);
    assert.equal(leader.seen[1]?.connection, 2, 'a new connection after the reset');
    assert.equal(leader.seen[2]?.connection, 2, 'an error answer keeps the connection');
    assert.ok(leader.seen.length >= 3);
    assert.equal(fetcher.stats().errors, 2);
    assert.equal(fetcher.stats().connected, true);
  });

  it('refuses an answer over its frame bound, logs it once, and reconnects', async () => {
    const big = Buffer.concat(Array.from({ length: 40 }, (_, i) => testBatch(i * 100, 100, 0, 'x'.repeat(40))));
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start((seen) => leader.seen.length <= 2
      ? fetchResponse([{ topic: '', topicId: TOPIC_A, partitions: [answerPartition(0, { records: big })] }])
      : EMPTY_ANSWER(seen)));
    const small = { ...SETTINGS, maxBytes: 1024, partitionMaxBytes: 1024 };
    const warnings: unknown[] = [];
    const p = new FakePartition(TOPIC_A, 0);
    assert.ok(big.length > 1024 * 2 + 64 * 1024, 'the answer passes the frame bound');
    const fetcher = track(new ReplicaFetcher(leader.endpoint, small, () => 42, () => 0, { warn: (o: unknown) => void warnings.push(o) }));
    fetcher.add(p);
    await until('an answer after the oversized ones', () => p.answers.length >= 1);
    assert.equal(p.answers[0]?.records, null);
    assert.equal(leader.connections, 3);
    assert.equal(fetcher.stats().errors, 2);
    assert.equal(warnings.length, 1);
  });

  it('close() ends a fetch in flight promptly and no answer arrives afterwards', async () => {
    let release: (() => void) | null = null;
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start(async (seen) => {
      await new Promise<void>((r) => { release = r; });
      return EMPTY_ANSWER(seen);
    }));
    const p = new FakePartition(TOPIC_A, 0);
    const fetcher = new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0);
    fetcher.add(p);
    await leader.requests(1);
    const started = Date.now();
    await fetcher.close();
    assert.ok(Date.now() - started < 200, `close took ${Date.now() - started} ms`);
    assert.equal(fetcher.stats().connected, false);
    release!();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(p.answers.length, 0);
    assert.equal(leader.seen.length, 1);
  });

  it('wake() asks at once instead of at the next poll', async () => {
    const leader: FakeFetchLeader = track(await FakeFetchLeader.start(() => 'hang'));
    const p = new FakePartition(TOPIC_A, 0);
    p.position = null;
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(p);
    // Just after a poll, the next one is ~50 ms away.
    const polled = p.positionCalls;
    await until('a poll', () => p.positionCalls > polled + 1, 1000);
    p.position = new FakePartition(TOPIC_A, 0, 33).position;
    const beforeWake = p.positionCalls;
    fetcher.wake();
    await new Promise((r) => setImmediate(r));
    assert.equal(p.positionCalls, beforeWake + 1, 'wake() made the loop ask the partition again');
    const [seen] = await leader.requests(1, 1000);
    assert.equal(seen?.request.topics[0]?.partitions[0]?.fetchOffset, 33);
  });

  it('moves to a new leader endpoint with setLeader()', async () => {
    const first = track(await FakeFetchLeader.start(() => 'hang'));
    const second = track(await FakeFetchLeader.start(EMPTY_ANSWER));
    const p = new FakePartition(TOPIC_A, 0);
    const fetcher = track(new ReplicaFetcher(first.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(p);
    await first.requests(1);
    fetcher.setLeader({ id: 2, host: '127.0.0.1', port: second.port });
    await until('answered by the new leader', () => p.answers.length >= 1);
    assert.equal(fetcher.stats().leaderId, 2);
  });

  it('reads a large answer into a pooled frame, reused only once every partition is done with its records', async () => {
    // One record of 100 kB per batch, filled with the answer's letter: past the link's in-place minimum.
    const bigBatch = (offset: number, letter: string): Buffer => {
      const batch = encodeRecordBatch([{ key: null, value: Buffer.alloc(100_000, letter), headers: [], timestamp: 1_700_000_000_000 }]);
      stampBatch(batch, offset, 0);
      return batch;
    };
    const letters = ['a', 'b', 'c'];
    const leader = track(await FakeFetchLeader.start((seen) => {
      const offset = seen.request.topics[0]!.partitions[0]!.fetchOffset;
      return fetchResponse([{ topic: '', topicId: TOPIC_A, partitions: [answerPartition(0, { highWatermark: 3, records: bigBatch(offset, letters[offset]!) })] }]);
    }));
    // Keeps its records as views, as a log's staging does; done with the second answer's only.
    const kept: Buffer[] = [];
    const keeper: FollowedPartition = {
      topicId: TOPIC_A, partition: 0, throttled: false,
      fetchPosition: () => (kept.length < 3 ? { ...new FakePartition(TOPIC_A, 0).position!, fetchOffset: kept.length } : null),
      onFetchAnswer: (_sent, _answer, records) => {
        kept.push(records!);
        return Promise.resolve(kept.length === 2);
      },
    };
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(keeper);
    await until('three answers', () => kept.length === 3);
    const [first, second, third] = kept as [Buffer, Buffer, Buffer];
    // A byte inside the value (the record ends with its header count).
    const valueOf = (records: Buffer): string => String.fromCharCode(records[records.length - 100]!);
    assert.equal(valueOf(first), 'a', 'a frame whose partition may still hold it is never reused');
    assert.equal(valueOf(third), 'c');
    assert.notEqual(second.buffer, first.buffer);
    assert.equal(third.buffer, second.buffer, 'the frame of an answer every partition was done with took the next one');
  });

  it('holds no memory per fetch while it runs', async () => {
    // Raced against a promise that settled only on close(), each delivery kept ~385 bytes until then.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const leader = track(await FakeFetchLeader.start(EMPTY_ANSWER));
    const position = new FakePartition(TOPIC_A, 0).position;
    const lean: FollowedPartition = { topicId: TOPIC_A, partition: 0, throttled: false, fetchPosition: () => position, onFetchAnswer: () => Promise.resolve(true) };
    const fetcher = track(new ReplicaFetcher(leader.endpoint, SETTINGS, () => 42, () => 0));
    fetcher.add(lean);
    const fetched = async (n: number): Promise<void> => {
      await until(`${n} fetches`, () => {
        leader.seen.length = 0;
        return fetcher.stats().requests >= n;
      }, 30_000);
    };
    const warm = 2000;
    const measured = 20_000;
    await fetched(warm);
    gc();
    const before = process.memoryUsage().heapUsed;
    await fetched(warm + measured);
    gc();
    const perFetch = (process.memoryUsage().heapUsed - before) / measured;
    assert.ok(perFetch < 150, `${perFetch.toFixed(0)} bytes kept per fetch`);
  });
});

describe('ReplicaFetchers', () => {
  const leaders: FakeFetchLeader[] = [];
  after(async () => {
    for (const l of leaders) await l.close();
  });

  it('keeps one fetcher per leader, moves a partition between them, closes one when its last partition leaves', async () => {
    const l1 = await FakeFetchLeader.start(EMPTY_ANSWER);
    const l2 = await FakeFetchLeader.start(EMPTY_ANSWER);
    leaders.push(l1, l2);
    const e1 = { id: 1, host: '127.0.0.1', port: l1.port };
    const e2 = { id: 2, host: '127.0.0.1', port: l2.port };
    const fetchers = new ReplicaFetchers(SETTINGS, () => 42, () => 0);
    const a = new FakePartition(TOPIC_A, 0);
    const b = new FakePartition(TOPIC_A, 1);
    fetchers.follow(a, e1);
    fetchers.follow(b, e1);
    fetchers.follow(a, e1);
    assert.deepEqual(fetchers.stats().map((s) => [s.leaderId, s.partitions]), [[1, 2]]);
    await until('both answered by leader 1', () => a.answers.length > 0 && b.answers.length > 0);
    fetchers.follow(b, e2);
    assert.deepEqual(fetchers.stats().map((s) => [s.leaderId, s.partitions]).sort(), [[1, 1], [2, 1]]);
    const before = l2.seen.length;
    await until('b asked of leader 2', () => l2.seen.slice(before).some((s) => partitionsOf(s).includes('aaaa-1')));
    fetchers.unfollow(a);
    assert.deepEqual(fetchers.stats().map((s) => [s.leaderId, s.partitions]), [[2, 1]]);
    fetchers.unfollow(a);
    await fetchers.close();
    assert.deepEqual(fetchers.stats(), []);
  });
});
