// The client load of the online-expansion test (issue 15 item 5), as a new user would run it: a
// kafkajs producer (idempotent, acks=all, explicit partitions so every acknowledgement places its
// value; one partition per send, see produceKafkajs) over every topic, kcat (librdkafka, enable.idempotence=true, keyed, paced through its
// stdin) on the first topic, a KIP-848 group of our consumer over every topic, and a classic
// group with one confluent-kafka member (librdkafka, cooperative-sticky) on the first topic.
// Sluice's coordinator keeps KIP-848 and classic members in separate groups (no mixed groups), so
// the two consumers are two groups, each reading every topic it subscribes to from the start.
// Values are queue_checker.ts's `p<producer>-<seq>`, seq counting up per producer: one producer
// number per client per load, so loads started one after another on the same topics never reuse
// a value. Every delivery is stamped with the time the test saw it: our consumer's end to end
// (record CreateTime to poll), and per partition the gaps between consecutive deliveries, which
// also come from the librdkafka member's output (read every SAMPLE_MS, so its gaps are exact to
// that). Runs on the test's main thread.
// Bounds: at most `maxPerProducer` values per producer; every loop ends at stop() or after
// `maxRunMs`; each consumer keeps at most CONSUMED_BOUND_FACTOR times the values attempted plus
// the topics' history; the librdkafka member is SIGKILLed after its lifetime bound.

import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import type { Kafka as KafkajsKafka, Producer as KafkajsProducer } from 'kafkajs';
import { Consumer } from '../../src/client/consumer/consumer.js';
import { sleep } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import type { ChildResult } from '../helpers/child.js';
import { PYTHON } from '../helpers/kafka_python.js';
import { KCAT } from '../helpers/kcat.js';
import { MemberLog } from '../helpers/member_log.js';
import type { Consumed } from '../helpers/member_log.js';
import { queueValue } from '../helpers/queue_checker.js';
import type { QueueAck } from '../helpers/queue_checker.js';
import type { Delivery } from '../helpers/delivery_gaps.js';

process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';
const { Kafka, logLevel } = kafkajs;

const GROUP_SCRIPT = fileURLToPath(new URL('../../../test/interop/group_client.py', import.meta.url));
/** Keys kcat spreads its values over (murmur2 places them on every partition). */
const KCAT_KEYS = 64;
const CONSUMED_BOUND_FACTOR = 3;
/** How often the librdkafka member's output is read; its delivery times are exact to this. */
const SAMPLE_MS = 100;

export interface LoadTopic {
  readonly name: string;
  readonly partitions: number;
}

export interface ExpansionLoadOptions {
  readonly bootstrap: string;
  /** Names the groups and client ids; distinct per load on one cluster. */
  readonly tag: string;
  /** kafkajs sends as producer `firstProducer`, kcat as `firstProducer + 1`. */
  readonly firstProducer: number;
  /** Every topic gets kafkajs's values and our group; the first also kcat's and the librdkafka member. */
  readonly topics: readonly LoadTopic[];
  /** Pause between one client's sends (kafkajs: one value per partition of every topic per tick). */
  readonly tickMs: number;
  /** kcat values written to its stdin per tick. */
  readonly kcatPerTick: number;
  readonly maxPerProducer: number;
  readonly maxRunMs: number;
  /** Records already in the topics, which each group reads first (for the consumed bound). */
  readonly history: number;
}

export const KAFKAJS_OFFSET = 0;
export const KCAT_OFFSET = 1;

export class ExpansionLoad {
  /** Acknowledged values by topic (kcat's only once it exited 0 without a delivery failure). */
  readonly acked = new Map<string, QueueAck[]>();
  /** Our group's deliveries and the librdkafka member's, in the order each saw them. */
  readonly ours: Delivery[] = [];
  readonly rdkafka: Delivery[] = [];
  kafkajsSent = 0;
  kafkajsFailed = 0;
  kcatSent = 0;
  /** Errors our consumer's poll returned (each retried on the next poll). */
  ourPollErrors = 0;
  private stopping = false;
  private consuming = true;
  private readonly producing: Promise<void>[] = [];
  private consumerLoop: Promise<void> = Promise.resolve();
  private samplerLoop: Promise<void> = Promise.resolve();
  private kcatRun: Promise<ChildResult> | null = null;
  private readonly consumedBound: number;

  private constructor(
    private readonly o: ExpansionLoadOptions,
    private readonly producer: KafkajsProducer,
    private readonly consumer: Consumer,
    readonly member: MemberLog,
  ) {
    for (const t of o.topics) this.acked.set(t.name, []);
    this.consumedBound = CONSUMED_BOUND_FACTOR * (o.history + 2 * o.maxPerProducer) + 1_000;
  }

  get kafkajsProducer(): number {
    return this.o.firstProducer + KAFKAJS_OFFSET;
  }

  get kcatProducer(): number {
    return this.o.firstProducer + KCAT_OFFSET;
  }

  /** Joins both groups and waits (bounded) until the librdkafka member has an assignment, then starts producing. */
  static async start(o: ExpansionLoadOptions, joinTimeoutMs = 30_000): Promise<ExpansionLoad> {
    const first = o.topics[0];
    if (first === undefined) throw new Error('a load needs a topic');
    const producer = kafkajsOf(o.bootstrap, `${o.tag}-kafkajs`).producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    const consumer = new Consumer({
      brokers: o.bootstrap, clientId: `${o.tag}-ours`, groupId: `${o.tag}-ours`, groupProtocol: 'consumer', autoOffsetReset: 'earliest',
      requestTimeoutMs: 5_000, maxWaitMs: 200,
    });
    const member = MemberLog.python(`${o.tag}-rdkafka`, PYTHON, GROUP_SCRIPT, ['confluent', o.bootstrap, `${o.tag}-rdkafka`, first.name, 'cooperative-sticky'], o.maxRunMs + 180_000);
    const load = new ExpansionLoad(o, producer, consumer, member);
    try {
      await consumer.subscribe(o.topics.map((t) => t.name));
      load.consumerLoop = load.consume();
      load.samplerLoop = load.sampleMember();
      await member.waitFor('an assignment', (m) => m.held.size > 0, joinTimeoutMs);
    } catch (err) {
      await load.stopProducing().catch(() => undefined);
      await load.closeConsumers();
      throw err;
    }
    const deadline = Date.now() + o.maxRunMs;
    load.producing.push(load.produceKafkajs(deadline));
    load.kcatRun = load.startKcat(deadline);
    return load;
  }

  /**
   * Ends sending and waits until every send is answered and kcat exited; kcat's values count as
   * acknowledged only when it exited 0 without a delivery failure. Returns kcat's result.
   */
  async stopProducing(): Promise<ChildResult | null> {
    this.stopping = true;
    await Promise.allSettled(this.producing);
    const kcat = this.kcatRun === null ? null : await this.kcatRun;
    this.kcatRun = null;
    if (kcat !== null && kcat.code === 0 && !/Delivery failed/.test(kcat.stderr)) {
      const acks = this.acked.get((this.o.topics[0] as LoadTopic).name) as QueueAck[];
      for (let seq = 0; seq < this.kcatSent; seq++) acks.push({ value: queueValue(this.kcatProducer, seq), partition: null, offset: null });
    }
    await this.producer.disconnect().catch(() => undefined);
    return kcat;
  }

  /** Stops both consumers (the librdkafka member commits and leaves); bounded. */
  async closeConsumers(): Promise<void> {
    this.consuming = false;
    await this.member.child.stop(20_000).catch(() => undefined);
    await Promise.allSettled([this.consumerLoop, this.samplerLoop]);
    await this.consumer.close().catch(() => undefined);
  }

  /** Values attempted by this load's producers, as [producer number, count]. */
  attempted(): [number, number][] {
    return [[this.kafkajsProducer, this.kafkajsSent], [this.kcatProducer, this.kcatSent]];
  }

  private async consume(): Promise<void> {
    while (this.consuming) {
      let batches;
      try {
        batches = await this.consumer.poll({ signal: AbortSignal.timeout(1_000) });
      } catch {
        // A moved leader or coordinator: the consumer finds the new one on its next poll.
        this.ourPollErrors++;
        await sleep(50);
        continue;
      }
      const at = Date.now();
      for (const b of batches) {
        for (const m of b.messages) {
          if (this.ours.length < this.consumedBound) this.ours.push({ topic: b.topic, partition: b.partition, offset: m.offset, value: m.value?.toString() ?? '', at, createdAt: m.timestamp });
        }
      }
    }
  }

  /** Reads the librdkafka member's new output every SAMPLE_MS and stamps its deliveries. */
  private async sampleMember(): Promise<void> {
    const topic = (this.o.topics[0] as LoadTopic).name;
    let seen = 0;
    for (;;) {
      // Read once more after the exit: its last lines arrived before the close.
      const exited = !this.member.child.running;
      this.member.update();
      const at = Date.now();
      for (; seen < this.member.consumed.length && this.rdkafka.length < this.consumedBound; seen++) {
        const m = this.member.consumed[seen] as Consumed;
        this.rdkafka.push({ topic, partition: m.partition, offset: m.offset, value: m.value?.toString() ?? '', at, createdAt: -1 });
      }
      if (exited) return;
      await sleep(SAMPLE_MS);
    }
  }

  /**
   * One value per partition of every topic per tick: one send per partition, all of a tick's at
   * once, so each send goes to one leader. (A kafkajs sendBatch spanning several leaders is not
   * safe across leader moves, in kafkajs 2.2's sendMessages.js: a Produce answered with an error
   * for one partition throws for the whole request and rolls back the sequence numbers of every
   * partition in it, appended or not; the retry then resends only to brokers without an answer,
   * so a partition whose leader moved to a broker that did answer is not resent, and its next
   * value reuses the rolled-back sequence: the broker rightly takes it for a duplicate of the
   * appended one and acknowledges it at that offset, though it was never written. A partition
   * whose leader moved to a broker not yet answered is resent under new sequence numbers and
   * written twice. The expansion test saw both; one leader per send has neither.)
   */
  private async produceKafkajs(deadline: number): Promise<void> {
    while (!this.stopping && this.kafkajsSent < this.o.maxPerProducer && Date.now() < deadline) {
      const sends = this.o.topics.flatMap((t) => Array.from({ length: t.partitions }, async (_, partition) => {
        const value = queueValue(this.kafkajsProducer, this.kafkajsSent++);
        try {
          const [m] = await this.producer.send({ topic: t.name, acks: -1, messages: [{ partition, key: `k${partition}`, value }] });
          if (m === undefined) throw new Error(`no acknowledgement for ${t.name}-${partition}`);
          (this.acked.get(t.name) as QueueAck[]).push({ value, partition: m.partition, offset: Number(m.baseOffset) });
        } catch {
          this.kafkajsFailed++;
        }
      }));
      await Promise.all(sends);
      await sleep(this.o.tickMs);
    }
  }

  /** kcat reads keyed values from a pipe written every tick, so its sends span the whole load. */
  private startKcat(deadline: number): Promise<ChildResult> {
    const input = new PassThrough();
    const first = this.o.topics[0] as LoadTopic;
    const child = run(KCAT, [
      '-b', this.o.bootstrap, '-P', '-t', first.name, '-K', '\t', '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'linger.ms=5',
      '-X', 'message.timeout.ms=120000', '-X', 'topic.partitioner=murmur2_random',
    ], { input, timeoutMs: this.o.maxRunMs + 150_000 });
    this.producing.push((async (): Promise<void> => {
      while (!this.stopping && this.kcatSent < this.o.maxPerProducer && Date.now() < deadline) {
        const lines: string[] = [];
        for (let i = 0; i < this.o.kcatPerTick && this.kcatSent < this.o.maxPerProducer; i++) {
          const seq = this.kcatSent++;
          lines.push(`c${seq % KCAT_KEYS}\t${queueValue(this.kcatProducer, seq)}`);
        }
        input.write(`${lines.join('\n')}\n`);
        await sleep(this.o.tickMs);
      }
      input.end();
    })());
    return child;
  }
}

export function kafkajsOf(bootstrap: string, clientId: string): KafkajsKafka {
  return new Kafka({
    clientId, brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, connectionTimeout: 3_000, requestTimeout: 10_000,
    // As a producer's delivery timeout: a leadership change must fit in its retries.
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

/**
 * History before the load: `perPartition` values of producer `producer` on every partition of
 * every topic, each with a `padBytes` key so that moves carry some data; idempotent acks=all.
 * Returns the acknowledgements by topic and how many values were attempted.
 */
export async function produceHistory(bootstrap: string, topics: readonly LoadTopic[], producer: number, perPartition: number, padBytes: number): Promise<{ acked: Map<string, QueueAck[]>; attempted: number }> {
  const p = kafkajsOf(bootstrap, 'expansion-history').producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await p.connect();
  const acked = new Map<string, QueueAck[]>(topics.map((t) => [t.name, []]));
  const pad = 'h'.repeat(padBytes);
  let seq = 0;
  const PER_SEND = 20;
  try {
    for (let round = 0; round < perPartition; round += PER_SEND) {
      const n = Math.min(PER_SEND, perPartition - round);
      const topicMessages = topics.map((t) => ({
        topic: t.name,
        messages: Array.from({ length: t.partitions * n }, (_, i) => ({ partition: i % t.partitions, key: `${pad}${i}`, value: queueValue(producer, seq++) })),
      }));
      for (const m of await p.sendBatch({ acks: -1, topicMessages })) {
        const sent = topicMessages.find((t) => t.topic === m.topicName)?.messages.filter((x) => x.partition === m.partition) ?? [];
        sent.forEach((x, i) => acked.get(m.topicName)?.push({ value: x.value, partition: m.partition, offset: Number(m.baseOffset) + i }));
      }
    }
  } finally {
    await p.disconnect();
  }
  return { acked, attempted: seq };
}
