// Consumer catch-up bench (bench driver, main thread): one connection reads a pre-filled topic
// from offset 0 with back-to-back Fetch requests (one in flight, like a Kafka consumer with one
// broker), until it has seen `expectedRecords` records or `durationMs` passed. Reports records/s,
// payload MB/s (records x recordBytes / 10^6) and record-batch MB/s as received.
import { performance } from 'node:perf_hooks';
import type { KafkaConnection } from '../../client/connection.js';
import type { WalkTotals } from './fetch_walk.js';
import { fetchOnce, fetchVersion } from './kafka_setup.js';
import type { FetchShape } from './kafka_setup.js';

export interface CatchUpOptions {
  readonly topic: string;
  readonly partitions: number;
  readonly expectedRecords: number;
  readonly recordBytes: number;
  readonly durationMs: number;
  readonly fetch: FetchShape;
  /** Told after every Fetch how many records it brought (sluice bench's consume-rate windows). */
  readonly onFetched?: (atMs: number, records: number) => void;
}

export interface CatchUpResult {
  readonly records: number;
  readonly requests: number;
  readonly seconds: number;
  readonly msgsPerSec: number;
  readonly mbPerSec: number;
  readonly batchMbPerSec: number;
  /** Whether every expected record arrived before the deadline. */
  readonly complete: boolean;
}

export async function runCatchUp(conn: KafkaConnection, o: CatchUpOptions): Promise<CatchUpResult> {
  const version = fetchVersion(conn);
  const offsets = new Array<number>(o.partitions).fill(0);
  const totals: WalkTotals = { batches: 0, records: 0, bytes: 0, nextOffset: 0 };
  const started = performance.now();
  let requests = 0;
  while (totals.records < o.expectedRecords && performance.now() - started < o.durationMs) {
    const before = totals.records;
    await fetchOnce(conn, version, o.topic, offsets, o.fetch, totals, null);
    requests++;
    o.onFetched?.(performance.now(), totals.records - before);
  }
  const seconds = Math.max(1e-6, (performance.now() - started) / 1000);
  return {
    records: totals.records,
    requests,
    seconds,
    msgsPerSec: totals.records / seconds,
    mbPerSec: (totals.records * o.recordBytes) / seconds / 1e6,
    batchMbPerSec: totals.bytes / seconds / 1e6,
    complete: totals.records >= o.expectedRecords,
  };
}
