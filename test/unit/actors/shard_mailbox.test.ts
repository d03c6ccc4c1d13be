// A shard as main sees it through its two rings: produce answers wait for their commit and fail
// with it, ListOffsets answers one message per request, a fetch parked on two partitions is
// answered once, a full outbound ring stops the shard taking new work (its outbox stays
// within its bound) without losing or reordering a result, and so does a disk that holds its
// commits once the shard holds its bound of uncommitted produce bytes, on a ring lane (what follows
// the held produce waits with it) and on a same-thread lane (its port reports blocked).
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { Shard } from '../../../src/actors/shard.js';
import { SpscRing } from '../../../src/actors/ring_buffer.js';
import { RingDoorbell } from '../../../src/actors/ring_doorbell.js';
import {
  MsgType,
  OffsetLookupBy,
  PRODUCE_RESULT_BYTES,
  fetchBytes,
  listOffsetsBytes,
  readFetchResult,
  readListOffsetsResult,
  readProduceResult,
  writeFetch,
  writeListOffsets,
  produceMessageBytes,
  writeProduce,
  type FetchAsk,
  type FetchPartitionResult,
  type ListOffsetsAsk,
  type ListOffsetsPartitionResult,
  type ProduceAsk,
  type ProduceResult,
} from '../../../src/actors/ring_messages.js';
import { LocalShardPort } from '../../../src/actors/local_shard_port.js';
import { coordinatorDeps } from '../../../src/coordinator/groups/coordinator_deps.js';
import { DEFAULT_GROUP_CONFIG } from '../../../src/coordinator/groups/group_api.js';
import { MAX_CLOSES_IN_FLIGHT } from '../../../src/log/clean_close.js';
import type { IoBackend } from '../../../src/log/io_backend.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { RecordingIo, batchOf, logConfig, removeDir, tempDir, testIoBackend, waitFor } from '../log/log_fixture.js';
import { SOLE_BROKER, TEST_BROKER_ID, soleLeader, testShardReplication } from '../../helpers/replica_roles.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));
// A failed test leaves its harness open: stop it, or its timers keep the process alive.
const live = new Set<Harness>();
afterEach(async () => {
  for (const h of live) {
    live.delete(h);
    clearInterval(h.keepAlive);
    await h.shard.shutdown(MAX_CLOSES_IN_FLIGHT);
  }
});

type Answer =
  | { kind: 'produce'; r: ProduceResult }
  | { kind: 'fetch'; reqId: number; parts: FetchPartitionResult[] }
  | { kind: 'listOffsets'; reqId: number; parts: ListOffsetsPartitionResult[] };

/** Plays main's side of both rings of one shard. */
type ConsumerFetch = Omit<FetchAsk, 'replicaId' | 'replicaEpoch' | 'partitions'> & {
  partitions: Omit<FetchAsk['partitions'][number], 'currentLeaderEpoch' | 'logStartOffset'>[];
};

class Harness {
  readonly inbound = new SpscRing(SpscRing.allocate(1 << 20), RingDoorbell.loopback());
  readonly outbound: SpscRing;
  readonly shard: Shard;
  readonly answers: Answer[] = [];
  readonly errors: unknown[] = [];
  private readonly running: Promise<void>;
  // Doorbell waits do not hold the loop (in the broker the worker's control port does).
  readonly keepAlive = setInterval(() => undefined, 1000);

  constructor(io: IoBackend, opts: { outboundBytes?: number; maxOutboxBytes?: number; maxUncommittedBytes?: number } = {}) {
    this.outbound = new SpscRing(SpscRing.allocate(opts.outboundBytes ?? 1 << 20), RingDoorbell.loopback());
    this.shard = new Shard(0, this.inbound, this.outbound, io, { kind: 'always' }, (_m, err) => this.errors.push(err), {
      offsetsTopic: '__consumer_offsets',
      deps: () => coordinatorDeps(DEFAULT_GROUP_CONFIG),
      rebalanced: () => undefined,
      badRecord: () => undefined,
    }, testShardReplication(), opts.maxOutboxBytes, opts.maxUncommittedBytes);
    this.running = this.shard.run();
    live.add(this);
  }

  open(handle: number): void {
    const dir = tempDir();
    dirs.push(dir);
    this.shard.openPartition(handle, 't', handle, dir, logConfig());
    this.shard.setBrokers(TEST_BROKER_ID, SOLE_BROKER);
    this.shard.setRoles([{ handle, role: soleLeader() }]);
  }

  produce(reqId: number, handle: number, records: Buffer, leaderEpoch = 0): void {
    const at = this.inbound.reserve(produceMessageBytes(records.length));
    assert.ok(at >= 0);
    this.inbound.publish(writeProduce(this.inbound.bytes, at, { reqId, slot: 0, handle, acks: 1, timeoutMs: 30_000, leaderEpoch }, records));
  }

  /** A consumer's fetch (no replica fields). */
  fetch(consumer: ConsumerFetch): void {
    const ask: FetchAsk = {
      ...consumer, replicaId: -1, replicaEpoch: -1,
      partitions: consumer.partitions.map((p) => ({ ...p, currentLeaderEpoch: -1, logStartOffset: -1 })),
    };
    const at = this.inbound.reserve(fetchBytes(ask.partitions.length));
    writeFetch(this.inbound.bytes, at, ask);
    this.inbound.publish();
  }

  listOffsets(ask: ListOffsetsAsk): void {
    const at = this.inbound.reserve(listOffsetsBytes(ask.partitions.length));
    writeListOffsets(this.inbound.bytes, at, ask);
    this.inbound.publish();
  }

  /** Reads every answer the outbound ring holds now. */
  collect(): Answer[] {
    const ring = this.outbound;
    for (let off = ring.peek(); off >= 0; off = ring.peek()) {
      const b = ring.bytes;
      if (b[off] === MsgType.PRODUCE_RESULT) this.answers.push({ kind: 'produce', r: readProduceResult(b, off) });
      else if (b[off] === MsgType.FETCH_RESULT) this.answers.push({ kind: 'fetch', ...readFetchResult(b, off) });
      else if (b[off] === MsgType.LIST_OFFSETS_RESULT) this.answers.push({ kind: 'listOffsets', ...readListOffsetsResult(b, off) });
      ring.release();
    }
    return this.answers;
  }

  async until(n: number, what: string): Promise<Answer[]> {
    await waitFor(() => this.collect().length >= n, what);
    return this.answers;
  }

  async close(): Promise<void> {
    live.delete(this);
    await this.shard.shutdown(MAX_CLOSES_IN_FLIGHT);
    // An empty message wakes run() so it sees it was stopped.
    assert.ok(this.inbound.reserve(0) >= 0);
    this.inbound.publish();
    await this.running;
    clearInterval(this.keepAlive);
    assert.deepEqual(this.errors, []);
  }
}

const produced = (a: Answer): ProduceResult => {
  assert.equal(a.kind, 'produce');
  return (a as Extract<Answer, { kind: 'produce' }>).r;
};

describe('Shard as a mailbox', () => {
  it('acknowledges a produce only once its commit landed, and fails it with its commit', async () => {
    const io = new RecordingIo();
    const h = new Harness(io);
    h.open(1);
    io.hold();
    h.produce(1, 1, batchOf(3, 10));
    await waitFor(() => io.calls.length === 1, 'the commit was submitted');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(h.collect(), [], 'no answer before the commit lands');
    io.release();
    const [first] = await h.until(1, 'first produce answered');
    assert.deepEqual({ ...produced(first!) }, { reqId: 1, slot: 0, errorCode: 0, baseOffset: 0, logAppendTime: -1, logStartOffset: 0 });
    io.failNext(false);
    h.produce(2, 1, batchOf(2, 10));
    h.produce(3, 9, batchOf(2, 10));
    const answers = await h.until(3, 'failed and unknown produces answered');
    const byReq = new Map(answers.slice(1).map((a) => [produced(a).reqId, produced(a)]));
    assert.equal(byReq.get(2)!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal(byReq.get(2)!.baseOffset, -1);
    assert.equal(byReq.get(3)!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    h.produce(4, 1, batchOf(1, 10));
    const [, , , last] = await h.until(4, 'produce after the failure answered');
    assert.equal(produced(last!).baseOffset, 3, 'the failed batch was rolled back');
    assert.equal(h.errors.length, 1, 'the failed commit was reported');
    h.errors.length = 0;
    await h.close();
  });

  it('answers ListOffsets for all partitions of a request in one message', async () => {
    const h = new Harness(testIoBackend());
    h.open(1);
    h.open(2);
    h.produce(1, 1, batchOf(5, 10));
    await h.until(1, 'produce answered');
    h.listOffsets({ reqId: 7, by: OffsetLookupBy.TIMESTAMP, partitions: [
      { slot: 0, handle: 1, key: -1 },
      { slot: 1, handle: 1, key: -2 },
      { slot: 2, handle: 2, key: -1 },
      { slot: 3, handle: 5, key: -1 },
    ] });
    const answers = await h.until(2, 'list offsets answered');
    assert.equal(answers.length, 2);
    const listed = answers[1]!;
    assert.equal(listed.kind, 'listOffsets');
    assert.deepEqual((listed as Extract<Answer, { kind: 'listOffsets' }>).parts.map((p) => [p.slot, p.errorCode, p.offset]), [
      [0, 0, 5],
      [1, 0, 0],
      [2, 0, 0],
      [3, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1],
    ]);
    await h.close();
  });

  it('stamps batches with the leader epoch of its leadership and answers epoch ends and divergence from it', async () => {
    const h = new Harness(testIoBackend());
    h.open(1);
    h.produce(1, 1, batchOf(3, 10), 0); // offsets 0-2 in epoch 0
    await h.until(1, 'first produce answered');
    // Main saw this broker lead at epoch 2 before the shard was told: the produce waits for the role.
    h.produce(2, 1, batchOf(2, 10), 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(h.collect().length, 1, 'held until the role arrives');
    h.shard.setRoles([{ handle: 1, role: soleLeader(2) }]); // offsets 3-4 in epoch 2
    await h.until(2, 'the held produce answered');
    // A leadership the role never confirms: held for a bounded time, then refused.
    h.produce(3, 1, batchOf(1, 10), 3);
    const produces = (await h.until(3, 'produces answered')).map(produced).sort((a, b) => a.reqId - b.reqId);
    assert.deepEqual(produces.map((r) => [r.reqId, r.errorCode, r.baseOffset]), [[1, 0, 0], [2, 0, 3], [3, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1]]);
    h.listOffsets({ reqId: 8, by: OffsetLookupBy.EPOCH_END, partitions: [
      { slot: 0, handle: 1, key: 0 },
      { slot: 1, handle: 1, key: 1 },
      { slot: 2, handle: 1, key: 2 },
      { slot: 3, handle: 1, key: 3 },
      { slot: 4, handle: 6, key: 0 },
    ] });
    const listed = (await h.until(4, 'epoch ends answered'))[3] as Extract<Answer, { kind: 'listOffsets' }>;
    assert.deepEqual(listed.parts.map((p) => [p.errorCode, p.leaderEpoch, p.offset]), [
      [0, 0, 3], // epoch 0 ends where epoch 2 starts
      [0, 0, 3], // epoch 1 never led: the closest lower one answers
      [0, 2, 5], // the latest epoch ends at the log end
      [0, -1, -1], // an epoch newer than the log knows
      [ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1],
    ]);
    // min_bytes far above the data: only an answer that does not wait for it comes back at once.
    const fetchOne = async (reqId: number, fetchOffset: number, lastFetchedEpoch: number, minBytes = 1 << 20) => {
      h.fetch({ reqId, flags: 0, maxWaitMs: 10_000, minBytes, maxBytes: 1 << 20, partitions: [{ slot: 0, handle: 1, fetchOffset, partitionMaxBytes: 1 << 20, lastFetchedEpoch }] });
      const answers = await h.until(h.answers.length + 1, `fetch ${reqId} answered`);
      const fetched = answers[answers.length - 1] as Extract<Answer, { kind: 'fetch' }>;
      assert.equal(fetched.reqId, reqId);
      const [part] = fetched.parts;
      return { errorCode: part!.errorCode, ranges: part!.ranges.length, diverging: part!.diverging };
    };
    // A fetcher that kept epoch 0 up to offset 4 diverged at 3: it truncates to epoch 0's end here.
    assert.deepEqual(await fetchOne(20, 4, 0), { errorCode: 0, ranges: 0, diverging: { epoch: 0, endOffset: 3 } });
    // One that claims epoch 1 (never led here) at offset 4 diverges at epoch 0's end too.
    assert.deepEqual(await fetchOne(21, 4, 1), { errorCode: 0, ranges: 0, diverging: { epoch: 0, endOffset: 3 } });
    // An epoch newer than the log knows cannot be placed.
    assert.deepEqual(await fetchOne(22, 5, 3), { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, ranges: 0, diverging: null });
    // Histories that agree are read: epoch 0 up to 3, epoch 2 up to 4.
    assert.deepEqual(await fetchOne(23, 3, 0, 1), { errorCode: 0, ranges: 1, diverging: null });
    assert.deepEqual(await fetchOne(24, 4, 2, 1), { errorCode: 0, ranges: 1, diverging: null });
    await h.close();
  });

  it('answers a fetch parked on two partitions once, when their data reaches min_bytes', async () => {
    const h = new Harness(testIoBackend());
    h.open(1);
    h.open(2);
    const batch = batchOf(1, 100);
    h.fetch({ reqId: 9, flags: 0, maxWaitMs: 10_000, minBytes: batch.length * 2, maxBytes: 1 << 20, partitions: [
      { slot: 0, handle: 1, fetchOffset: 0, partitionMaxBytes: 1 << 20, lastFetchedEpoch: -1 },
      { slot: 1, handle: 2, fetchOffset: 0, partitionMaxBytes: 1 << 20, lastFetchedEpoch: -1 },
    ] });
    h.produce(1, 1, batchOf(1, 100));
    await h.until(1, 'first produce answered');
    assert.equal(h.shard.introspect().parkedFetches, 1, 'one partition alone is not enough');
    h.produce(2, 2, batchOf(1, 100));
    h.produce(3, 1, batchOf(1, 100));
    await h.until(4, 'fetch answered');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fetches = h.collect().filter((a) => a.kind === 'fetch');
    assert.equal(fetches.length, 1, 'answered exactly once');
    assert.equal(h.shard.introspect().parkedFetches, 0);
    await h.close();
  });

  it('answers a parked fetch at its max_wait deadline', async () => {
    const h = new Harness(testIoBackend());
    h.open(1);
    const started = performance.now();
    h.fetch({ reqId: 4, flags: 0, maxWaitMs: 60, minBytes: 1, maxBytes: 1 << 20, partitions: [{ slot: 0, handle: 1, fetchOffset: 0, partitionMaxBytes: 1 << 20, lastFetchedEpoch: -1 }] });
    await h.until(1, 'fetch answered at its deadline');
    assert.ok(performance.now() - started >= 60, 'not before max_wait');
    await h.close();
  });

  it('stops draining while its outbox is over its bound, and loses no result', async () => {
    const MAX_OUTBOX = 10 * PRODUCE_RESULT_BYTES;
    const h = new Harness(testIoBackend(), { outboundBytes: 64 * 1024, maxOutboxBytes: MAX_OUTBOX });
    const MESSAGES = 5000; // answers far beyond what the outbound ring holds
    const records = batchOf(1, 10);
    // Nobody reads the outbound ring yet: unknown partitions are answered at once.
    for (let i = 0; i < MESSAGES; i++) h.produce(i, 77, records);
    await waitFor(() => h.shard.introspect().outboxDepth > 0, 'the outbound ring filled');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stalled = h.shard.introspect();
    assert.ok(stalled.handled < MESSAGES, `the shard kept draining: ${stalled.handled} handled`);
    assert.ok(stalled.outboxDepth * PRODUCE_RESULT_BYTES <= MAX_OUTBOX + PRODUCE_RESULT_BYTES, `outbox holds ${stalled.outboxDepth} results`);
    const answers = await h.until(MESSAGES, 'every produce answered');
    assert.deepEqual(answers.map((a) => produced(a).reqId), Array.from({ length: MESSAGES }, (_, i) => i), 'each answered once, in order');
    await h.close();
  });

  it('takes no more produces from a ring lane while its uncommitted bytes reach their bound, and loses or reorders nothing', async () => {
    const io = new RecordingIo();
    const batch = batchOf(1, 32 * 1024);
    const BOUND = 4 * batch.length; // the fourth batch reaches it
    const PRODUCES = 20;
    const h = new Harness(io, { maxUncommittedBytes: BOUND });
    h.open(1);
    io.hold(); // a disk that does not finish its commits
    for (let i = 0; i < PRODUCES; i++) h.produce(i, 1, batch);
    // Not a produce, but behind the one that waits: it waits too, so the lane keeps its order.
    h.listOffsets({ reqId: 100, by: OffsetLookupBy.TIMESTAMP, partitions: [{ slot: 0, handle: 1, key: -1 }] });
    await waitFor(() => h.shard.introspect().uncommittedProduceWaits === 1, 'produces began to wait');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const held = h.shard.introspect();
    assert.equal(held.handled, 4, 'produces taken up to the bound');
    assert.equal(held.uncommittedProduceBytes, BOUND);
    assert.equal(h.shard.producesWait, true);
    assert.deepEqual(h.collect(), [], 'nothing answered while the disk holds the commits');
    io.release();
    const answers = await h.until(PRODUCES + 1, 'every request answered');
    const produces = answers.filter((a) => a.kind === 'produce');
    assert.deepEqual(produces.map((a) => [produced(a).reqId, produced(a).errorCode, produced(a).baseOffset]),
      Array.from({ length: PRODUCES }, (_, i) => [i, ErrorCode.NONE, i]), 'each produce appended once, in order');
    assert.equal(answers.filter((a) => a.kind === 'listOffsets').length, 1, 'the ListOffsets behind them answered once');
    const after = h.shard.introspect();
    assert.equal(after.uncommittedProduceBytes, 0, 'every batch was let go once its commit settled');
    assert.ok(after.uncommittedProduceWaits >= 1);
    await h.close();
  });

  it('reports a same-thread lane\'s port blocked while its uncommitted bytes reach their bound, until commits settle', async () => {
    const io = new RecordingIo();
    const batch = batchOf(1, 32 * 1024);
    const h = new Harness(io, { maxUncommittedBytes: 2 * batch.length });
    h.open(1);
    const results: ProduceResult[] = [];
    const port = new LocalShardPort(h.shard, 0, {
      onProduceResult: (_shard, r) => results.push(r),
      onFetchResult: () => undefined,
      onFetchProgress: () => undefined,
      onGroupResult: () => undefined,
      onListOffsetsResult: () => undefined,
    });
    io.hold();
    let lent = 0;
    const keeper = { hold: () => (lent++, () => void lent--) };
    const ask = (reqId: number): ProduceAsk => ({ reqId, slot: 0, handle: 1, acks: 1, timeoutMs: 30_000, leaderEpoch: 0 });
    port.produce(ask(1), batch, keeper);
    assert.equal(port.blocked, false, 'under the bound');
    port.produce(ask(2), batch, keeper);
    assert.equal(port.blocked, true, 'at the bound');
    let unblocked = false;
    const resumed = port.whenUnblocked().then(() => (unblocked = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(unblocked, false, 'still blocked while the disk holds the commits');
    assert.equal(lent, 2, 'the lent frames are held until their commit settles');
    io.release();
    await resumed;
    await waitFor(() => results.length === 2, 'both produces answered');
    assert.equal(port.blocked, false);
    assert.equal(lent, 0, 'the lent frames were let go');
    assert.deepEqual(results.map((r) => [r.reqId, r.errorCode, r.baseOffset]), [[1, 0, 0], [2, 0, 1]]);
    await h.close();
  });
});
