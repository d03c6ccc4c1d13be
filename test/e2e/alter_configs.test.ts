// IncrementalAlterConfigs/AlterConfigs and DescribeConfigs with kafkajs on three brokers: topic
// throttled-replica lists and broker throttle rates set through one broker (forwarded to the
// active controller), read back from every broker with Kafka's config sources; static, unknown
// and bad values refused per resource with Kafka's codes; validateOnly changes nothing.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { threeBrokers } from '../helpers/three_brokers.js';
import { ConfigResourceTypes, kafkajsClient } from '../helpers/kafkajs_client.js';
import { until } from '../helpers/until.js';

const brokers = threeBrokers({ sessionMs: 3000, heartbeatMs: 300 });
const TOPIC = 'throttled';

function admin(i: number) {
  const b = brokers[i]!;
  return kafkajsClient(`${b.host}:${b.kafkaPort}`, `alter-configs-${i}`).admin();
}

it('sets topic and broker throttle configs through one broker and reads them from the others', async () => {
  const a = admin(0);
  await a.connect();
  try {
    await a.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2, replicationFactor: 3 }] });
    await a.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [{ name: 'leader.replication.throttled.replicas', value: '0:2,1:3' }, { name: 'follower.replication.throttled.replicas', value: '*' }] }],
    });
    // kafkajs refuses the cluster-default resource ('') itself; the unit tests cover it.
    await a.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '2', configEntries: [{ name: 'leader.replication.throttled.rate', value: '2097152' }, { name: 'follower.replication.throttled.rate', value: '1048576' }] }] });
    await a.alterConfigs({ validateOnly: true, resources: [{ type: ConfigResourceTypes.BROKER, name: '2', configEntries: [{ name: 'leader.replication.throttled.rate', value: '5' }] }] });
    await assert.rejects(a.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '2', configEntries: [{ name: 'log.dirs', value: '/tmp' }] }] }), (e: { type?: string }) => e.type === 'INVALID_REQUEST');
    await assert.rejects(a.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [{ name: 'leader.replication.throttled.replicas', value: '0:x' }] }] }), (e: { type?: string }) => e.type === 'INVALID_CONFIG');
    await assert.rejects(a.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '2', configEntries: [{ name: 'follower.replication.throttled.rate', value: '-1' }] }] }), (e: { type?: string }) => e.type === 'INVALID_CONFIG');
  } finally {
    await a.disconnect();
  }
  const b = admin(1);
  await b.connect();
  try {
    const topic = await until('topic throttle lists on broker 2', 10_000,
      () => b.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC }], includeSynonyms: false }),
      (r) => r.resources[0]?.configEntries.some((e) => e.configName === 'follower.replication.throttled.replicas' && e.configValue === '*') === true);
    const entry = (name: string) => topic.resources[0]!.configEntries.find((e) => e.configName === name);
    assert.equal(entry('leader.replication.throttled.replicas')?.configValue, '0:2,1:3');
    assert.equal(entry('leader.replication.throttled.replicas')?.configSource, 1, 'DYNAMIC_TOPIC_CONFIG');
    const broker = await until('broker throttle rates on broker 2', 10_000,
      () => b.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '2' }], includeSynonyms: false }),
      (r) => r.resources[0]?.configEntries.some((e) => e.configName === 'leader.replication.throttled.rate' && e.configValue === '2097152') === true);
    const rate = (name: string) => broker.resources[0]!.configEntries.find((e) => e.configName === name);
    assert.deepEqual([rate('follower.replication.throttled.rate')?.configValue, rate('follower.replication.throttled.rate')?.configSource], ['1048576', 2], 'DYNAMIC_BROKER_CONFIG');
    assert.deepEqual([rate('leader.replication.throttled.rate')?.configValue, rate('leader.replication.throttled.rate')?.configSource], ['2097152', 2], 'validateOnly left it');
    assert.equal(rate('advertised.listeners')?.configSource, 4, 'STATIC_BROKER_CONFIG');
    assert.equal(rate('log.dirs')?.readOnly, true);
  } finally {
    await b.disconnect();
  }
  const c = admin(2);
  await c.connect();
  try {
    const r = await c.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '3' }], includeSynonyms: false });
    const leader = r.resources[0]!.configEntries.find((e) => e.configName === 'follower.replication.throttled.rate');
    assert.deepEqual([leader?.configValue, leader?.configSource], ['9223372036854775807', 5], "broker 3 has Kafka's default: unthrottled");
  } finally {
    await c.disconnect();
  }
});
