// Test helper: reads partitions back through our own client path (KafkaConnection + FetchApi +
// the client record batch decoder) and checks what other clients produced. Runs on the test's
// main thread. Invariants: every loop is bounded by a deadline; large reads stream records to a
// visitor instead of holding them all.

import assert from 'node:assert/strict';
import { KafkaConnection } from '../../src/client/connection.js';
import { decodeRecordBatches } from '../../src/protocol/records.js';
import type { ConsumedRecord, DecodedBatch } from '../../src/protocol/records.js';
import { errorName } from '../../src/protocol/errors.js';
import { decodedRecords } from '../../src/protocol/schema.js';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import type { FetchRequest, FetchResponsePartition } from '../../src/protocol/apis/fetch.js';
import { ListOffsetsApi } from '../../src/protocol/apis/list_offsets.js';
import type { ListOffsetsResponsePartition } from '../../src/protocol/apis/list_offsets.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';
import type { MetadataResponse } from '../../src/protocol/apis/metadata.js';

export const ZERO_UUID = '0'.repeat(32);
export const LATEST = -1;
export const EARLIEST = -2;

export function connectTo(port: number, clientId = 'sluice-e2e'): Promise<KafkaConnection> {
  return KafkaConnection.connect({ host: '127.0.0.1', port, clientId, requestTimeoutMs: 15_000 });
}

export async function metadata(conn: KafkaConnection, topics: string[] | null, version?: number): Promise<MetadataResponse> {
  return conn.request(MetadataApi, {
    topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  }, version);
}

export interface TopicInfo {
  readonly topicId: string;
  readonly partitions: number;
}

export async function topicInfo(conn: KafkaConnection, topic: string): Promise<TopicInfo> {
  const res = await metadata(conn, [topic]);
  const t = res.topics.find((x) => x.name === topic);
  assert.ok(t !== undefined, `metadata has no topic ${topic}`);
  assert.equal(t.errorCode, 0, `metadata for ${topic}: ${errorName(t.errorCode)}`);
  return { topicId: t.topicId, partitions: t.partitions.length };
}

export async function listOffset(conn: KafkaConnection, topic: string, partition: number, timestamp: number, version?: number): Promise<ListOffsetsResponsePartition> {
  const res = await conn.request(ListOffsetsApi, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }],
  }, version);
  const p = res.topics[0]?.partitions[0];
  assert.ok(p !== undefined, 'ListOffsets answered without the partition');
  return p;
}

export function fetchRequest(topic: string, topicId: string, partition: number, offset: number, maxBytes: number): FetchRequest {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1 },
    maxWaitMs: 200,
    minBytes: 1,
    maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{
      topic, topicId,
      partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: maxBytes, replicaDirectoryId: ZERO_UUID }],
    }],
    forgottenTopicsData: [],
    rackId: '',
  };
}

export async function fetchOnce(conn: KafkaConnection, topic: string, info: TopicInfo, partition: number, offset: number, maxBytes = 8 << 20, version?: number): Promise<FetchResponsePartition> {
  const res = await conn.request(FetchApi, fetchRequest(topic, info.topicId, partition, offset, maxBytes), version);
  assert.equal(res.errorCode, 0, `fetch: ${errorName(res.errorCode)}`);
  const p = res.responses[0]?.partitions[0];
  assert.ok(p !== undefined, 'fetch answered without the partition');
  return p;
}

/** Decoded responses hold one view (encoded ones may hold chunks). */
export function recordsBytes(records: FetchResponsePartition['records']): Buffer {
  return decodedRecords(records);
}

export interface ScanOptions {
  readonly fromOffset?: number;
  /** Read until this offset (exclusive); default: the high watermark seen at the start. */
  readonly untilOffset?: number;
  readonly timeoutMs?: number;
  readonly fetchVersion?: number;
}

/**
 * Streams every record of a partition from `fromOffset` to the end through `visit`, checking
 * that offsets are contiguous. Returns the number of records visited.
 */
export async function scanPartition(conn: KafkaConnection, topic: string, partition: number, visit: (r: ConsumedRecord, batch: DecodedBatch) => void, opts: ScanOptions = {}): Promise<number> {
  const info = await topicInfo(conn, topic);
  const end = opts.untilOffset ?? (await listOffset(conn, topic, partition, LATEST)).offset;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let next = opts.fromOffset ?? 0;
  let count = 0;
  while (next < end) {
    assert.ok(Date.now() < deadline, `${topic}/${partition}: read stalled at offset ${next} of ${end}`);
    const p = await fetchOnce(conn, topic, info, partition, next, 8 << 20, opts.fetchVersion);
    assert.equal(p.errorCode, 0, `${topic}/${partition} fetch at ${next}: ${errorName(p.errorCode)}`);
    const bytes = recordsBytes(p.records);
    if (bytes.length === 0) continue;
    for (const batch of decodeRecordBatches(bytes)) {
      for (const r of batch.records) {
        if (r.offset < next || r.offset >= end) continue;
        assert.equal(r.offset, next, `${topic}/${partition}: offset gap, expected ${next} got ${r.offset}`);
        visit(r, batch);
        next++;
        count++;
      }
    }
  }
  return count;
}

/** Every record of a partition (small partitions only). */
export async function readPartition(conn: KafkaConnection, topic: string, partition: number, opts: ScanOptions = {}): Promise<ConsumedRecord[]> {
  const out: ConsumedRecord[] = [];
  await scanPartition(conn, topic, partition, (r) => out.push(r), opts);
  return out;
}

/** Every batch of a partition, each cut to the records in [fromOffset, end) (small partitions only). */
export async function readBatches(conn: KafkaConnection, topic: string, partition: number, opts: ScanOptions = {}): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  await scanPartition(conn, topic, partition, (_, batch) => {
    if (out[out.length - 1] !== batch) out.push(batch);
  }, opts);
  return out;
}
