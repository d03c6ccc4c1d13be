// End-to-end latency at a fixed rate (bench driver, main thread): a paced producer
// (paced_producer.ts) stamps into every record value the performance.now() time its batch was
// due; a consumer on its own connection long-polls Fetch (maxWait, minBytes 1) and records, per
// record, now - stamp. Producer and consumer share this thread and clock, so no clock skew.
// Bounds: the producer stops after `durationMs` or `messages`; the consumer stops when it has
// every acknowledged record or `drainTimeoutMs` after the producer stopped.
import { performance } from 'node:perf_hooks';
import type { KafkaConnection } from '../../client/connection.js';
import type { WalkTotals } from './fetch_walk.js';
import { fetchOnce, fetchVersion } from './kafka_setup.js';
import type { FetchShape } from './kafka_setup.js';
import { newLatencyHistogram, summarizeLatency } from './latency.js';
import type { Histogram, LatencySummary } from './latency.js';
import { openPacedProducer } from './paced_producer.js';
import type { AckObserver, PacedProduceOptions, PacedProducer } from './paced_producer.js';
import { watchTimeouts } from './pipelined_producer.js';

export interface E2eOptions extends PacedProduceOptions {
  /** Records consumed in the first warmupMs are not counted. */
  readonly warmupMs: number;
  readonly drainTimeoutMs: number;
  readonly fetch: FetchShape;
  /** Told of every acknowledged batch and every consumed record as it happens (sluice bench's windows). */
  readonly observer?: E2eObserver;
}

/** Events of a run, each at performance.now(); warm-up included. */
export interface E2eObserver extends AckObserver {
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
