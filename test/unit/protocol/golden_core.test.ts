// Golden frames for ApiVersions, Metadata, Produce and Fetch, written byte by byte from the Kafka
// protocol spec (independently of the codec): encode must produce exactly these bytes and
// decode must give back exactly the full object (absent fields as their defaults).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiVersionsApi } from '../../../src/protocol/apis/api_versions.js';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../../src/protocol/apis/api_versions.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import type { FetchRequest, FetchResponse, FetchResponsePartition } from '../../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataRequest, MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import type { ProduceRequest, ProduceResponse, ProduceResponsePartition } from '../../../src/protocol/apis/produce.js';
import { readRequestHeader, readResponseHeader, writeRequestHeader, writeResponseHeader } from '../../../src/protocol/header.js';
import { isFlexibleRequest } from '../../../src/protocol/apis/index.js';
import { Reader } from '../../../src/protocol/reader.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';
import type { Api } from '../../../src/protocol/schema.js';
import { Writer } from '../../../src/protocol/writer.js';
import { Bytes } from './golden_helpers.js';

const B = (): Bytes => new Bytes();
const TOPIC_ID = '6c1a2b3c4d5e4f60a1b2c3d4e5f60718';
const NO_OPS = -2147483648;

function checkRequest<Req>(api: Api<Req, unknown>, version: number, value: Req, bytes: Buffer): void {
  const w = new Writer();
  api.encodeRequest(version, value, w);
  assert.deepEqual(Buffer.concat(w.finish()).toString('hex'), bytes.toString('hex'), `encode ${api.name} v${version} request`);
  const r = new Reader(bytes);
  assert.deepStrictEqual(api.decodeRequest(version, r), value, `decode ${api.name} v${version} request`);
  assert.equal(r.remaining(), 0);
}

function checkResponse<Res>(api: Api<unknown, Res>, version: number, value: Res, bytes: Buffer, decoded = value): void {
  const w = new Writer();
  api.encodeResponse(version, value, w);
  assert.deepEqual(Buffer.concat(w.finish()).toString('hex'), bytes.toString('hex'), `encode ${api.name} v${version} response`);
  const r = new Reader(bytes);
  assert.deepStrictEqual(api.decodeResponse(version, r), decoded, `decode ${api.name} v${version} response`);
  assert.equal(r.remaining(), 0);
}

// ---------------------------------------------------------------------------------------------

describe('ApiVersions golden', () => {
  const keys = [{ apiKey: 0, minVersion: 0, maxVersion: 11 }, { apiKey: 18, minVersion: 0, maxVersion: 3 }];
  const plain: ApiVersionsResponse = {
    errorCode: 0, apiKeys: keys, throttleTimeMs: 0, supportedFeatures: [],
    finalizedFeaturesEpoch: -1, finalizedFeatures: [], zkMigrationReady: false,
  };

  it('v0 request has no body; v3 request carries compact client software strings', () => {
    checkRequest<ApiVersionsRequest>(ApiVersionsApi, 0, { clientSoftwareName: '', clientSoftwareVersion: '' }, B().build());
    checkRequest<ApiVersionsRequest>(ApiVersionsApi, 3, { clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' },
      B().cstr('librdkafka').cstr('2.0.2').tags0().build());
  });

  it('v0 response: error code and classic array, no throttle time', () => {
    checkResponse(ApiVersionsApi, 0, plain,
      B().i16(0).arr(2).i16(0).i16(0).i16(11).i16(18).i16(0).i16(3).build());
  });

  it('v1 response adds throttle time', () => {
    checkResponse(ApiVersionsApi, 1, { ...plain, throttleTimeMs: 5 },
      B().i16(0).arr(2).i16(0).i16(0).i16(11).i16(18).i16(0).i16(3).i32(5).build());
  });

  it('v3 response: compact array with per-entry tag buffers, then throttle and body tags', () => {
    checkResponse(ApiVersionsApi, 3, plain,
      B().i16(0).carr(2).i16(0).i16(0).i16(11).tags0().i16(18).i16(0).i16(3).tags0().i32(0).tags0().build());
  });

  it('v3 response with feature tags (1 and 2 set, 0 and 3 default and omitted)', () => {
    const value = { ...plain, finalizedFeaturesEpoch: 5, finalizedFeatures: [{ name: 'metadata.version', maxVersionLevel: 20, minVersionLevel: 1 }] };
    checkResponse(ApiVersionsApi, 3, value,
      B().i16(0).carr(2).i16(0).i16(0).i16(11).tags0().i16(18).i16(0).i16(3).tags0().i32(0)
        .uvarint(2).tag(1, B().i64(5)).tag(2, B().carr(1).cstr('metadata.version').i16(20).i16(1).tags0()).build());
  });

  it('v3 response frame uses header v0 (no tag buffer) around a flexible body', () => {
    const w = new Writer();
    const size = w.reserveInt32();
    writeResponseHeader(w, 0x01020304, 18, ApiVersionsApi.isFlexible(3));
    ApiVersionsApi.encodeResponse(3, plain, w);
    w.setInt32(size, w.length - 4);
    const body = B().i16(0).carr(2).i16(0).i16(0).i16(11).tags0().i16(18).i16(0).i16(3).tags0().i32(0).tags0().build();
    const frame = B().i32(4 + body.length).i32(0x01020304).raw(body).build();
    assert.deepEqual(Buffer.concat(w.finish()), frame);
    const r = new Reader(frame, 4);
    assert.equal(readResponseHeader(r, 18, true), 0x01020304);
    assert.deepStrictEqual(ApiVersionsApi.decodeResponse(3, r), plain);
  });

  it('other flexible responses get header v1 (with a tag buffer)', () => {
    const w = new Writer();
    writeResponseHeader(w, 9, 3, MetadataApi.isFlexible(9));
    writeResponseHeader(w, 10, 3, MetadataApi.isFlexible(8));
    assert.deepEqual(Buffer.concat(w.finish()), B().i32(9).tags0().i32(10).build());
    const r = new Reader(B().i32(9).uvarint(1).tag(3, B().i8(1)).i32(10).build());
    assert.equal(readResponseHeader(r, 3, true), 9);
    assert.equal(readResponseHeader(r, 3, false), 10);
    assert.equal(r.remaining(), 0);
  });
});

describe('request headers', () => {
  it('v1 (classic) and v2 (flexible, tag buffer after a classic client id) read and write', () => {
    const v1 = B().i16(3).i16(4).i32(77).str('kcat').build();
    const v2 = B().i16(18).i16(3).i32(78).str(null).uvarint(1).tag(0, B().i8(1)).build();
    const r = new Reader(Buffer.concat([v1, v2]));
    assert.deepEqual(readRequestHeader(r, isFlexibleRequest), { apiKey: 3, apiVersion: 4, correlationId: 77, clientId: 'kcat' });
    assert.deepEqual(readRequestHeader(r, isFlexibleRequest), { apiKey: 18, apiVersion: 3, correlationId: 78, clientId: null });
    assert.equal(r.remaining(), 0);
    const w = new Writer();
    writeRequestHeader(w, { apiKey: 3, apiVersion: 4, correlationId: 77, clientId: 'kcat' }, false);
    writeRequestHeader(w, { apiKey: 1, apiVersion: 12, correlationId: 5, clientId: 'c' }, true);
    assert.deepEqual(Buffer.concat(w.finish()), Buffer.concat([v1, B().i16(1).i16(12).i32(5).str('c').tags0().build()]));
  });

  it('flexibility follows (key, version); unknown keys and versions read as header v1', () => {
    assert.equal(isFlexibleRequest(18, 2), false);
    assert.equal(isFlexibleRequest(18, 3), true);
    assert.equal(isFlexibleRequest(18, 4), false);
    assert.equal(isFlexibleRequest(1, 11), false);
    assert.equal(isFlexibleRequest(1, 12), true);
    assert.equal(isFlexibleRequest(0, 9), true);
    assert.equal(isFlexibleRequest(3, 9), true);
    assert.equal(isFlexibleRequest(4242, 0), false);
  });
});

// ---------------------------------------------------------------------------------------------

describe('Metadata golden', () => {
  const req = (over: Partial<MetadataRequest>): MetadataRequest => ({
    topics: [], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false, ...over,
  });

  it('v0 request: classic array of names', () => {
    checkRequest(MetadataApi, 0, req({ topics: [{ topicId: ZERO_UUID, name: 'orders' }] }), B().arr(1).str('orders').build());
  });

  it('v1 request: null array means all topics', () => {
    checkRequest(MetadataApi, 1, req({ topics: null }), B().arr(null).build());
  });

  it('v4 request adds allowAutoTopicCreation', () => {
    checkRequest(MetadataApi, 4, req({ topics: [{ topicId: ZERO_UUID, name: 'a' }], allowAutoTopicCreation: false }),
      B().arr(1).str('a').bool(false).build());
  });

  it('v9 request (first flexible): compact, both authorized-operations flags, tag buffers', () => {
    checkRequest(MetadataApi, 9, req({
      topics: [{ topicId: ZERO_UUID, name: 'a' }], includeClusterAuthorizedOperations: true, includeTopicAuthorizedOperations: true,
    }), B().carr(1).cstr('a').tags0().bool(true).bool(true).bool(true).tags0().build());
  });

  it('v12 request: topics by id (null name) or by name; no cluster-operations flag', () => {
    checkRequest(MetadataApi, 12, req({
      topics: [{ topicId: TOPIC_ID, name: null }, { topicId: ZERO_UUID, name: 'b' }], includeTopicAuthorizedOperations: true,
    }), B().carr(2).uuid(TOPIC_ID).cstr(null).tags0().uuid(ZERO_UUID).cstr('b').tags0().bool(true).bool(true).tags0().build());
    checkRequest(MetadataApi, 12, req({ topics: null }), B().carr(null).bool(true).bool(false).tags0().build());
  });

  const partition = {
    errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 4, replicaNodes: [1, 2], isrNodes: [1], offlineReplicas: [2],
  };
  const res = (over: Partial<MetadataResponse>): MetadataResponse => ({
    throttleTimeMs: 0, brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }], clusterId: null,
    controllerId: -1, topics: [], clusterAuthorizedOperations: NO_OPS, ...over,
  });

  it('v0 response', () => {
    const value = res({
      topics: [{ errorCode: 0, name: 'orders', topicId: ZERO_UUID, isInternal: false, partitions: [{ ...partition, leaderEpoch: -1, offlineReplicas: [] }], topicAuthorizedOperations: NO_OPS }],
    });
    checkResponse(MetadataApi, 0, value, B()
      .arr(1).i32(1).str('localhost').i32(9092)
      .arr(1).i16(0).str('orders').arr(1).i16(0).i32(0).i32(1).arr(2).i32(1).i32(2).arr(1).i32(1).build());
  });

  it('v9 response (first flexible)', () => {
    const value = res({
      throttleTimeMs: 3, brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: 'r1' }], clusterId: 'cid', controllerId: 1,
      topics: [{ errorCode: 0, name: 't', topicId: ZERO_UUID, isInternal: true, partitions: [partition], topicAuthorizedOperations: 8 }],
      clusterAuthorizedOperations: 16,
    });
    checkResponse(MetadataApi, 9, value, B().i32(3)
      .carr(1).i32(1).cstr('h').i32(9092).cstr('r1').tags0()
      .cstr('cid').i32(1)
      .carr(1).i16(0).cstr('t').bool(true)
      .carr(1).i16(0).i32(0).i32(1).i32(4).carr(2).i32(1).i32(2).carr(1).i32(1).carr(1).i32(2).tags0()
      .i32(8).tags0()
      .i32(16).tags0().build());
  });

  it('v12 response: topic ids, nullable names, no cluster operations', () => {
    const value = res({
      clusterId: 'cid', controllerId: 1,
      topics: [
        { errorCode: 0, name: 't', topicId: TOPIC_ID, isInternal: false, partitions: [partition], topicAuthorizedOperations: NO_OPS },
        { errorCode: 100, name: null, topicId: TOPIC_ID, isInternal: false, partitions: [], topicAuthorizedOperations: NO_OPS },
      ],
    });
    checkResponse(MetadataApi, 12, value, B().i32(0)
      .carr(1).i32(1).cstr('localhost').i32(9092).cstr(null).tags0()
      .cstr('cid').i32(1)
      .carr(2)
      .i16(0).cstr('t').uuid(TOPIC_ID).bool(false)
      .carr(1).i16(0).i32(0).i32(1).i32(4).carr(2).i32(1).i32(2).carr(1).i32(1).carr(1).i32(2).tags0()
      .i32(NO_OPS).tags0()
      .i16(100).cstr(null).uuid(TOPIC_ID).bool(false).carr(0).i32(NO_OPS).tags0()
      .tags0().build());
  });
});

// ---------------------------------------------------------------------------------------------

describe('Produce golden', () => {
  const batch = Buffer.from('00000000000000000000003affffffff02', 'hex');
  const req = (over: Partial<ProduceRequest>): ProduceRequest => ({
    transactionalId: null, acks: -1, timeoutMs: 30000,
    topicData: [{ name: 't', partitionData: [{ index: 0, records: batch }, { index: 1, records: null }] }], ...over,
  });

  it('v0 request: no transactional id, classic nullable records', () => {
    checkRequest(ProduceApi, 0, req({}),
      B().i16(-1).i32(30000).arr(1).str('t').arr(2).i32(0).bytes(batch).i32(1).bytes(null).build());
  });

  it('v3 request adds the nullable transactional id first', () => {
    checkRequest(ProduceApi, 3, req({ transactionalId: 'tx' }),
      B().str('tx').i16(-1).i32(30000).arr(1).str('t').arr(2).i32(0).bytes(batch).i32(1).bytes(null).build());
    checkRequest(ProduceApi, 7, req({ acks: 1 }),
      B().str(null).i16(1).i32(30000).arr(1).str('t').arr(2).i32(0).bytes(batch).i32(1).bytes(null).build());
  });

  for (const version of [9, 11]) {
    it(`v${version} request: compact everything, tag buffers per struct`, () => {
      checkRequest(ProduceApi, version, req({ transactionalId: 'tx' }),
        B().cstr('tx').i16(-1).i32(30000)
          .carr(1).cstr('t').carr(2).i32(0).cbytes(batch).tags0().i32(1).cbytes(null).tags0().tags0()
          .tags0().build());
    });
  }

  it('request records decode as a view of the frame', () => {
    const frame = B().i16(1).i32(1000).arr(1).str('t').arr(1).i32(0).bytes(batch).build();
    const out = ProduceApi.decodeRequest(0, new Reader(frame));
    const records = out.topicData[0]!.partitionData[0]!.records!;
    assert.equal(records.buffer, frame.buffer);
    assert.deepEqual(records, batch);
  });

  const part = (over: Partial<ProduceResponsePartition>): ProduceResponsePartition => ({
    index: 0, errorCode: 0, baseOffset: 42, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [],
    errorMessage: null, currentLeader: { leaderId: -1, leaderEpoch: -1 }, ...over,
  });
  const res = (partitions: ProduceResponsePartition[], over: Partial<ProduceResponse> = {}): ProduceResponse => ({
    responses: [{ name: 't', partitionResponses: partitions }], throttleTimeMs: 0, nodeEndpoints: [], ...over,
  });

  it('v0 response: base offset only, no throttle time', () => {
    checkResponse(ProduceApi, 0, res([part({})]), B().arr(1).str('t').arr(1).i32(0).i16(0).i64(42).build());
  });

  it('v2 and v5 responses add log append time, then log start offset', () => {
    checkResponse(ProduceApi, 2, res([part({ logAppendTimeMs: 1700000000000 })], { throttleTimeMs: 1 }),
      B().arr(1).str('t').arr(1).i32(0).i16(0).i64(42).i64(1700000000000).i32(1).build());
    checkResponse(ProduceApi, 5, res([part({ logStartOffset: 3 })]),
      B().arr(1).str('t').arr(1).i32(0).i16(0).i64(42).i64(-1).i64(3).i32(0).build());
  });

  it('v9 response (first flexible) with record errors; leader hints are not in v9', () => {
    const p = part({ errorCode: 87, recordErrors: [{ batchIndex: 2, batchIndexErrorMessage: 'bad' }], errorMessage: 'invalid' });
    const withHints = res([{ ...p, currentLeader: { leaderId: 2, leaderEpoch: 5 } }],
      { nodeEndpoints: [{ nodeId: 2, host: 'b', port: 1, rack: null }] });
    const bytes = B().carr(1).cstr('t')
      .carr(1).i32(0).i16(87).i64(42).i64(-1).i64(-1).carr(1).i32(2).cstr('bad').tags0().cstr('invalid').tags0()
      .tags0().i32(0).tags0().build();
    checkResponse(ProduceApi, 9, withHints, bytes, res([p]));
  });

  it('v11 response with tagged currentLeader (partition) and nodeEndpoints (top level)', () => {
    const value = res([part({ errorCode: 6, currentLeader: { leaderId: 2, leaderEpoch: 5 } }), part({ index: 1 })],
      { nodeEndpoints: [{ nodeId: 2, host: 'b', port: 9093, rack: 'r' }] });
    checkResponse(ProduceApi, 11, value, B().carr(1).cstr('t').carr(2)
      .i32(0).i16(6).i64(42).i64(-1).i64(-1).carr(0).cstr(null).uvarint(1).tag(0, B().i32(2).i32(5).tags0())
      .i32(1).i16(0).i64(42).i64(-1).i64(-1).carr(0).cstr(null).tags0()
      .tags0().i32(0)
      .uvarint(1).tag(0, B().carr(1).i32(2).cstr('b').i32(9093).cstr('r').tags0()).build());
  });
});

// ---------------------------------------------------------------------------------------------

describe('Fetch golden', () => {
  const req = (over: Partial<FetchRequest>): FetchRequest => ({
    clusterId: null, replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1 }, maxWaitMs: 500, minBytes: 1,
    maxBytes: 52428800, isolationLevel: 1, sessionId: 0, sessionEpoch: -1, topics: [], forgottenTopicsData: [], rackId: '', ...over,
  });
  const rp = { partition: 0, currentLeaderEpoch: -1, fetchOffset: 100, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1048576, replicaDirectoryId: ZERO_UUID };

  it('v4 request: isolation level, no sessions', () => {
    checkRequest(FetchApi, 4, req({ topics: [{ topic: 't', topicId: ZERO_UUID, partitions: [rp] }] }),
      B().i32(-1).i32(500).i32(1).i32(52428800).i8(1).arr(1).str('t').arr(1).i32(0).i64(100).i32(1048576).build());
  });

  it('v11 request: sessions, forgotten topics, leader epoch, rack id', () => {
    checkRequest(FetchApi, 11, req({
      topics: [{ topic: 't', topicId: ZERO_UUID, partitions: [{ ...rp, currentLeaderEpoch: 3, logStartOffset: 0 }] }],
      forgottenTopicsData: [{ topic: 'old', topicId: ZERO_UUID, partitions: [4, 5] }], rackId: 'r',
    }), B().i32(-1).i32(500).i32(1).i32(52428800).i8(1).i32(0).i32(-1)
      .arr(1).str('t').arr(1).i32(0).i32(3).i64(100).i64(0).i32(1048576)
      .arr(1).str('old').arr(2).i32(4).i32(5).str('r').build());
  });

  it('v12 request (first flexible): lastFetchedEpoch, tagged clusterId', () => {
    checkRequest(FetchApi, 12, req({
      clusterId: 'cl', topics: [{ topic: 't', topicId: ZERO_UUID, partitions: [{ ...rp, lastFetchedEpoch: 2 }] }],
      forgottenTopicsData: [{ topic: 'old', topicId: ZERO_UUID, partitions: [1] }],
    }), B().i32(-1).i32(500).i32(1).i32(52428800).i8(1).i32(0).i32(-1)
      .carr(1).cstr('t').carr(1).i32(0).i32(-1).i64(100).i32(2).i64(-1).i32(1048576).tags0().tags0()
      .carr(1).cstr('old').carr(1).i32(1).tags0()
      .cstr('').uvarint(1).tag(0, B().cstr('cl')).build());
  });

  it('v13 request: topic ids replace names (topics and forgotten topics)', () => {
    checkRequest(FetchApi, 13, req({
      topics: [{ topic: '', topicId: TOPIC_ID, partitions: [rp] }],
      forgottenTopicsData: [{ topic: '', topicId: TOPIC_ID, partitions: [2] }],
    }), B().i32(-1).i32(500).i32(1).i32(52428800).i8(1).i32(0).i32(-1)
      .carr(1).uuid(TOPIC_ID).carr(1).i32(0).i32(-1).i64(100).i32(-1).i64(-1).i32(1048576).tags0().tags0()
      .carr(1).uuid(TOPIC_ID).carr(1).i32(2).tags0()
      .cstr('').tags0().build());
  });

  it('v15 request: no top-level replicaId; replicaState is tagged (tag 1) and omitted when default', () => {
    const body = (tags: Bytes): Buffer => B().i32(500).i32(1).i32(52428800).i8(1).i32(0).i32(-1)
      .carr(1).uuid(TOPIC_ID).carr(1).i32(0).i32(-1).i64(100).i32(-1).i64(-1).i32(1048576).tags0().tags0()
      .carr(0).cstr('').raw(tags.build()).build();
    const topics = [{ topic: '', topicId: TOPIC_ID, partitions: [rp] }];
    checkRequest(FetchApi, 15, req({ topics }), body(B().tags0()));
    checkRequest(FetchApi, 15, req({ topics, replicaState: { replicaId: 2, replicaEpoch: 7 } }),
      body(B().uvarint(1).tag(1, B().i32(2).i64(7).tags0())));
  });

  it('v17 request: tagged replicaDirectoryId per partition', () => {
    const dir = 'abcdefabcdefabcdefabcdefabcdef01';
    checkRequest(FetchApi, 17, req({ topics: [{ topic: '', topicId: TOPIC_ID, partitions: [{ ...rp, replicaDirectoryId: dir }] }] }),
      B().i32(500).i32(1).i32(52428800).i8(1).i32(0).i32(-1)
        .carr(1).uuid(TOPIC_ID).carr(1).i32(0).i32(-1).i64(100).i32(-1).i64(-1).i32(1048576).uvarint(1).tag(0, B().uuid(dir)).tags0()
        .carr(0).cstr('').tags0().build());
  });

  const records = Buffer.from('0000000000000064000000', 'hex');
  const part = (over: Partial<FetchResponsePartition>): FetchResponsePartition => ({
    partitionIndex: 0, errorCode: 0, highWatermark: 200, lastStableOffset: 150, logStartOffset: -1,
    divergingEpoch: { epoch: -1, endOffset: -1 }, currentLeader: { leaderId: -1, leaderEpoch: -1 },
    snapshotId: { endOffset: -1, epoch: -1 }, abortedTransactions: null, preferredReadReplica: -1, records, ...over,
  });
  const res = (topic: { topic: string; topicId: string }, partitions: FetchResponsePartition[], over: Partial<FetchResponse> = {}): FetchResponse => ({
    throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ ...topic, partitions }], nodeEndpoints: [], ...over,
  });
  const byName = { topic: 't', topicId: ZERO_UUID };
  const byId = { topic: '', topicId: TOPIC_ID };

  it('v4 response: last stable offset and aborted transactions', () => {
    checkResponse(FetchApi, 4, res(byName, [part({ abortedTransactions: [{ producerId: 9, firstOffset: 120 }] }), part({ partitionIndex: 1, records: null })]),
      B().i32(0).arr(1).str('t').arr(2)
        .i32(0).i16(0).i64(200).i64(150).arr(1).i64(9).i64(120).bytes(records)
        .i32(1).i16(0).i64(200).i64(150).arr(null).bytes(null).build());
  });

  it('v11 response: sessions, log start offset, preferred read replica', () => {
    checkResponse(FetchApi, 11, res(byName, [part({ logStartOffset: 0 })], { sessionId: 12 }),
      B().i32(0).i16(0).i32(12).arr(1).str('t').arr(1)
        .i32(0).i16(0).i64(200).i64(150).i64(0).arr(null).i32(-1).bytes(records).build());
  });

  it('v12 response (first flexible): tagged diverging epoch, leader and snapshot in tag order', () => {
    const p = part({ logStartOffset: 0, divergingEpoch: { epoch: 3, endOffset: 90 }, currentLeader: { leaderId: 1, leaderEpoch: 4 }, snapshotId: { endOffset: 10, epoch: 2 } });
    const endpoints = [{ nodeId: 1, host: 'h', port: 1, rack: null }];
    checkResponse(FetchApi, 12, res(byName, [p], { nodeEndpoints: endpoints }),
      B().i32(0).i16(0).i32(0).carr(1).cstr('t').carr(1)
        .i32(0).i16(0).i64(200).i64(150).i64(0).carr(null).i32(-1).cbytes(records)
        .uvarint(3).tag(0, B().i32(3).i64(90).tags0()).tag(1, B().i32(1).i32(4).tags0()).tag(2, B().i64(10).i32(2).tags0())
        .tags0().tags0().build(),
      res(byName, [p]));
  });

  it('v15 response: nodeEndpoints is not part of v15 and is never emitted there', () => {
    const endpoints = [{ nodeId: 1, host: 'h', port: 1, rack: null }];
    checkResponse(FetchApi, 15, res(byId, [part({})], { nodeEndpoints: endpoints }),
      B().i32(0).i16(0).i32(0).carr(1).uuid(TOPIC_ID).carr(1)
        .i32(0).i16(0).i64(200).i64(150).i64(-1).carr(null).i32(-1).cbytes(records).tags0()
        .tags0().tags0().build(),
      res(byId, [part({})]));
  });

  it('v17 response: topic ids and tagged nodeEndpoints (tag 0)', () => {
    const value = res(byId, [part({ errorCode: 6, currentLeader: { leaderId: 2, leaderEpoch: 8 }, records: null })],
      { nodeEndpoints: [{ nodeId: 2, host: 'broker-2', port: 9092, rack: null }] });
    checkResponse(FetchApi, 17, value,
      B().i32(0).i16(0).i32(0).carr(1).uuid(TOPIC_ID).carr(1)
        .i32(0).i16(6).i64(200).i64(150).i64(-1).carr(null).i32(-1).cbytes(null)
        .uvarint(1).tag(1, B().i32(2).i32(8).tags0())
        .tags0()
        .uvarint(1).tag(0, B().carr(1).i32(2).cstr('broker-2').i32(9092).cstr(null).tags0()).build());
  });

  it('response records given as chunks are sent by reference', () => {
    const a = Buffer.from('aaaa');
    const b = Buffer.from('bbbbbb');
    const w = new Writer();
    FetchApi.encodeResponse(11, res(byName, [part({ records: [a, b] })]), w);
    const chunks = w.finish();
    assert.ok(chunks.includes(a) && chunks.includes(b));
    const decoded = FetchApi.decodeResponse(11, new Reader(Buffer.concat(chunks)));
    assert.deepEqual(decoded.responses[0]!.partitions[0]!.records, Buffer.from('aaaabbbbbb'));
  });
});
