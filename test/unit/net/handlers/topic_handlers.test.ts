// CreateTopics, CreatePartitions and DeleteTopics with plain-object dependencies: they check the
// request's own shape, hand each topic to the topic front end and report its errors per topic;
// the request's timeout bounds the wait for a slow controller.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DescriptorBudget } from '../../../../src/common/descriptor_budget.js';
import { ForwardingMetadataStore } from '../../../../src/cluster/forwarding_store.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../../src/cluster/metadata_follower.js';
import { TopicAdmin, type CreatedTopic, type NewTopic } from '../../../../src/cluster/topic_admin.js';
import { resolveConfig } from '../../../../src/config.js';
import { createPartitionsHandler } from '../../../../src/net/handlers/create_partitions.js';
import { createTopicsHandler } from '../../../../src/net/handlers/create_topics.js';
import { deleteTopicsHandler } from '../../../../src/net/handlers/delete_topics.js';
import type { CreateTopicsRequestTopic } from '../../../../src/protocol/apis/create_topics.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { clusterView } from '../../../helpers/cluster_fixture.js';
import { FakeControllerChannel, registerBroker } from '../../../helpers/fake_controller.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

const config = resolveConfig([], {}).config;

function topicIn(name: string, over: Partial<CreateTopicsRequestTopic> = {}): CreateTopicsRequestTopic {
  return { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [], ...over };
}

describe('CreateTopics', () => {
  const asked: NewTopic[] = [];
  const deps = {
    config,
    topics: {
      create: (t: NewTopic): Promise<CreatedTopic> => {
        asked.push(t);
        if (t.replicationFactor > 1) return Promise.reject(new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'replication factor: 2 larger than available brokers: 1'));
        return Promise.resolve({ topic: { name: t.name, id: 'c'.repeat(32), partitions: t.assignment?.length ?? 3, configs: {} }, replicationFactor: 1 });
      },
    },
  };

  it('passes -1 defaults and client assignments (ordered by partition index) to the front end, answering what it created', async () => {
    asked.length = 0;
    const res = answered(await createTopicsHandler.handle(requestContext(19, 5), {
      topics: [topicIn('a'), topicIn('b', { assignments: [{ partitionIndex: 1, brokerIds: [2] }, { partitionIndex: 0, brokerIds: [1] }] })],
      timeoutMs: 1000, validateOnly: false,
    }, deps));
    assert.deepEqual(asked.map((t) => [t.partitions, t.replicationFactor, t.assignment]), [[-1, -1, null], [-1, -1, [[1], [2]]]]);
    assert.deepEqual(res.topics?.map((t) => [t.errorCode, t.numPartitions, t.replicationFactor, t.topicId]), [[0, 3, 1, 'c'.repeat(32)], [0, 2, 1, 'c'.repeat(32)]]);
  });

  it("reports the front end's errors with their message, and refuses malformed requests itself", async () => {
    asked.length = 0;
    const res = answered(await createTopicsHandler.handle(requestContext(19, 5), {
      topics: [
        topicIn('rf', { replicationFactor: 2 }),
        topicIn('dup'), topicIn('dup'),
        topicIn('both', { numPartitions: 2, assignments: [{ partitionIndex: 0, brokerIds: [1] }] }),
        topicIn('gap', { assignments: [{ partitionIndex: 1, brokerIds: [1] }] }),
      ],
      timeoutMs: 1000, validateOnly: false,
    }, deps));
    assert.deepEqual(res.topics?.map((t) => t.errorCode), [
      ErrorCode.INVALID_REPLICATION_FACTOR, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    ]);
    assert.match(res.topics?.[0]?.errorMessage ?? '', /larger than available brokers/);
    assert.deepEqual(asked.map((t) => t.name), ['rf'], 'only the well-formed topic reached the front end');
  });
});

describe("CreateTopics against a controller slower than the request's timeout", () => {
  it('answers REQUEST_TIMED_OUT for the topic within about the timeout', { timeout: 5_000 }, async () => {
    const view = new ImageClusterView('c1', 1, 'PLAINTEXT', MetadataImage.EMPTY);
    const follower = new MetadataFollower(view);
    const channel = new FakeControllerChannel(follower);
    await registerBroker(channel);
    channel.answerDelayMs.set(1, 3_000);
    const store = new ForwardingMetadataStore(channel, follower, view, 60_000);
    const admin = new TopicAdmin(config, view, store, { applied: () => Promise.resolve() }, new DescriptorBudget(1 << 20, 0));
    const started = performance.now();
    const res = answered(await createTopicsHandler.handle(requestContext(19, 5), { topics: [topicIn('slow', { numPartitions: 1 })], timeoutMs: 200, validateOnly: false }, { config, topics: admin }));
    const took = performance.now() - started;
    assert.deepEqual(res.topics?.map((t) => [t.name, t.errorCode]), [['slow', ErrorCode.REQUEST_TIMED_OUT]]);
    assert.ok(took >= 190 && took < 1_500, `answered after ${took.toFixed(0)} ms`);
  });
});

describe('CreatePartitions', () => {
  it("hands the count and the client's replica lists to the front end, errors per topic", async () => {
    const asked: Array<[string, number, readonly (readonly number[])[] | null, boolean]> = [];
    const deps = {
      topics: {
        addPartitions: (name: string, total: number, assignment: readonly (readonly number[])[] | null, validateOnly?: boolean): Promise<void> => {
          asked.push([name, total, assignment, validateOnly ?? false]);
          return name === 'x' ? Promise.reject(new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) : Promise.resolve();
        },
      },
    };
    const res = answered(await createPartitionsHandler.handle(requestContext(37, 1), {
      topics: [{ name: 't', count: 3, assignments: [{ brokerIds: [1] }, { brokerIds: [1] }] }, { name: 'x', count: 2, assignments: null }],
      timeoutMs: 1000, validateOnly: true,
    }, deps));
    assert.deepEqual(asked, [['t', 3, [[1], [1]], true], ['x', 2, null, true]]);
    assert.deepEqual(res.results?.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  });
});

describe('DeleteTopics', () => {
  it('resolves topic ids through the cluster view and deletes through the front end', async () => {
    const cluster = clusterView({ topics: [{ name: 't', partitions: 1 }] });
    const deleted: string[] = [];
    const deps = {
      cluster,
      topics: {
        delete: (name: string) => {
          deleted.push(name);
          return Promise.resolve(cluster.topic(name)!);
        },
      },
    };
    const res = answered(await deleteTopicsHandler.handle(requestContext(20, 6), {
      topics: [{ name: null, topicId: cluster.topic('t')!.id }, { name: null, topicId: 'f'.repeat(32) }], topicNames: [], timeoutMs: 1000,
    }, deps));
    assert.deepEqual(deleted, ['t']);
    assert.deepEqual(res.responses?.map((r) => [r.name, r.errorCode]), [['t', ErrorCode.NONE], [null, ErrorCode.UNKNOWN_TOPIC_ID]]);
  });
});
