// A Produce connection sending at a fixed rate (bench driver, main thread): one raw connection
// with K slots (pipelined_producer.ts), every record value stamped with the performance.now()
// time its batch was due. Used by the e2e latency run and by the idle bench's steady producer.
// Pacing: batch i is due at i * batchRecords / rate; a 1 ms timer sends every due batch that has
// a free slot (a tick that finds none counts in `lateSends`; the batch goes out later, and its
// wait is part of its latency).
// Bounds: stops sending after `durationMs` or `messages`, and ends the connection once the last
// answer arrived; a failed Produce ends it at once (`p.done` rejects).
import { performance } from 'node:perf_hooks';
import { errorName } from '../../protocol/errors.js';
import { buildBatchTemplate, stampValues } from './batch_template.js';
import type { BatchTemplate } from './batch_template.js';
import { newLatencyHistogram } from './latency.js';
import { PipelinedProducer, openSocket } from './pipelined_producer.js';
import { buildProduceFrame } from './produce_wire.js';

export interface PacedProduceOptions {
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly partitions: number;
  readonly batchRecords: number;
  /** >= 8: each value starts with the float64 time its batch was due. */
  readonly recordBytes: number;
  readonly acks: number;
  readonly ratePerSec: number;
  readonly messages: number;
  readonly durationMs: number;
  readonly inflight: number;
  readonly produceVersion: number;
  readonly requestTimeoutMs: number;
  /** The client id of the Produce requests; 'sluice-bench-e2e' when absent. */
  readonly clientId?: string;
  readonly observer?: AckObserver;
}

/** Acknowledgements as they happen, at performance.now(). */
export interface AckObserver {
  /** `records` acknowledged after `latencyMs`; the batch went out `delayMs` after it was due. */
  acked(atMs: number, records: number, latencyMs: number, delayMs: number): void;
}

export class PacedProducer {
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

  constructor(readonly o: PacedProduceOptions, readonly template: BatchTemplate, readonly p: PipelinedProducer) {
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

/** Connects and builds the producer's K frames; sending starts with start(). */
export async function openPacedProducer(o: PacedProduceOptions): Promise<PacedProducer> {
  const template = buildBatchTemplate(o.batchRecords, o.recordBytes);
  const frames = Array.from({ length: o.inflight }, (_, slot) => buildProduceFrame({
    version: o.produceVersion, clientId: o.clientId ?? 'sluice-bench-e2e', topic: o.topic, partition: slot % o.partitions,
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
