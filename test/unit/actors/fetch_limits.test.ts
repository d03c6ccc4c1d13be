// trimToFetchLimits against Kafka's rule. Kafka walks a fetch's partitions in request order with
// a running limit L (max_bytes at first): partition i gets the longest prefix of whole batches of
// at most min(partition_max_bytes_i, L) bytes, except that while no earlier partition returned
// data it gets at least its first batch; L then drops by what it got. Here each shard applies that
// rule to its own partitions only (as ParkedFetches does) and main trims the merged answer. The
// properties: every partition before some cut index holds exactly Kafka's answer and every one
// from it on is empty (with one shard nothing is cut); the total passes max_bytes only when the
// response is the first non-empty partition's first batch alone, and a partition passes its
// partition_max_bytes only when it is that partition holding that batch alone; the first
// partition with data always gets a whole batch; answers are whole batches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { trimToFetchLimits, type FetchRanges } from '../../../src/actors/fetch_limits.js';

interface Partition {
  batches: number[];
  partitionMaxBytes: number;
  shard: number;
}

/** Bytes of the longest prefix of whole batches within `limit`, or the first batch when `minOne`. */
function readPrefix(batches: readonly number[], limit: number, minOne: boolean): number {
  let bytes = 0;
  for (const b of batches) {
    if (bytes + b > limit) break;
    bytes += b;
  }
  return bytes === 0 && minOne && batches.length > 0 ? batches[0]! : bytes;
}

/** Kafka's walk over `parts` in order; returns each one's bytes. */
function walk(parts: readonly Partition[], maxBytes: number): number[] {
  let left = maxBytes;
  let minOne = true;
  return parts.map((p) => {
    const got = readPrefix(p.batches, Math.min(p.partitionMaxBytes, left), minOne);
    left = Math.max(0, left - got);
    if (got > 0) minOne = false;
    return got;
  });
}

/** What the shards answer: each walks its own partitions; a partition's bytes are split into one range per batch. */
function shardAnswers(parts: readonly Partition[], maxBytes: number): FetchRanges[] {
  const out: FetchRanges[] = parts.map(() => ({ ranges: [] }));
  const shards = new Set(parts.map((p) => p.shard));
  for (const s of shards) {
    const idx = parts.map((p, i) => (p.shard === s ? i : -1)).filter((i) => i >= 0);
    const got = walk(idx.map((i) => parts[i]!), maxBytes);
    idx.forEach((i, k) => {
      const ranges: Array<{ length: number }> = [];
      let left = got[k]!;
      for (const b of parts[i]!.batches) {
        if (left === 0) break;
        ranges.push({ length: b });
        left -= b;
      }
      out[i] = { ranges };
    });
  }
  return out;
}

const bytesOf = (p: FetchRanges): number => p.ranges.reduce((n, r) => n + r.length, 0);

const partition = (shards: number): fc.Arbitrary<Partition> =>
  fc.record({
    batches: fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 6 }),
    partitionMaxBytes: fc.integer({ min: 0, max: 900 }),
    shard: fc.integer({ min: 0, max: shards - 1 }),
  });

const fetchCase = (shards: number) => fc.record({ parts: fc.array(partition(shards), { maxLength: 8 }), maxBytes: fc.integer({ min: 0, max: 1200 }) });

function trimmed(parts: readonly Partition[], maxBytes: number): number[] {
  const answers = shardAnswers(parts, maxBytes);
  const kept = trimToFetchLimits(answers, parts.map((p) => p.partitionMaxBytes), maxBytes);
  const bytes = answers.map(bytesOf);
  assert.equal(kept, bytes.reduce((a, b) => a + b, 0));
  return bytes;
}

describe('trimToFetchLimits', () => {
  it('keeps Kafka\'s answer up to a cut and nothing after it, in any shard layout', () => {
    fc.assert(
      fc.property(fetchCase(4), ({ parts, maxBytes }) => {
        const ours = trimmed(parts, maxBytes);
        const kafka = walk(parts, maxBytes);
        let cut = 0;
        while (cut < parts.length && ours[cut] === kafka[cut]) cut++;
        for (let i = cut; i < parts.length; i++) assert.equal(ours[i], 0, `partition ${i} after the cut at ${cut}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('changes nothing when every partition is on one shard', () => {
    fc.assert(
      fc.property(fetchCase(1), ({ parts, maxBytes }) => {
        assert.deepEqual(trimmed(parts, maxBytes), walk(parts, maxBytes));
      }),
    );
  });

  it('passes max_bytes or partition_max_bytes only by the first non-empty partition\'s first batch', () => {
    fc.assert(
      fc.property(fetchCase(4), ({ parts, maxBytes }) => {
        const ours = trimmed(parts, maxBytes);
        const total = ours.reduce((a, b) => a + b, 0);
        const first = parts.findIndex((p) => p.batches.length > 0);
        const firstBatchAlone = first >= 0 && total === parts[first]!.batches[0] && ours[first] === total;
        if (total > maxBytes) assert.ok(firstBatchAlone, `total ${total} > ${maxBytes}`);
        ours.forEach((b, i) => {
          if (b > parts[i]!.partitionMaxBytes) assert.ok(i === first && b === parts[i]!.batches[0], `partition ${i}: ${b} > ${parts[i]!.partitionMaxBytes}`);
          const prefixes = parts[i]!.batches.reduce<number[]>((acc, x) => [...acc, acc[acc.length - 1]! + x], [0]);
          assert.ok(prefixes.includes(b), `partition ${i} cut inside a batch`);
        });
        if (first >= 0) assert.ok(ours[first]! >= parts[first]!.batches[0]!, 'the first partition with data got no whole batch');
      }),
      { numRuns: 2000 },
    );
  });
});
