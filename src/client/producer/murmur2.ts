// Kafka's default key hash: the 32-bit MurmurHash2 variant of the Java client's Utils.murmur2
// (seed 0x9747b28c, m 0x5bd1e995, r 24, little-endian 4-byte blocks, Java's unsigned shifts),
// and the partition choice toPositive(hash) % numPartitions made for keyed records.
// Pure functions; runs on whichever thread owns the producer.
// Invariants: results equal the Java client's bit for bit (signed int32), so a key lands on the
// same partition whether it was produced by us, the Java client, kafkajs or librdkafka's
// murmur2 partitioner. Changing this would silently re-route keys: never "improve" it.
//
// Use in the send loop: `partition = partitionForKey(keyBytes, partitionCount)` for records with
// a key (partitioner.ts does this); keyless records go through the sticky partitioner instead.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** The Java client's murmur2 over `data`, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const blocksEnd = length & ~3;
  for (let i = 0; i < blocksEnd; i += 4) {
    let k = (data[i] as number) | ((data[i + 1] as number) << 8) | ((data[i + 2] as number) << 16) | ((data[i + 3] as number) << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // Java's switch falls through: 3 trailing bytes mix in all three, then one multiply.
  const tail = length & 3;
  if (tail === 3) h ^= (data[blocksEnd + 2] as number) << 16;
  if (tail >= 2) h ^= (data[blocksEnd + 1] as number) << 8;
  if (tail >= 1) {
    h ^= data[blocksEnd] as number;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Java's Utils.toPositive: clears the sign bit (not Math.abs, which differs for negatives). */
export function toPositive(h: number): number {
  return h & 0x7fffffff;
}

/** The partition Kafka's default partitioner picks for a keyed record. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  if (!Number.isInteger(numPartitions) || numPartitions <= 0) {
    throw new RangeError(`partition count ${numPartitions} must be a positive integer`);
  }
  return toPositive(murmur2(key)) % numPartitions;
}
