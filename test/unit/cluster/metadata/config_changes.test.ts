// Alter-configs on the controller: IncrementalAlterConfigs' operations (SET, DELETE, APPEND and
// SUBTRACT on list configs) and AlterConfigs' wholesale replacement applied to a resource's
// overrides, the records that carry the difference, validateOnly, and Kafka's error codes for
// bad requests (unknown resources, static or unknown broker configs, bad throttle values and
// replica lists, malformed operations, size bounds).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { changedConfigs, configRecords, MAX_CONFIG_VALUE_LENGTH, type AlterConfigsRequest, type ConfigChange } from '../../../../src/cluster/metadata/config_changes.js';
import { applyRecords } from '../../../../src/cluster/metadata/delta.js';
import { configKey, MetadataImage, NO_CONFIGS } from '../../../../src/cluster/metadata/image.js';
import type { ControllerReply } from '../../../../src/cluster/metadata/controller.js';
import { validateTopicConfigs } from '../../../../src/coordinator/topic_configs.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { config as controllerConfig, Harness } from '../../../helpers/controller_harness.js';
import { resolveConfig } from '../../../../src/config.js';

const incremental = (changes: ConfigChange[]): AlterConfigsRequest => ({ resourceType: 2, resourceName: 't', mode: 'incremental', validateOnly: false, changes });
const isList = (name: string): boolean => name.endsWith('.replicas');
const codeOf = (f: () => unknown): number => {
  try {
    f();
    return ErrorCode.NONE;
  } catch (err) {
    if (err instanceof KafkaError) return err.code;
    throw err;
  }
};

describe('changedConfigs', () => {
  it('applies SET, DELETE, APPEND and SUBTRACT to the current overrides', () => {
    const before = { 'retention.ms': '1', 'leader.replication.throttled.replicas': '0:1,1:2' };
    const after = changedConfigs(before, incremental([
      { name: 'retention.ms', op: 1, value: null },
      { name: 'segment.ms', op: 0, value: '5' },
      { name: 'leader.replication.throttled.replicas', op: 2, value: '1:2, 2:3' },
      { name: 'follower.replication.throttled.replicas', op: 3, value: '0:1' },
    ]), isList);
    assert.deepEqual(after, { 'segment.ms': '5', 'leader.replication.throttled.replicas': '0:1,1:2,2:3' });
    const emptied = changedConfigs(after, incremental([{ name: 'leader.replication.throttled.replicas', op: 3, value: '0:1,1:2,2:3' }]), isList);
    assert.deepEqual(emptied, { 'segment.ms': '5' }, 'a list emptied by SUBTRACT is no override');
  });

  it('replaces every override under AlterConfigs', () => {
    const after = changedConfigs({ a: '1', b: '2' }, { ...incremental([{ name: 'b', op: 0, value: '3' }]), mode: 'replace' }, isList);
    assert.deepEqual(after, { b: '3' });
  });

  it('refuses malformed requests with Kafka codes', () => {
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'a', op: 9, value: '1' }]), isList)), ErrorCode.INVALID_REQUEST);
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'a', op: 0, value: '1' }, { name: 'a', op: 1, value: null }]), isList)), ErrorCode.INVALID_REQUEST);
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'a', op: 0, value: null }]), isList)), ErrorCode.INVALID_REQUEST);
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'retention.ms', op: 2, value: '1' }]), isList)), ErrorCode.INVALID_CONFIG);
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'a', op: 0, value: 'x'.repeat(MAX_CONFIG_VALUE_LENGTH + 1) }]), isList)), ErrorCode.POLICY_VIOLATION);
    assert.equal(codeOf(() => changedConfigs({}, incremental([{ name: 'n'.repeat(256), op: 0, value: '1' }]), isList)), ErrorCode.POLICY_VIOLATION);
  });

  it('yields records that turn the old overrides into the new ones', () => {
    const overrides = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd.replicas'), fc.constantFrom('1', '2', '0:1'));
    const change = fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd.replicas'), op: fc.constantFrom(0, 1), value: fc.constantFrom('1', '3', '0:2') });
    fc.assert(fc.property(overrides, fc.uniqueArray(change, { selector: (c) => c.name, maxLength: 4 }), (before, changes) => {
      const base = applyRecords(MetadataImage.EMPTY, configRecords(2, 't', NO_CONFIGS, before), { endOffset: 1, epoch: 1 });
      const after = changedConfigs(before, incremental(changes), isList);
      const image = applyRecords(base, configRecords(2, 't', before, after), { endOffset: 2, epoch: 1 });
      assert.deepEqual({ ...(image.configs.get(configKey(2, 't')) ?? {}) }, after);
    }), { numRuns: 300 });
  });
});

describe('MetadataController.alterConfigs', () => {
  const broker = resolveConfig([], {}).config;
  const h = new Harness(controllerConfig({ checkTopicConfigs: (c) => validateTopicConfigs(c, broker) }));
  h.brokers([1, 2, 3]);
  h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 2, replicationFactor: 2, assignment: null, configs: {} }], false, next));
  const alter = (req: Partial<AlterConfigsRequest> & Pick<AlterConfigsRequest, 'changes'>): number => {
    const r = h.now<Extract<ControllerReply, { kind: 'alterConfigs' }>>((next) => h.c.alterConfigs({ resourceType: 2, resourceName: 't', mode: 'incremental', validateOnly: false, ...req }, next));
    return r.errorCode;
  };
  const brokerConfigs = (name: string) => ({ ...(h.c.image.configs.get(configKey(4, name)) ?? {}) });

  it('sets the throttle rates per broker and as the cluster default, refusing static, unknown and bad ones', () => {
    assert.equal(alter({ resourceType: 4, resourceName: '2', changes: [{ name: 'leader.replication.throttled.rate', op: 0, value: '1048576' }] }), ErrorCode.NONE);
    assert.equal(alter({ resourceType: 4, resourceName: '', changes: [{ name: 'follower.replication.throttled.rate', op: 0, value: '9223372036854775807' }] }), ErrorCode.NONE);
    assert.deepEqual(brokerConfigs('2'), { 'leader.replication.throttled.rate': '1048576' });
    assert.deepEqual(brokerConfigs(''), { 'follower.replication.throttled.rate': '9223372036854775807' });
    assert.equal(alter({ resourceType: 4, resourceName: '2', changes: [{ name: 'log.dirs', op: 0, value: '/x' }] }), ErrorCode.INVALID_REQUEST);
    assert.equal(alter({ resourceType: 4, resourceName: '2', changes: [{ name: 'no.such.config', op: 0, value: '1' }] }), ErrorCode.INVALID_CONFIG);
    for (const bad of ['-1', '1.5', 'fast', '9223372036854775808']) {
      assert.equal(alter({ resourceType: 4, resourceName: '2', changes: [{ name: 'leader.replication.throttled.rate', op: 0, value: bad }] }), ErrorCode.INVALID_CONFIG, bad);
    }
    assert.equal(alter({ resourceType: 4, resourceName: '9', changes: [{ name: 'leader.replication.throttled.rate', op: 0, value: '1' }] }), ErrorCode.INVALID_REQUEST);
    assert.equal(alter({ resourceType: 3, resourceName: 'x', changes: [] }), ErrorCode.INVALID_REQUEST);
    assert.deepEqual(brokerConfigs('2'), { 'leader.replication.throttled.rate': '1048576' }, 'refused changes left nothing behind');
  });

  it('validates throttled replica lists and topic names', () => {
    for (const ok of ['*', '0:1', '0:1, 1:2', '']) {
      assert.equal(alter({ changes: [{ name: 'leader.replication.throttled.replicas', op: 0, value: ok }] }), ErrorCode.NONE, ok);
    }
    for (const bad of ['0', '0:x', '*,0:1', '0:1,', '-1:2']) {
      assert.equal(alter({ changes: [{ name: 'follower.replication.throttled.replicas', op: 0, value: bad }] }), ErrorCode.INVALID_CONFIG, bad);
    }
    assert.equal(alter({ resourceName: 'nope', changes: [{ name: 'retention.ms', op: 0, value: '1' }] }), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('writes nothing under validateOnly, and replaces wholesale under AlterConfigs', () => {
    assert.equal(alter({ changes: [{ name: 'retention.ms', op: 0, value: '5' }] }), ErrorCode.NONE);
    const before = h.next;
    assert.equal(alter({ validateOnly: true, changes: [{ name: 'retention.ms', op: 0, value: '6' }] }), ErrorCode.NONE);
    assert.equal(alter({ validateOnly: true, changes: [{ name: 'retention.ms', op: 0, value: 'x' }] }), ErrorCode.INVALID_CONFIG);
    assert.equal(h.next, before, 'validateOnly proposed no batch');
    assert.equal(h.c.image.topicsByName.get('t')!.configs['retention.ms'], '5');
    assert.equal(alter({ mode: 'replace', changes: [{ name: 'segment.ms', op: 0, value: '7' }] }), ErrorCode.NONE);
    assert.deepEqual({ ...h.c.image.topicsByName.get('t')!.configs }, { 'segment.ms': '7' });
  });
});
