// Metadata images, deltas and snapshots: a batch applies the same whether its records come one
// per batch, in arbitrary groups or all at once; a snapshot loads back to the image it was taken
// from; unchanged parts are shared between versions and a failing batch leaves its base
// untouched; the image's cluster view shows live brokers and materialized partitions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyEntry, applyRecords } from '../../../../src/cluster/metadata/delta.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../../src/cluster/metadata/image_view.js';
import { encodeBatch, type MetadataRecord } from '../../../../src/cluster/metadata/records.js';
import { encodeSnapshot, loadSnapshot } from '../../../../src/cluster/metadata/snapshot.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { describeImage, recordsArb } from '../../../helpers/metadata_fixture.js';

const AT = { endOffset: 1, epoch: 1 };

/** Splits `records` at the given cut points into consecutive batches. */
function split(records: readonly MetadataRecord[], cuts: readonly number[]): MetadataRecord[][] {
  const points = [...new Set(cuts.map((c) => c % (records.length + 1)))].sort((a, b) => a - b);
  const out: MetadataRecord[][] = [];
  let from = 0;
  for (const p of [...points, records.length]) {
    out.push(records.slice(from, p));
    from = p;
  }
  return out;
}

const TOPIC_A = 'aa'.repeat(16);
const TOPIC_B = 'bb'.repeat(16);
const twoTopics: MetadataRecord[] = [
  { type: 'topic', name: 'a', topicId: TOPIC_A },
  { type: 'partition', topicId: TOPIC_A, partition: 0, replicas: [1, 2], isr: [1, 2], removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0 },
  { type: 'topic', name: 'b', topicId: TOPIC_B },
  { type: 'partition', topicId: TOPIC_B, partition: 0, replicas: [2, 1], isr: [2, 1], removingReplicas: [], addingReplicas: [], leader: 2, leaderEpoch: 0, partitionEpoch: 0 },
];

describe('metadata delta', () => {
  it('gives the same image for one batch, one batch per record and any grouping in between', () => {
    fc.assert(fc.property(recordsArb, fc.array(fc.nat(), { maxLength: 6 }), (records, cuts) => {
      const whole = applyRecords(MetadataImage.EMPTY, records, AT);
      let single = applyRecords(MetadataImage.EMPTY, [], AT);
      for (const r of records) single = applyRecords(single, [r], AT);
      let grouped = MetadataImage.EMPTY;
      for (const batch of split(records, cuts)) grouped = applyEntry(grouped, encodeBatch(batch), AT);
      assert.deepStrictEqual(describeImage(single), describeImage(whole));
      assert.deepStrictEqual(describeImage(grouped), describeImage(whole));
    }), { numRuns: 300 });
  });

  it('follows KRaft epoch rules: every change bumps the partition epoch, a leader change the leader epoch', () => {
    const base = applyRecords(MetadataImage.EMPTY, twoTopics, AT);
    const isrOnly = applyRecords(base, [{ type: 'partitionChange', topicId: TOPIC_A, partition: 0, leader: -2, isr: [1], replicas: null, removingReplicas: null, addingReplicas: null }], AT);
    assert.deepStrictEqual(isrOnly.topicsById.get(TOPIC_A)!.table.state(0), { replicas: [1, 2], isr: [1], removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 1 });
    const leader = applyRecords(isrOnly, [{ type: 'partitionChange', topicId: TOPIC_A, partition: 0, leader: -1, isr: null, replicas: null, removingReplicas: null, addingReplicas: null }], AT);
    const s = leader.topicsById.get(TOPIC_A)!.table.state(0);
    assert.equal(s.leader, -1);
    assert.equal(s.leaderEpoch, 1);
    assert.equal(s.partitionEpoch, 2);
  });

  it('shares what a batch does not touch and never changes its base', () => {
    const base = applyRecords(MetadataImage.EMPTY, twoTopics, AT);
    const before = describeImage(base);
    const next = applyRecords(base, [{ type: 'partitionChange', topicId: TOPIC_A, partition: 0, leader: 2, isr: null, replicas: null, removingReplicas: null, addingReplicas: null }], { endOffset: 2, epoch: 1 });
    assert.equal(next.topicsByName.get('b'), base.topicsByName.get('b'));
    assert.notEqual(next.topicsByName.get('a'), base.topicsByName.get('a'));
    assert.equal(next.brokers, base.brokers);
    assert.equal(next.configs, base.configs);
    assert.equal(next.topicsByName.get('a')!.table.leader(0), 2);
    assert.deepStrictEqual(describeImage(base), before);
  });

  it('refuses a batch that does not apply with INVALID_RECORD and leaves the base as it was', () => {
    const base = applyRecords(MetadataImage.EMPTY, twoTopics, AT);
    const before = describeImage(base);
    const bad: MetadataRecord[][] = [
      [{ type: 'partitionChange', topicId: TOPIC_A, partition: 0, leader: 2, isr: null, replicas: null, removingReplicas: null, addingReplicas: null },
        { type: 'partition', topicId: TOPIC_A, partition: 5, replicas: [1], isr: [1], removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }],
      [{ type: 'topic', name: 'a', topicId: 'cc'.repeat(16) }],
      [{ type: 'removeTopic', topicId: 'cc'.repeat(16) }],
      [{ type: 'brokerRegistrationChange', brokerId: 1, brokerEpoch: 0, fenced: 1, inControlledShutdown: false }],
      [{ type: 'producerIds', brokerId: 1, brokerEpoch: 0, nextProducerId: 0 }],
    ];
    for (const batch of bad) {
      assert.throws(() => applyRecords(base, batch, AT), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.INVALID_RECORD);
    }
    assert.deepStrictEqual(describeImage(base), before);
  });

  it('drops a removed topic\'s configs with it', () => {
    const image = applyRecords(MetadataImage.EMPTY, [
      ...twoTopics,
      { type: 'config', resourceType: 2, resourceName: 'a', name: 'retention.ms', value: '1' },
      { type: 'removeTopic', topicId: TOPIC_A },
      { type: 'topic', name: 'a', topicId: 'cc'.repeat(16) },
    ], AT);
    assert.deepStrictEqual(image.topicsByName.get('a')!.configs, {});
    assert.equal(image.configs.size, 0);
  });
});

describe('metadata snapshot', () => {
  it('loads back to the image it was taken from', () => {
    fc.assert(fc.property(recordsArb, (records) => {
      const image = applyRecords(MetadataImage.EMPTY, records, { endOffset: 42, epoch: 3 });
      const loaded = loadSnapshot(encodeSnapshot(image), { endOffset: 42, epoch: 3 });
      assert.deepStrictEqual(describeImage(loaded), describeImage(image));
    }), { numRuns: 300 });
  });
});

describe('ImageClusterView', () => {
  it('lists registered unfenced brokers at the clients\' listener and materializes partitions', () => {
    const register = (id: number, fenced: boolean): MetadataRecord => ({
      type: 'registerBroker', brokerId: id, incarnationId: 'ab'.repeat(16), brokerEpoch: id, rack: id === 2 ? 'r2' : null, fenced, inControlledShutdown: false,
      endpoints: [{ name: 'CONTROLLER', host: 'c', port: 1, securityProtocol: 0 }, { name: 'PLAINTEXT', host: `b${id}`, port: 9000 + id, securityProtocol: 0 }],
    });
    const image = applyRecords(MetadataImage.EMPTY, [register(3, false), register(1, true), register(2, false), ...twoTopics], { endOffset: 7, epoch: 2 });
    const view = new ImageClusterView('cluster', 2, 'PLAINTEXT', image);
    assert.deepStrictEqual(view.brokers(), [{ id: 2, host: 'b2', port: 9002, rack: 'r2' }, { id: 3, host: 'b3', port: 9003, rack: null }]);
    assert.equal(view.revision, 7);
    assert.deepStrictEqual(view.partition('b', 0), { topicId: TOPIC_B, partition: 0, replicas: [2, 1], isr: [2, 1], removingReplicas: [], addingReplicas: [], leader: 2, leaderEpoch: 0, partitionEpoch: 0 });
    assert.equal(view.partition('b', 1), undefined);
    assert.equal(view.partition('b', -1), undefined);
    assert.equal(view.partition('nope', 0), undefined);
    assert.equal(view.topicById(TOPIC_A)?.name, 'a');
    assert.deepStrictEqual([...view.topics()].map((t) => t.name).sort(), ['a', 'b']);
    view.update(applyRecords(image, [{ type: 'brokerRegistrationChange', brokerId: 1, brokerEpoch: 1, fenced: -1, inControlledShutdown: false }], { endOffset: 8, epoch: 2 }));
    assert.deepStrictEqual(view.brokers().map((b) => b.id), [1, 2, 3]);
    assert.equal(view.revision, 8);
  });
});
