// Fuzzing the request path. In process: random and mutated frames through the same decode steps
// the broker takes (header, api lookup, body of every registered api/version) and through every
// response decoder our client uses; the only exception allowed is ProtocolError. Over the wire:
// FUZZ_FRAMES hostile frames (bounded by FUZZ_BUDGET_MS) on many concurrent connections against a
// broker child process, sampling its RSS; afterwards the broker still runs, a kafkajs client
// round-trips, data written before is intact, and RSS stayed under RSS_BOUND_KB.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { apiByKey, isFlexibleRequest } from '../../src/protocol/apis/index.js';
import { readRequestHeader } from '../../src/protocol/header.js';
import { ProtocolError, Reader } from '../../src/protocol/reader.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { allApiVersions, hostileFrame, seedFrames } from '../helpers/fuzz_frames.js';
import { kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { assertRecordIs, testMessage } from '../helpers/messages.js';
import { RawConn } from '../helpers/raw_socket.js';
import { connectTo, readPartition, topicInfo } from '../helpers/read_back.js';

const FUZZ_FRAMES = Number(process.env['SLUICE_FUZZ_FRAMES'] ?? 20_000);
const FUZZ_BUDGET_MS = 60_000;
const CONCURRENCY = 48;
/** Stated bound for the broker process (main + 2 shard threads) during and after the fuzz. */
const RSS_BOUND_KB = 512 * 1024;
const SEED = Number(process.env['SLUICE_E2E_SEED'] ?? Date.now() % 1_000_000);

function onlyProtocolErrors(run: () => unknown): void {
  try {
    run();
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
  }
}

/** The broker's decode path for one frame body (length prefix already stripped). */
function decodeLikeBroker(body: Buffer): void {
  const r = new Reader(body);
  const header = readRequestHeader(r, isFlexibleRequest);
  const api = apiByKey.get(header.apiKey);
  if (api === undefined || header.apiVersion < api.minVersion || header.apiVersion > api.maxVersion) return;
  api.decodeRequest(header.apiVersion, r);
}

describe('in-process decoder fuzz', () => {
  const seeds = seedFrames('fuzz', '0123456789abcdef0123456789abcdef');

  it('random bytes into every api/version request and response decoder raise only ProtocolError', () => {
    for (const { api, version } of allApiVersions()) {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
        const buf = Buffer.from(bytes);
        onlyProtocolErrors(() => api.decodeRequest(version, new Reader(buf)));
        onlyProtocolErrors(() => api.decodeResponse(version, new Reader(buf)));
      }), { numRuns: 150, seed: SEED });
    }
  });

  it('mutated real Produce/Fetch/Metadata frames and random headers raise only ProtocolError', () => {
    fc.assert(fc.property(hostileFrame(seeds), (frame) => {
      onlyProtocolErrors(() => decodeLikeBroker(frame.subarray(4)));
    }), { numRuns: 20_000, seed: SEED });
  });

  it('mutated frames decode as every other api/version too', () => {
    const pairs = allApiVersions();
    fc.assert(fc.property(hostileFrame(seeds), fc.integer({ min: 0, max: pairs.length - 1 }), (frame, i) => {
      const { api, version } = pairs[i] as (typeof pairs)[number];
      const body = frame.subarray(4 + 8);
      onlyProtocolErrors(() => api.decodeRequest(version, new Reader(body)));
      onlyProtocolErrors(() => api.decodeResponse(version, new Reader(body)));
    }), { numRuns: 5000, seed: SEED });
  });
});

interface FuzzStats {
  sent: number;
  elapsedMs: number;
  answered: number;
  closedByBroker: number;
  rssStart: number;
  rssMax: number;
}

/** Topic 'keep' (300 known records, never targeted) and 'fuzz' (the seeds' target, 50 records). */
async function prepareTopics(broker: BrokerProcess): Promise<string> {
  const kafka = kafkajsClient(broker.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'fuzz', numPartitions: 2 }, { topic: 'keep', numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await sendRange(producer, 'keep', 'keep', 0, 300, { partition: 0 });
  await sendRange(producer, 'fuzz', 'fuzz', 0, 50, { partition: 0 });
  await producer.disconnect();
  const conn = await connectTo(broker.kafkaPort);
  try {
    return (await topicInfo(conn, 'fuzz')).topicId;
  } finally {
    await conn.close();
  }
}

/**
 * CONCURRENCY connections at a time, each carrying 0-2 valid requests (so the hostile frame
 * arrives while others are in flight) and then one hostile frame, so every hostile frame reaches
 * the broker's decoder. Samples the broker's RSS every 200 ms.
 */
async function throwFrames(broker: BrokerProcess, seeds: readonly Buffer[], frames: readonly Buffer[]): Promise<FuzzStats> {
  const stats: FuzzStats = { sent: 0, elapsedMs: 0, answered: 0, closedByBroker: 0, rssStart: broker.rssKb(), rssMax: 0 };
  stats.rssMax = stats.rssStart;
  const sampler = setInterval(() => {
    try {
      stats.rssMax = Math.max(stats.rssMax, broker.rssKb());
    } catch {
      // The process is gone; the liveness check reports it.
    }
  }, 200);
  const started = Date.now();
  const conversation = async (): Promise<void> => {
    while (stats.sent < frames.length && Date.now() - started < FUZZ_BUDGET_MS) {
      const i = stats.sent++;
      const valid = Array.from({ length: i % 3 }, (_, k) => seeds[(i + k) % seeds.length] as Buffer);
      const c = await RawConn.open(broker.kafkaPort, 5000);
      c.write(...valid, frames[i] as Buffer);
      const out = await c.wait({ timeoutMs: 500, quietMs: 60, frames: valid.length });
      c.destroy();
      if (out.closed) stats.closedByBroker++;
      stats.answered += out.frames.length;
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, conversation));
  } finally {
    clearInterval(sampler);
  }
  stats.elapsedMs = Date.now() - started;
  return stats;
}

/** A new kafkajs write lands right after the 300 'keep' records, which are intact. */
async function assertKeepIntact(broker: BrokerProcess): Promise<void> {
  const producer = kafkajsClient(broker.bootstrap).producer();
  await producer.connect();
  const [meta] = await producer.send({ topic: 'keep', acks: -1, messages: [{ value: 'after-fuzz' }] });
  await producer.disconnect();
  assert.equal(Number(meta?.baseOffset), 300, 'the untouched topic moved');
  const conn = await connectTo(broker.kafkaPort);
  try {
    const records = await readPartition(conn, 'keep', 0);
    assert.equal(records.length, 301);
    records.slice(0, 300).forEach((r, i) => assertRecordIs(r, testMessage('keep', i), 'keep'));
    assert.equal(records[300]?.value?.toString(), 'after-fuzz');
  } finally {
    await conn.close();
  }
}

describe('broker fuzz over the wire', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({ args: ['--auto-create-topics=false', '--max-connections', '256', '--idle-timeout-ms', '5000', '--max-request-bytes', String(8 << 20)] });
  });
  afterEach((t) => broker?.noteResult(t));
  after(async () => {
    await broker?.dispose();
  });

  it(`${FUZZ_FRAMES} hostile frames: no crash, bounded RSS, no leaked connections, clients still served`, async (t) => {
    const seeds = seedFrames('fuzz', await prepareTopics(broker));
    const frames = fc.sample(hostileFrame(seeds, true), { numRuns: FUZZ_FRAMES, seed: SEED });
    const s = await throwFrames(broker, seeds, frames);
    await sleep(500);
    t.diagnostic(`seed ${SEED}: ${s.sent} frames in ${s.elapsedMs} ms; ${s.answered} answers, ${s.closedByBroker} closes by the broker; RSS ${s.rssStart} -> max ${s.rssMax} -> ${broker.running ? broker.rssKb() : 'dead'} KiB (bound ${RSS_BOUND_KB})`);
    assert.ok(broker.running, `broker died during the fuzz:\n${broker.logTail()}`);
    assert.ok(s.sent >= Math.min(FUZZ_FRAMES, 5000), `only ${s.sent} frames within the ${FUZZ_BUDGET_MS} ms budget`);
    assert.ok(s.rssMax < RSS_BOUND_KB, `RSS peaked at ${s.rssMax} KiB`);
    assert.ok(s.closedByBroker > 0 && s.answered > 0, 'the fuzz got no answers or no closes: frames did not reach the broker');
    assert.equal(await broker.waitMetric('sluice_connections', (v) => v === 0, 10_000), 0, 'connections the fuzz closed are still counted open');
    await assertKeepIntact(broker);
  });
});
