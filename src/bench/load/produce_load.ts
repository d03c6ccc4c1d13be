// Produce load generator over the Kafka protocol (bench driver, main thread): N connections,
// each keeping up to K Produce requests in flight, every request one pre-built batch of B records
// of S bytes for one partition (slot s of connection c always targets partition (c*K+s) mod P).
// Measures acknowledged msgs/s, payload MB/s (10^6) and per-request latency (write -> response).
// Bounds: stops sending at `messages` records or after `durationMs`, whichever comes first; then
// waits at most `requestTimeoutMs` for the answers in flight. Memory: K frames per connection.
// The first `warmupMs` of acknowledgements are not counted (JIT, TCP autotuning, page cache).
import { performance } from 'node:perf_hooks';
import { errorName } from '../../protocol/errors.js';
import { buildBatchTemplate } from './batch_template.js';
import { newLatencyHistogram, summarizeLatency } from './latency.js';
import type { Histogram, LatencySummary } from './latency.js';
import { PipelinedProducer, openSocket, watchTimeouts } from './pipelined_producer.js';
import { buildProduceFrame } from './produce_wire.js';
import type { ProduceAnswer, ProduceFrame } from './produce_wire.js';

export interface ProduceLoadOptions {
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly partitions: number;
  readonly connections: number;
  readonly inflight: number;
  readonly batchRecords: number;
  readonly recordBytes: number;
  /** 1 or -1 (all). */
  readonly acks: number;
  readonly messages: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly version: number;
  readonly requestTimeoutMs: number;
}

export interface ProduceLoadResult {
  /** Records acknowledged inside the measured window. */
  readonly messages: number;
  readonly requests: number;
  readonly seconds: number;
  readonly msgsPerSec: number;
  /** Payload bytes (records x recordBytes) per second / 10^6. */
  readonly mbPerSec: number;
  readonly latency: LatencySummary;
  /** Records acknowledged over the whole run, warm-up included. */
  readonly totalMessages: number;
  readonly errors: number;
  readonly firstError: string | null;
}

/** State shared by every connection of one run. */
class Tally {
  readonly histogram: Histogram = newLatencyHistogram();
  sent = 0;
  acked = 0;
  requests = 0;
  measuredFrom = -1;
  ackedAtWindowStart = 0;
  requestsAtWindowStart = 0;
  lastAckAt = 0;
  errors = 0;
  firstError: string | null = null;
  readonly startedAt = performance.now();

  constructor(readonly o: ProduceLoadOptions) {}

  mayStartAnother(now: number): boolean {
    return this.errors === 0 && this.sent < this.o.messages && now - this.startedAt < this.o.durationMs;
  }

  onAck(now: number, latencyMs: number, records: number): void {
    this.acked += records;
    this.requests++;
    this.lastAckAt = now;
    this.histogram.recordValue(latencyMs <= 0 ? 1 : Math.round(latencyMs * 1000));
    if (this.measuredFrom < 0 && now - this.startedAt >= this.o.warmupMs) {
      // The window opens at this acknowledgement; what it acknowledged belongs to the warm-up.
      this.histogram.reset();
      this.measuredFrom = now;
      this.ackedAtWindowStart = this.acked;
      this.requestsAtWindowStart = this.requests;
    }
  }

  fail(message: string): void {
    this.errors++;
    if (this.firstError === null) this.firstError = message;
  }
}

function framesFor(o: ProduceLoadOptions, connection: number): ProduceFrame[] {
  const template = buildBatchTemplate(o.batchRecords, o.recordBytes);
  const frames: ProduceFrame[] = [];
  for (let slot = 0; slot < o.inflight; slot++) {
    frames.push(buildProduceFrame({
      version: o.version, clientId: `sluice-bench-${connection}`, topic: o.topic,
      partition: (connection * o.inflight + slot) % o.partitions, acks: o.acks,
      timeoutMs: o.requestTimeoutMs, batch: template.batch,
    }));
  }
  return frames;
}

function validate(o: ProduceLoadOptions): void {
  for (const [k, v] of [['partitions', o.partitions], ['connections', o.connections], ['inflight', o.inflight],
    ['batchRecords', o.batchRecords], ['messages', o.messages], ['durationMs', o.durationMs]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer (got ${v})`);
  }
  if (o.acks !== 1 && o.acks !== -1) throw new RangeError(`acks must be 1 or -1 (got ${o.acks})`);
}

/** Runs the load; rejects on a connection failure or a request that outlives requestTimeoutMs. */
export async function runProduceLoad(o: ProduceLoadOptions): Promise<ProduceLoadResult> {
  validate(o);
  const sockets = await Promise.all(Array.from({ length: o.connections }, () => openSocket(o.host, o.port, o.requestTimeoutMs)));
  const tally = new Tally(o);
  const producers = sockets.map((socket, c) => {
    const p: PipelinedProducer = new PipelinedProducer(socket, framesFor(o, c), o.version,
      (slot, answer, latencyMs, now) => onAnswer(tally, p, slot, answer, latencyMs, now));
    return p;
  });
  const stopWatch = watchTimeouts(producers, o.requestTimeoutMs);
  try {
    const now = performance.now();
    for (const p of producers) {
      for (let slot = 0; slot < p.frames.length && tally.mayStartAnother(now); slot++) startRequest(tally, p, slot, now);
      if (p.inFlight === 0) p.end(null);
    }
    await Promise.all(producers.map((p) => p.done));
  } finally {
    stopWatch();
    for (const p of producers) p.end(null);
  }
  return resultOf(tally, o);
}

function startRequest(t: Tally, p: PipelinedProducer, slot: number, now: number): void {
  t.sent += t.o.batchRecords;
  p.send(slot, now);
}

/** Max-throughput policy: an answered slot is sent again at once while the bounds allow. */
function onAnswer(t: Tally, p: PipelinedProducer, slot: number, answer: ProduceAnswer, latencyMs: number, now: number): void {
  if (answer.errorCode !== 0) {
    t.fail(`${errorName(answer.errorCode)}${answer.errorMessage === null ? '' : `: ${answer.errorMessage}`}`);
  } else {
    t.onAck(now, latencyMs, t.o.batchRecords);
  }
  if (t.mayStartAnother(now)) startRequest(t, p, slot, now);
  else if (p.inFlight === 0) p.end(null);
}

function resultOf(t: Tally, o: ProduceLoadOptions): ProduceLoadResult {
  // Runs shorter than the warm-up are measured whole.
  const windowed = t.measuredFrom >= 0 && t.lastAckAt > t.measuredFrom;
  const from = windowed ? t.measuredFrom : t.startedAt;
  const messages = windowed ? t.acked - t.ackedAtWindowStart : t.acked;
  const requests = windowed ? t.requests - t.requestsAtWindowStart : t.requests;
  const seconds = Math.max(1e-6, (t.lastAckAt - from) / 1000);
  return {
    messages,
    requests,
    seconds,
    msgsPerSec: messages / seconds,
    mbPerSec: (messages * o.recordBytes) / seconds / 1e6,
    latency: summarizeLatency(t.histogram),
    totalMessages: t.acked,
    errors: t.errors,
    firstError: t.firstError,
  };
}
