// Test helper: fast-check generators of hostile Kafka request frames, shared by the in-process
// decoder fuzz and the over-the-wire broker fuzz. Pure (any thread).
// Kinds: random bodies behind a valid length; valid headers of every registered (api, version)
// with random bodies; real Produce/Fetch/Metadata/OffsetForLeaderEpoch requests (our codec) with bytes overwritten,
// inserted, deleted or truncated. Frames carry a correct length prefix unless `lengthMutation`.

import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { encodeRecordBatch, CompressionCodec } from '../../src/protocol/records.js';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import { apiByKey } from '../../src/protocol/apis/index.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';
import { OffsetForLeaderEpochApi } from '../../src/protocol/apis/offset_for_leader_epoch.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import type { AnyApi } from '../../src/protocol/schema.js';
import { fetchRequest, ZERO_UUID } from './read_back.js';
import { rawFrame, requestFrame } from './raw_socket.js';

/** Every registered (api, version) pair. */
export function allApiVersions(): { api: AnyApi; version: number }[] {
  const out: { api: AnyApi; version: number }[] = [];
  for (const api of apiByKey.values()) for (let v = api.minVersion; v <= api.maxVersion; v++) out.push({ api, version: v });
  return out;
}

/**
 * Real requests as full frames (length prefix included): Produce with plain and gzip batches,
 * Fetch by name and by topic id (from v12 with a last fetched epoch), Metadata for named and all
 * topics, OffsetForLeaderEpoch with and without fencing, across old and new versions.
 */
export function seedFrames(topic: string, topicId: string): Buffer[] {
  const records = [0, 1, 2].map((i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`fuzz-seed-${i}`), headers: [{ key: 'h', value: Buffer.from([i]) }], timestamp: 1_700_000_000_000 + i }));
  const plain = encodeRecordBatch(records);
  const gzip = encodeRecordBatch(records, { compression: CompressionCodec.gzip });
  const frames: Buffer[] = [];
  for (const version of [3, 7, 9, 11]) {
    for (const batch of [plain, gzip]) {
      frames.push(requestFrame(ProduceApi as AnyApi, version, version, { transactionalId: null, acks: version === 3 ? 1 : -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] }));
    }
  }
  for (const version of [4, 7, 11, 12, 13, 17]) {
    const req = { ...fetchRequest(topic, topicId, 0, 0, 65536), maxWaitMs: 50 };
    if (version >= 12) req.topics[0]!.partitions[0]!.lastFetchedEpoch = 0;
    frames.push(requestFrame(FetchApi as AnyApi, version, 100 + version, req));
  }
  for (const version of [2, 3, 4]) {
    const partitions = [{ partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 }, { partition: 1, currentLeaderEpoch: -1, leaderEpoch: 5 }];
    frames.push(requestFrame(OffsetForLeaderEpochApi as AnyApi, version, 400 + version, { replicaId: -1, topics: [{ topic, partitions }] }));
  }
  for (const version of [1, 4, 9, 12]) {
    frames.push(requestFrame(MetadataApi as AnyApi, version, 200 + version, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
    frames.push(requestFrame(MetadataApi as AnyApi, version, 300 + version, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
  }
  return frames;
}

/** Rewrites the length prefix to match the body. */
function framed(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(body.length + 4);
  out.writeInt32BE(body.length, 0);
  out.set(body, 4);
  return out;
}

const randomBody = fc.uint8Array({ maxLength: 400 });

type Edit =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'int32'; at: number; value: number };

const editArb: Arbitrary<Edit> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('int32' as const), at: fc.nat(), value: fc.constantFrom(-1, -2, 0, 0x7fffffff, -0x80000000, 0x10000, 1 << 24) }) },
);

function applyEdit(body: Buffer, e: Edit): Buffer {
  if (body.length === 0) return body;
  const at = e.at % body.length;
  switch (e.kind) {
    case 'set': {
      const out = Buffer.from(body);
      out[at] = e.byte;
      return out;
    }
    case 'insert': return Buffer.concat([body.subarray(0, at), e.bytes, body.subarray(at)]);
    case 'delete': return Buffer.concat([body.subarray(0, at), body.subarray(at + e.count)]);
    case 'truncate': return body.subarray(0, at);
    case 'int32': {
      if (body.length < 4) return body;
      const out = Buffer.from(body);
      out.writeInt32BE(e.value, at % (body.length - 3));
      return out;
    }
  }
}

/** A mutated copy of one of `seeds`' bodies (without the length prefix). */
export function mutatedBody(seeds: readonly Buffer[]): Arbitrary<Buffer> {
  return fc.tuple(fc.integer({ min: 0, max: seeds.length - 1 }), fc.array(editArb, { minLength: 1, maxLength: 6 }))
    .map(([i, edits]) => edits.reduce(applyEdit, (seeds[i] as Buffer).subarray(4)));
}

/** A valid header for a registered (api, version), then random bytes. */
export function headerThenRandomBody(): Arbitrary<Buffer> {
  const pairs = allApiVersions();
  return fc.tuple(fc.integer({ min: 0, max: pairs.length - 1 }), fc.integer({ min: -1, max: 2 ** 31 - 1 }), randomBody).map(([i, corr, body]) => {
    const { api, version } = pairs[i] as { api: AnyApi; version: number };
    const frame = rawFrame(api.key, version, corr, Buffer.from(body));
    if (!api.isFlexible(version)) return frame.subarray(4);
    // Flexible versions have a tag buffer after the client id: mostly an empty one, sometimes junk.
    const headerEnd = 4 + 8 + 2 + 3;
    return Buffer.concat([frame.subarray(4, headerEnd), Buffer.from([body.length % 3 === 0 ? 0x7f : 0]), frame.subarray(headerEnd)]);
  });
}

/** Whole frames (length prefix included); `lengthMutation` sometimes lies about the length. */
export function hostileFrame(seeds: readonly Buffer[], lengthMutation = false): Arbitrary<Buffer> {
  const bodies = fc.oneof(
    { weight: 2, arbitrary: randomBody.map((b) => Buffer.from(b)) },
    { weight: 3, arbitrary: headerThenRandomBody() },
    { weight: 5, arbitrary: mutatedBody(seeds) },
  );
  if (!lengthMutation) return bodies.map(framed);
  return fc.tuple(bodies, fc.integer({ min: 0, max: 19 }), fc.integer({ min: -0x80000000, max: 0x7fffffff })).map(([b, roll, len]) => {
    const f = framed(b);
    if (roll === 0) f.writeInt32BE(len, 0);
    return f;
  });
}
