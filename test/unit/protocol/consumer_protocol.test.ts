// Golden bytes and edge cases for the embedded consumer protocol (ConsumerProtocolSubscription
// and ConsumerProtocolAssignment, v0-3): the version prefix, fields per version, newer versions
// decoded by their known prefix, and malformed input.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Bytes } from './golden_helpers.js';
import { ProtocolError } from '../../../src/protocol/reader.js';
import {
  decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription,
} from '../../../src/protocol/consumer_protocol.js';
import type { ConsumerAssignment, ConsumerSubscription } from '../../../src/protocol/consumer_protocol.js';

function goldenSubscription(version: number, s: ConsumerSubscription, bytes: Buffer): void {
  assert.equal(encodeSubscription(s, version).toString('hex'), bytes.toString('hex'), `v${version} encode`);
  assert.deepStrictEqual(decodeSubscription(bytes), s, `v${version} decode`);
}

function goldenAssignment(version: number, a: ConsumerAssignment, bytes: Buffer): void {
  assert.equal(encodeAssignment(a, version).toString('hex'), bytes.toString('hex'), `v${version} encode`);
  assert.deepStrictEqual(decodeAssignment(bytes), a, `v${version} decode`);
}

const sub3: ConsumerSubscription = {
  topics: ['orders'], userData: null, ownedPartitions: [{ topic: 'orders', partitions: [1] }], generationId: 7, rackId: 'rack-1',
};
const sub3Body = new Bytes()
  .arr(1).str('orders').bytes(null)
  .arr(1).str('orders').arr(1).i32(1)
  .i32(7).str('rack-1');

describe('ConsumerProtocolSubscription', () => {
  it('v0: topics and user data only; later fields decode as defaults', () => {
    goldenSubscription(0, { topics: ['t'], userData: null, ownedPartitions: [], generationId: -1, rackId: null },
      new Bytes().i16(0).arr(1).str('t').bytes(null).build());
  });

  it('v1: owned partitions (cooperative)', () => {
    const s: ConsumerSubscription = {
      topics: ['a', 'b'], userData: Buffer.from('ud'), ownedPartitions: [{ topic: 'a', partitions: [0, 1] }],
      generationId: -1, rackId: null,
    };
    goldenSubscription(1, s, new Bytes()
      .i16(1).arr(2).str('a').str('b').bytes(Buffer.from('ud'))
      .arr(1).str('a').arr(2).i32(0).i32(1)
      .build());
  });

  it('v2: generation id', () => {
    const s: ConsumerSubscription = { topics: ['t'], userData: Buffer.alloc(0), ownedPartitions: [], generationId: 3, rackId: null };
    goldenSubscription(2, s, new Bytes().i16(2).arr(1).str('t').bytes(Buffer.alloc(0)).arr(0).i32(3).build());
  });

  it('v3: rack id; also the default encoding version', () => {
    const bytes = new Bytes().i16(3).raw(sub3Body.build()).build();
    goldenSubscription(3, sub3, bytes);
    assert.deepEqual(encodeSubscription(sub3), bytes);
  });

  it('a newer version decodes by its v3 prefix, ignoring appended fields', () => {
    const v4 = new Bytes().i16(4).raw(sub3Body.build()).i32(12345).str('some future field').build();
    assert.deepStrictEqual(decodeSubscription(v4), sub3);
    const v300 = new Bytes().i16(300).raw(sub3Body.build()).raw(Buffer.from([0xff])).build();
    assert.deepStrictEqual(decodeSubscription(v300), sub3);
  });

  it('a newer version cut inside the known fields is still rejected', () => {
    const v4 = new Bytes().i16(4).arr(1).str('orders').bytes(null).build();
    assert.throws(() => decodeSubscription(v4), ProtocolError);
  });

  it('every truncation of a valid payload throws ProtocolError', () => {
    const bytes = encodeSubscription(sub3);
    for (let n = 0; n < bytes.length; n++) {
      assert.throws(() => decodeSubscription(bytes.subarray(0, n)), ProtocolError, `prefix of ${n}`);
    }
  });

  it('rejects a negative version, and encoding a version we do not know', () => {
    assert.throws(() => decodeSubscription(new Bytes().i16(-1).arr(0).bytes(null).build()), ProtocolError);
    assert.throws(() => encodeSubscription(sub3, 4), RangeError);
    assert.throws(() => encodeSubscription(sub3, -1), RangeError);
  });

  it('decodes a plain Uint8Array window; user data is a view into it, not a copy', () => {
    const payload = new Bytes().i16(0).arr(0).bytes(Buffer.from([1, 2, 3])).build();
    const backing = new ArrayBuffer(payload.length + 8);
    const window = new Uint8Array(backing, 5, payload.length);
    window.set(payload);
    const s = decodeSubscription(window);
    assert.deepEqual(s.userData, Buffer.from([1, 2, 3]));
    assert.equal(s.userData!.buffer, backing);
  });
});

describe('ConsumerProtocolAssignment', () => {
  const a: ConsumerAssignment = { assignedPartitions: [{ topic: 't', partitions: [0, 1] }, { topic: 'u', partitions: [] }], userData: null };
  const body = new Bytes().arr(2).str('t').arr(2).i32(0).i32(1).str('u').arr(0).bytes(null);

  it('v0 and v3 share one layout behind the version prefix', () => {
    goldenAssignment(0, a, new Bytes().i16(0).raw(body.build()).build());
    goldenAssignment(3, a, new Bytes().i16(3).raw(body.build()).build());
    assert.deepEqual(encodeAssignment(a), new Bytes().i16(3).raw(body.build()).build());
  });

  it('empty assignment with empty (not null) user data, as kafkajs sends it', () => {
    goldenAssignment(1, { assignedPartitions: [], userData: Buffer.alloc(0) }, new Bytes().i16(1).arr(0).bytes(Buffer.alloc(0)).build());
  });

  it('a newer version with trailing fields decodes by its known prefix', () => {
    const v5 = new Bytes().i16(5).raw(body.build()).i64(99).build();
    assert.deepStrictEqual(decodeAssignment(v5), a);
  });

  it('truncated, negative-version or lying input throws ProtocolError', () => {
    const bytes = encodeAssignment(a);
    for (let n = 0; n < bytes.length; n++) {
      assert.throws(() => decodeAssignment(bytes.subarray(0, n)), ProtocolError, `prefix of ${n}`);
    }
    assert.throws(() => decodeAssignment(new Bytes().i16(-2).arr(0).bytes(null).build()), ProtocolError);
    // A huge claimed topic count must fail on bounds, not allocate.
    assert.throws(() => decodeAssignment(new Bytes().i16(0).arr(0x7fffffff).build()), ProtocolError);
  });
});
