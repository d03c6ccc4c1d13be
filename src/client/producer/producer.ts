// Our Kafka producer (for Sluice and Apache Kafka): send() partitions a record (explicit, murmur2
// of the key, or sticky for null keys), appends it to the RecordAccumulator and returns its
// delivery promise; the Sender loop batches, sends and retries. Runs on the caller's thread.
// Invariants:
// - send never blocks the thread: with metadata cached and buffer space free it appends
//   synchronously; otherwise it waits (metadata lookup, buffer space) at most maxBlockMs, or
//   rejects at once when onBufferFull is 'error'.
// - Records of one topic are appended in the order of the send() calls, as Java's producer (whose
//   send blocks its caller) keeps them: a send that cannot append at once (metadata missing, buffer
//   full) becomes its topic's tail, and later sends of that topic append after it. Without this,
//   a send backing off from a lost Metadata answer was overtaken by later sends that found the
//   metadata meanwhile, and an idempotent producer gave them the earlier sequences.
// - flush() waits for every batch that held a record when it was called (and for sends still
//   waiting for metadata or space), so everything sent before is acknowledged or failed after.
// - The sets of open batches and of waiting sends are bounded by bufferMemory and by the
//   accumulator's waiter bound; the topic tails by the topics with a waiting send.

import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { fullJitterDelay } from '../../protocol/backoff.js';
import { Cluster } from '../cluster.js';
import type { TopicMetadata } from '../cluster.js';
import { ConnectionError } from '../connection.js';
import type { ProducerRecord } from '../../protocol/records.js';
import { RecordAccumulator } from './accumulator.js';
import type { Appended } from './accumulator.js';
import type { RecordMetadata } from './delivery.js';
import { DefaultPartitioner } from './partitioner.js';
import { resolveProducerOptions, toProducerRecord } from './producer_options.js';
import type { ProducerMessage, ProducerOptions, ResolvedProducerOptions } from './producer_options.js';
import { Sender } from './sender.js';

type State = 'new' | 'connecting' | 'running' | 'closing' | 'closed';

/** A record appended to the accumulator, and where. */
interface Placed {
  readonly topic: string;
  readonly partition: number;
  readonly appended: Appended;
}

export class Producer {
  private readonly cfg: ResolvedProducerOptions;
  private readonly cluster: Cluster;
  private readonly acc: RecordAccumulator;
  private readonly partitioner = new DefaultPartitioner();
  private readonly sender: Sender;
  private readonly available = new WeakMap<TopicMetadata, number[]>();
  /** One delivery promise per batch not yet settled (all records of a batch settle together). */
  private readonly openBatches = new Set<Promise<RecordMetadata>>();
  /** Sends waiting for metadata or buffer space (settled once appended). */
  private readonly waitingSends = new Set<Promise<unknown>>();
  /** Per topic with a waiting send: settles once its last waiting send appended or failed. */
  private readonly appendTails = new Map<string, Promise<void>>();
  private state: State = 'new';

  constructor(options: ProducerOptions) {
    this.cfg = resolveProducerOptions(options);
    this.cluster = new Cluster(options);
    this.acc = new RecordAccumulator({
      lingerMs: this.cfg.lingerMs,
      batchBytes: this.cfg.batchSize,
      bufferBytes: this.cfg.bufferMemory,
      maxRequestBytes: this.cfg.maxRequestSize,
      deliveryTimeoutMs: this.cfg.deliveryTimeoutMs,
      retryBackoffMs: this.cfg.retryBackoffMs,
      idempotent: this.cfg.idempotent,
      onFull: this.cfg.onBufferFull,
    });
    this.sender = new Sender(this.cluster, this.acc, {
      acks: this.cfg.acks,
      compression: this.cfg.compression,
      idempotent: this.cfg.idempotent,
      requestTimeoutMs: this.cfg.requestTimeoutMs,
      retryBackoffMs: this.cfg.retryBackoffMs,
      maxInFlight: this.cfg.maxInFlight,
      backoff: { baseMs: Math.max(1, this.cfg.retryBackoffMs), maxMs: 1000 },
      onDrained: (b) => this.movePastBatch(b.topic, b.partition),
    });
  }

  /** Reads the cluster's brokers and, when idempotent, gets a producer id (retrying transient errors). */
  async connect(): Promise<void> {
    if (this.state !== 'new') throw new Error(`producer is ${this.state}`);
    this.state = 'connecting';
    try {
      await this.cluster.refresh();
      await this.sender.start();
      this.state = 'running';
    } catch (err) {
      this.state = 'new';
      throw err;
    }
  }

  /**
   * Resolves with where the record landed once the broker acknowledged it (offset -1 with
   * acks 0), or rejects with a KafkaError (UNKNOWN_TOPIC_OR_PARTITION for a missing topic,
   * REQUEST_TIMED_OUT past deliveryTimeoutMs, the broker's code for a refused batch), or with
   * BufferFullError when the buffer is full and onBufferFull is 'error'.
   */
  send(topic: string, message: ProducerMessage): Promise<RecordMetadata> {
    if (this.state !== 'running') return Promise.reject(new Error(`producer is ${this.state === 'new' ? 'not connected' : this.state}`));
    let record: ProducerRecord;
    try {
      record = toProducerRecord(message, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
    const deadline = Date.now() + this.cfg.maxBlockMs;
    const partition = message.partition;
    const tail = this.appendTails.get(topic);
    const meta = tail === undefined ? this.cluster.cachedTopic(topic) : undefined;
    if (meta !== undefined) {
      let placed: Placed | Promise<Placed>;
      try {
        placed = this.place(meta, partition, record, deadline);
      } catch (err) {
        return Promise.reject(err);
      }
      if (!(placed instanceof Promise)) return this.appended(placed);
      return this.inTopicOrder(topic, placed).then((p) => this.appended(p));
    }
    // Behind the topic's waiting sends: metadata is looked at (and waited for) only once they appended.
    const placed = (tail ?? Promise.resolve()).then(async () => this.place(this.cluster.cachedTopic(topic) ?? await this.topicMetadata(topic, deadline), partition, record, deadline));
    return this.inTopicOrder(topic, placed).then((p) => this.appended(p));
  }

  /** send for each message; resolves when all are acknowledged, rejects with the first failure. */
  sendBatch(topic: string, messages: readonly ProducerMessage[]): Promise<RecordMetadata[]> {
    return Promise.all(messages.map((m) => this.send(topic, m)));
  }

  /** Sends everything buffered now without waiting for linger, and waits until it is acknowledged or failed. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.waitingSends]);
    this.acc.flush();
    this.sender.wake();
    await Promise.allSettled([...this.openBatches]);
  }

  /** Flushes, then stops the send loop and closes every connection. */
  async close(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return;
    const wasRunning = this.state === 'running';
    this.state = 'closing';
    if (wasRunning) {
      await this.flush();
      await this.sender.stop();
    }
    this.acc.abort(new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'producer closed'));
    await this.cluster.close();
    this.state = 'closed';
  }

  /**
   * Appends `record` to its partition's batch: at once, or once buffer space frees up (a promise;
   * rejects past `deadline`). Throws for a partition the topic does not have or a record too large.
   */
  private place(meta: TopicMetadata, requested: number | undefined, record: ProducerRecord, deadline: number): Placed | Promise<Placed> {
    const count = meta.partitions.length;
    let partition: number;
    if (requested === undefined) {
      partition = this.partitioner.partition(meta.name, record.key, count, record.key === null ? this.availableOf(meta) : undefined);
    } else if (Number.isInteger(requested) && requested >= 0 && requested < count) {
      partition = requested;
    } else {
      throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${meta.name} has no partition ${requested} (it has ${count})`);
    }
    const topic = meta.name;
    const r = this.acc.append(topic, partition, record, Date.now());
    if (r.status === 'appended') return { topic, partition, appended: r };
    return this.appendWhenFree(topic, partition, record, deadline).then((appended) => ({ topic, partition, appended }));
  }

  /**
   * Makes `placed` (a send that could not append at once) its topic's tail: later sends of the
   * topic append after it, whether it appends or fails. Tracked for flush until it settles.
   */
  private inTopicOrder(topic: string, placed: Promise<Placed>): Promise<Placed> {
    const tail = placed.then(() => undefined, () => undefined);
    this.appendTails.set(topic, tail);
    void tail.then(() => {
      if (this.appendTails.get(topic) === tail) this.appendTails.delete(topic);
    });
    return this.whileWaiting(placed);
  }

  private appended({ topic, partition, appended: r }: Placed): Promise<RecordMetadata> {
    if (r.newBatch) {
      const delivery = r.delivery;
      const forget = (): void => {
        this.openBatches.delete(delivery);
      };
      this.openBatches.add(delivery);
      delivery.then(forget, forget);
    }
    if (r.ready) this.movePastBatch(topic, partition);
    if (r.newBatch || r.ready) this.sender.wake();
    return r.delivery;
  }

  /** Buffer full: wait for space (until the send's maxBlockMs deadline) or fail at once, per onBufferFull. */
  private async appendWhenFree(topic: string, partition: number, record: ProducerRecord, deadline: number): Promise<Appended> {
    const signal = AbortSignal.timeout(Math.max(0, deadline - Date.now()));
    try {
      return await this.acc.appendOrWait(topic, partition, record, Date.now, signal);
    } catch (err) {
      if (signal.aborted && err === signal.reason) {
        throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `no buffer space within maxBlockMs (${this.cfg.maxBlockMs} ms)`);
      }
      throw err;
    }
  }

  /**
   * Metadata for `topic`, retrying unreachable brokers until `deadline` (maxBlockMs after the send). An unknown topic gets a
   * second look: Cluster.topic can join a refresh already under way that did not ask for it.
   */
  private async topicMetadata(topic: string, deadline: number): Promise<TopicMetadata> {
    let unknownOnce = false;
    for (let n = 0; ; n++) {
      try {
        return await this.cluster.topic(topic);
      } catch (err) {
        const unknown = err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        if (unknown && !unknownOnce) {
          unknownOnce = true;
          continue;
        }
        const transient = err instanceof ConnectionError || (err instanceof KafkaError && err.code === ErrorCode.REQUEST_TIMED_OUT);
        const delay = fullJitterDelay(n, { baseMs: Math.max(1, this.cfg.retryBackoffMs), maxMs: 1000 });
        if (!transient || Date.now() + delay >= deadline || this.state !== 'running') throw err;
        await sleep(delay);
      }
    }
  }

  /** Tracks `p` until it settles, for flush: a send waiting for metadata or space, not for delivery. */
  private whileWaiting<T>(p: Promise<T>): Promise<T> {
    const forget = (): void => {
      this.waitingSends.delete(p);
    };
    this.waitingSends.add(p);
    p.then(forget, forget);
    return p;
  }

  /** A batch of `partition` is closed: keyless records of its topic move to another partition. */
  private movePastBatch(topic: string, partition: number): void {
    const meta = this.cluster.cachedTopic(topic);
    if (meta !== undefined) this.partitioner.onBatchDone(topic, partition, meta.partitions.length, this.availableOf(meta));
  }

  private availableOf(meta: TopicMetadata): number[] {
    let list = this.available.get(meta);
    if (list === undefined) {
      list = meta.partitions.filter((p) => p !== undefined && p.leader >= 0).map((p) => p.partition);
      this.available.set(meta, list);
    }
    return list;
  }
}
