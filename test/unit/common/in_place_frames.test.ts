// InPlaceFrameReader, driven as a socket's onread drives it (each read fills at most the buffer
// target() gave): whatever the read sizes, the frames come out whole, byte for byte and in order,
// none of them a view of the staging buffer; a large frame is read into a pooled buffer once its
// length is known; a length admit refuses stops the reader before a buffer is made for it, one it
// throws on throws, and so does a frame nobody asked for; a length admit asks to wait for makes no
// buffer until retry() admits it, and the stream then goes on where it stopped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FramePool } from '../../../src/common/frame_pool.js';
import { InPlaceFrameReader, STAGING_BYTES, type FrameAdmission } from '../../../src/common/in_place_frames.js';
import { ProtocolError } from '../../../src/protocol/reader.js';

const MIN = 1024;
const anySize = (): FrameAdmission => 'read';
/** A reader over a pool of `MIN`-byte size classes (and the thread's staging buffer). */
const readerOf = (admit: (size: number) => FrameAdmission = anySize, pool = new FramePool(1 << 20, MIN)): InPlaceFrameReader =>
  new InPlaceFrameReader(pool, admit);

function framed(bodies: readonly Buffer[]): Buffer {
  return Buffer.concat(bodies.flatMap((b) => {
    const len = Buffer.alloc(4);
    len.writeInt32BE(b.length);
    return [len, b];
  }));
}

/**
 * Feeds `stream` in reads of at most the given sizes (cycled), each capped by target()'s length;
 * the buffers read into. While the reader waits, as a stopped socket would, nothing is read: each
 * turn calls retry() instead (`admit` decides when it gets room).
 */
function feed(reader: InPlaceFrameReader, stream: Buffer, reads: readonly number[]): Buffer[] {
  const targets: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < stream.length || reader.waiting; i++) {
    if (reader.waiting) {
      reader.retry();
      continue;
    }
    const target = reader.target();
    const n = Math.min(target.length, reads[i % reads.length]!, stream.length - at);
    stream.copy(target, 0, at, at + n);
    targets.push(target);
    reader.received(n, target);
    at += n;
  }
  return targets;
}

describe('InPlaceFrameReader', () => {
  it('hands on every frame whole and in order whatever the read sizes (property)', () => {
    // Sizes and fill bytes rather than buffers, so a counterexample prints short.
    const size = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: MIN - 4, max: 5 * MIN }), fc.integer({ min: 60_000, max: 140_000 }));
    const shape = fc.record({ size, fill: fc.integer({ min: 0, max: 255 }) });
    fc.assert(fc.property(fc.array(shape, { minLength: 1, maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 8 }), (shapes, reads) => {
      const bodies = shapes.map(({ size: n, fill }) => Buffer.alloc(n, fill));
      const reader = readerOf();
      const out: Buffer[] = [];
      reader.onFrame = (f) => out.push(f);
      const staging = reader.target().buffer;
      feed(reader, framed(bodies), reads);
      assert.equal(out.length, bodies.length);
      bodies.forEach((b, i) => {
        assert.ok(out[i]!.equals(b), `frame ${i} of ${b.length} bytes`);
        assert.notEqual(out[i]!.buffer, staging, 'no frame is a view of the staging buffer');
      });
    }), { numRuns: 200 });
  });

  it('reads the rest of a large frame straight into its pooled buffer', () => {
    const pool = new FramePool(1 << 20, MIN);
    const reader = readerOf(anySize, pool);
    const out: Buffer[] = [];
    reader.onFrame = (f) => out.push(f);
    const body = Buffer.alloc(200_000, 7);
    const targets = feed(reader, framed([body]), [65_536]);
    const frame = out[0]!;
    assert.ok(frame.equals(body));
    assert.equal(targets[0]!.length, 64 * 1024, 'the first read, which carries the length, lands in the staging buffer');
    assert.ok(targets.length > 1 && targets.slice(1).every((t) => t.buffer === frame.buffer), 'every later read lands in the frame');
    pool.give(frame);
    assert.equal(pool.pooledBytes, 256 * 1024, 'the frame was lent by the pool');
  });

  it('stops at a length admit refuses, passes on what admit throws, and throws on a frame nobody expects', () => {
    const out: Buffer[] = [];
    const pool = new FramePool(1 << 20, MIN);
    const reader = readerOf((size) => (size <= 5_000 ? 'read' : 'refuse'), pool);
    reader.onFrame = (f) => out.push(f);
    feed(reader, framed([Buffer.alloc(3, 1), Buffer.alloc(6_000, 2), Buffer.alloc(4, 3)]), [1000]);
    assert.deepEqual(out, [Buffer.alloc(3, 1)], 'nothing after the refused frame');
    assert.equal(reader.abandon(), -1, 'no buffer was made for the refused frame');
    assert.equal(reader.target().length, STAGING_BYTES);
    const strict = readerOf((size) => {
      if (size > 100) throw new ProtocolError(`frame of ${size} bytes`);
      return 'read';
    });
    strict.onFrame = () => undefined;
    assert.throws(() => feed(strict, framed([Buffer.alloc(101)]), [1000]), ProtocolError);
    assert.throws(() => feed(readerOf(), framed([Buffer.alloc(3)]), [1000]), /nobody asked/);
  });
  it('hands on every frame whole and in order however often admission waits (property)', () => {
    const size = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: MIN - 4, max: 5 * MIN }), fc.integer({ min: 60_000, max: 140_000 }));
    fc.assert(fc.property(
      fc.array(size, { minLength: 1, maxLength: 10 }),
      fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 6 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 8 }),
      (sizes, reads, waits) => {
        const bodies = sizes.map((n, i) => Buffer.alloc(n, i + 1));
        // Each length is asked to wait waits[k] times (cycled) before it is read.
        let asked = 0;
        let k = 0;
        const admitted: number[] = [];
        const reader = readerOf((n) => {
          if (asked < waits[k % waits.length]!) {
            asked++;
            return 'wait';
          }
          asked = 0;
          k++;
          admitted.push(n);
          return 'read';
        });
        const out: Buffer[] = [];
        reader.onFrame = (f) => out.push(f);
        feed(reader, framed(bodies), reads);
        assert.deepEqual(admitted, sizes, 'every length admitted once, in order');
        assert.equal(out.length, bodies.length);
        bodies.forEach((b, i) => assert.ok(out[i]!.equals(b), `frame ${i} of ${b.length} bytes`));
        assert.equal(reader.waiting, false);
      },
    ), { numRuns: 200 });
  });

  it('makes no buffer for a waiting length, keeps what is read meanwhile, and goes on from retry()', () => {
    const pool = new FramePool(1 << 20, MIN);
    let room = false;
    const reader = readerOf((n) => (n < MIN || room ? 'read' : 'wait'), pool);
    const out: Buffer[] = [];
    reader.onFrame = (f) => out.push(f);
    const bodies = [Buffer.alloc(10, 1), Buffer.alloc(100_000, 2), Buffer.alloc(20, 3)];
    const stream = framed(bodies);
    const first = reader.target();
    stream.copy(first, 0, 0, 1000);
    reader.received(1000, first);
    assert.deepEqual(out, [bodies[0]], 'the frame before the waiting one is handed on');
    assert.equal(reader.waiting, true);
    assert.equal(reader.target().length, STAGING_BYTES, 'no buffer is made for the waiting frame');
    // A read that landed before the socket stopped is kept, after the bytes the first one left.
    const late = reader.target();
    stream.copy(late, 0, 1000, 3000);
    reader.received(2000, late);
    reader.retry();
    assert.equal(reader.waiting, true, 'still no room: still waiting');
    room = true;
    reader.retry();
    assert.equal(reader.waiting, false);
    assert.ok(reader.target().length < 100_000 && reader.target().length > STAGING_BYTES, 'the rest is read in place');
    feed(reader, stream.subarray(3000), [65_536]);
    assert.equal(out.length, 3);
    bodies.forEach((b, i) => assert.ok(out[i]!.equals(b), `frame ${i}`));
  });

  it('stops for good when a waiting length is refused on retry', () => {
    let verdict: FrameAdmission = 'wait';
    const reader = readerOf((n) => (n < 50 ? 'read' : verdict));
    const out: Buffer[] = [];
    reader.onFrame = (f) => out.push(f);
    const stream = framed([Buffer.alloc(60, 1), Buffer.alloc(5, 2)]);
    const target = reader.target();
    stream.copy(target);
    reader.received(stream.length, target);
    verdict = 'refuse';
    reader.retry();
    assert.equal(reader.waiting, false);
    assert.deepEqual(out, [], 'nothing after the refused frame');
    const again = reader.target();
    stream.copy(again);
    reader.received(stream.length, again);
    assert.deepEqual(out, []);
  });
});
