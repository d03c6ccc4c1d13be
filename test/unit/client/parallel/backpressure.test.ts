// BackpressureController: under random fetch/finish interleavings the buffer never exceeds the
// high watermark plus one fetch, empty partitions are never paused, totals match the parts;
// hysteresis examples for the total and per-partition loops.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BackpressureController } from '../../../../src/client/parallel/backpressure.js';

describe('BackpressureController', () => {
  it('never lets the buffer pass high watermark + one fetch', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat(), fc.integer({ min: 1, max: 2_000 })), { maxLength: 400, size: 'large' }),
        (highBytes, highMessages, fetchBytes, fetchMessages, steps) => {
          const bp = new BackpressureController({
            highBytes, lowBytes: Math.floor(highBytes / 2), highMessages, lowMessages: Math.floor(highMessages / 2),
            partitionHighBytes: Math.max(1, Math.floor(highBytes / 3)), partitionLowBytes: 0,
          });
          const partitions = 4;
          const buffered: { partition: number; bytes: number }[] = [];
          for (const [fetch, pick, size] of steps) {
            if (fetch && bp.canFetch()) {
              // One fetch: up to fetchBytes/fetchMessages, only for unpaused partitions.
              let bytes = 0;
              for (let m = 0; m < fetchMessages; m++) {
                const partition = (pick + m) % partitions;
                const recordBytes = Math.min(size, fetchBytes - bytes);
                if (recordBytes <= 0 || bp.isPaused(partition)) continue;
                bp.add(partition, 1, recordBytes);
                buffered.push({ partition, bytes: recordBytes });
                bytes += recordBytes;
              }
            } else if (buffered.length > 0) {
              const [done] = buffered.splice(pick % buffered.length, 1) as [{ partition: number; bytes: number }];
              bp.remove(done.partition, 1, done.bytes);
            }
            assert.ok(bp.totalBytes < highBytes + fetchBytes, `bytes ${bp.totalBytes} ≥ ${highBytes} + ${fetchBytes}`);
            assert.ok(bp.totalMessages < highMessages + fetchMessages);
            assert.equal(bp.totalBytes, buffered.reduce((a, b) => a + b.bytes, 0));
            for (let p = 0; p < partitions; p++) {
              if (bp.isPaused(p)) assert.ok(bp.buffered(p).messages > 0, 'paused an empty partition');
            }
          }
          // Draining everything resumes everything.
          for (const b of buffered) bp.remove(b.partition, 1, b.bytes);
          assert.equal(bp.canFetch(), true);
          assert.deepEqual(bp.pausedPartitions(), []);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('pauses at high and resumes only at low (total)', () => {
    const bp = new BackpressureController({ highMessages: 10, lowMessages: 4, highBytes: 1000, lowBytes: 400 });
    bp.add(0, 5, 500);
    bp.add(1, 5, 100);
    assert.equal(bp.canFetch(), false); // 10 messages
    assert.deepEqual(bp.pausedPartitions(), [0, 1]);
    assert.equal(bp.isPaused(2), false); // nothing buffered for it
    bp.remove(0, 4, 400);
    assert.equal(bp.canFetch(), false); // 6 messages: between the watermarks
    bp.remove(0, 1, 100);
    assert.equal(bp.canFetch(), false); // 5 messages: still above the low watermark of 4
    assert.deepEqual(bp.pausedPartitions(), [1]); // partition 0 is empty now
    bp.remove(1, 1, 20);
    assert.equal(bp.canFetch(), true);
    assert.deepEqual(bp.pausedPartitions(), []);
  });

  it('pauses one partition by its own watermarks', () => {
    const bp = new BackpressureController({
      highMessages: 1000, lowMessages: 10, highBytes: 1e9, lowBytes: 1e6, partitionHighMessages: 4, partitionLowMessages: 1,
    });
    bp.add(3, 4, 40);
    bp.add(5, 1, 10);
    assert.equal(bp.isPaused(3), true);
    assert.equal(bp.isPaused(5), false);
    assert.equal(bp.canFetch(), true);
    bp.remove(3, 2, 20);
    assert.equal(bp.isPaused(3), true);
    bp.remove(3, 1, 10);
    assert.equal(bp.isPaused(3), false);
    bp.forget(5);
    assert.deepEqual(bp.buffered(5), { messages: 0, bytes: 0 });
    assert.throws(() => bp.remove(3, 2, 0), RangeError);
  });

  it('rejects inverted watermarks', () => {
    assert.throws(() => new BackpressureController({ highMessages: 5, lowMessages: 5, highBytes: 10, lowBytes: 1 }), RangeError);
    assert.throws(() => new BackpressureController({ highMessages: 0, lowMessages: 0, highBytes: 10, lowBytes: 1 }), RangeError);
  });
});
