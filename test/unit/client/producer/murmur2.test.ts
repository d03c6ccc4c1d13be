// murmur2 and the key partition: the Java client's own test vectors (Kafka's UtilsTest), golden
// key -> partition pairs derived from them, and cross-checks against kafkajs's Java-compatible
// murmur2 and DefaultPartitioner on random keys (every byte value, every tail length).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { murmur2, partitionForKey, toPositive } from '../../../../src/client/producer/murmur2.js';

const require = createRequire(import.meta.url);
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;
interface PartitionArgs {
  topic: string;
  partitionMetadata: { partitionId: number; leader: number }[];
  message: { key: Buffer | null; partition?: number | null };
}
const { Partitioners } = require('kafkajs') as { Partitioners: { DefaultPartitioner: () => (args: PartitionArgs) => number } };

/** Kafka's UtilsTest.testMurmur2 (signed int32 results of the Java client). */
const JAVA_VECTORS: readonly [string, number][] = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

describe('murmur2', () => {
  it('matches the Java client on its own test vectors', () => {
    for (const [input, want] of JAVA_VECTORS) assert.equal(murmur2(Buffer.from(input)), want, input);
  });

  it('covers every tail length (0-3 trailing bytes) like kafkajs', () => {
    for (let len = 0; len <= 12; len++) {
      const data = Buffer.from(Array.from({ length: len }, (_, i) => (i * 37 + 200) & 0xff));
      assert.equal(murmur2(data), kafkajsMurmur2(data), `length ${len}`);
    }
  });

  it('matches kafkajs on random keys', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      const data = Buffer.from(bytes);
      assert.equal(murmur2(data), kafkajsMurmur2(data));
    }), { numRuns: 2000 });
  });

  it('returns a signed 32-bit integer', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const h = murmur2(bytes);
      assert.equal(h, h | 0);
    }));
  });
});

describe('partitionForKey', () => {
  it('maps known keys to the partitions the Java client picks', () => {
    // toPositive(-790332482) = 1357151166; toPositive(-973932308) = 1173551340.
    assert.equal(partitionForKey(Buffer.from('foobar'), 10), 6);
    assert.equal(partitionForKey(Buffer.from('foobar'), 16), 1357151166 % 16);
    assert.equal(partitionForKey(Buffer.from('21'), 7), 1173551340 % 7);
    assert.equal(partitionForKey(Buffer.from('abc'), 3), 479470107 % 3);
  });

  it('uses toPositive (sign bit cleared), not Math.abs', () => {
    assert.equal(toPositive(-1), 0x7fffffff);
    assert.equal(toPositive(-2147483648), 0);
    assert.equal(toPositive(5), 5);
  });

  it("agrees with kafkajs's DefaultPartitioner on random keys and partition counts", () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 1, max: 500 }), (bytes, count) => {
      const key = Buffer.from(bytes);
      const partitionMetadata = Array.from({ length: count }, (_, i) => ({ partitionId: i, leader: 0 }));
      assert.equal(partitionForKey(key, count), kafkajs({ topic: 't', partitionMetadata, message: { key } }));
    }), { numRuns: 1000 });
  });

  it('rejects a partition count that is not a positive integer', () => {
    assert.throws(() => partitionForKey(Buffer.from('k'), 0), RangeError);
    assert.throws(() => partitionForKey(Buffer.from('k'), 2.5), RangeError);
  });
});
