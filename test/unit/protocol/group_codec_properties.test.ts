// Properties of the group APIs and the embedded consumer protocol. The generic round-trip and
// hostile-bytes properties of every registered API (these included) live in
// codec_properties.test.ts; here: the ranges and flexible boundaries we declare for the group
// APIs, and for the consumer protocol payloads, round trips per version, newer versions read by
// their known prefix, and arbitrary bytes that decode or fail with ProtocolError, nothing else.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ProtocolError } from '../../../src/protocol/reader.js';
import type { AnyApi } from '../../../src/protocol/schema.js';
import { JoinGroupApi } from '../../../src/protocol/apis/join_group.js';
import { SyncGroupApi } from '../../../src/protocol/apis/sync_group.js';
import { HeartbeatApi } from '../../../src/protocol/apis/heartbeat.js';
import { LeaveGroupApi } from '../../../src/protocol/apis/leave_group.js';
import { OffsetCommitApi } from '../../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../../src/protocol/apis/offset_fetch.js';
import { ListGroupsApi } from '../../../src/protocol/apis/list_groups.js';
import { DescribeGroupsApi } from '../../../src/protocol/apis/describe_groups.js';
import { DeleteGroupsApi } from '../../../src/protocol/apis/delete_groups.js';
import { OffsetDeleteApi } from '../../../src/protocol/apis/offset_delete.js';
import { ConsumerGroupHeartbeatApi } from '../../../src/protocol/apis/consumer_group_heartbeat.js';
import { ConsumerGroupDescribeApi } from '../../../src/protocol/apis/consumer_group_describe.js';
import {
  CONSUMER_PROTOCOL_MAX_VERSION, decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription,
} from '../../../src/protocol/consumer_protocol.js';
import type { ConsumerSubscription } from '../../../src/protocol/consumer_protocol.js';

const groupApis = [
  JoinGroupApi, SyncGroupApi, HeartbeatApi, LeaveGroupApi, OffsetCommitApi, OffsetFetchApi, ListGroupsApi,
  DescribeGroupsApi, DeleteGroupsApi, OffsetDeleteApi, ConsumerGroupHeartbeatApi, ConsumerGroupDescribeApi,
] as readonly AnyApi[];

/** Runs `fn`; anything thrown other than ProtocolError fails the test. */
function decodesOrRejects(what: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ProtocolError)) assert.fail(`${what} threw ${String(err)}`);
  }
}

describe('group APIs: advertised ranges', () => {
  it('keys and versions', () => {
    assert.deepEqual(groupApis.map((a) => [a.key, a.minVersion, a.maxVersion]), [
      [11, 0, 9], [14, 0, 5], [12, 0, 4], [13, 0, 5], [8, 0, 9], [9, 0, 9], [16, 0, 5], [15, 0, 5], [42, 0, 2],
      [47, 0, 0], [68, 0, 1], [69, 0, 0],
    ]);
    const firstFlexible = groupApis.map((a) => {
      for (let v = a.minVersion; v <= a.maxVersion; v++) if (a.isFlexible(v)) return v;
      return null;
    });
    assert.deepEqual(firstFlexible, [6, 4, 4, 4, 8, 6, 3, 5, 2, null, 0, 0]);
  });
});

// Plain objects only: decoded payloads have Object.prototype, and deepStrictEqual compares it.
const plain = { noNullPrototype: true } as const;
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const topicPartitions = fc.array(
  fc.record({ topic: fc.string({ maxLength: 8 }), partitions: fc.array(int32, { maxLength: 4 }) }, plain),
  { maxLength: 3 },
);
const userData = fc.option(fc.uint8Array({ maxLength: 16 }).map((a) => Buffer.from(a)), { nil: null });
const subscription = fc.record({
  topics: fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
  userData,
  ownedPartitions: topicPartitions,
  generationId: int32,
  rackId: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
}, plain);
const assignment = fc.record({ assignedPartitions: topicPartitions, userData }, plain);
const version = fc.integer({ min: 0, max: CONSUMER_PROTOCOL_MAX_VERSION });

/** What a subscription written at `version` reads back as: later fields take their defaults. */
function asOfVersion(s: ConsumerSubscription, v: number): ConsumerSubscription {
  return {
    topics: s.topics, userData: s.userData,
    ownedPartitions: v >= 1 ? s.ownedPartitions : [],
    generationId: v >= 2 ? s.generationId : -1,
    rackId: v >= 3 ? s.rackId : null,
  };
}

/** The same payload relabelled as a newer version with extra bytes appended. */
function asNewer(bytes: Buffer, newer: number, tail: Uint8Array): Buffer {
  const out = Buffer.concat([bytes, tail]);
  out.writeInt16BE(newer, 0);
  return out;
}

describe('consumer protocol payloads', () => {
  it('subscription: round trip per version; newer versions read their known prefix; prefixes fail', () => {
    const newer = fc.integer({ min: CONSUMER_PROTOCOL_MAX_VERSION + 1, max: 32767 });
    fc.assert(fc.property(subscription, version, newer, fc.uint8Array({ maxLength: 8 }), fc.nat(), (s, v, n, tail, cut) => {
      const bytes = encodeSubscription(s, v);
      assert.equal(bytes.readInt16BE(0), v);
      assert.deepStrictEqual(decodeSubscription(bytes), asOfVersion(s, v));
      if (v === CONSUMER_PROTOCOL_MAX_VERSION) assert.deepStrictEqual(decodeSubscription(asNewer(bytes, n, tail)), s);
      assert.throws(() => decodeSubscription(bytes.subarray(0, cut % bytes.length)), ProtocolError);
    }), { numRuns: 200 });
  });

  it('assignment: round trip per version; newer versions read their known prefix; prefixes fail', () => {
    fc.assert(fc.property(assignment, version, fc.uint8Array({ maxLength: 8 }), fc.nat(), (a, v, tail, cut) => {
      const bytes = encodeAssignment(a, v);
      assert.deepStrictEqual(decodeAssignment(bytes), a);
      assert.deepStrictEqual(decodeAssignment(asNewer(bytes, v + 10, tail)), a);
      assert.throws(() => decodeAssignment(bytes.subarray(0, cut % bytes.length)), ProtocolError);
    }), { numRuns: 200 });
  });

  it('arbitrary bytes decode or throw ProtocolError', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (a) => {
      decodesOrRejects('decodeSubscription', () => decodeSubscription(a));
      decodesOrRejects('decodeAssignment', () => decodeAssignment(a));
    }), { numRuns: 500 });
  });
});
