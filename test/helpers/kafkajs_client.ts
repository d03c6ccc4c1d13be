// Test helper: a kafkajs 2.2.4 client pointed at a test broker, quiet and with bounded retries.
// Runs on the test's main thread.

import kafkajs from 'kafkajs';
import type { Kafka as KafkaType, Producer, ProducerConfig } from 'kafkajs';
import type { TestMessage } from './messages.js';
import { kafkajsMessage, testMessage } from './messages.js';

process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';

export const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = kafkajs;

/** `retries: 0` makes a send either acknowledged once or failed (no hidden re-sends). */
export function kafkajsClient(bootstrap: string, clientId = 'sluice-e2e', retries = 5): KafkaType {
  return new Kafka({
    clientId,
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    requestTimeout: 15_000,
    retry: { retries, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}

export async function connectedProducer(kafka: KafkaType, config: ProducerConfig = {}): Promise<Producer> {
  const producer = kafka.producer({ allowAutoTopicCreation: false, ...config });
  await producer.connect();
  return producer;
}

/** Sends test messages [from, to) in batches of `batch`, one send at a time. */
export async function sendRange(
  producer: Producer, topic: string, tag: string, from: number, to: number,
  opts: { batch?: number; acks?: number; partition?: number; compression?: number; make?: (tag: string, i: number) => TestMessage } = {},
): Promise<void> {
  const batch = opts.batch ?? 100;
  const make = opts.make ?? testMessage;
  for (let i = from; i < to; i += batch) {
    const messages = [];
    for (let k = i; k < Math.min(to, i + batch); k++) {
      const m = kafkajsMessage(make(tag, k));
      messages.push(opts.partition === undefined ? m : { ...m, partition: opts.partition });
    }
    await producer.send({ topic, messages, acks: opts.acks ?? -1, ...(opts.compression === undefined ? {} : { compression: opts.compression }) });
  }
}

