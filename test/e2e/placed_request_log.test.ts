// The request log of placed connections (--connection-placement shards, the default), against a
// broker child process at --log-level debug and --slow-request-ms 1: the shard logs every request
// of its placed connections, those it served and those main answered, timed as the client saw
// them. A Fetch forwarded to main (a connection's first request always is) that parked for data
// logs the wait apart from its serving time, as on main; Produces served on the shard are logged
// there, and the slow ones reach sluice_slow_requests_total on main.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import { ProduceApi, type ProduceRequest } from '../../src/protocol/apis/produce.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { placedRequests, sum, waitServed } from '../helpers/placed_requests.js';
import { connectTo, fetchRequest, topicInfo } from '../helpers/read_back.js';
import { RawConn, requestFrame } from '../helpers/raw_socket.js';

const TEST_TIMEOUT_MS = 60_000;
const TOPIC = 'logged';
const PRODUCES = 40;
const FETCH_WAIT_MS = 400;

interface RequestLine {
  readonly msg: string;
  readonly api: string;
  readonly correlationId: number;
  readonly ms: number;
  readonly servingMs: number;
}

function produceBody(value: string): ProduceRequest {
  const records = encodeRecordBatch([{ key: null, value: Buffer.from(value), timestamp: Date.now() }]);
  return { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] };
}

describe('the request log of placed connections', { timeout: TEST_TIMEOUT_MS }, () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await BrokerProcess.start({ shards: 1, args: ['--connection-placement', 'shards', '--log-level', 'debug', '--slow-request-ms', '1', '--offsets-topic-partitions', '1'] });
  });
  afterEach((t) => broker?.noteResult(t));
  after(() => broker?.dispose());

  it('logs requests served on the shard and forwarded ones, a forwarded Fetch\'s park apart from its serving time', async () => {
    const admin = kafkajsClient(broker.bootstrap, 'request-log-e2e').admin();
    await admin.connect();
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }], waitForLeaders: true }), true);
    } finally {
      await admin.disconnect();
    }
    const conn = await connectTo(broker.kafkaPort);
    const info = await topicInfo(conn, TOPIC);
    await conn.close();
    const before = sum((await placedRequests(broker)).served);

    // First on its connection, so forwarded to main; nothing to read, so it parks its whole wait.
    const raw = await RawConn.open(broker.kafkaPort);
    try {
      raw.write(requestFrame(FetchApi, 12, 1, { ...fetchRequest(TOPIC, info.topicId, 0, 0, 1 << 20), maxWaitMs: FETCH_WAIT_MS }));
      await raw.wait({ frames: 1, timeoutMs: 5000 });
      // Then one Produce a request, each served on the shard.
      for (let i = 0; i < PRODUCES; i++) {
        raw.write(requestFrame(ProduceApi, 9, 2 + i, produceBody(`v${i}`)));
        await raw.wait({ frames: 2 + i, timeoutMs: 5000 });
      }
      assert.equal(raw.frames().length, 1 + PRODUCES, 'every request answered');
    } finally {
      raw.destroy();
    }
    assert.ok(sum((await waitServed(broker, before + PRODUCES)).served) - before >= PRODUCES, 'the Produces were served on the shard');

    const lines = readFileSync(broker.logPath, 'utf8').split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as RequestLine);
    const fetch = lines.find((l) => l.api === 'Fetch' && l.correlationId === 1);
    assert.ok(fetch !== undefined, 'the forwarded Fetch is logged');
    assert.ok(fetch.ms >= FETCH_WAIT_MS * 0.9, `it took its wait: ${fetch.ms} ms`);
    assert.ok(fetch.servingMs < fetch.ms - FETCH_WAIT_MS * 0.5, `its park is not serving time: ${fetch.servingMs} of ${fetch.ms} ms`);
    const produces = lines.filter((l) => l.api === 'Produce' && l.correlationId >= 2 && l.correlationId < 2 + PRODUCES);
    assert.equal(produces.length, PRODUCES, 'every Produce served on the shard is logged, once');
    // Each Produce waits for its fsync (--flush always), so some take more than 1 ms.
    const slow = produces.filter((l) => l.servingMs >= 1).length;
    assert.ok(slow > 0, 'some Produce took 1 ms or more');
    const counted = await broker.waitMetric('sluice_slow_requests_total{api="Produce"}', (v) => v >= slow);
    assert.ok(counted >= slow, `main counts the shard's slow Produces: ${counted} of ${slow}`);
  });
});
