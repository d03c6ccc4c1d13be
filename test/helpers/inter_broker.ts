// What the inter-broker security tests share (test main thread): producing with acks=all to every
// partition of a topic through kafkajs, and the first check of a three-node cluster whose
// replica fetchers authenticate as the SCRAM user `broker`: once every node knows that user, a
// topic of replication factor 3 takes a write and every follower joins its ISR.
import assert from 'node:assert/strict';
import type { KafkaConfig } from 'kafkajs';
import type { TopicDescription } from '../../src/client/admin.js';
import type { BrokerProcess } from './broker_process.js';
import { Kafka } from './kafkajs_client.js';
import { withAdmin } from './three_brokers.js';
import { until } from './until.js';

/** threeBrokers' `started` hook: the SCRAM users `broker` (replica fetchers) and `alice` (the client), with the tests' passwords. */
export const createScramUsers = (brokers: readonly BrokerProcess[]): Promise<void> => withAdmin(brokers[0]!, async (admin) => {
  await admin.upsertScramCredential('broker', 'SCRAM-SHA-512', 'broker-secret');
  await admin.upsertScramCredential('alice', 'SCRAM-SHA-512', 'alice-secret');
});

export async function produceToEveryPartition(client: KafkaConfig, topic: string, partitions: number, values: readonly string[]): Promise<void> {
  const producer = new Kafka(client).producer();
  await producer.connect();
  try {
    for (let p = 0; p < partitions; p++) await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value, partition: p })) });
  } finally {
    await producer.disconnect();
  }
}

export const describeTopic = (b: BrokerProcess, topic: string): Promise<TopicDescription> => withAdmin(b, (admin) => admin.describeTopic(topic));

/** Creates `topic` (replication factor 3) once every node knows the user `broker`, writes a, b and c to each partition, and waits for full ISRs. */
export async function replicatesWithFullIsrs(brokers: readonly BrokerProcess[], topic: string, partitions: number, client: KafkaConfig): Promise<void> {
  for (const [i, b] of brokers.entries()) {
    await until(`the broker user on node ${i + 1}`, 20_000, () => withAdmin(b, (admin) => admin.describeScramCredentials()), (users) => users.some((u) => u.user === 'broker'));
  }
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(topic, partitions, 3, {}));
  await produceToEveryPartition(client, topic, partitions, ['a', 'b', 'c']);
  const t = await until('full ISRs', 30_000, () => describeTopic(brokers[0]!, topic), (d) => d.partitionDetails.every((p) => p.leader > 0 && p.isr.length === 3));
  for (const p of t.partitionDetails) assert.equal(p.isr.length, 3);
}
