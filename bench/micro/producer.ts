// Producer throughput: our producer (src/client/producer) vs kafkajs 2.2.4, each producing
// 200k keyed 1 KiB records to a fresh 6-partition topic on a Sluice broker this bench starts
// (2 shards, flush policy from the command line, 'always' by default: with 'never' the broker
// currently wedges under our Produce v11 traffic, see the producer report). 3 runs per client,
// interleaved; prints each run and the median msg/s and MB/s, and our/kafkajs ratios.
// Clients: ours idempotent (its default, acks all), ours acks all without idempotence, ours
// idempotent with 128 KiB batches (closer to kafkajs's 1,000-message sends), kafkajs
// acks -1 (not idempotent, its default), sending 1,000-message batches with 8 sends in flight.
// Usage: node <outDir>/bench/micro/producer.js [records] [flush]   Bounded: each run has a time budget.

import { performance } from 'node:perf_hooks';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { Producer } from '../../src/client/producer/index.js';
import type { ProducerOptions, RecordMetadata } from '../../src/client/producer/index.js';
import { BrokerProcess } from '../../src/bench/broker_process.js';

const RECORDS = Number(process.argv[2] ?? 200_000);
const FLUSH = process.argv[3] ?? 'always';
const VALUE_BYTES = 1024;
const PARTITIONS = 6;
const RUNS = 3;
const RUN_BUDGET_MS = 120_000;
/** Our sends outstanding at once: well inside the 32 MiB buffer. */
const WINDOW = 16_384;
const KAFKAJS_BATCH = 1000;
const KAFKAJS_CONCURRENCY = 8;

const value = Buffer.alloc(VALUE_BYTES, 0x61);
const keys = Array.from({ length: 4096 }, (_, i) => Buffer.from(`key-${i}`));

type Client = 'ours-idempotent' | 'ours-acks-all' | 'ours-batch-128k' | 'kafkajs';

/** Our clients' options beyond the defaults. */
const OURS: Readonly<Record<Exclude<Client, 'kafkajs'>, Partial<ProducerOptions>>> = {
  'ours-idempotent': {},
  'ours-acks-all': { idempotent: false },
  'ours-batch-128k': { batchSize: 128 * 1024 },
};

function budget<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} exceeded ${RUN_BUDGET_MS} ms`)), RUN_BUDGET_MS);
  })]).finally(() => clearTimeout(timer));
}

async function runOurs(bootstrap: string, topic: string, options: Partial<ProducerOptions>): Promise<number> {
  const p = new Producer({ brokers: [bootstrap], clientId: 'bench-ours', ...options });
  await p.connect();
  const started = performance.now();
  const pending: Promise<RecordMetadata>[] = new Array(RECORDS);
  for (let i = 0; i < RECORDS; i++) {
    pending[i] = p.send(topic, { key: keys[i % keys.length] as Buffer, value });
    if (i % 1000 === 0 && i >= WINDOW) await pending[i - WINDOW];
  }
  await Promise.all(pending);
  const ms = performance.now() - started;
  await p.close();
  return ms;
}

async function runKafkajs(bootstrap: string, topic: string): Promise<number> {
  const kafka = new kafkajs.Kafka({ clientId: 'bench-kafkajs', brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < RECORDS) {
      const from = next;
      next = Math.min(RECORDS, from + KAFKAJS_BATCH);
      const messages = [];
      for (let i = from; i < next; i++) messages.push({ key: keys[i % keys.length] as Buffer, value });
      await producer.send({ topic, acks: -1, messages });
    }
  };
  await Promise.all(Array.from({ length: KAFKAJS_CONCURRENCY }, worker));
  const ms = performance.now() - started;
  await producer.disconnect();
  return ms;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function main(): Promise<void> {
  const broker = await BrokerProcess.start({ flush: FLUSH, shards: 2 });
  const bootstrap = `127.0.0.1:${broker.kafkaPort}`;
  const admin: Admin = new kafkajs.Kafka({ brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING }).admin();
  const results = new Map<Client, number[]>([['ours-idempotent', []], ['ours-acks-all', []], ['ours-batch-128k', []], ['kafkajs', []]]);
  try {
    await admin.connect();
    let n = 0;
    for (let run = 0; run < RUNS; run++) {
      for (const client of results.keys()) {
        const topic = `bench-producer-${n++}`;
        await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
        const ms = await budget(client === 'kafkajs'
          ? runKafkajs(bootstrap, topic)
          : runOurs(bootstrap, topic, OURS[client]), `${client} run ${run}`);
        const rate = RECORDS / (ms / 1000);
        results.get(client)?.push(rate);
        console.log(`run ${run} ${client.padEnd(16)} ${ms.toFixed(0).padStart(6)} ms  ${rate.toFixed(0).padStart(8)} msg/s`);
      }
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
    await broker.stop();
  }
  const base = median(results.get('kafkajs') ?? []);
  console.log(`\n${RECORDS} x ${VALUE_BYTES} B, ${PARTITIONS} partitions, flush ${FLUSH}, median of ${RUNS}:`);
  for (const [client, rates] of results) {
    const m = median(rates);
    console.log(`${client.padEnd(16)} ${m.toFixed(0).padStart(8)} msg/s  ${(m * VALUE_BYTES / 1e6).toFixed(1).padStart(6)} MB/s  x${(m / base).toFixed(2)} vs kafkajs`);
  }
}

await main();
