// Metadata records' binary form: every record survives encode/decode unchanged (properties over
// all record types), a leader change is a small delta, and bad bytes are refused with
// CORRUPT_MESSAGE, never another error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decodeBatch, encodeBatch, LEADER_UNCHANGED, type BrokerEndpointRecord, type MetadataRecord,
} from '../../../../src/cluster/metadata/records.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { SCRAM_MECHANISMS } from '../../../../src/common/sasl_mechanisms.js';
import { QUOTA_KEYS } from '../../../../src/coordinator/client_quotas.js';
import { recordsArb, uuidArb } from '../../../helpers/metadata_fixture.js';

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const brokerId = fc.integer({ min: -1, max: 2 ** 31 - 1 });
/** Offsets and producer ids: non-negative up to 2^50 (varlongs are exact within ±2^52). */
const long = fc.tuple(fc.nat(), fc.nat({ max: 1 << 19 })).map(([lo, hi]) => hi * 2 ** 31 + lo);
const text = fc.string({ unit: 'grapheme', maxLength: 80 });
const idList = fc.array(brokerId, { maxLength: 8 });
const scramBytes = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));
/** Records as plain objects (fast-check may otherwise make null-prototype ones, which deepStrictEqual tells apart). */
const rec = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> => fc.record(model, { noNullPrototype: true });

/** `rec` as an older version wrote it: the version byte rewritten and the trailing `dropBytes` fields cut off. */
function asVersion(rec: MetadataRecord, current: number, version: number, dropBytes: number): Buffer {
  const now = encodeBatch([rec]);
  assert.equal(now[2], current);
  return Buffer.concat([now.subarray(0, 2), Buffer.from([version]), now.subarray(3, now.length - dropBytes)]);
}

const endpoint: fc.Arbitrary<BrokerEndpointRecord> = rec({
  name: text, host: text, port: fc.integer({ min: 0, max: 65535 }), securityProtocol: fc.integer({ min: 0, max: 3 }),
});

const recordArb: fc.Arbitrary<MetadataRecord> = fc.oneof(
  rec({
    type: fc.constant('registerBroker' as const), brokerId, incarnationId: uuidArb, brokerEpoch: long,
    endpoints: fc.array(endpoint, { maxLength: 3 }), rack: fc.option(text), fenced: fc.boolean(), inControlledShutdown: fc.boolean(),
    warming: fc.boolean(), adminAddress: fc.option(text),
  }),
  rec({ type: fc.constant('unregisterBroker' as const), brokerId, brokerEpoch: long }),
  rec({
    type: fc.constant('brokerRegistrationChange' as const), brokerId, brokerEpoch: long,
    fenced: fc.constantFrom(-1 as const, 0 as const, 1 as const), inControlledShutdown: fc.boolean(), warmed: fc.boolean(),
  }),
  rec({ type: fc.constant('topic' as const), name: text, topicId: uuidArb }),
  rec({
    type: fc.constant('partition' as const), topicId: uuidArb, partition: int32, replicas: idList, isr: idList,
    removingReplicas: idList, addingReplicas: idList, leader: brokerId, leaderEpoch: int32, partitionEpoch: int32,
  }),
  rec({
    type: fc.constant('partitionChange' as const), topicId: uuidArb, partition: int32,
    leader: fc.oneof(fc.constant(LEADER_UNCHANGED), brokerId), isr: fc.option(idList), replicas: fc.option(idList),
    removingReplicas: fc.option(idList), addingReplicas: fc.option(idList),
  }),
  rec({ type: fc.constant('config' as const), resourceType: fc.integer({ min: 0, max: 127 }), resourceName: text, name: text, value: fc.option(text) }),
  rec({ type: fc.constant('producerIds' as const), brokerId, brokerEpoch: long, nextProducerId: long }),
  rec({ type: fc.constant('removeTopic' as const), topicId: uuidArb }),
  rec({ type: fc.constant('featureLevel' as const), name: text, featureLevel: int32 }),
  rec({
    type: fc.constant('userScramCredential' as const), name: text, mechanism: fc.constantFrom(...SCRAM_MECHANISMS),
    salt: scramBytes, storedKey: scramBytes, serverKey: scramBytes, iterations: int32,
  }),
  rec({ type: fc.constant('removeUserScramCredential' as const), name: text, mechanism: fc.constantFrom(...SCRAM_MECHANISMS) }),
  rec({
    type: fc.constant('clientQuota' as const),
    entity: fc.oneof(
      fc.record({ user: fc.option(text) }, { noNullPrototype: true }),
      fc.record({ clientId: fc.option(text) }, { noNullPrototype: true }),
      fc.record({ user: fc.option(text), clientId: fc.option(text) }, { noNullPrototype: true }),
      fc.record({ ip: fc.option(text) }, { noNullPrototype: true }),
    ),
    key: fc.constantFrom(...QUOTA_KEYS),
    value: fc.option(fc.double({ min: 0.001, max: 1e15, noNaN: true })),
  }),
  fc.constant({ type: 'noOp' as const }),
);

describe('metadata records', () => {
  it('round-trip through a batch unchanged, every type and field', () => {
    fc.assert(fc.property(fc.array(recordArb, { maxLength: 20 }), (records) => {
      assert.deepStrictEqual(decodeBatch(encodeBatch(records)), records);
    }), { numRuns: 500 });
  });

  it('decode from a Uint8Array view at an offset (as Raft entries carry them)', () => {
    fc.assert(fc.property(fc.array(recordArb, { maxLength: 5 }), fc.nat({ max: 7 }), (records, pad) => {
      const bytes = encodeBatch(records);
      const backing = new Uint8Array(pad + bytes.length);
      backing.set(bytes, pad);
      assert.deepStrictEqual(decodeBatch(backing.subarray(pad)), records);
    }));
  });

  it('a one-partition leader change is at most 200 bytes on the wire', () => {
    const change: MetadataRecord = {
      type: 'partitionChange', topicId: 'ab'.repeat(16), partition: 999_999, leader: 2_000_000_000,
      isr: [2_000_000_000, 1_999_999_999, 1_999_999_998], replicas: null, removingReplicas: null, addingReplicas: null,
    };
    const size = encodeBatch([change]).length;
    assert.ok(size <= 200, `${size} bytes`);
  });

  it('refuse truncated, extended and random bytes with CORRUPT_MESSAGE only', () => {
    const corrupt = (bytes: Uint8Array): void => {
      try {
        decodeBatch(bytes);
      } catch (err) {
        assert.ok(err instanceof KafkaError, String(err));
        assert.equal(err.code, ErrorCode.CORRUPT_MESSAGE);
      }
    };
    fc.assert(fc.property(recordsArb, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), (records, cut, extra) => {
      const bytes = encodeBatch(records);
      if (bytes.length > 1) assert.throws(() => decodeBatch(bytes.subarray(0, cut % (bytes.length - 1) + 1)), KafkaError);
      assert.throws(() => decodeBatch(Buffer.concat([bytes, extra])), KafkaError);
      // Flip one byte: it may still decode (a different value), but only ever fail as corrupt.
      const flipped = Buffer.from(bytes);
      flipped[cut % flipped.length] ^= 0xff;
      corrupt(flipped);
    }));
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => corrupt(bytes)), { numRuns: 2000 });
  });

  it('read broker registrations written at version 0, before the warm-up state, as not warming', () => {
    const register: MetadataRecord = {
      type: 'registerBroker', brokerId: 1, incarnationId: 'ab'.repeat(16), brokerEpoch: 5, endpoints: [], rack: null,
      fenced: true, inControlledShutdown: false, warming: true, adminAddress: null,
    };
    const change: MetadataRecord = { type: 'brokerRegistrationChange', brokerId: 1, brokerEpoch: 5, fenced: -1, inControlledShutdown: false, warmed: true };
    // The version 0 form: a batch of one, the apiKey, version 0, and the fields without the
    // trailing ones later versions added (the warm-up byte; a registration's null admin address).
    assert.deepStrictEqual(decodeBatch(asVersion(register, 2, 0, 2)), [{ ...register, warming: false }]);
    assert.deepStrictEqual(decodeBatch(asVersion(change, 1, 0, 1)), [{ ...change, warmed: false }]);
  });

  it('read broker registrations written at version 1, before the admin address, as having none', () => {
    const register: MetadataRecord = {
      type: 'registerBroker', brokerId: 1, incarnationId: 'ab'.repeat(16), brokerEpoch: 5, endpoints: [], rack: null,
      fenced: true, inControlledShutdown: false, warming: true, adminAddress: null,
    };
    assert.deepStrictEqual(decodeBatch(asVersion(register, 2, 1, 1)), [register]);
    const withAddress: MetadataRecord = { ...register, adminAddress: '10.0.0.7:8080' };
    assert.deepStrictEqual(decodeBatch(encodeBatch([withAddress])), [withAddress]);
  });

  it('refuse an unknown record type, an unknown version and a huge claimed count', () => {
    const code = (bytes: number[]): number => {
      try {
        decodeBatch(Buffer.from(bytes));
        return ErrorCode.NONE;
      } catch (err) {
        return (err as KafkaError).code;
      }
    };
    assert.equal(code([1, 20, 0]), ErrorCode.NONE); // one NoOp
    assert.equal(code([1, 99, 0]), ErrorCode.CORRUPT_MESSAGE);
    assert.equal(code([1, 20, 1]), ErrorCode.CORRUPT_MESSAGE);
    assert.equal(code([1, 17, 2, 2, 10, 0xff, 0, 0]), ErrorCode.CORRUPT_MESSAGE); // brokerRegistrationChange v2
    assert.equal(code([0xff, 0xff, 0xff, 0xff, 0x07, 20, 0]), ErrorCode.CORRUPT_MESSAGE);
  });
});
