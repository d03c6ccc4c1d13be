// The topic front end with a plain-object store and reconciler: replication factor checked
// against the live brokers (-1 meaning the broker default), replicas placed before proposing,
// answers only after the reconciler confirms the change's revision, concurrent auto-creations
// sharing one proposal, internal topics protected.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DescriptorBudget } from '../../../src/common/descriptor_budget.js';
import type { ClusterView } from '../../../src/cluster/cluster_view.js';
import type { Committed, MetadataStore, TopicChange } from '../../../src/cluster/metadata_store.js';
import { TopicAdmin, type ReconcileWaiter } from '../../../src/cluster/topic_admin.js';
import { resolveConfig, type BrokerConfig } from '../../../src/config.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { clusterView, endpoint } from '../../helpers/cluster_fixture.js';

const config: BrokerConfig = resolveConfig([], {}).config;

interface Harness {
  readonly admin: TopicAdmin;
  readonly proposed: TopicChange[];
  readonly events: string[];
  confirm(): void;
}

function harness(
  view: ClusterView = clusterView({ brokers: [endpoint(1), endpoint(2), endpoint(3)] }),
  cfg: BrokerConfig = config,
  descriptors = new DescriptorBudget(1 << 20, 0),
): Harness {
  const proposed: TopicChange[] = [];
  const events: string[] = [];
  let confirm = (): void => {};
  const store: MetadataStore = {
    propose(change): Promise<Committed> {
      proposed.push(change);
      events.push(`propose ${change.kind}`);
      const partitions = change.kind === 'deleteTopic' ? 0 : change.assignment.length;
      return Promise.resolve({ revision: 40 + proposed.length, topic: { name: change.name, id: 'a'.repeat(32), partitions, configs: {} } });
    },
  };
  const reconciler: ReconcileWaiter = {
    applied(revision) {
      events.push(`await ${revision}`);
      return new Promise((resolve) => {
        confirm = () => {
          events.push(`applied ${revision}`);
          resolve();
        };
      });
    },
  };
  return { admin: new TopicAdmin(cfg, view, store, reconciler, descriptors), proposed, events, confirm: () => confirm() };
}

const code = (c: number) => (e: unknown): boolean => e instanceof KafkaError && e.code === c;
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('TopicAdmin', () => {
  it('refuses a replication factor above the live brokers with a message, and places replicas otherwise', async () => {
    const h = harness();
    await assert.rejects(h.admin.create({ name: 't', partitions: 2, replicationFactor: 4, assignment: null, configs: {} }), (e: unknown) =>
      code(ErrorCode.INVALID_REPLICATION_FACTOR)(e) && (e as Error).message.includes('larger than available brokers: 3'));
    assert.equal(h.proposed.length, 0);
    const created = h.admin.create({ name: 't', partitions: 2, replicationFactor: 3, assignment: null, configs: {} });
    await settle();
    h.confirm();
    assert.equal((await created).replicationFactor, 3);
    assert.deepEqual(h.proposed, [{ kind: 'createTopic', name: 't', configs: {}, assignment: [[1, 2, 3], [2, 3, 1]] }]);
  });

  it('takes -1 as the broker default for partitions and replication factor, the default capped by the live brokers', async () => {
    const single = clusterView();
    const h = harness(single, { ...config, numPartitions: 3, defaultReplicationFactor: 2 });
    await assert.rejects(h.admin.create({ name: 't', partitions: -1, replicationFactor: 2, assignment: null, configs: {} }), code(ErrorCode.INVALID_REPLICATION_FACTOR));
    const created = h.admin.create({ name: 't', partitions: -1, replicationFactor: -1, assignment: null, configs: {} });
    await settle();
    h.confirm();
    assert.equal((await created).topic.partitions, 3);
    assert.equal((await created).replicationFactor, 1);
  });

  it('answers a creation only after the reconciler confirms its revision', async () => {
    const h = harness();
    let answered = false;
    const created = h.admin.create({ name: 't', partitions: 1, replicationFactor: 1, assignment: null, configs: {} }).then(() => {
      answered = true;
    });
    await settle();
    assert.deepEqual(h.events, ['propose createTopic', 'await 41']);
    assert.equal(answered, false, 'answered before the partitions were usable');
    h.confirm();
    await created;
    assert.equal(answered, true);
  });

  it('validates a client assignment against the live brokers and proposes it unchanged', async () => {
    const h = harness();
    await assert.rejects(h.admin.create({ name: 't', partitions: -1, replicationFactor: -1, assignment: [[1, 9]], configs: {} }), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    await assert.rejects(h.admin.create({ name: 't', partitions: -1, replicationFactor: -1, assignment: [[1, 2], [3]], configs: {} }), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    const created = h.admin.create({ name: 't', partitions: -1, replicationFactor: -1, assignment: [[3, 1], [1, 2]], configs: {} });
    await settle();
    h.confirm();
    assert.equal((await created).replicationFactor, 2);
    assert.deepEqual(h.proposed[0], { kind: 'createTopic', name: 't', configs: {}, assignment: [[3, 1], [1, 2]] });
  });

  it('validate-only proposes nothing', async () => {
    const h = harness();
    const r = await h.admin.create({ name: 't', partitions: 2, replicationFactor: 1, assignment: null, configs: {} }, true);
    assert.equal(r.topic.partitions, 2);
    assert.equal(h.proposed.length, 0);
  });

  it('lets concurrent auto-creations of one name share one proposal', async () => {
    const h = harness(clusterView());
    const a = h.admin.ensure('auto');
    const b = h.admin.ensure('auto');
    await settle();
    h.confirm();
    assert.equal((await a).name, 'auto');
    assert.equal((await b).name, 'auto');
    assert.equal(h.proposed.length, 1);
  });

  it('refuses to delete or grow internal topics and unknown ones, proposing nothing', async () => {
    const h = harness(clusterView({ topics: [{ name: '__consumer_offsets', partitions: 3 }] }));
    await assert.rejects(h.admin.delete('__consumer_offsets'), code(ErrorCode.INVALID_REQUEST));
    await assert.rejects(h.admin.addPartitions('__consumer_offsets', 5, null), code(ErrorCode.INVALID_REQUEST));
    await assert.rejects(h.admin.delete('nope'), code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    assert.equal(h.proposed.length, 0);
  });

  it('places added partitions after the existing ones with the topic replication factor', async () => {
    const h = harness(clusterView({ brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 1, replicas: [1, 2] }] }));
    const grown = h.admin.addPartitions('t', 3, null);
    await settle();
    h.confirm();
    await grown;
    assert.deepEqual(h.proposed, [{ kind: 'createPartitions', name: 't', assignment: [[2, 1], [1, 2]] }]);
    await assert.rejects(h.admin.addPartitions('t', 1, null), code(ErrorCode.INVALID_PARTITIONS));
    await assert.rejects(h.admin.addPartitions('t', 3, [[1, 2]]), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    await assert.rejects(h.admin.addPartitions('t', 2, [[1]]), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
  });

  it('refuses partitions beyond the descriptor budget with POLICY_VIOLATION and a message, gives back a failed change, and frees a deleted topic', async () => {
    const budget = new DescriptorBudget(110, 100); // room for 10 partitions
    const h = harness(clusterView({ topics: [{ name: 'old', partitions: 4 }] }), config, budget);
    budget.acquire('partitions', 4);
    const refused = (e: unknown): boolean =>
      code(ErrorCode.POLICY_VIOLATION)(e) && /file descriptor budget exhausted: 7 more partitions need 7 descriptors, 6 of 10 are free \(limit 110, 100 reserved/.test((e as Error).message);
    await assert.rejects(h.admin.create({ name: 't', partitions: 7, replicationFactor: 1, assignment: null, configs: {} }), refused);
    await assert.rejects(h.admin.create({ name: 't', partitions: 7, replicationFactor: 1, assignment: null, configs: {} }, true), refused);
    await assert.rejects(h.admin.addPartitions('old', 11, null), (e: unknown) => code(ErrorCode.POLICY_VIOLATION)(e));
    assert.equal(h.proposed.length, 0);
    const created = h.admin.create({ name: 't', partitions: 6, replicationFactor: 1, assignment: null, configs: {} });
    await settle();
    h.confirm();
    await created;
    assert.equal(budget.free, 0);
    await assert.rejects(h.admin.create({ name: 'u', partitions: 1, replicationFactor: 1, assignment: null, configs: {} }), code(ErrorCode.POLICY_VIOLATION));
    const deleted = h.admin.delete('old');
    await settle();
    h.confirm();
    await deleted;
    assert.equal(budget.free, 4);
  });
});
