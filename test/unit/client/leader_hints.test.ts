// KIP-951 leader hints in our client. Properties of the pure cache rules (leader_hints.ts): a
// cached leader epoch never goes back, hints applied in any order converge on the highest epoch,
// hints naming no leader ask for a refresh, cached topics are never mutated, and a lagging
// Metadata answer does not undo a newer epoch. Then a producer and a fetcher against two fake
// brokers whose Metadata keeps naming broker 0 (a lagging view): broker 0 refuses with
// NOT_LEADER_OR_FOLLOWER naming broker 1, and the hint alone takes the batch (same producer id,
// epoch and sequence) and the fetch there, with no second Metadata request; fetches carry the
// cached leader epoch and the last fetched epoch, and a divergingEpoch moves the position back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { judgeHint, newerPartition, withHintedLeader } from '../../../src/client/leader_hints.js';
import type { LeaderHint, TopicMetadata } from '../../../src/client/leader_hints.js';
import { Cluster } from '../../../src/client/cluster.js';
import { Fetcher } from '../../../src/client/consumer/fetcher.js';
import { Producer } from '../../../src/client/producer/index.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import type { FetchRequestPartition } from '../../../src/protocol/apis/fetch.js';
import { InitProducerIdApi } from '../../../src/protocol/apis/init_producer_id.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import type { ProduceResponse } from '../../../src/protocol/apis/produce.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { BatchField } from '../../../src/protocol/record_batch.js';
import { encodeRecordBatch } from '../../../src/protocol/records.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';
import { fetchAnswer, respond, twoBrokers } from './fake_broker.js';
import type { FakeHandler } from './fake_broker.js';

const PARTITIONS = 3;

function topic(epochs: readonly number[]): TopicMetadata {
  return { name: 't', topicId: ZERO_UUID, partitions: epochs.map((e, partition) => ({ partition, leader: e % 3, leaderEpoch: e })), fetchedAt: 0 };
}

/** Real epochs name one leader each: the generated hints keep that (leader = epoch mod 3). */
const hintArb = fc.record({
  partition: fc.integer({ min: 0, max: PARTITIONS - 1 }),
  leaderEpoch: fc.integer({ min: 0, max: 20 }),
  noLeader: fc.boolean(),
}).map(({ partition, leaderEpoch, noLeader }): LeaderHint => ({
  topic: 't', partition, leaderId: noLeader ? -1 : leaderEpoch % 3, leaderEpoch, endpoint: null,
}));

function applyAll(start: TopicMetadata, hints: readonly LeaderHint[], seen: (before: TopicMetadata, after: TopicMetadata) => void = () => undefined): TopicMetadata {
  let t = start;
  for (const h of hints) {
    const next = judgeHint(t, h) === 'apply' ? withHintedLeader(t, h) : t;
    seen(t, next);
    t = next;
  }
  return t;
}

describe('leader hints: cache rules (property)', () => {
  it('a cached epoch never goes back, and any order of the same hints ends on the highest epoch per partition', () => {
    fc.assert(fc.property(
      fc.array(fc.integer({ min: 0, max: 10 }), { minLength: PARTITIONS, maxLength: PARTITIONS }),
      fc.array(hintArb, { maxLength: 30 }).chain((hints) => fc.tuple(fc.constant(hints), fc.shuffledSubarray(hints, { minLength: hints.length, maxLength: hints.length }))),
      (epochs, [hints, shuffled]) => {
        const start = topic(epochs);
        const frozen = JSON.stringify(start);
        const a = applyAll(start, hints, (before, after) => {
          for (let p = 0; p < PARTITIONS; p++) assert.ok(after.partitions[p]!.leaderEpoch >= before.partitions[p]!.leaderEpoch);
        });
        const b = applyAll(start, shuffled);
        assert.deepEqual(a, b);
        assert.equal(JSON.stringify(start), frozen, 'the cached topic object is never mutated');
        for (let p = 0; p < PARTITIONS; p++) {
          const best = Math.max(epochs[p]!, ...hints.filter((h) => h.partition === p && h.leaderId >= 0).map((h) => h.leaderEpoch));
          assert.deepEqual(a.partitions[p], { partition: p, leader: best % 3, leaderEpoch: best });
        }
      },
    ));
  });

  it('a hint naming no leader, or for an uncached partition, asks for a refresh; an equal or older epoch is known', () => {
    const t = topic([5]);
    assert.equal(judgeHint(t, { topic: 't', partition: 0, leaderId: -1, leaderEpoch: -1, endpoint: null }), 'refresh');
    assert.equal(judgeHint(t, { topic: 't', partition: 1, leaderId: 2, leaderEpoch: 9, endpoint: null }), 'refresh');
    assert.equal(judgeHint(undefined, { topic: 't', partition: 0, leaderId: 2, leaderEpoch: 9, endpoint: null }), 'refresh');
    assert.equal(judgeHint(t, { topic: 't', partition: 0, leaderId: 2, leaderEpoch: 5, endpoint: null }), 'known');
    assert.equal(judgeHint(t, { topic: 't', partition: 0, leaderId: 1, leaderEpoch: 4, endpoint: null }), 'known');
    assert.equal(judgeHint(t, { topic: 't', partition: 0, leaderId: 0, leaderEpoch: 6, endpoint: null }), 'apply');
  });

  it('a Metadata answer older than the cached epoch of the same topic keeps the cached partition', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 50 }), fc.boolean(), (cachedEpoch, freshEpoch, sameTopic) => {
      const cached = topic([cachedEpoch]);
      const fresh = { partition: 0, leader: 7, leaderEpoch: freshEpoch };
      const kept = newerPartition(cached, sameTopic ? ZERO_UUID : 'another-topic-id', fresh);
      if (!sameTopic || freshEpoch >= cachedEpoch) assert.equal(kept, fresh);
      else assert.equal(kept, cached.partitions[0]);
    }));
  });
});

function produceAnswer(h: Parameters<FakeHandler>[0], res: Omit<ProduceResponse, 'throttleTimeMs'>): Buffer {
  return respond(ProduceApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, ...res });
}

describe('leader hints: producer', () => {
  it('sends a refused batch straight to the hinted leader, unchanged, without asking for metadata again', async () => {
    const seenBy: { node: number; producerId: bigint; epoch: number; sequence: number }[] = [];
    const produceOn = (node: number): FakeHandler => (h, r) => {
      const req = ProduceApi.decodeRequest(h.apiVersion, r);
      const records = req.topicData[0]!.partitionData[0]!.records!;
      seenBy.push({ node, producerId: records.readBigInt64BE(BatchField.producerId), epoch: records.readInt16BE(BatchField.producerEpoch), sequence: records.readInt32BE(BatchField.baseSequence) });
      const refused = node === 0;
      return produceAnswer(h, {
        responses: [{ name: 't', partitionResponses: [{
          index: 0, errorCode: refused ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE, baseOffset: refused ? -1 : 40,
          logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null,
          currentLeader: refused ? { leaderId: 1, leaderEpoch: 2 } : { leaderId: -1, leaderEpoch: -1 },
        }] }],
        nodeEndpoints: refused ? [{ nodeId: 1, host: '127.0.0.1', port: cluster.fakes[1].port, rack: null }] : [],
      });
    };
    const initPid: FakeHandler = (h) => respond(InitProducerIdApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, errorCode: 0, producerId: 77, producerEpoch: 3 });
    const cluster = await twoBrokers([
      new Map([[ProduceApi.key, produceOn(0)], [InitProducerIdApi.key, initPid]]),
      new Map([[ProduceApi.key, produceOn(1)], [InitProducerIdApi.key, initPid]]),
    ]);
    // A long backoff: a metadata refresh or a backed-off retry would miss the deadline below.
    const producer = new Producer({ brokers: [`127.0.0.1:${cluster.fakes[0].port}`], retryBackoffMs: 5_000, deliveryTimeoutMs: 30_000, lingerMs: 0 });
    try {
      await producer.connect();
      const before = cluster.metadataRequests();
      const started = Date.now();
      const meta = await producer.send('t', { partition: 0, value: Buffer.from('v') });
      assert.equal(meta.offset, 40);
      assert.ok(Date.now() - started < 2_000, `acknowledged after ${Date.now() - started} ms`);
      assert.equal(cluster.metadataRequests(), before, 'no Metadata request after the refusal');
      assert.deepEqual(seenBy.map((s) => s.node), [0, 1]);
      assert.deepEqual(seenBy[1], { ...seenBy[0], node: 1 }, 'same producer id, epoch and sequence on the new leader');
    } finally {
      await producer.close();
      await cluster.stop();
    }
  });
});

/** Offsets 5..6 written in leader epoch 2. */
function batchAt5(): Buffer {
  const batch = encodeRecordBatch([{ key: null, value: Buffer.from('a'), timestamp: 1 }, { key: null, value: Buffer.from('b'), timestamp: 1 }]);
  batch.writeBigInt64BE(5n, BatchField.baseOffset);
  batch.writeInt32BE(2, BatchField.partitionLeaderEpoch);
  return batch;
}

describe('leader hints: fetcher', () => {
  it('moves a partition to the hinted leader without a Metadata request, sending leader and last fetched epochs, and follows divergingEpoch', async () => {
    const asked: { node: number; p: FetchRequestPartition }[] = [];
    const fetchOn = (node: number): FakeHandler => (h, r) => {
      const p = FetchApi.decodeRequest(h.apiVersion, r).topics[0]!.partitions[0]!;
      asked.push({ node, p });
      if (node === 0) return fetchAnswer(h, { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, currentLeader: { leaderId: 1, leaderEpoch: 2 } });
      // The second fetch from broker 1 learns that epoch 2 ends at 6 there: the log was truncated.
      if (asked.filter((a) => a.node === 1).length === 2) return fetchAnswer(h, { divergingEpoch: { epoch: 2, endOffset: 6 } });
      return fetchAnswer(h, { records: p.fetchOffset === 5 ? batchAt5() : null });
    };
    const cluster = await twoBrokers([new Map([[FetchApi.key, fetchOn(0)]]), new Map([[FetchApi.key, fetchOn(1)]])]);
    const client = new Cluster({ brokers: [`127.0.0.1:${cluster.fakes[0].port}`] });
    // Each poll returns with the one answer it waits for (the fakes answer at once; the bound only
    // matters on a slow machine, where a short one would end a poll before its answer came).
    const fetcher = new Fetcher(client, { maxWaitMs: 5_000, minBytes: 1, requestTimeoutMs: 5_000, autoOffsetReset: 'earliest' }, {});
    try {
      await client.topic('t');
      const before = cluster.metadataRequests();
      fetcher.add({ topic: 't', partition: 0 }, 5);
      assert.deepEqual(await fetcher.fetch(), [], 'refused by broker 0');
      const got = await fetcher.fetch();
      assert.deepEqual(got.flatMap((b) => b.messages.map((m) => m.offset)), [5, 6]);
      assert.deepEqual(await fetcher.fetch(), [], 'divergingEpoch answer');
      assert.deepEqual(fetcher.positions(), [{ topic: 't', partition: 0, offset: 6 }]);
      await fetcher.fetch();
      assert.equal(cluster.metadataRequests(), before, 'no Metadata request after the refusal');
      // The first four Fetches; the next one goes out as the last poll returns.
      assert.deepEqual(asked.slice(0, 4).map(({ node, p }) => [node, p.fetchOffset, p.currentLeaderEpoch, p.lastFetchedEpoch]), [
        [0, 5, 1, -1], [1, 5, 2, -1], [1, 7, 2, 2], [1, 6, 2, 2],
      ]);
    } finally {
      await client.close();
      await cluster.stop();
    }
  });
});
