// Control-plane helpers for the bench (bench driver, main thread), over our KafkaConnection:
// create a topic and wait until every partition has a leader, and the Fetch round trip the
// catch-up and e2e consumers share (one fetch session-less request for all partitions of one
// topic, records walked in place). Every wait here is bounded by a deadline.
import { KafkaAdmin } from '../../client/admin.js';
import { KafkaConnection } from '../../client/connection.js';
import { FetchApi } from '../../protocol/apis/fetch.js';
import type { FetchRequest } from '../../protocol/apis/fetch.js';
import { ProduceApi } from '../../protocol/apis/produce.js';
import { errorName } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/schema.js';
import { walkBatches } from './fetch_walk.js';
import type { ValueVisitor, WalkTotals } from './fetch_walk.js';

/** Fetch v12: flexible, still addresses topics by name (v13+ needs topic ids). */
const FETCH_VERSION_CAP = 12;

export function connectClient(host: string, port: number, clientId: string, requestTimeoutMs = 30_000): Promise<KafkaConnection> {
  return KafkaConnection.connect({ host, port, clientId, requestTimeoutMs });
}

export function produceVersion(conn: KafkaConnection): number {
  return conn.versionFor(ProduceApi);
}

export function fetchVersion(conn: KafkaConnection): number {
  return Math.min(conn.versionFor(FetchApi), FETCH_VERSION_CAP);
}

/** Creates `topic` with `partitions` partitions (replication 1) and waits, at most timeoutMs, for leaders. */
export async function createTopic(conn: KafkaConnection, topic: string, partitions: number, timeoutMs = 15_000): Promise<void> {
  const admin = new KafkaAdmin(conn, { operationTimeoutMs: timeoutMs });
  await admin.createTopics(topic, partitions, 1);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await admin.describeTopic(topic);
    if (d.partitionDetails.length === partitions && d.partitionDetails.every((p) => p.leader >= 0)) return;
    if (Date.now() > deadline) throw new Error(`topic ${topic}: partitions without a leader after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface FetchShape {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly partitionMaxBytes: number;
}

/** Kafka consumer defaults: fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB. */
export const CONSUMER_FETCH: FetchShape = { maxWaitMs: 500, minBytes: 1, maxBytes: 52_428_800, partitionMaxBytes: 1_048_576 };

/** A producer's batch size (64 KiB) when the records per batch are not given. */
export const BATCH_BYTES = 64 * 1024;

export function batchRecordsFor(recordBytes: number, batchRecords: number): number {
  return batchRecords > 0 ? batchRecords : Math.max(1, Math.floor(BATCH_BYTES / (recordBytes + 8)));
}

function fetchRequest(topic: string, offsets: readonly number[], shape: FetchShape): FetchRequest {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1 },
    maxWaitMs: shape.maxWaitMs,
    minBytes: shape.minBytes,
    maxBytes: shape.maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic,
      topicId: ZERO_UUID,
      partitions: offsets.map((fetchOffset, partition) => ({
        partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1,
        partitionMaxBytes: shape.partitionMaxBytes, replicaDirectoryId: ZERO_UUID,
      })),
    }],
    forgottenTopicsData: [],
    rackId: '',
  };
}

/**
 * One Fetch for every partition of `topic` from `offsets` (advanced in place). Whole batches are
 * added to `totals` (its nextOffset is used as scratch). Throws on a partition error.
 */
export async function fetchOnce(
  conn: KafkaConnection, version: number, topic: string, offsets: number[], shape: FetchShape,
  totals: WalkTotals, visit: ValueVisitor | null,
): Promise<void> {
  const res = await conn.request(FetchApi, fetchRequest(topic, offsets, shape), version, { timeoutMs: shape.maxWaitMs + 30_000 });
  if (res.errorCode !== 0) throw new Error(`Fetch failed: ${errorName(res.errorCode)}`);
  for (const t of res.responses) {
    for (const p of t.partitions) {
      if (p.errorCode !== 0) throw new Error(`Fetch ${topic}-${p.partitionIndex}: ${errorName(p.errorCode)}`);
      const records = p.records;
      if (records === null || !Buffer.isBuffer(records) || records.length === 0) continue;
      const from = offsets[p.partitionIndex] as number;
      totals.nextOffset = from;
      walkBatches(records, from, totals, visit);
      offsets[p.partitionIndex] = totals.nextOffset;
    }
  }
}
