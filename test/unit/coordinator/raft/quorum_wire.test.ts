// The Raft core's messages over KRaft's wire: every Message survives requestOf/responseOf, the
// Kafka codec's bytes at the quorum's versions, and messageOfRequest/messageOfResponse unchanged;
// the mapping refuses another cluster's requests, requests for another voter or partition, and
// responses that refuse the request as a whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import {
  QuorumApiKey, QuorumApiVersion, QuorumWireError, endQuorumEpochAnswer, errorResponseOf, messageOfRequest, messageOfResponse, requestOf, responseOf,
  type QuorumRequest, type QuorumResponse, type RequestMessage, type ResponseMessage,
} from '../../../../src/coordinator/raft/quorum_wire.js';
import { apiByKey } from '../../../../src/protocol/apis/index.js';
import { BeginQuorumEpochApi } from '../../../../src/protocol/apis/begin_quorum_epoch.js';
import { EndQuorumEpochApi } from '../../../../src/protocol/apis/end_quorum_epoch.js';
import { FetchApi } from '../../../../src/protocol/apis/fetch.js';
import { FetchSnapshotApi } from '../../../../src/protocol/apis/fetch_snapshot.js';
import { VoteApi } from '../../../../src/protocol/apis/vote.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { Reader } from '../../../../src/protocol/reader.js';
import { Writer } from '../../../../src/protocol/writer.js';
import { entries, epoch, nodeId, offset, offsetAndEpoch, votersRecord } from './raft_arbitrary.js';

const CLUSTER = 'sluice-test-cluster';
const int16 = fc.integer({ min: -32768, max: 32767 });
const maxBytes = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const leaderId = fc.integer({ min: -1, max: 2 ** 31 - 1 });
const envelope = { from: nodeId, to: nodeId, epoch };
/** Decoded messages are plain objects; fast-check's records must be too for deepStrictEqual. */
const plain = { noNullPrototype: true } as const;

const requestMessage: Arbitrary<RequestMessage> = fc.oneof(
  fc.record({ type: fc.constant('vote' as const), ...envelope, preVote: fc.boolean(), lastEpoch: epoch, lastOffset: offset }, plain),
  fc.record({ type: fc.constant('beginQuorumEpoch' as const), ...envelope }, plain),
  fc.record({ type: fc.constant('endQuorumEpoch' as const), ...envelope, preferredSuccessors: fc.array(nodeId, { maxLength: 5 }) }, plain),
  fc.record({ type: fc.constant('fetch' as const), ...envelope, fetchOffset: offset, lastFetchedEpoch: epoch, maxBytes, observer: fc.boolean() }, plain),
  fc.record({ type: fc.constant('fetchSnapshot' as const), ...envelope, snapshotId: offsetAndEpoch, position: offset, maxBytes }, plain),
);

const responseMessage: Arbitrary<ResponseMessage> = fc.oneof(
  fc.record({ type: fc.constant('voteResponse' as const), ...envelope, preVote: fc.boolean(), granted: fc.boolean(), leaderId }, plain),
  fc.record({ type: fc.constant('beginQuorumEpochResponse' as const), ...envelope }, plain),
  fc.record({
    type: fc.constant('fetchResponse' as const), ...envelope, errorCode: int16, leaderId, fetchOffset: offset, lastFetchedEpoch: epoch,
    entries, highWatermark: offset, divergingEpoch: fc.option(offsetAndEpoch), snapshotId: fc.option(offsetAndEpoch),
  }, plain),
  fc.record({
    type: fc.constant('fetchSnapshotResponse' as const), ...envelope, errorCode: int16, leaderId,
    snapshot: fc.option(fc.record({ id: offsetAndEpoch, votersRecord, size: offset }, plain)),
    position: offset, bytes: fc.uint8Array({ maxLength: 64 }),
  }, plain),
);

function bytesOf(write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  write(w);
  return Buffer.concat(w.finish());
}

/** Through the Kafka codec: the request as the receiver decodes it. */
function overTheWire(req: QuorumRequest): QuorumRequest {
  const api = apiByKey.get(req.apiKey)!;
  const bytes = bytesOf((w) => api.encodeRequest(req.version, req.body, w));
  return { apiKey: req.apiKey, version: req.version, body: api.decodeRequest(req.version, new Reader(bytes)) } as QuorumRequest;
}

function responseOverTheWire(res: QuorumResponse, version: number): QuorumResponse {
  const api = apiByKey.get(res.apiKey)!;
  const bytes = bytesOf((w) => api.encodeResponse(version, res.body, w));
  return { apiKey: res.apiKey, body: api.decodeResponse(version, new Reader(bytes)) } as QuorumResponse;
}

/** The request a response Message answers, as its sender kept it. */
function requestAnswered(m: ResponseMessage): RequestMessage {
  const back = { from: m.to, to: m.from, epoch: m.epoch };
  switch (m.type) {
    case 'voteResponse': return { type: 'vote', ...back, preVote: m.preVote, lastEpoch: 0, lastOffset: 0 };
    case 'beginQuorumEpochResponse': return { type: 'beginQuorumEpoch', ...back };
    case 'fetchResponse': return { type: 'fetch', ...back, fetchOffset: m.fetchOffset, lastFetchedEpoch: m.lastFetchedEpoch, maxBytes: 1024, observer: false };
    case 'fetchSnapshotResponse': return { type: 'fetchSnapshot', ...back, snapshotId: { endOffset: 0, epoch: 0 }, position: m.position, maxBytes: 1024 };
  }
}

function receiverFor(m: RequestMessage) {
  return { self: m.to, clusterId: CLUSTER, isVoter: () => !(m.type === 'fetch' && m.observer) };
}

function refusedWith(code: number) {
  return (err: unknown) => err instanceof QuorumWireError && err.code === code;
}

describe('quorum wire', () => {
  it('decode(encode(request)) gives the request Message back, through the bytes', () => {
    fc.assert(fc.property(requestMessage, (m) => {
      const req = overTheWire(requestOf(m, CLUSTER));
      assert.deepStrictEqual(messageOfRequest(req, receiverFor(m)), m);
    }), { numRuns: 1000 });
  });

  it('decode(encode(response)) gives the response Message back, through the bytes', () => {
    fc.assert(fc.property(responseMessage, (m) => {
      const request = requestAnswered(m);
      const { version } = requestOf(request, CLUSTER);
      assert.deepStrictEqual(messageOfResponse(request, responseOverTheWire(responseOf(m), version)), m);
    }), { numRuns: 1000 });
  });

  it('reads the fetcher id from the top level before Fetch v15 and refuses a consumer (-1)', () => {
    const m: RequestMessage = { type: 'fetch', from: 3, to: 1, epoch: 4, fetchOffset: 10, lastFetchedEpoch: 2, maxBytes: 4096, observer: false };
    const req = requestOf(m, CLUSTER);
    if (req.apiKey !== QuorumApiKey.fetch) throw new Error('unexpected api');
    const v14 = overTheWire({ apiKey: req.apiKey, version: 14, body: { ...req.body, replicaId: 3 } });
    assert.deepStrictEqual(messageOfRequest(v14, receiverFor(m)), m);
    const consumer = overTheWire({ apiKey: req.apiKey, version: 14, body: { ...req.body, replicaId: -1 } });
    assert.throws(() => messageOfRequest(consumer, receiverFor(m)), refusedWith(ErrorCode.INVALID_REQUEST));
  });

  it('uses the api keys and the versions the quorum speaks', () => {
    assert.deepStrictEqual(
      [QuorumApiKey.fetch, QuorumApiKey.vote, QuorumApiKey.beginQuorumEpoch, QuorumApiKey.endQuorumEpoch, QuorumApiKey.fetchSnapshot],
      [FetchApi.key, VoteApi.key, BeginQuorumEpochApi.key, EndQuorumEpochApi.key, FetchSnapshotApi.key],
    );
    assert.deepStrictEqual(QuorumApiVersion, { vote: 2, beginQuorumEpoch: 1, endQuorumEpoch: 1, fetch: 17, fetchSnapshot: 1 });
  });

  it('fetches partition 0 of the metadata topic by its fixed id, naming the fetcher in ReplicaState', () => {
    const req = requestOf({ type: 'fetch', from: 3, to: 1, epoch: 4, fetchOffset: 10, lastFetchedEpoch: 2, maxBytes: 4096, observer: true }, CLUSTER);
    assert.equal(req.apiKey, 1);
    const body = req.body as { clusterId: string; replicaState: { replicaId: number }; topics: { topicId: string; partitions: { partition: number; currentLeaderEpoch: number }[] }[] };
    assert.equal(body.clusterId, CLUSTER);
    assert.equal(body.replicaState.replicaId, 3);
    assert.equal(body.topics[0]!.topicId, '00000000000000000000000000000001');
    assert.deepStrictEqual(body.topics[0]!.partitions.map((p) => [p.partition, p.currentLeaderEpoch]), [[0, 4]]);
  });

  it('refuses a request of another cluster with INCONSISTENT_CLUSTER_ID and accepts one without a cluster id', () => {
    const m: RequestMessage = { type: 'vote', from: 2, to: 1, epoch: 5, preVote: true, lastEpoch: 4, lastOffset: 9 };
    const foreign = overTheWire(requestOf(m, 'other-cluster'));
    assert.throws(() => messageOfRequest(foreign, receiverFor(m)), refusedWith(ErrorCode.INCONSISTENT_CLUSTER_ID));
    const anonymous = requestOf(m, CLUSTER);
    assert.deepStrictEqual(messageOfRequest({ ...anonymous, body: { ...anonymous.body, clusterId: null } } as QuorumRequest, receiverFor(m)), m);
  });

  it('refuses a request for another voter, topic or partition with INVALID_REQUEST', () => {
    const m: RequestMessage = { type: 'beginQuorumEpoch', from: 2, to: 1, epoch: 5 };
    const req = requestOf(m, CLUSTER);
    if (req.apiKey !== QuorumApiKey.beginQuorumEpoch) throw new Error('unexpected api');
    assert.throws(() => messageOfRequest(req, { ...receiverFor(m), self: 3 }), refusedWith(ErrorCode.INVALID_REQUEST));
    const topic = req.body.topics[0]!;
    const otherTopic = { ...req, body: { ...req.body, topics: [{ ...topic, topicName: 'orders' }] } };
    assert.throws(() => messageOfRequest(otherTopic, receiverFor(m)), refusedWith(ErrorCode.INVALID_REQUEST));
    const otherPartition = { ...req, body: { ...req.body, topics: [{ ...topic, partitions: [{ ...topic.partitions[0]!, partitionIndex: 1 }] }] } };
    assert.throws(() => messageOfRequest(otherPartition, receiverFor(m)), refusedWith(ErrorCode.INVALID_REQUEST));
    const negativeEpoch = { ...req, body: { ...req.body, topics: [{ ...topic, partitions: [{ ...topic.partitions[0]!, leaderEpoch: -1 }] }] } };
    assert.throws(() => messageOfRequest(negativeEpoch, receiverFor(m)), refusedWith(ErrorCode.INVALID_REQUEST));
  });

  it('turns a whole-request refusal into a QuorumWireError carrying its code, for every quorum api', () => {
    fc.assert(fc.property(requestMessage, fc.constantFrom(ErrorCode.INCONSISTENT_CLUSTER_ID, ErrorCode.INVALID_REQUEST), (m, code) => {
      const req = requestOf(m, CLUSTER);
      const refusal = responseOverTheWire(errorResponseOf(req.apiKey, code), req.version);
      assert.throws(() => messageOfResponse(m, refusal), refusedWith(code));
    }));
  });

  it('ignores the answer to EndQuorumEpoch and refuses a response of the wrong api', () => {
    const end: RequestMessage = { type: 'endQuorumEpoch', from: 1, to: 2, epoch: 3, preferredSuccessors: [2] };
    const ok = responseOf({ type: 'beginQuorumEpochResponse', from: 2, to: 1, epoch: 3 });
    if (end.type !== 'endQuorumEpoch') throw new Error('unexpected message');
    assert.equal(messageOfResponse(end, responseOverTheWire(endQuorumEpochAnswer(end), QuorumApiVersion.endQuorumEpoch)), null);
    assert.throws(() => messageOfResponse(end, ok), refusedWith(ErrorCode.INVALID_REQUEST));
  });
});
