// Parallel consumer bench (bench process, main thread; piscina workers for the CPU-bound run):
// a fresh broker, a 12-partition topic, N records over ≥ 1000 keys produced with kafkajs, then
//  (a) a plain consumer loop awaiting a 5 ms simulated-I/O handler per message (one at a time),
//  (b) ParallelConsumer at concurrency 16/64/256 with the same handler,
//  (c) ~1 ms of hashing per message: inline one at a time vs ParallelConsumer on piscina.
// Prints msg/s, the ratio to its one-at-a-time baseline, per-key order violations (must be 0),
// the largest buffer seen against its bound and handler-to-handler latency percentiles.
// Bounds: every run stops at its message count or its time limit, whichever comes first; each
// parallel run uses its own group (so it reads the topic from the start).
// Run: node <outdir>/bench/consumer.js [--messages N] [--keys K] [--run-ms MS]
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import kafkajs from 'kafkajs';
import { Consumer } from '../src/client/consumer/consumer.js';
import type { ConsumerMessage, ConsumerOptions, TopicPartition } from '../src/client/consumer/types.js';
import { ParallelConsumer } from '../src/client/parallel/parallel_consumer.js';
import { createPiscinaHandler } from '../src/client/parallel/piscina_pool.js';
import type { ConsumerPort, MessageHandler } from '../src/client/parallel/ports.js';
import { BrokerProcess } from '../src/bench/broker_process.js';
import { connectClient, createTopic } from '../src/bench/load/kafka_setup.js';
import { newLatencyHistogram, summarizeLatency } from '../src/bench/load/latency.js';
import type { Histogram } from '../src/bench/load/latency.js';

process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';

/** What the bench needs of a consumer: the parallel consumer's port plus manual assignment. */
export interface BenchConsumer extends ConsumerPort {
  assign(partitions: readonly (TopicPartition & { offset?: number })[]): Promise<void>;
}
export type ConsumerClassFactory = (options: ConsumerOptions) => BenchConsumer;

const TOPIC = 'bench-parallel';
const PARTITIONS = 12;
const IO_MS = 5;
const HASH_ROUNDS = 320;
const BOUND_BYTES = 8 * 1024 * 1024;
const BOUND_MESSAGES = 20_000;
const HASH_WORKER = fileURLToPath(new URL('../test/unit/client/parallel/hash_worker.js', import.meta.url));

interface Settings {
  readonly messages: number;
  readonly keys: number;
  readonly runMs: number;
  readonly baselineMs: number;
}

interface RunResult {
  readonly name: string;
  readonly messages: number;
  readonly seconds: number;
  readonly violations: number;
  readonly maxQueuedBytes: number | null;
  readonly bound: number | null;
  readonly gaps: Histogram;
}

/** Per-key order check plus a histogram of the gaps between a key's consecutive completions. */
class OrderCheck {
  violations = 0;
  done = 0;
  readonly gaps = newLatencyHistogram();
  private readonly lanes = new Map<string, { running: boolean; last: number }>();
  private lastDone = 0;

  start(m: ConsumerMessage): void {
    const id = `${m.partition}:${m.key?.toString('latin1') ?? ''}`;
    let lane = this.lanes.get(id);
    if (lane === undefined) this.lanes.set(id, (lane = { running: false, last: -1 }));
    if (lane.running || m.offset <= lane.last) this.violations++;
    lane.running = true;
    lane.last = m.offset;
  }

  end(m: ConsumerMessage): void {
    const lane = this.lanes.get(`${m.partition}:${m.key?.toString('latin1') ?? ''}`);
    if (lane !== undefined) lane.running = false;
    const now = performance.now();
    if (this.lastDone > 0) this.gaps.recordValue(Math.max(1, Math.round((now - this.lastDone) * 1000)));
    this.lastDone = now;
    this.done++;
  }
}

function hashWork(value: Buffer | null): void {
  let digest: Uint8Array = value ?? new Uint8Array(0);
  for (let i = 0; i < HASH_ROUNDS; i++) digest = createHash('sha256').update(digest).digest();
}

async function produce(bootstrap: string, s: Settings): Promise<void> {
  const kafka = new kafkajs.Kafka({ clientId: 'bench-parallel', brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const value = Buffer.alloc(100, 1);
    for (let i = 0; i < s.messages; i += 1000) {
      const messages = [];
      for (let k = i; k < Math.min(s.messages, i + 1000); k++) messages.push({ key: `key-${k % s.keys}`, value });
      await producer.send({ topic: TOPIC, messages, acks: 1 });
    }
  } finally {
    await producer.disconnect();
  }
}

/** (a)/(c) baseline: poll, then await the handler for each message in turn. */
async function oneAtATime(name: string, make: ConsumerClassFactory, bootstrap: string, handler: (m: ConsumerMessage) => Promise<void>, s: Settings): Promise<RunResult> {
  const consumer = make({ brokers: [bootstrap], clientId: `bench-${name}`, autoOffsetReset: 'earliest' });
  await consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, offset: 0 })));
  const check = new OrderCheck();
  const started = performance.now();
  const deadline = started + s.baselineMs;
  try {
    while (check.done < s.messages && performance.now() < deadline) {
      for (const batch of await consumer.poll()) {
        for (const m of batch.messages) {
          if (performance.now() >= deadline) break;
          check.start(m);
          await handler(m);
          check.end(m);
        }
      }
    }
  } finally {
    await consumer.close();
  }
  return { name, messages: check.done, seconds: (performance.now() - started) / 1000, violations: check.violations, maxQueuedBytes: null, bound: null, gaps: check.gaps };
}

async function parallel(name: string, make: ConsumerClassFactory, bootstrap: string, s: Settings, inner: MessageHandler, concurrency: number): Promise<RunResult> {
  const check = new OrderCheck();
  const handler: MessageHandler = async (m, signal) => {
    check.start(m);
    await inner(m, signal);
    check.end(m);
  };
  const errors: string[] = [];
  const pc = new ParallelConsumer({
    handler,
    concurrency,
    consumer: (listener) => make({ brokers: [bootstrap], clientId: `bench-${name}`, groupId: `bench-${name}`, autoOffsetReset: 'earliest', listener }),
    maxQueuedBytes: BOUND_BYTES,
    maxQueuedMessages: BOUND_MESSAGES,
    onError: (e) => void (errors.length < 5 && errors.push(String(e))),
  });
  const started = performance.now();
  await pc.start([TOPIC]);
  const deadline = started + s.runMs;
  while (check.done < s.messages && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - started) / 1000;
  const stats = pc.stats();
  await pc.stop();
  if (errors.length > 0) console.error(`${name}: ${errors.join('; ')}`);
  return { name, messages: check.done, seconds, violations: check.violations, maxQueuedBytes: stats.maxQueuedBytes, bound: stats.maxQueuedBytesBound, gaps: check.gaps };
}

function report(r: RunResult, baseline: RunResult | null): void {
  const rate = r.messages / r.seconds;
  const ratio = baseline === null ? '' : ` x${(rate / (baseline.messages / baseline.seconds)).toFixed(1)}`;
  const queued = r.maxQueuedBytes === null ? '' : ` maxQueued ${(r.maxQueuedBytes / 1024).toFixed(0)} KiB / bound ${((r.bound ?? 0) / 1024).toFixed(0)} KiB`;
  const gaps = r.gaps.totalCount > 0 ? (({ p50Ms, p99Ms, maxMs }) => ` completion gap p50 ${p50Ms} p99 ${p99Ms} max ${maxMs} ms`)(summarizeLatency(r.gaps)) : '';
  console.log(`${r.name.padEnd(16)} ${r.messages} msgs in ${r.seconds.toFixed(2)} s = ${rate.toFixed(0)} msg/s${ratio} order violations ${r.violations}${queued}${gaps}`);
}

/** The whole bench against a consumer class (the lead wires `Consumer` in `main`). */
export async function runConsumerBench(make: ConsumerClassFactory, s: Settings): Promise<void> {
  const broker = await BrokerProcess.start({ flush: 'never' });
  const bootstrap = `${broker.host}:${broker.kafkaPort}`;
  try {
    const conn = await connectClient(broker.host, broker.kafkaPort, 'bench-parallel-admin');
    try {
      await createTopic(conn, TOPIC, PARTITIONS);
    } finally {
      await conn.close();
    }
    await produce(bootstrap, s);
    console.log(`produced ${s.messages} records over ${s.keys} keys to ${PARTITIONS} partitions`);
    const io = (): Promise<void> => new Promise((r) => setTimeout(r, IO_MS));
    const base = await oneAtATime('io-serial', make, bootstrap, io, s);
    report(base, null);
    for (const concurrency of [16, 64, 256]) {
      report(await parallel(`io-parallel-${concurrency}`, make, bootstrap, s, io, concurrency), base);
    }
    const cpuBase = await oneAtATime('cpu-serial', make, bootstrap, async (m) => hashWork(m.value), s);
    report(cpuBase, null);
    // The pool is built here rather than through the `piscina` option so the order check can wrap it.
    const pool = createPiscinaHandler({ filename: HASH_WORKER, workerData: { rounds: HASH_ROUNDS } });
    try {
      report(await parallel(`cpu-piscina-${pool.threads}t`, make, bootstrap, s, pool.handler, pool.threads * 2), cpuBase);
    } finally {
      await pool.close();
    }
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { messages: { type: 'string' }, keys: { type: 'string' }, 'run-ms': { type: 'string' } } });
  const settings: Settings = {
    messages: Number(values.messages ?? 20_000),
    keys: Math.max(1000, Number(values.keys ?? 1000)),
    runMs: Number(values['run-ms'] ?? 30_000),
    baselineMs: 3_000,
  };
  await runConsumerBench((o) => new Consumer(o), settings);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
