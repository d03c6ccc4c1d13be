// Clients of the Kafka 0.8.2 and 0.9 generations (sarama before 1.40, whatever version it is
// configured for) commit with OffsetCommit v0 or v1 and fetch with OffsetFetch v0 or v1. Their
// requests, built byte by byte from Kafka's schemas, are answered on the same connection (which
// also keeps carrying their other requests), and what they commit reads back with the old
// versions and with a modern client.
import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import { OffsetCommitApi } from '../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../src/protocol/apis/offset_fetch.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';
import { Reader } from '../../src/protocol/reader.js';
import type { AnyApi } from '../../src/protocol/schema.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { kafkajsClient } from '../helpers/kafkajs_client.js';
import { RawConn, rawFrame, requestFrame } from '../helpers/raw_socket.js';
import { Bytes } from '../unit/protocol/golden_helpers.js';

const TOPIC = 'old-clients';
let broker: BrokerProcess;
let admin: Admin;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--offsets-topic-partitions', '2'] });
  admin = kafkajsClient(broker.bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }], waitForLeaders: true });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await admin?.disconnect().catch(() => undefined);
  await broker?.dispose();
});

/** The response to `frame` on `conn`, decoded with our codec, by correlation id. */
async function exchange(conn: RawConn, api: AnyApi, version: number, frame: Buffer, correlationId: number): Promise<unknown> {
  const before = conn.frames().length;
  conn.write(frame);
  const out = await conn.wait({ frames: before + 1, quietMs: 20, timeoutMs: 10_000 });
  assert.equal(out.closed, false, `${api.name} v${version} must not close the connection`);
  const res = out.frames[before];
  assert.ok(res !== undefined, `an answer to ${api.name} v${version}`);
  assert.equal(res.readInt32BE(0), correlationId);
  return api.decodeResponse(version, new Reader(res, 4));
}

it('commits with OffsetCommit v0 and v1 read back with OffsetFetch v0, v1 and a modern client', { timeout: 60_000 }, async () => {
  const conn = await RawConn.open(broker.kafkaPort);
  try {
    // v0: group, then topics[name, partitions[partition, offset, metadata]].
    const v0 = new Bytes().str('sarama-old').arr(1).str(TOPIC).arr(1).i32(0).i64(100).str('zero').build();
    // v1: group, generation, member, then per partition also a commit timestamp (-1 = now, as sarama sends).
    const v1 = new Bytes().str('sarama-old').i32(-1).str('').arr(1).str(TOPIC).arr(2)
      .i32(1).i64(200).i64(-1).str('one')
      .i32(2).i64(300).i64(Date.now() - 60_000).str(null)
      .build();
    const partitionsOk = { topics: [{ name: TOPIC, partitions: [] as unknown[] }] };
    const c0 = await exchange(conn, OffsetCommitApi, 0, rawFrame(8, 0, 1, v0), 1);
    partitionsOk.topics[0]!.partitions = [{ partitionIndex: 0, errorCode: 0 }];
    assert.deepEqual(c0, { throttleTimeMs: 0, ...partitionsOk });
    const c1 = await exchange(conn, OffsetCommitApi, 1, rawFrame(8, 1, 2, v1), 2);
    partitionsOk.topics[0]!.partitions = [{ partitionIndex: 1, errorCode: 0 }, { partitionIndex: 2, errorCode: 0 }];
    assert.deepEqual(c1, { throttleTimeMs: 0, ...partitionsOk });

    const fetchBody = new Bytes().str('sarama-old').arr(1).str(TOPIC).arr(3).i32(0).i32(1).i32(2).build();
    const expected = [
      { partitionIndex: 0, committedOffset: 100, committedLeaderEpoch: -1, metadata: 'zero', errorCode: 0 },
      { partitionIndex: 1, committedOffset: 200, committedLeaderEpoch: -1, metadata: 'one', errorCode: 0 },
      { partitionIndex: 2, committedOffset: 300, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
    ];
    for (const [version, correlationId] of [[0, 3], [1, 4]] as const) {
      const fetched = await exchange(conn, OffsetFetchApi, version, rawFrame(9, version, correlationId, fetchBody), correlationId) as { topics: { name: string; partitions: unknown[] }[] };
      assert.deepEqual(fetched.topics, [{ name: TOPIC, partitions: expected }], `OffsetFetch v${version}`);
    }
    // The connection still serves everything else.
    const md = await exchange(conn, MetadataApi, 1, requestFrame(MetadataApi, 1, 5, { topics: [{ name: TOPIC }] }), 5) as { topics: { name: string }[] };
    assert.deepEqual(md.topics.map((t) => t.name), [TOPIC]);
  } finally {
    conn.destroy();
  }
  const [modern] = await admin.fetchOffsets({ groupId: 'sarama-old', topics: [TOPIC] });
  assert.deepEqual(
    // kafkajs shows the empty metadata as null.
    modern!.partitions.map((p) => [p.partition, p.offset, p.metadata ?? '']).sort((a, b) => Number(a[0]) - Number(b[0])),
    [[0, '100', 'zero'], [1, '200', 'one'], [2, '300', '']],
  );
});
