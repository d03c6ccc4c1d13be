// Codec hot-path micro-benchmark (main thread): decode of a Produce request and encode of a Fetch
// response, 10 partitions each, in the versions librdkafka/kafkajs send (v7, v11) and the first
// flexible ones (v9, v12) that platformatic sends. Prints ops/s and partitions/s.
// Run: node dist-codec/bench/micro/codec.js   (bounded: ~1 s per task)

import { Bench } from 'tinybench';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import type { FetchResponse } from '../../src/protocol/apis/fetch.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import type { ProduceRequest } from '../../src/protocol/apis/produce.js';
import { Reader } from '../../src/protocol/reader.js';
import { ZERO_UUID } from '../../src/protocol/schema.js';
import { Writer } from '../../src/protocol/writer.js';

const PARTITIONS = 10;
const BATCH_BYTES = 1024;
const FETCH_BYTES = 64 * 1024;
const TASK_MS = 1000;

function produceBody(version: number): Buffer {
  const request: ProduceRequest = {
    transactionalId: null,
    acks: -1,
    timeoutMs: 30000,
    topicData: [{
      name: 'bench-topic',
      partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: Buffer.alloc(BATCH_BYTES, index) })),
    }],
  };
  const w = new Writer(16 * 1024);
  ProduceApi.encodeRequest(version, request, w);
  return Buffer.concat(w.finish());
}

function fetchResponse(): FetchResponse {
  const records = Buffer.alloc(FETCH_BYTES, 7);
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [{
      topic: 'bench-topic',
      topicId: ZERO_UUID,
      partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({
        partitionIndex, errorCode: 0, highWatermark: 1_000_000 + partitionIndex, lastStableOffset: 1_000_000,
        logStartOffset: 0, divergingEpoch: { epoch: -1, endOffset: -1 }, currentLeader: { leaderId: -1, leaderEpoch: -1 },
        snapshotId: { endOffset: -1, epoch: -1 }, abortedTransactions: null, preferredReadReplica: -1, records,
      })),
    }],
    nodeEndpoints: [],
  };
}

async function main(): Promise<void> {
  const produce7 = produceBody(7);
  const produce9 = produceBody(9);
  const fetch = fetchResponse();
  let sink = 0;
  const bench = new Bench({ name: 'codec', time: TASK_MS, warmupTime: 200 });
  bench
    .add('decode Produce v7 request (10 partitions)', () => {
      sink += ProduceApi.decodeRequest(7, new Reader(produce7)).topicData.length;
    })
    .add('decode Produce v9 request (10 partitions)', () => {
      sink += ProduceApi.decodeRequest(9, new Reader(produce9)).topicData.length;
    })
    .add('encode Fetch v11 response (10 partitions)', () => {
      const w = new Writer(1024);
      FetchApi.encodeResponse(11, fetch, w);
      sink += w.finish().length;
    })
    .add('encode Fetch v12 response (10 partitions)', () => {
      const w = new Writer(1024);
      FetchApi.encodeResponse(12, fetch, w);
      sink += w.finish().length;
    });
  await bench.run();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') {
      console.log(`${task.name}: ${result.state}`);
      continue;
    }
    const ops = result.throughput.mean;
    console.log(`${task.name}: ${Math.round(ops).toLocaleString('en-US')} ops/s, `
      + `${Math.round(ops * PARTITIONS).toLocaleString('en-US')} partitions/s, `
      + `mean ${(result.latency.mean * 1e6).toFixed(0)} ns (±${result.latency.rme.toFixed(1)}%)`);
  }
  if (sink === 0) console.log('(nothing measured)');
}

await main();
