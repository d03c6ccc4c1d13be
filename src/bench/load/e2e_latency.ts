// End-to-end latency at a fixed rate (bench driver, main thread): a paced producer (one raw
// connection, K slots) stamps into every record value the performance.now() time its batch was
// due; a consumer on its own connection long-polls Fetch (maxWait, minBytes 1) and records, per
// record, now - stamp. Producer and consumer share this thread and clock, so no clock skew.
// Pacing: batch i is due at i * batchRecords / rate; a 1 ms timer sends every due batch that has
// a free slot (a tick that finds none counts in `lateSends`; the batch goes out later, and its
// wait is part of its latency).
// Bounds: the producer stops after `durationMs` or `messages`; the consumer stops when it has
// every acknowledged record or `drainTimeoutMs` after the producer stopped.
import { performance } from 'node:perf_hooks';
import type { KafkaConnection } from '../../client/connection.js';
import { errorName } from '../../protocol/errors.js';
import { buildBatchTemplate, stampValues } from './batch_template.js';
import type { BatchTemplate } from './batch_template.js';
import type { WalkTotals } from './fetch_walk.js';
import { fetchOnce, fetchVersion } from './kafka_setup.js';
import type { FetchShape } from './kafka_setup.js';
import { newLatencyHistogram, summarizeLatency } from './latency.js';
import type { Histogram, LatencySummary } from './latency.js';
import { PipelinedProducer, openSocket, watchTimeouts } from './pipelined_producer.js';
import { buildProduceFrame } from './produce_wire.js';

export interface E2eOptions {
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly partitions: number;
  readonly batchRecords: number;
  /** >= 8: each value starts with the float64 send time. */
  readonly recordBytes: number;
  readonly acks: number;
  readonly ratePerSec: number;
  readonly messages: number;
  readonly durationMs: number;
  /** Records consumed in the first warmupMs are not counted. */
  readonly warmupMs: number;
  readonly inflight: number;
  readonly produceVersion: number;
  readonly requestTimeoutMs: number;
  readonly drainTimeoutMs: number;
  readonly fetch: FetchShape;
  /** Told of every acknowledged batch and every consumed record as it happens (sluice bench's windows). */
  readonly observer?: E2eObserver;
}

/** Events of a run, each at performance.now(); warm-up included. */
export interface E2eObserver {
  /** `records` acknowledged after `latencyMs`; the batch went out `delayMs` after it was due. */
  acked(atMs: number, records: number, latencyMs: number, delayMs: number): void;
  /** One record consumed `latencyMs` after it was due. */
  consumed(atMs: number, latencyMs: number): void;
}

export interface E2eResult {
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly sent: number;
  readonly acked: number;
  readonly received: number;
  /** Send -> consumed by the fetch loop, per record. */
  readonly latency: LatencySummary;
  /** Send -> Produce answer, per request. */
  readonly produceLatency: LatencySummary;
  readonly lateSends: number;
}

class PacedProducer {
  readonly free: number[] = [];
  sent = 0;
  acked = 0;
  lateSends = 0;
  stopped = false;
  readonly produceHist = newLatencyHistogram();
  /** Per slot: how late its batch in flight went out (ms after it was due). */
  private readonly sendDelayMs: number[];
  private batchesSent = 0;
  private startedAt = 0;
  private stoppedAt = 0;

  constructor(readonly o: E2eOptions, readonly template: BatchTemplate, readonly p: PipelinedProducer) {
    for (let s = p.frames.length - 1; s >= 0; s--) this.free.push(s);
    this.sendDelayMs = new Array<number>(p.frames.length).fill(0);
  }

  start(): void {
    this.startedAt = performance.now();
    this.tick();
  }

  private tick(): void {
    if (this.p.ended) return;
    const now = performance.now();
    const elapsed = now - this.startedAt;
    if (elapsed >= this.o.durationMs || this.sent >= this.o.messages) {
      this.stopped = true;
      this.stoppedAt = now;
      if (this.p.inFlight === 0) this.p.end(null);
      return;
    }
    const due = Math.floor((elapsed * this.o.ratePerSec) / 1000 / this.o.batchRecords) + 1;
    while (this.batchesSent < due && this.sent < this.o.messages) {
      const slot = this.free.pop();
      if (slot === undefined) {
        this.lateSends++;
        break;
      }
      const f = this.p.frames[slot];
      if (f === undefined) throw new Error(`no frame for slot ${slot}`);
      // Stamped with the time the batch was due, not when it went out, so the wait for the
      // timer or for a free slot counts (no coordinated omission).
      const dueAt = this.startedAt + (this.batchesSent * this.o.batchRecords * 1000) / this.o.ratePerSec;
      stampValues(this.template, f.frame, f.batchAt, dueAt);
      const sentAt = performance.now();
      this.sendDelayMs[slot] = sentAt - dueAt;
      this.p.send(slot, sentAt);
      this.batchesSent++;
      this.sent += this.o.batchRecords;
    }
    setTimeout(() => this.tick(), 1);
  }

  /** Send rate achieved while the producer ran. */
  achievedRate(): number {
    return this.sent / Math.max(1e-6, (this.stoppedAt - this.startedAt) / 1000);
  }

  onAnswer(slot: number, errorCode: number, latencyMs: number): void {
    if (errorCode !== 0) {
      this.p.end(new Error(`Produce failed: ${errorName(errorCode)}`));
      return;
    }
    this.acked += this.o.batchRecords;
    this.produceHist.recordValue(Math.max(1, Math.round(latencyMs * 1000)));
    this.o.observer?.acked(performance.now(), this.o.batchRecords, latencyMs, this.sendDelayMs[slot] ?? 0);
    this.free.push(slot);
    if (this.stopped && this.p.inFlight === 0) this.p.end(null);
  }
}

async function openPacedProducer(o: E2eOptions): Promise<PacedProducer> {
  const template = buildBatchTemplate(o.batchRecords, o.recordBytes);
  const frames = Array.from({ length: o.inflight }, (_, slot) => buildProduceFrame({
    version: o.produceVersion, clientId: 'sluice-bench-e2e', topic: o.topic, partition: slot % o.partitions,
    acks: o.acks, timeoutMs: o.requestTimeoutMs, batch: Buffer.from(template.batch),
  }));
  const socket = await openSocket(o.host, o.port, o.requestTimeoutMs);
  let paced: PacedProducer | null = null;
  const p = new PipelinedProducer(socket, frames, o.produceVersion, (slot, answer, latencyMs) => {
    paced?.onAnswer(slot, answer.errorCode, latencyMs);
  });
  paced = new PacedProducer(o, template, p);
  return paced;
}

/** Long-polls until every acknowledged record arrived after the producer stopped, or the drain deadline. */
async function consume(conn: KafkaConnection, o: E2eOptions, producer: PacedProducer, hist: Histogram): Promise<number> {
  const version = fetchVersion(conn);
  const offsets = new Array<number>(o.partitions).fill(0);
  const totals: WalkTotals = { batches: 0, records: 0, bytes: 0, nextOffset: 0 };
  const started = performance.now();
  let stoppedAt = -1;
  const visit = (buf: Buffer, at: number, length: number): void => {
    if (length < 8) return;
    const now = performance.now();
    const latencyMs = now - buf.readDoubleLE(at);
    if (now - started >= o.warmupMs) hist.recordValue(Math.max(1, Math.round(latencyMs * 1000)));
    o.observer?.consumed(now, latencyMs);
  };
  for (;;) {
    const now = performance.now();
    if (producer.stopped && producer.p.inFlight === 0) {
      if (stoppedAt < 0) stoppedAt = now;
      if (totals.records >= producer.acked || now - stoppedAt > o.drainTimeoutMs) break;
    }
    if (now - started > o.durationMs + o.drainTimeoutMs + o.requestTimeoutMs) break;
    await fetchOnce(conn, version, o.topic, offsets, o.fetch, totals, visit);
  }
  return totals.records;
}

export async function runE2eLatency(consumer: KafkaConnection, o: E2eOptions): Promise<E2eResult> {
  if (o.recordBytes < 8) throw new RangeError('e2e records need at least 8 bytes for the send time');
  const producer = await openPacedProducer(o);
  const stopWatch = watchTimeouts([producer.p], o.requestTimeoutMs);
  const hist = newLatencyHistogram();
  try {
    producer.start();
    const [received] = await Promise.all([consume(consumer, o, producer, hist), producer.p.done]);
    return {
      targetRate: o.ratePerSec,
      achievedRate: producer.achievedRate(),
      sent: producer.sent,
      acked: producer.acked,
      received,
      latency: summarizeLatency(hist),
      produceLatency: summarizeLatency(producer.produceHist),
      lateSends: producer.lateSends,
    };
  } finally {
    stopWatch();
    producer.p.end(null);
  }
}
