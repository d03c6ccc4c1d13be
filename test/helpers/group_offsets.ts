// Test helper: a consumer group's committed offsets read through our own client (OffsetFetch at
// the version the broker and we share), next to the log end offsets (ListOffsets latest), so a
// test can check that what a client committed is exactly what it consumed. Runs on the test's
// main thread. Invariant: every partition asked for is answered or the call fails.

import assert from 'node:assert/strict';
import type { KafkaConnection } from '../../src/client/connection.js';
import { errorName } from '../../src/protocol/errors.js';
import { OffsetFetchApi } from '../../src/protocol/apis/offset_fetch.js';
import type { OffsetFetchResponseTopic } from '../../src/protocol/apis/offset_fetch.js';
import { LATEST, listOffset } from './read_back.js';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Committed offset per partition 0..partitions-1 (-1 where the group committed none). */
export async function committedOffsets(conn: KafkaConnection, groupId: string, topic: string, partitions: number): Promise<number[]> {
  const asked = [{ name: topic, partitionIndexes: range(partitions) }];
  const version = conn.versionFor(OffsetFetchApi);
  const res = await conn.request(OffsetFetchApi, {
    groupId, topics: asked, groups: [{ groupId, memberId: null, memberEpoch: -1, topics: asked }], requireStable: true,
  }, version);
  let topics: OffsetFetchResponseTopic[];
  if (version >= 8) {
    const group = res.groups.find((g) => g.groupId === groupId);
    assert.ok(group !== undefined, `OffsetFetch v${version} answered without group ${groupId}`);
    assert.equal(group.errorCode, 0, `OffsetFetch ${groupId}: ${errorName(group.errorCode)}`);
    topics = group.topics;
  } else {
    assert.equal(res.errorCode, 0, `OffsetFetch ${groupId}: ${errorName(res.errorCode)}`);
    topics = res.topics;
  }
  const parts = topics.find((t) => t.name === topic)?.partitions ?? [];
  return range(partitions).map((p) => {
    const got = parts.find((x) => x.partitionIndex === p);
    assert.ok(got !== undefined, `OffsetFetch ${groupId}: no answer for ${topic}/${p}`);
    assert.equal(got.errorCode, 0, `OffsetFetch ${groupId} ${topic}/${p}: ${errorName(got.errorCode)}`);
    return got.committedOffset;
  });
}

/** Log end offset (high watermark) per partition 0..partitions-1. */
export async function endOffsets(conn: KafkaConnection, topic: string, partitions: number): Promise<number[]> {
  const out: number[] = [];
  for (const p of range(partitions)) {
    const r = await listOffset(conn, topic, p, LATEST);
    assert.equal(r.errorCode, 0, `ListOffsets ${topic}/${p}: ${errorName(r.errorCode)}`);
    out.push(r.offset);
  }
  return out;
}
