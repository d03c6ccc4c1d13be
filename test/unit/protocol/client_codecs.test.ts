// Cross-check against the protocol code of two real clients, in process (no sockets):
// kafkajs 2.2.4 (classic versions: ApiVersions v2, Metadata v6, Produce v7, Fetch v4/v11) and
// @platformatic/kafka (flexible versions: ApiVersions v3, Metadata v12, Produce v9/v11,
// Fetch v12/v13/v17). Their request encoders feed our decoders; our response encoders feed
// their parsers. An independent reading of the spec catches what our own golden bytes cannot.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bytesOf, decodeRequest, kjsRequest, kjsResponse, TOPIC_ID, TOPIC_ID_DASHED } from './kafkajs_codecs.js';
import {
  apiVersionsV3, fetchV12, fetchV13, fetchV17, metadataV12, produceV11, produceV9, Reader as PlatReader,
} from '@platformatic/kafka';
import { ApiVersionsApi } from '../../../src/protocol/apis/api_versions.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import type { FetchResponse } from '../../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import type { ProduceResponse } from '../../../src/protocol/apis/produce.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';

const metadataRes: MetadataResponse = {
  throttleTimeMs: 0, brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }], clusterId: 'sluice',
  controllerId: 1, clusterAuthorizedOperations: -2147483648,
  topics: [{
    errorCode: 0, name: 'orders', topicId: TOPIC_ID, isInternal: false, topicAuthorizedOperations: -2147483648,
    partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
  }],
};

const produceRes: ProduceResponse = {
  throttleTimeMs: 0, nodeEndpoints: [{ nodeId: 1, host: 'h', port: 1, rack: null }],
  responses: [{ name: 'orders', partitionResponses: [{
    index: 0, errorCode: 0, baseOffset: 41, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [],
    errorMessage: null, currentLeader: { leaderId: 1, leaderEpoch: 3 },
  }] }],
};

function fetchRes(byId: boolean): FetchResponse {
  return {
    throttleTimeMs: 0, errorCode: 0, sessionId: 0, nodeEndpoints: [{ nodeId: 1, host: 'h', port: 1, rack: null }],
    responses: [{ topic: byId ? '' : 'orders', topicId: byId ? TOPIC_ID : ZERO_UUID, partitions: [{
      partitionIndex: 0, errorCode: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0,
      divergingEpoch: { epoch: -1, endOffset: -1 }, currentLeader: { leaderId: 1, leaderEpoch: 3 },
      snapshotId: { endOffset: -1, epoch: -1 }, abortedTransactions: [{ producerId: 5, firstOffset: 2 }],
      preferredReadReplica: -1, records: null,
    }] }],
  };
}

describe('kafkajs 2.2.4 (classic versions)', () => {
  it('ApiVersions v2', async () => {
    const req = await kjsRequest('apiVersions/v2')({}).encode();
    assert.deepEqual(decodeRequest(ApiVersionsApi, 2, req.buffer), { clientSoftwareName: '', clientSoftwareVersion: '' });
    const res = await kjsResponse('apiVersions/v2').decode(bytesOf(ApiVersionsApi, 2, {
      errorCode: 0, apiKeys: [{ apiKey: 1, minVersion: 4, maxVersion: 17 }], throttleTimeMs: 7,
      supportedFeatures: [], finalizedFeaturesEpoch: -1, finalizedFeatures: [], zkMigrationReady: false,
    }));
    assert.deepEqual(res.apiVersions, [{ apiKey: 1, minVersion: 4, maxVersion: 17 }]);
    assert.equal(res.clientSideThrottleTime ?? res.throttleTime, 7);
  });

  it('Metadata v6', async () => {
    const req = await kjsRequest('metadata/v6')({ topics: ['orders', 'b'], allowAutoTopicCreation: false }).encode();
    const decoded = decodeRequest(MetadataApi, 6, req.buffer);
    assert.deepEqual(decoded.topics?.map((t) => t.name), ['orders', 'b']);
    assert.equal(decoded.allowAutoTopicCreation, false);
    const res = await kjsResponse('metadata/v6').decode(bytesOf(MetadataApi, 6, metadataRes));
    assert.deepEqual(res.brokers, [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }]);
    assert.equal(res.clusterId, 'sluice');
    const [topic] = res.topicMetadata as { topic: string; partitionMetadata: Record<string, unknown>[] }[];
    assert.equal(topic!.topic, 'orders');
    assert.deepEqual(topic!.partitionMetadata[0], {
      partitionErrorCode: 0, partitionId: 0, leader: 1, replicas: [1], isr: [1], offlineReplicas: [],
    });
  });

  it('Produce v7', async () => {
    const req = await kjsRequest('produce/v7')({
      acks: -1, timeout: 1000, topicData: [{ topic: 'orders', partitions: [{ partition: 2, messages: [{ key: 'k', value: 'v' }] }] }],
    }).encode();
    const decoded = decodeRequest(ProduceApi, 7, req.buffer);
    assert.equal(decoded.acks, -1);
    assert.equal(decoded.timeoutMs, 1000);
    assert.equal(decoded.transactionalId, null);
    const part = decoded.topicData[0]!.partitionData[0]!;
    assert.equal(part.index, 2);
    assert.equal(part.records!.readInt8(16), 2, 'record batch magic 2 at its offset 16');
    assert.equal(part.records!.readInt32BE(8), part.records!.length - 12, 'batchLength covers the view');
    const res = await kjsResponse('produce/v7').decode(bytesOf(ProduceApi, 7, produceRes));
    const [topic] = res.topics as { topicName: string; partitions: Record<string, unknown>[] }[];
    assert.equal(topic!.topicName, 'orders');
    assert.equal(topic!.partitions[0]!.baseOffset, '41');
    assert.equal(topic!.partitions[0]!.logStartOffset, '0');
  });

  for (const version of [4, 11]) {
    it(`Fetch v${version}`, async () => {
      const req = await kjsRequest(`fetch/v${version}`)({
        replicaId: -1, maxWaitTime: 500, minBytes: 1, maxBytes: 10485760, isolationLevel: 1,
        topics: [{ topic: 'orders', partitions: [{ partition: 0, fetchOffset: '7', maxBytes: 1048576 }] }],
      }).encode();
      const decoded = decodeRequest(FetchApi, version, req.buffer);
      assert.equal(decoded.maxWaitMs, 500);
      assert.equal(decoded.isolationLevel, 1);
      assert.deepEqual(decoded.topics[0]!.topic, 'orders');
      assert.equal(decoded.topics[0]!.partitions[0]!.fetchOffset, 7);
      assert.equal(decoded.topics[0]!.partitions[0]!.partitionMaxBytes, 1048576);
      const res = await kjsResponse(`fetch/v${version}`).decode(bytesOf(FetchApi, version, fetchRes(false)));
      const [topic] = res.responses as { topicName: string; partitions: Record<string, unknown>[] }[];
      assert.equal(topic!.topicName, 'orders');
      assert.equal(topic!.partitions[0]!.highWatermark, '10');
      assert.deepEqual(topic!.partitions[0]!.abortedTransactions, [{ producerId: '5', firstOffset: '2' }]);
    });
  }
});

describe('@platformatic/kafka (flexible versions)', () => {
  const parse = (fn: (c: number, k: number, v: number, r: PlatReader) => unknown, key: number, version: number, bytes: Buffer) =>
    fn(1, key, version, PlatReader.from(bytes)) as Record<string, unknown>;

  it('ApiVersions v3', () => {
    const req = apiVersionsV3.createRequest('plat', '1.35.0').buffer;
    assert.deepEqual(decodeRequest(ApiVersionsApi, 3, req), { clientSoftwareName: 'plat', clientSoftwareVersion: '1.35.0' });
    const res = parse(apiVersionsV3.parseResponse, 18, 3, bytesOf(ApiVersionsApi, 3, {
      errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 11 }, { apiKey: 18, minVersion: 0, maxVersion: 3 }],
      throttleTimeMs: 0, supportedFeatures: [], finalizedFeaturesEpoch: 3, finalizedFeatures: [], zkMigrationReady: false,
    }));
    const keys = (res.apiKeys as Record<string, unknown>[]).map(({ apiKey, minVersion, maxVersion }) => ({ apiKey, minVersion, maxVersion }));
    assert.deepEqual(keys, [{ apiKey: 0, minVersion: 0, maxVersion: 11 }, { apiKey: 18, minVersion: 0, maxVersion: 3 }]);
  });

  it('Metadata v12', () => {
    const req = metadataV12.createRequest(['orders'], true, false).buffer;
    const decoded = decodeRequest(MetadataApi, 12, req);
    assert.deepEqual(decoded.topics, [{ topicId: ZERO_UUID, name: 'orders' }]);
    assert.equal(decoded.allowAutoTopicCreation, true);
    const res = parse(metadataV12.parseResponse, 3, 12, bytesOf(MetadataApi, 12, metadataRes));
    const [topic] = res.topics as Record<string, unknown>[];
    assert.equal(topic!.name, 'orders');
    assert.equal(topic!.topicId, TOPIC_ID_DASHED);
    assert.equal(res.clusterId, 'sluice');
  });

  for (const [version, mod] of [[9, produceV9], [11, produceV11]] as const) {
    it(`Produce v${version}`, () => {
      const req = mod.createRequest(-1, 1000, [{ topic: 'orders', partition: 1, key: Buffer.from('k'), value: Buffer.from('v') }]).buffer;
      const decoded = decodeRequest(ProduceApi, version, req);
      assert.equal(decoded.topicData[0]!.name, 'orders');
      const records = decoded.topicData[0]!.partitionData[0]!.records!;
      assert.equal(records.readInt8(16), 2);
      assert.equal(records.readInt32BE(8), records.length - 12);
      const res = parse(mod.parseResponse, 0, version, bytesOf(ProduceApi, version, produceRes));
      const [topic] = res.responses as { name: string; partitionResponses: Record<string, unknown>[] }[];
      assert.equal(topic!.name, 'orders');
      assert.equal(topic!.partitionResponses[0]!.baseOffset, 41n);
    });
  }

  for (const [version, mod, byId] of [[12, fetchV12, false], [13, fetchV13, true], [17, fetchV17, true]] as const) {
    it(`Fetch v${version}`, () => {
      const topicRef = byId ? TOPIC_ID_DASHED : 'orders';
      const req = mod.createRequest(500, 1, 1048576, 1, 0, -1, [{
        topicId: topicRef, partitions: [{ partition: 0, currentLeaderEpoch: 3, fetchOffset: 5n, lastFetchedEpoch: -1, partitionMaxBytes: 1024 }],
      }], [], '').buffer;
      const decoded = decodeRequest(FetchApi, version, req);
      const topic = decoded.topics[0]!;
      assert.equal(byId ? topic.topicId : topic.topic, byId ? TOPIC_ID : 'orders');
      assert.deepEqual({ ...topic.partitions[0]! }, {
        partition: 0, currentLeaderEpoch: 3, fetchOffset: 5, lastFetchedEpoch: -1, logStartOffset: -1,
        partitionMaxBytes: 1024, replicaDirectoryId: ZERO_UUID,
      });
      const res = parse(mod.parseResponse, 1, version, bytesOf(FetchApi, version, fetchRes(byId)));
      const [t] = res.responses as Record<string, unknown>[];
      const [p] = t!.partitions as Record<string, unknown>[];
      assert.equal(t!.topicId, topicRef, 'platformatic keeps the v12 topic name in topicId');
      assert.equal(p!.highWatermark, 10n);
      assert.equal(p!.preferredReadReplica, -1);
      assert.deepEqual(p!.abortedTransactions, [{ producerId: 5n, firstOffset: 2n }]);
    });
  }
});
