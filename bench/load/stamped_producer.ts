// A steady background producer for the group benches (bench process, main thread): one raw
// connection, one pre-built one-record Produce frame per partition, message i due at i / rate
// and sent to partition i mod P, its value stamped with the performance.now() time it was due (so
// a consumer in this process can tell a delivery gap that is the producer's from one that is not).
// Pacing: a 1 ms timer sends every due message whose partition has no request in flight; the
// first that has waits for the next tick (the wait is part of its stamped latency).
// Bounds: at most P requests in flight; stops at stop(), after `maxMessages` or `maxDurationMs`.
import { performance } from 'node:perf_hooks';
import { errorName } from '../../src/protocol/errors.js';
import { buildBatchTemplate, stampValues } from '../../src/bench/load/batch_template.js';
import type { BatchTemplate } from '../../src/bench/load/batch_template.js';
import { PipelinedProducer, openSocket, watchTimeouts } from '../../src/bench/load/pipelined_producer.js';
import { buildProduceFrame } from '../../src/bench/load/produce_wire.js';

export interface StampedProducerOptions {
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly partitions: number;
  readonly ratePerSec: number;
  /** >= 8: each value starts with the float64 due time. */
  readonly recordBytes: number;
  readonly version: number;
  readonly requestTimeoutMs: number;
  readonly maxMessages: number;
  readonly maxDurationMs: number;
}

export class StampedProducer {
  sent = 0;
  acked = 0;
  /** Ticks on which the next due message's partition still had a request in flight. */
  lateTicks = 0;
  private readonly busy: Uint8Array;
  private startedAt = 0;
  private stopping = false;
  private stopWatch: () => void = () => undefined;

  private constructor(readonly o: StampedProducerOptions, private readonly template: BatchTemplate, private readonly p: PipelinedProducer) {
    this.busy = new Uint8Array(o.partitions);
  }

  static async open(o: StampedProducerOptions): Promise<StampedProducer> {
    if (o.recordBytes < 8) throw new RangeError('stamped records need at least 8 bytes');
    if (!(o.ratePerSec > 0)) throw new RangeError(`rate must be positive (got ${o.ratePerSec})`);
    const template = buildBatchTemplate(1, o.recordBytes);
    const frames = Array.from({ length: o.partitions }, (_, partition) => buildProduceFrame({
      version: o.version, clientId: 'sluice-bench-stamped', topic: o.topic, partition, acks: 1,
      timeoutMs: o.requestTimeoutMs, batch: Buffer.from(template.batch),
    }));
    const socket = await openSocket(o.host, o.port, o.requestTimeoutMs);
    let self: StampedProducer | null = null;
    const p = new PipelinedProducer(socket, frames, o.version, (slot, answer) => self?.onAnswer(slot, answer.errorCode));
    self = new StampedProducer(o, template, p);
    return self;
  }

  /** Settles when the producer ended; rejects on a failed request or connection. */
  get done(): Promise<void> {
    return this.p.done;
  }

  start(): void {
    this.startedAt = performance.now();
    this.stopWatch = watchTimeouts([this.p], this.o.requestTimeoutMs);
    this.tick();
  }

  /** Stops sending; resolves once the requests in flight are answered (or the connection ended). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.p.inFlight === 0) this.p.end(null);
    try {
      await this.p.done;
    } finally {
      this.stopWatch();
    }
  }

  private tick(): void {
    if (this.p.ended) return;
    const now = performance.now();
    const elapsed = now - this.startedAt;
    if (this.stopping || elapsed >= this.o.maxDurationMs || this.sent >= this.o.maxMessages) {
      this.stopping = true;
      if (this.p.inFlight === 0) this.p.end(null);
      return;
    }
    const due = Math.floor((elapsed * this.o.ratePerSec) / 1000) + 1;
    while (this.sent < due && this.sent < this.o.maxMessages) {
      const partition = this.sent % this.o.partitions;
      if (this.busy[partition] === 1) {
        this.lateTicks++;
        break;
      }
      const f = this.p.frames[partition];
      if (f === undefined) throw new Error(`no frame for partition ${partition}`);
      stampValues(this.template, f.frame, f.batchAt, this.startedAt + (this.sent * 1000) / this.o.ratePerSec);
      this.busy[partition] = 1;
      this.p.send(partition, now);
      this.sent++;
    }
    setTimeout(() => this.tick(), 1);
  }

  private onAnswer(slot: number, errorCode: number): void {
    if (errorCode !== 0) {
      this.p.end(new Error(`Produce failed: ${errorName(errorCode)}`));
      return;
    }
    this.busy[slot] = 0;
    this.acked++;
    if (this.stopping && this.p.inFlight === 0) this.p.end(null);
  }
}
