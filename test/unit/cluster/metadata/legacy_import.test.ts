// The controller's import of an older single node's topic table and producer-id mark: topics keep
// their ids and configs, every partition lives on the node alone, producer ids continue from the
// mark; a log that already holds exactly that import answers without records (the old file was not
// renamed before a crash), anything else or a malformed table is refused with a Kafka error code.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataController, type ControllerReply, type LegacyMetadata, type Outcome } from '../../../../src/cluster/metadata/controller.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { controllerConfig } from '../../../helpers/fake_controller.js';

const ID_A = 'a'.repeat(32);
const ID_B = '0123456789abcdef0123456789abcdef';

function legacy(over: Partial<LegacyMetadata> = {}): LegacyMetadata {
  return {
    topics: [
      { name: 'orders', id: ID_A, partitions: 3, configs: { 'retention.ms': '1000' } },
      { name: '__consumer_offsets', id: ID_B, partitions: 2, configs: {} },
    ],
    nextProducerId: 7000,
    brokerId: 4,
    ...over,
  };
}

function activeController(): MetadataController {
  const c = new MetadataController(controllerConfig({ checkTopicConfigs: (cfg) => {
    if ('bad' in cfg) throw new KafkaError(ErrorCode.INVALID_CONFIG, 'bad config');
  } }), MetadataImage.EMPTY);
  c.activate(1, 0);
  return c;
}

/** Runs the import at `offset` and commits it; the reply either way. */
function commit(c: MetadataController, meta: LegacyMetadata, offset: number): { outcome: Outcome; reply: ControllerReply } {
  const outcome = c.importLegacy(meta, offset);
  if (outcome.kind === 'answered') return { outcome, reply: outcome.reply };
  return { outcome, reply: c.committed(offset)[0]!.reply! };
}

function codes(reply: ControllerReply): ErrorCode[] {
  assert.equal(reply.kind, 'topics');
  return reply.kind === 'topics' ? reply.results.map((r) => r.errorCode) : [];
}

describe('MetadataController.importLegacy', () => {
  it('writes the topics with their ids and configs on the node alone, and producer ids continue from the mark', () => {
    const c = activeController();
    const { outcome, reply } = commit(c, legacy(), 0);
    assert.equal(outcome.kind, 'propose');
    assert.deepEqual(codes(reply), [ErrorCode.NONE, ErrorCode.NONE]);
    const orders = c.image.topicsByName.get('orders')!;
    assert.equal(orders.id, ID_A);
    assert.equal(orders.table.count, 3);
    assert.deepEqual(orders.configs, { 'retention.ms': '1000' });
    for (let p = 0; p < 3; p++) {
      assert.deepEqual(orders.table.replicas(p), [4]);
      assert.equal(orders.table.leader(p), 4);
    }
    assert.equal(c.image.topicsById.get(ID_B)?.name, '__consumer_offsets');
    assert.equal(c.image.producerIds.nextProducerId, 7000);
  });

  it('answers an import already in the log without records, and refuses one into a log holding other topics', () => {
    const c = activeController();
    commit(c, legacy(), 0);
    const again = c.importLegacy(legacy(), 1);
    assert.equal(again.kind, 'answered');
    assert.deepEqual(codes(again.kind === 'answered' ? again.reply : assert.fail()), [ErrorCode.NONE, ErrorCode.NONE]);
    const other = c.importLegacy(legacy({ topics: [{ name: 'orders', id: 'c'.repeat(32), partitions: 3, configs: {} }] }), 1);
    assert.ok(other.kind === 'answered');
    assert.deepEqual(codes(other.reply), [ErrorCode.INVALID_REQUEST]);
  });

  it('refuses malformed tables with Kafka error codes and writes nothing', () => {
    const t = legacy().topics[0]!;
    const cases: [LegacyMetadata, ErrorCode][] = [
      [legacy({ topics: [{ ...t, id: '0'.repeat(32) }] }), ErrorCode.INVALID_REQUEST],
      [legacy({ topics: [{ ...t, id: 'xyz' }] }), ErrorCode.INVALID_REQUEST],
      [legacy({ topics: [t, { ...t, id: ID_B }] }), ErrorCode.INVALID_REQUEST],
      [legacy({ topics: [t, { ...t, name: 'other' }] }), ErrorCode.INVALID_REQUEST],
      [legacy({ topics: [{ ...t, name: 'bad/name' }] }), ErrorCode.INVALID_TOPIC_EXCEPTION],
      [legacy({ topics: [{ ...t, partitions: 0 }] }), ErrorCode.INVALID_PARTITIONS],
      [legacy({ topics: [{ ...t, partitions: 100_001 }] }), ErrorCode.INVALID_PARTITIONS],
      [legacy({ topics: [{ ...t, configs: { bad: '1' } }] }), ErrorCode.INVALID_CONFIG],
      [legacy({ nextProducerId: -1 }), ErrorCode.INVALID_REQUEST],
      [legacy({ brokerId: -2 }), ErrorCode.INVALID_REQUEST],
    ];
    for (const [meta, code] of cases) {
      const c = activeController();
      const out = c.importLegacy(meta, 0);
      assert.ok(out.kind === 'answered', JSON.stringify(meta));
      assert.ok(codes(out.reply).every((x) => x === code), `${JSON.stringify(meta)}: ${codes(out.reply).join(',')}`);
      assert.equal(c.image.topicsById.size, 0);
    }
  });

  it('is refused NOT_CONTROLLER on a standby', () => {
    const c = new MetadataController(controllerConfig(), MetadataImage.EMPTY);
    const out = c.importLegacy(legacy(), 0);
    assert.ok(out.kind === 'answered');
    assert.deepEqual(codes(out.reply), [ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_CONTROLLER]);
  });
});
