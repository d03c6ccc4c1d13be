// The workload and read-back of the replication fault suite (issue 14 item 6), a Jepsen-style
// queue: idempotent acks=all producers of our client send unique values `p<producer>-<seq>` keyed
// over a topic's partitions, a consumer group reads everything, and after the faults heal a fresh
// reader takes every partition from offset 0 to its high watermark while each replica's log is read
// straight from its broker's segment files. What they saw becomes a QueueHistory for
// queue_checker.ts. Runs on the test's main thread.
// Bounds: at most `maxPerProducer` sends per producer and `maxInFlight` unanswered ones each; the
// run stops at `stop()` or after `maxRunMs`; consumed records are kept up to a fixed multiple of
// what was sent (re-reads after a rebalance included).

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Producer } from '../../src/client/producer/index.js';
import { Consumer } from '../../src/client/consumer/consumer.js';
import { decodeRecordBatches } from '../../src/protocol/records.js';
import { sleep } from '../helpers/broker_process.js';
import { LATEST, listOffset, metadata, scanPartition } from '../helpers/read_back.js';
import { queueValue } from '../helpers/queue_checker.js';
import type { QueueAck, QueueHistory, QueueRead, RecordOrigin, ReplicaLogs } from '../helpers/queue_checker.js';
import type { DecodedBatch } from '../../src/protocol/records.js';
import type { KafkaAdmin } from '../../src/client/admin.js';
import type { KafkaConnection } from '../../src/client/connection.js';
import type { MetadataResponsePartition } from '../../src/protocol/apis/metadata.js';

export interface WorkloadOptions {
  readonly topic: string;
  readonly producers: number;
  readonly consumers: number;
  readonly maxPerProducer: number;
  /** Pause between one producer's sends: the rate that spreads a round's sends over its faults. */
  readonly sendEveryMs: number;
  readonly maxInFlight: number;
  readonly maxRunMs: number;
}

/** What the workload and read-back need of a cluster under test, wherever its nodes run. */
export interface FaultCluster {
  readonly ids: readonly number[];
  /** Clients' bootstrap.servers: every node's Kafka listener. */
  readonly bootstrap: string;
  running(id: number): boolean;
  connect(id: number, timeoutMs?: number): Promise<KafkaConnection>;
  admin(id: number, timeoutMs?: number): Promise<KafkaAdmin>;
  /** The node's --data-dir, where its partition directories live. */
  dataDir(id: number): string;
}

/** A successful acknowledgement's time (ms, performance.now()), for the unavailability window. */
export type AckTimes = readonly number[];

/** Keys per producer: enough distinct keys that murmur2 spreads them over every partition. */
const KEYS = 64;
/** Consumed records kept, as a multiple of values attempted (re-reads after rebalances). */
const CONSUMED_BOUND_FACTOR = 4;

/** A running workload; `stop()` ends sending, waits for every answer and closes the clients. */
export class QueueWorkload {
  readonly acked: QueueAck[] = [];
  readonly ackTimes: number[] = [];
  readonly attempted: number[];
  readonly consumed: QueueRead[] = [];
  /** Sends that failed with an error (indeterminate: the record may or may not have landed). */
  failed = 0;
  private stopping = false;
  private readonly loops: Promise<void>[] = [];

  private constructor(private readonly o: WorkloadOptions) {
    this.attempted = new Array<number>(o.producers).fill(0);
  }

  /** Connects every client (closing those already connected if one fails), then starts sending and reading. */
  static async start(bootstrap: string, o: WorkloadOptions): Promise<QueueWorkload> {
    const w = new QueueWorkload(o);
    const producers: Producer[] = [];
    const consumers: Consumer[] = [];
    try {
      for (let k = 0; k < o.producers; k++) {
        const p = new Producer({
          brokers: bootstrap, clientId: `faults-p${k}`, acks: 'all', idempotent: true,
          requestTimeoutMs: 5_000, deliveryTimeoutMs: 30_000, retryBackoffMs: 50, maxBlockMs: 10_000, lingerMs: 2,
        });
        producers.push(p);
        await p.connect();
      }
      for (let k = 0; k < o.consumers; k++) {
        const c = new Consumer({
          brokers: bootstrap, clientId: `faults-c${k}`, groupId: `${o.topic}-readers`, autoOffsetReset: 'earliest',
          requestTimeoutMs: 5_000, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1_000, maxWaitMs: 200,
        });
        consumers.push(c);
        await c.subscribe([o.topic]);
      }
    } catch (err) {
      await Promise.allSettled([...producers.map((p) => p.close()), ...consumers.map((c) => c.close())]);
      throw err;
    }
    const deadline = performance.now() + o.maxRunMs;
    for (const c of consumers) w.loops.push(w.consume(c));
    producers.forEach((p, k) => w.loops.push(w.produce(p, k, deadline)));
    return w;
  }

  /** Ends the run: producers flush and close (every send answered or failed), consumers close. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  history(final: readonly QueueRead[], replicas: readonly ReplicaLogs[]): QueueHistory {
    return { acked: this.acked, attempted: this.attempted, consumed: this.consumed, final, replicas };
  }

  private async produce(p: Producer, k: number, deadline: number): Promise<void> {
    let inFlight = 0;
    const pending = new Set<Promise<void>>();
    try {
      for (let seq = 0; !this.stopping && seq < this.o.maxPerProducer && performance.now() < deadline; seq++) {
        while (inFlight >= this.o.maxInFlight && !this.stopping) await Promise.race(pending);
        const value = queueValue(k, seq);
        this.attempted[k] = seq + 1;
        inFlight++;
        const sent: Promise<void> = p.send(this.o.topic, { key: `k${k}-${seq % KEYS}`, value }).then(
          (meta) => {
            this.acked.push({ value, partition: meta.partition, offset: meta.offset });
            this.ackTimes.push(performance.now());
          },
          () => {
            this.failed++;
          },
        ).finally(() => {
          inFlight--;
          pending.delete(sent);
        });
        pending.add(sent);
        await sleep(this.o.sendEveryMs);
      }
      await Promise.all(pending);
    } finally {
      await p.close();
    }
  }

  private async consume(c: Consumer): Promise<void> {
    try {
      while (!this.stopping) {
        let batches;
        try {
          batches = await c.poll({ signal: AbortSignal.timeout(1_000) });
        } catch {
          // A fault took the coordinator or a leader away: the consumer recovers on the next poll.
          await sleep(100);
          continue;
        }
        const bound = CONSUMED_BOUND_FACTOR * this.attempted.reduce((a, b) => a + b, 0) + 1_000;
        for (const b of batches) {
          for (const m of b.messages) {
            if (this.consumed.length < bound) this.consumed.push({ partition: m.partition, offset: m.offset, value: m.value?.toString() ?? '' });
          }
        }
      }
    } finally {
      await c.close().catch(() => undefined);
    }
  }
}

/** The topic's partitions as the given broker's Metadata answers them. */
export async function topicPartitions(c: FaultCluster, via: number, topic: string): Promise<MetadataResponsePartition[]> {
  const conn = await c.connect(via, 5_000);
  try {
    const t = (await metadata(conn, [topic])).topics[0];
    if (t === undefined || t.errorCode !== 0) throw new Error(`metadata of ${topic} through node ${via}: error ${t?.errorCode}`);
    return [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex);
  } finally {
    await conn.close();
  }
}

/**
 * Every partition read from offset 0 to its high watermark through its leader (a fresh reader),
 * plus each replica's records from its broker's segment files, bounded by `timeoutMs` per partition.
 */
export async function readAfterHeal(c: FaultCluster, topic: string, timeoutMs = 30_000): Promise<{ final: QueueRead[]; replicas: ReplicaLogs[] }> {
  const final: QueueRead[] = [];
  const replicas: ReplicaLogs[] = [];
  const running = c.ids.find((id) => c.running(id));
  if (running === undefined) throw new Error('no broker is running');
  for (const p of await topicPartitions(c, running, topic)) {
    const conn = await c.connect(p.leaderId, 5_000);
    try {
      const highWatermark = (await listOffset(conn, topic, p.partitionIndex, LATEST)).offset;
      await scanPartition(conn, topic, p.partitionIndex, (r, batch) => final.push({ partition: p.partitionIndex, offset: r.offset, value: r.value?.toString() ?? '', batch: recordOrigin(batch, r.offset) }), { untilOffset: highWatermark, timeoutMs });
      replicas.push({ partition: p.partitionIndex, highWatermark, logs: new Map(p.replicaNodes.map((b) => [b, replicaLog(c, b, topic, p.partitionIndex)])) });
    } finally {
      await conn.close();
    }
  }
  return { final, replicas };
}

/**
 * A replica's records read from `<data-dir>/<topic>-<partition>/*.log` in base-offset order, each
 * with its batch's epoch, producer and sequence (an absent directory is an empty log; a batch still
 * being written at the tail is left out).
 */
export function replicaLog(c: FaultCluster, broker: number, topic: string, partition: number): QueueRead[] {
  const dir = join(c.dataDir(broker), `${topic}-${partition}`);
  if (!existsSync(dir)) return [];
  const out: QueueRead[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.log')).sort()) {
    for (const batch of decodeRecordBatches(readFileSync(join(dir, file)))) {
      if (batch.control) continue;
      for (const r of batch.records) out.push({ partition, offset: r.offset, value: r.value?.toString() ?? '', batch: recordOrigin(batch, r.offset) });
    }
  }
  return out;
}

/** The producer id, epoch and sequence of the record at `offset` of `batch`, and the batch's leader epoch. */
function recordOrigin(batch: DecodedBatch, offset: number): RecordOrigin {
  const sequence = batch.baseSequence < 0 ? -1 : batch.baseSequence + (offset - batch.baseOffset);
  return { producerId: batch.producerId, producerEpoch: batch.producerEpoch, sequence, leaderEpoch: batch.partitionLeaderEpoch };
}
