// Bad input over raw sockets against a broker child process: oversized, negative and tiny frame
// lengths, garbage after a valid length, truncated requests, unknown API keys, ApiVersions v99,
// a produce batch with a flipped CRC byte, and more connections than --max-connections. Each case
// checks what Kafka does (close the connection, or the documented error answer), that nothing
// was appended where it must not be, and that a normal kafkajs client still round-trips after.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { ApiVersionsApi } from '../../src/protocol/apis/api_versions.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { Reader } from '../../src/protocol/reader.js';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { LATEST, ZERO_UUID, connectTo, listOffset, readPartition } from '../helpers/read_back.js';
import { RawConn, converse, lengthPrefix, rawFrame, requestFrame } from '../helpers/raw_socket.js';

const MAX_REQUEST = 2 << 20;
const MAX_CONNECTIONS = 12;
const IDLE_MS = 3000;

let broker: BrokerProcess;
let probes = 0;

before(async () => {
  broker = await BrokerProcess.start({
    args: ['--max-request-bytes', String(MAX_REQUEST), '--max-connections', String(MAX_CONNECTIONS), '--idle-timeout-ms', String(IDLE_MS), '--auto-create-topics=false'],
  });
  const admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'probe' }, { topic: 'crc' }, { topic: 'pipeline' }], waitForLeaders: true });
  await admin.disconnect();
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await broker?.dispose();
});

/** A fresh kafkajs producer writes one record and our fetch path reads exactly it back. */
async function assertStillServes(): Promise<void> {
  assert.ok(broker.running, `broker died:\n${broker.logTail()}`);
  const producer = kafkajsClient(broker.bootstrap).producer();
  await producer.connect();
  const value = `probe-${probes++}`;
  const [meta] = await producer.send({ topic: 'probe', acks: -1, messages: [{ key: 'k', value }] });
  await producer.disconnect();
  const conn = await connectTo(broker.kafkaPort);
  try {
    const offset = Number(meta?.baseOffset);
    const records = await readPartition(conn, 'probe', 0, { fromOffset: offset });
    assert.deepEqual(records.map((r) => [r.offset, r.value?.toString()]), [[offset, value]]);
  } finally {
    await conn.close();
  }
}

const apiVersionsV0 = (correlationId: number): Buffer => requestFrame(ApiVersionsApi, 0, correlationId, {});

describe('malformed frames close the connection; the broker keeps serving', () => {
  it('(a) a length over --max-request-bytes closes at once, before any body arrives', async () => {
    for (const size of [MAX_REQUEST + 1, 100 << 20, 0x7fffffff]) {
      const out = await converse(broker.kafkaPort, [lengthPrefix(size), Buffer.alloc(16, 1)], { timeoutMs: 3000 });
      assert.equal(out.closed, true, `length ${size} left the connection open`);
      assert.equal(out.frames.length, 0);
    }
    // Exactly at the limit is allowed: a valid request padded to MAX_REQUEST bytes is answered.
    const frame = requestFrame(MetadataApi, 12, 5, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    const padded = Buffer.alloc(MAX_REQUEST + 4);
    frame.copy(padded);
    padded.writeInt32BE(MAX_REQUEST, 0);
    const ok = await converse(broker.kafkaPort, [padded], { frames: 1, timeoutMs: 5000 });
    // Trailing bytes after a complete Metadata body are tolerated by Kafka; either an answer or a close is fine,
    // but the connection must not hang.
    assert.ok(ok.closed || ok.frames.length === 1, 'request at the size limit neither answered nor closed');
    await assertStillServes();
  });

  it('(b) negative and too-small lengths close the connection', async () => {
    for (const size of [-1, -100, -0x80000000, 0, 1, 3, 7]) {
      const out = await converse(broker.kafkaPort, [lengthPrefix(size), Buffer.alloc(Math.max(0, size), 0)], { timeoutMs: 3000 });
      assert.equal(out.closed, true, `length ${size} left the connection open`);
      assert.equal(out.frames.length, 0, `length ${size} got an answer`);
    }
    await assertStillServes();
  });

  it('(c) garbage after a valid length closes the connection', async () => {
    const cases = [
      Buffer.from('ffffffffffffffffffffffffffffffff', 'hex'),
      Buffer.concat([Buffer.from([0x7f, 0x7f, 0, 0, 0, 0, 0, 1]), Buffer.from('garbage-garbage')]),
      // Valid Produce v9 header, body of random bytes.
      rawFrame(0, 9, 1, Buffer.from('0123456789abcdef0123456789abcdef', 'hex')).subarray(4),
      // Valid Metadata v1 header, topic count claiming 2^31-1 entries.
      rawFrame(3, 1, 1, Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 1, 0x41])).subarray(4),
      // Client id length beyond the frame.
      Buffer.from([0, 18, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0x41]),
    ];
    for (const body of cases) {
      const out = await converse(broker.kafkaPort, [lengthPrefix(body.length), body], { timeoutMs: 3000 });
      assert.equal(out.closed, true, `garbage ${body.toString('hex').slice(0, 40)} left the connection open`);
      assert.equal(out.frames.length, 0);
    }
    await assertStillServes();
  });

  it('(d) a truncated request: hang-up is harmless, silence hits the idle timeout', async () => {
    const frame = apiVersionsV0(1);
    const hangUp = await converse(broker.kafkaPort, [lengthPrefix(1000), frame.subarray(4, 12)], { endWrite: true, timeoutMs: 3000 });
    assert.equal(hangUp.frames.length, 0);
    const silent = await RawConn.open(broker.kafkaPort);
    silent.write(lengthPrefix(1000), frame.subarray(4, 12));
    const out = await silent.wait({ timeoutMs: IDLE_MS + 3000, quietMs: IDLE_MS + 3000 });
    silent.destroy();
    assert.equal(out.closed, true, `a stalled request was still open after ${out.elapsedMs} ms (idle timeout ${IDLE_MS})`);
    assert.ok(out.elapsedMs >= IDLE_MS - 500, `closed after ${out.elapsedMs} ms, before the idle timeout`);
    await assertStillServes();
  });

  it('(e) an unknown API key closes the connection, also after a good pipelined request', async () => {
    for (const key of [999, 68, -1, 32767]) {
      const out = await converse(broker.kafkaPort, [apiVersionsV0(1), rawFrame(key, 0, 2)], { frames: 1, timeoutMs: 3000 });
      assert.equal(out.closed, true, `api key ${key} left the connection open`);
      assert.equal(out.frames.length, 1, 'the ApiVersions before it must still be answered');
      assert.equal(out.frames[0]?.readInt32BE(0), 1);
    }
    // A known key at an unsupported version (Fetch v3, below our minimum 4) is closed the same way.
    const old = await converse(broker.kafkaPort, [rawFrame(1, 3, 7, Buffer.alloc(40))], { timeoutMs: 3000 });
    assert.equal(old.closed, true);
    assert.equal(old.frames.length, 0);
    await assertStillServes();
  });

  it('(e2) requests pipelined before a bad frame are still processed and answered, in order', async () => {
    // Kafka reads one request at a time and answers it before parsing the next, so a bad frame
    // only ever costs the requests after it.
    const batch = encodeRecordBatch([{ key: null, value: Buffer.from('before-garbage'), timestamp: Date.now() }]);
    const produce = requestFrame(ProduceApi, 9, 11, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'pipeline', partitionData: [{ index: 0, records: batch }] }] });
    const meta = requestFrame(MetadataApi, 12, 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    const out = await converse(broker.kafkaPort, [produce, meta, rawFrame(999, 0, 13)], { frames: 2, timeoutMs: 5000 });
    assert.equal(out.closed, true, 'the bad frame must still close the connection');
    assert.deepEqual(out.frames.map((f) => f.readInt32BE(0)), [11, 12], 'answers to the requests before the bad frame');
    const conn = await connectTo(broker.kafkaPort);
    try {
      const records = await readPartition(conn, 'pipeline', 0);
      assert.deepEqual(records.map((r) => r.value?.toString()), ['before-garbage'], 'the produce before the bad frame');
    } finally {
      await conn.close();
    }
    await assertStillServes();
  });

  it('(i) acks=0: a failed produce closes the connection (no response can carry the error); a good one does not', async () => {
    const batch = encodeRecordBatch([{ key: null, value: Buffer.from('acks-zero'), timestamp: Date.now() }]);
    const produce0 = (correlationId: number, name: string, index: number, records: Buffer): Buffer =>
      requestFrame(ProduceApi, 7, correlationId, { transactionalId: null, acks: 0, timeoutMs: 5000, topicData: [{ name, partitionData: [{ index, records }] }] });
    const meta = (correlationId: number): Buffer =>
      requestFrame(MetadataApi, 1, correlationId, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });

    const good = await converse(broker.kafkaPort, [produce0(31, 'pipeline', 0, batch), meta(32)], { frames: 1, timeoutMs: 5000 });
    assert.equal(good.closed, false, 'a successful acks=0 produce keeps the connection');
    assert.deepEqual(good.frames.map((f) => f.readInt32BE(0)), [32], 'only the metadata request is answered');

    const unknownPartition = await converse(broker.kafkaPort, [produce0(33, 'probe', 99, batch)], { timeoutMs: 5000 });
    assert.equal(unknownPartition.closed, true, 'unknown partition under acks=0 closes the connection');
    assert.equal(unknownPartition.frames.length, 0);

    const corrupt = Buffer.from(batch);
    corrupt[corrupt.length - 1]! ^= 0xff;
    const badCrc = await converse(broker.kafkaPort, [produce0(34, 'crc', 0, corrupt)], { timeoutMs: 5000 });
    assert.equal(badCrc.closed, true, 'a corrupt batch under acks=0 closes the connection');
    assert.ok((await broker.metric('sluice_protocol_errors_total{reason="acks0-error"}')) >= 2);
    await assertStillServes();
  });

  it('(f) ApiVersions v99 answers error 35 with a v0-shaped body and header v0', async () => {
    const body = Buffer.from([0x05, 0x73, 0x6c, 0x75, 0x69, 0x63, 0x65, 0x02, 0x31, 0x00]);
    const out = await converse(broker.kafkaPort, [rawFrame(18, 99, 4242, body)], { frames: 1, timeoutMs: 3000 });
    assert.equal(out.frames.length, 1, 'no answer to ApiVersions v99');
    const r = new Reader(out.frames[0] as Buffer);
    assert.equal(r.int32(), 4242, 'correlation id');
    const res = ApiVersionsApi.decodeResponse(0, r);
    assert.equal(res.errorCode, 35);
    assert.equal(r.remaining(), 0, 'v0 body has nothing after the api_keys array');
    const self = res.apiKeys.find((k) => k.apiKey === 18);
    assert.ok(self !== undefined && self.maxVersion >= 3, 'the answer must list ApiVersions and its max');
    assert.equal(out.closed, false, 'the connection stays usable after error 35');
    await assertStillServes();
  });

  it('(g) a produce batch with a flipped CRC byte gets CORRUPT_MESSAGE and appends nothing', async () => {
    const conn = await connectTo(broker.kafkaPort);
    try {
      const before = (await listOffset(conn, 'crc', 0, LATEST)).offset;
      const good = encodeRecordBatch([{ key: Buffer.from('k'), value: Buffer.from('value-to-corrupt'), timestamp: Date.now() }]);
      for (const version of [3, 7, 9, 11]) {
        const bad = Buffer.from(good);
        bad[bad.length - 3] = (bad[bad.length - 3] as number) ^ 0x01;
        const res = await conn.request(ProduceApi, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'crc', partitionData: [{ index: 0, records: bad }] }] }, version);
        assert.equal(res.responses[0]?.partitionResponses[0]?.errorCode, 2, `Produce v${version}`);
      }
      assert.equal((await listOffset(conn, 'crc', 0, LATEST)).offset, before, 'a corrupt batch moved the log end');
      const ok = await conn.request(ProduceApi, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'crc', partitionData: [{ index: 0, records: good }] }] }, 9);
      assert.deepEqual([ok.responses[0]?.partitionResponses[0]?.errorCode, ok.responses[0]?.partitionResponses[0]?.baseOffset], [0, before]);
      const records = await readPartition(conn, 'crc', 0, { fromOffset: before });
      assert.deepEqual(records.map((r) => r.value?.toString()), ['value-to-corrupt']);
    } finally {
      await conn.close();
    }
    await assertStillServes();
  });

  it('(h) connections beyond --max-connections are refused; freed slots are reusable', async () => {
    assert.equal(await broker.waitMetric('sluice_connections', (v) => v === 0), 0, 'connections from earlier cases still open');
    const rejectedBefore = await broker.metric('sluice_connections_rejected_total{reason="max-connections"}');
    const held: RawConn[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        const c = await RawConn.open(broker.kafkaPort);
        c.write(apiVersionsV0(i));
        const out = await c.wait({ frames: 1, timeoutMs: 3000, quietMs: 20 });
        assert.equal(out.frames.length, 1, `connection ${i + 1} of ${MAX_CONNECTIONS} was not served`);
        held.push(c);
      }
      for (let extra = 0; extra < 3; extra++) {
        const c = await RawConn.open(broker.kafkaPort);
        c.write(apiVersionsV0(100 + extra));
        const out = await c.wait({ frames: 1, timeoutMs: 3000, quietMs: 2000 });
        c.destroy();
        assert.equal(out.closed, true, `connection ${MAX_CONNECTIONS + extra + 1} was kept open`);
        assert.equal(out.frames.length, 0, `connection ${MAX_CONNECTIONS + extra + 1} was served`);
      }
      const rejected = await broker.metric('sluice_connections_rejected_total{reason="max-connections"}');
      assert.equal(rejected - rejectedBefore, 3, 'rejections counted in /metrics');
    } finally {
      for (const c of held) c.destroy();
    }
    // The broker notices the closes asynchronously; a new client gets in within a bounded time.
    const deadline = Date.now() + 5000;
    for (;;) {
      const out = await converse(broker.kafkaPort, [apiVersionsV0(7)], { frames: 1, timeoutMs: 1000, quietMs: 20 });
      if (out.frames.length === 1) break;
      assert.ok(Date.now() < deadline, 'slots were not released after clients closed');
      await sleep(100);
    }
    await assertStillServes();
  });
});

describe('metadata after abuse', () => {
  it('topics created before the abuse are intact', async () => {
    const conn = await connectTo(broker.kafkaPort);
    try {
      const res = await conn.request(MetadataApi, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, 12);
      const names = res.topics.filter((t) => !t.isInternal).map((t) => t.name).sort();
      assert.deepEqual(names, ['crc', 'pipeline', 'probe']);
      assert.deepEqual(res.topics.filter((t) => t.isInternal).map((t) => t.name), ['__consumer_offsets']);
      for (const t of res.topics) assert.notEqual(t.topicId, ZERO_UUID);
    } finally {
      await conn.close();
    }
  });
});
