// Handlers that describe the cluster, with plain-object dependencies: Metadata, DescribeCluster,
// FindCoordinator, DescribeConfigs and InitProducerId answer from the cluster view (brokers,
// controller, leaders, epochs, replicas) and the producer-id source, never from this node's id.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OFFSETS_TOPIC, type ClusterView } from '../../../../src/cluster/cluster_view.js';
import { resolveConfig } from '../../../../src/config.js';
import { offsetsPartitionFor } from '../../../../src/coordinator/groups/group_api.js';
import { describeClusterHandler } from '../../../../src/net/handlers/describe_cluster.js';
import { describeConfigsHandler } from '../../../../src/net/handlers/describe_configs.js';
import { findCoordinatorHandler } from '../../../../src/net/handlers/find_coordinator.js';
import { initProducerIdHandler } from '../../../../src/net/handlers/init_producer_id.js';
import { AllTopicsCache, metadataHandler, type MetadataDeps } from '../../../../src/net/handlers/metadata.js';
import { MetadataApi, type MetadataRequest } from '../../../../src/protocol/apis/metadata.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { Writer } from '../../../../src/protocol/writer.js';
import { clusterView, endpoint } from '../../../helpers/cluster_fixture.js';
import { answered, encodedAnswer, requestContext } from '../../../helpers/handler_context.js';

const config = resolveConfig([], {}).config;
const three = [endpoint(1), endpoint(2), endpoint(3)];

function metadataDeps(over: Partial<MetadataDeps> = {}): MetadataDeps {
  return {
    cluster: clusterView({
      localId: 1, brokers: three, controllerId: 3,
      topics: [{ name: 't', partitions: 3, replicas: [1, 2, 4], leaderEpoch: 7, byPartition: { 1: { leader: 2 }, 2: { leader: -1 } } }],
    }),
    partitions: { handleOf: () => 0 },
    topics: { ensure: () => Promise.reject(new Error('no auto-creation expected')) },
    autoCreateTopics: false,
    allTopicsCache: null,
    ...over,
  };
}

const allTopics: MetadataRequest = { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };

describe('Metadata', () => {
  it('lists the live brokers, the controller, and each partition with its leader, epoch, replicas and offline replicas', async () => {
    const res = answered(await metadataHandler.handle(requestContext(3, 12), allTopics, metadataDeps()));
    assert.deepEqual(res.brokers?.map((b) => b.nodeId), [1, 2, 3]);
    assert.equal(res.controllerId, 3);
    assert.equal(res.clusterId, 'fixture-cluster');
    const parts = res.topics?.[0]?.partitions ?? [];
    assert.deepEqual(parts.map((p) => [p.errorCode, p.leaderId, p.leaderEpoch]), [
      [ErrorCode.NONE, 1, 7],
      [ErrorCode.NONE, 2, 7],
      [ErrorCode.LEADER_NOT_AVAILABLE, -1, 7],
    ]);
    assert.deepEqual(parts[0]?.replicaNodes, [1, 2, 4]);
    assert.deepEqual(parts[0]?.offlineReplicas, [4]);
  });

  it('answers LEADER_NOT_AVAILABLE for a partition this broker leads but has not opened yet', async () => {
    const res = answered(await metadataHandler.handle(requestContext(3, 12), allTopics, metadataDeps({ partitions: { handleOf: () => -1 } })));
    const parts = res.topics?.[0]?.partitions ?? [];
    assert.equal(parts[0]?.errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
    assert.equal(parts[1]?.errorCode, ErrorCode.NONE, "another broker's partition is that broker's to serve");
  });

  it('auto-creates through the topic front end only when the broker and the request allow it', async () => {
    const asked: string[] = [];
    const ensure = (name: string) => {
      asked.push(name);
      return Promise.resolve({ name, id: 'b'.repeat(32), partitions: 0, configs: {} });
    };
    const req: MetadataRequest = { ...allTopics, topics: [{ name: 'new', topicId: '0'.repeat(32) }], allowAutoTopicCreation: true };
    const refused = answered(await metadataHandler.handle(requestContext(3, 12), req, metadataDeps({ topics: { ensure } })));
    assert.equal(refused.topics?.[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const created = answered(await metadataHandler.handle(requestContext(3, 12), req, metadataDeps({ topics: { ensure }, autoCreateTopics: true })));
    assert.equal(created.topics?.[0]?.errorCode, ErrorCode.NONE);
    assert.deepEqual(asked, ['new']);
  });
  it('answers an unknown topic id in every version that can ask by id with a response that encodes', async () => {
    const req: MetadataRequest = { ...allTopics, topics: [{ name: null, topicId: 'c'.repeat(32) }] };
    for (const version of [10, 11, 12]) {
      const res = answered(await metadataHandler.handle(requestContext(3, version), req, metadataDeps()));
      assert.equal(res.topics?.[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
      assert.doesNotThrow(() => MetadataApi.encodeResponse(version, res, new Writer(256)), `v${version}`);
    }
  });
});

describe('Metadata for all topics, cached per view state', () => {
  it('encodes the answer once per version and reuses it until the revision, controller or live brokers change', async () => {
    const base = metadataDeps().cluster;
    const state = { revision: 1, controllerId: 3, brokers: three, builds: 0, settled: 1 };
    const cluster: ClusterView = {
      ...base,
      get revision() { return state.revision; },
      controllerId: () => state.controllerId,
      brokers: () => state.brokers,
      topics: () => {
        state.builds++;
        return base.topics();
      },
    };
    const deps = metadataDeps({ cluster, allTopicsCache: new AllTopicsCache(() => state.settled) });
    const ask = async (version = 12) => encodedAnswer(MetadataApi, version, await metadataHandler.handle(requestContext(3, version), allTopics, deps));
    const first = await ask();
    assert.deepEqual(first.topics?.[0]?.partitions?.map((p) => p.leaderId), [1, 2, -1]);
    assert.deepEqual(await ask(), first);
    assert.equal(state.builds, 1, 'the second request reuses the first answer');
    await ask(9);
    assert.equal(state.builds, 2, 'each version is encoded for itself');
    state.controllerId = 2;
    assert.equal((await ask()).controllerId, 2);
    state.brokers = [endpoint(1), endpoint(2)];
    assert.deepEqual((await ask()).brokers?.map((b) => b.nodeId), [1, 2]);
    assert.equal(state.builds, 4);
    state.revision = 2;
    // Not all partitions of revision 2 are open yet: each request builds its own answer.
    assert.equal(answered(await metadataHandler.handle(requestContext(3, 12), allTopics, deps)).controllerId, 2);
    assert.equal(answered(await metadataHandler.handle(requestContext(3, 12), allTopics, deps)).controllerId, 2);
    assert.equal(state.builds, 6);
    state.settled = 2;
    await ask();
    await ask();
    assert.equal(state.builds, 7, 'once settled, the answer is cached again');
  });
});

describe('DescribeCluster', () => {
  it('lists the live brokers and the controller of the view', async () => {
    const res = answered(await describeClusterHandler.handle(requestContext(60, 1), { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false }, { cluster: clusterView({ brokers: three, controllerId: 2 }) }));
    assert.equal(res.controllerId, 2);
    assert.deepEqual(res.brokers?.map((b) => [b.brokerId, b.host, b.port]), [[1, 'broker-1.test', 9001], [2, 'broker-2.test', 9002], [3, 'broker-3.test', 9003]]);
  });

  it('adds the fenced brokers, marked, when asked (v2), and marks brokers still warming up', async () => {
    const cluster = clusterView({ brokers: [endpoint(1), endpoint(3)], fenced: [endpoint(2)], warming: [3] });
    const ask = async (includeFencedBrokers: boolean) =>
      answered(await describeClusterHandler.handle(requestContext(60, 2), { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers }, { cluster }))
        .brokers?.map((b) => [b.brokerId, b.isFenced, b.sluiceWarming]);
    assert.deepEqual(await ask(false), [[1, false, false], [3, false, true]]);
    assert.deepEqual(await ask(true), [[1, false, false], [2, true, false], [3, false, true]]);
  });
});

describe('FindCoordinator', () => {
  // Every offsets partition p is led by broker (p mod 3) + 1.
  const byPartition: Record<number, { leader: number }> = {};
  for (let p = 0; p < 10; p++) byPartition[p] = { leader: (p % 3) + 1 };
  const cluster = clusterView({ brokers: three, topics: [{ name: OFFSETS_TOPIC, partitions: 10, byPartition }] });

  it("answers the leader of the group's offsets partition, batched (v4+) and single (v0-3)", async () => {
    const groups = ['a', 'orders', 'g-17'];
    const res = answered(await findCoordinatorHandler.handle(requestContext(10, 4), { key: '', keyType: 0, coordinatorKeys: groups }, { cluster }));
    assert.deepEqual(res.coordinators?.map((c) => c.nodeId), groups.map((g) => (offsetsPartitionFor(g, 10) % 3) + 1));
    const one = answered(await findCoordinatorHandler.handle(requestContext(10, 3), { key: 'orders', keyType: 0, coordinatorKeys: [] }, { cluster }));
    const leader = (offsetsPartitionFor('orders', 10) % 3) + 1;
    assert.deepEqual([one.nodeId, one.host, one.port], [leader, `broker-${leader}.test`, 9000 + leader]);
  });

  it('answers COORDINATOR_NOT_AVAILABLE when the partition has no live leader, and refuses empty keys', async () => {
    const leaderless = clusterView({ brokers: three, topics: [{ name: OFFSETS_TOPIC, partitions: 1, leader: -1 }] });
    const res = answered(await findCoordinatorHandler.handle(requestContext(10, 4), { key: '', keyType: 0, coordinatorKeys: ['g', ''] }, { cluster: leaderless }));
    assert.deepEqual(res.coordinators?.map((c) => c.errorCode), [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.INVALID_REQUEST]);
  });
});

describe('DescribeConfigs', () => {
  it("describes this broker by the view's local id and refuses other brokers", async () => {
    const deps = { cluster: clusterView({ localId: 5 }), config };
    const res = answered(await describeConfigsHandler.handle(requestContext(32, 4), {
      resources: [{ resourceType: 4, resourceName: '5', configurationKeys: ['num.partitions'] }, { resourceType: 4, resourceName: '6', configurationKeys: null }],
      includeSynonyms: false, includeDocumentation: false,
    }, deps));
    assert.deepEqual(res.results?.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]);
  });
});

describe('InitProducerId', () => {
  it('hands out ids from the producer-id source', async () => {
    let next = 41;
    const res = answered(await initProducerIdHandler.handle(requestContext(22, 4), { transactionalId: null, transactionTimeoutMs: 0, producerId: -1, producerEpoch: -1 }, {
      producerIds: { allocate: () => Promise.resolve(next++) },
    }));
    assert.deepEqual([res.errorCode, res.producerId, res.producerEpoch], [ErrorCode.NONE, 41, 0]);
  });
});
