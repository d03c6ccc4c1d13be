// Reader/Writer primitives: exact encodings (checked against the independent Bytes builder),
// varint edge cases, bounds errors, and Writer chunking (growth, zero-copy refs, patching).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ProtocolError, Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { Bytes } from './golden_helpers.js';

function written(fill: (w: Writer) => void, initial?: number): Buffer {
  const w = new Writer(initial);
  fill(w);
  const out = Buffer.concat(w.finish());
  assert.equal(out.length, w.length);
  return out;
}

function rejects(bytes: Buffer, read: (r: Reader) => unknown, reason?: RegExp): void {
  assert.throws(() => read(new Reader(bytes)), (err: unknown) => {
    assert.ok(err instanceof ProtocolError, `expected ProtocolError, got ${String(err)}`);
    if (reason !== undefined) assert.match(err.reason, reason);
    return true;
  });
}

describe('fixed-width primitives', () => {
  it('write and read big-endian values at their limits', () => {
    const buf = written((w) => {
      w.int8(-128); w.int16(-32768); w.int32(-2147483648); w.uint16(65535); w.uint32(4294967295);
      w.float64(-0.5); w.bool(true); w.bool(false); w.int64(-1); w.int64(2 ** 53 - 1); w.int64(-(2 ** 53) + 1);
    });
    const expected = new Bytes().i8(-128).i16(-32768).i32(-2147483648).u16(65535).u32(4294967295)
      .f64(-0.5).bool(true).bool(false).i64(-1).i64(2 ** 53 - 1).i64(-(2 ** 53) + 1).build();
    assert.deepEqual(buf, expected);
    const r = new Reader(buf);
    assert.deepEqual(
      [r.int8(), r.int16(), r.int32(), r.uint16(), r.uint32(), r.float64(), r.bool(), r.bool(), r.int64(), r.int64(), r.int64()],
      [-128, -32768, -2147483648, 65535, 4294967295, -0.5, true, false, -1, 2 ** 53 - 1, -(2 ** 53) + 1],
    );
    assert.equal(r.remaining(), 0);
  });

  it('int64 round-trips every safe integer', () => {
    fc.assert(fc.property(fc.maxSafeInteger(), (v) => {
      const buf = written((w) => w.int64(v));
      assert.deepEqual(buf, new Bytes().i64(v).build());
      assert.equal(new Reader(buf).int64(), v);
    }));
  });

  it('int64 clamps a rounded Long.MAX_VALUE and reads it back as the nearest double', () => {
    const max = new Bytes().i64(2n ** 63n - 1n).build();
    assert.deepEqual(written((w) => w.int64(9223372036854775807)), max);
    assert.equal(new Reader(max).int64(), 9223372036854775807);
    assert.deepEqual(written((w) => w.int64(-9223372036854775808)), new Bytes().i64(-(2n ** 63n)).build());
  });

  it('a non-integer int64 is a programming error', () => {
    assert.throws(() => written((w) => w.int64(1.5)), RangeError);
  });

  it('uuid is 16 raw bytes read back as lowercase hex, and bad hex is refused', () => {
    const hex = '0123456789abcdef0123456789abcdef';
    const buf = written((w) => w.uuid(hex));
    assert.deepEqual(buf, Buffer.from(hex, 'hex'));
    assert.equal(new Reader(buf).uuid(), hex);
    assert.throws(() => written((w) => w.uuid('0123')), RangeError);
    assert.throws(() => written((w) => w.uuid('zz23456789abcdef0123456789abcdef')), RangeError);
  });
});

describe('varints', () => {
  const unsigned: [number, number[]][] = [
    [0, [0x00]], [1, [0x01]], [127, [0x7f]], [128, [0x80, 0x01]], [300, [0xac, 0x02]],
    [16383, [0xff, 0x7f]], [16384, [0x80, 0x80, 0x01]], [2 ** 31 - 1, [0xff, 0xff, 0xff, 0xff, 0x07]],
    [2 ** 32 - 1, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  ];
  for (const [v, bytes] of unsigned) {
    it(`uvarint ${v}`, () => {
      assert.deepEqual(written((w) => w.uvarint(v)), Buffer.from(bytes));
      const r = new Reader(Buffer.from(bytes));
      assert.equal(r.uvarint(), v);
      assert.equal(r.remaining(), 0);
    });
  }

  const zigzag: [number, number[]][] = [
    [0, [0x00]], [-1, [0x01]], [1, [0x02]], [-64, [0x7f]], [64, [0x80, 0x01]],
    [2147483647, [0xfe, 0xff, 0xff, 0xff, 0x0f]], [-2147483648, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  ];
  for (const [v, bytes] of zigzag) {
    it(`varint ${v}`, () => {
      assert.deepEqual(written((w) => w.varint(v)), Buffer.from(bytes));
      assert.equal(new Reader(Buffer.from(bytes)).varint(), v);
      assert.equal(new Reader(Buffer.from(bytes)).varlong(), v);
    });
  }

  it('varlong round-trips ±2^52 and matches the reference encoding', () => {
    fc.assert(fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), (v) => {
      const buf = written((w) => w.varlong(v));
      assert.deepEqual(buf, new Bytes().varint(v).build());
      assert.equal(new Reader(buf).varlong(), v);
    }));
  });

  it('varlong reads the 10-byte encodings of the int64 extremes', () => {
    assert.equal(new Reader(new Bytes().varint(-(2 ** 63)).build()).varlong(), -(2 ** 63));
    assert.equal(new Reader(new Bytes().varint(2n ** 63n - 1n).build()).varlong(), 2 ** 63);
  });

  it('rejects truncated, over-long and over-wide varints', () => {
    rejects(Buffer.from([0x80]), (r) => r.uvarint(), /truncated/);
    rejects(Buffer.from([]), (r) => r.uvarint(), /truncated/);
    rejects(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x1f]), (r) => r.uvarint(), /32 bits/);
    rejects(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), (r) => r.uvarint(), /longer/);
    rejects(Buffer.alloc(11, 0x80), (r) => r.varlong(), /longer|truncated/);
  });

  it('uvarint refuses negative or unsafe values on write', () => {
    assert.throws(() => written((w) => w.uvarint(-1)), RangeError);
    assert.throws(() => written((w) => w.uvarint(2 ** 60)), RangeError);
    assert.throws(() => written((w) => w.varint(2 ** 31)), RangeError);
  });
});

describe('strings and bytes', () => {
  const samples = ['', 'a', 'topic-1', 'ünïcødé ☃ 𝄞', 'x'.repeat(42), 'y'.repeat(43), 'é'.repeat(200)];
  for (const s of samples) {
    it(`string/compact string ${JSON.stringify(s.slice(0, 12))} (${s.length} units)`, () => {
      const buf = written((w) => { w.string(s); w.compactString(s); w.nullableString(s); w.compactNullableString(s); });
      assert.deepEqual(buf, new Bytes().str(s).cstr(s).str(s).cstr(s).build());
      const r = new Reader(buf);
      assert.deepEqual([r.string(), r.compactString(), r.nullableString(), r.compactNullableString()], [s, s, s, s]);
    });
  }

  it('null strings and bytes use -1 / 0 markers', () => {
    const buf = written((w) => { w.nullableString(null); w.compactNullableString(null); w.nullableBytes(null); w.compactNullableBytes(null); });
    assert.deepEqual(buf, new Bytes().str(null).cstr(null).bytes(null).cbytes(null).build());
    const r = new Reader(buf);
    assert.deepEqual([r.nullableString(), r.compactNullableString(), r.nullableBytes(), r.compactNullableBytes()], [null, null, null, null]);
  });

  it('bytes are returned as views of the frame, not copies', () => {
    const frame = new Bytes().bytes(Buffer.from('hello')).cbytes(Buffer.from('abc')).build();
    const r = new Reader(frame);
    const a = r.bytes();
    const b = r.compactNullableBytes()!;
    assert.equal(a.toString(), 'hello');
    assert.equal(b.toString(), 'abc');
    frame[4] = 0x48; // 'H'
    assert.equal(a.toString(), 'Hello');
    assert.equal(a.buffer, frame.buffer);
  });

  it('a string over 32767 bytes cannot be written with an int16 length', () => {
    assert.throws(() => written((w) => w.string('z'.repeat(40000))), RangeError);
  });

  it('null in a non-nullable field is malformed', () => {
    rejects(new Bytes().str(null).build(), (r) => r.string(), /null/);
    rejects(new Bytes().cstr(null).build(), (r) => r.compactString(), /null/);
    rejects(new Bytes().bytes(null).build(), (r) => r.bytes(), /null/);
    rejects(new Bytes().cbytes(null).build(), (r) => r.compactBytes(), /null/);
  });

  it('negative lengths other than -1 are malformed', () => {
    rejects(new Bytes().i16(-2).build(), (r) => r.nullableString(), /length -2/);
    rejects(new Bytes().i16(-32768).build(), (r) => r.string(), /length/);
    rejects(new Bytes().i32(-7).build(), (r) => r.nullableBytes(), /length -7/);
    rejects(new Bytes().i32(-2).build(), (r) => r.arrayLength(), /array length -2/);
  });

  it('lengths beyond the frame are rejected before anything is allocated', () => {
    rejects(new Bytes().i16(10).raw(Buffer.from('abc')).build(), (r) => r.string(), /need 10 bytes/);
    rejects(new Bytes().i32(0x7fffffff).build(), (r) => r.bytes(), /need 2147483647/);
    rejects(new Bytes().uvarint(0xffffffff).build(), (r) => r.compactNullableBytes(), /need/);
    rejects(new Bytes().uvarint(2 ** 31).build(), (r) => r.compactString(), /need/);
  });
});

describe('bounds', () => {
  it('every fixed-width read of a truncated buffer throws ProtocolError', () => {
    const reads: [number, (r: Reader) => unknown][] = [
      [1, (r) => r.int8()], [2, (r) => r.int16()], [4, (r) => r.int32()], [8, (r) => r.int64()],
      [2, (r) => r.uint16()], [4, (r) => r.uint32()], [8, (r) => r.float64()], [1, (r) => r.bool()], [16, (r) => r.uuid()],
    ];
    for (const [size, read] of reads) rejects(Buffer.alloc(size - 1), read, /need/);
  });

  it('a window ends the reader even when the buffer continues', () => {
    const r = new Reader(Buffer.from([1, 2, 3, 4, 5, 6]), 1, 3);
    assert.equal(r.int16(), 0x0203);
    assert.throws(() => r.int8(), ProtocolError);
    assert.throws(() => new Reader(Buffer.alloc(2), 0, 3), ProtocolError);
  });

  it('sub() bounds a nested reader and advances the parent', () => {
    const r = new Reader(Buffer.from([0, 1, 2, 3]));
    const s = r.sub(2);
    assert.equal(r.offset, 2);
    assert.equal(s.int16(), 1);
    assert.throws(() => s.int8(), ProtocolError);
    assert.throws(() => r.sub(3), ProtocolError);
  });

  it('array counts the frame cannot hold are rejected', () => {
    const r = new Reader(Buffer.alloc(8));
    r.checkCount(2, 4);
    assert.throws(() => r.checkCount(3, 4), ProtocolError);
    assert.throws(() => r.checkCount(9, 0), ProtocolError);
    assert.throws(() => r.checkCount(0x7fffffff, 1), ProtocolError);
  });

  it('skipTags skips unknown tagged fields and fails on truncation', () => {
    const tags = new Bytes().uvarint(2).tag(5, new Bytes().i32(7)).tag(9, new Bytes()).i8(42).build();
    const r = new Reader(tags);
    r.skipTags();
    assert.equal(r.int8(), 42);
    rejects(new Bytes().uvarint(1).uvarint(3).uvarint(10).i16(0).build(), (x) => x.skipTags(), /need 10/);
    rejects(new Bytes().uvarint(5).build(), (x) => x.skipTags(), /truncated/);
  });
});

describe('Writer chunks', () => {
  it('grows geometrically into new chunks without losing or reordering bytes', () => {
    const w = new Writer(16);
    for (let i = 0; i < 1000; i++) w.int32(i);
    const chunks = w.finish();
    assert.ok(chunks.length > 1 && chunks.length < 12, `chunks: ${chunks.length}`);
    const all = Buffer.concat(chunks);
    for (let i = 0; i < 1000; i++) assert.equal(all.readInt32BE(i * 4), i);
  });

  it('appendRef inserts the caller buffer itself, in order, without copying', () => {
    const payload = Buffer.from('record-bytes');
    const w = new Writer();
    w.int16(1);
    w.appendRef(payload);
    w.int16(2);
    const chunks = w.finish();
    assert.ok(chunks.includes(payload), 'payload chunk is the same object');
    assert.deepEqual(Buffer.concat(chunks), new Bytes().i16(1).raw(payload).i16(2).build());
  });

  it('records() prefixes the total length of all chunks and keeps them by reference', () => {
    const parts = [Buffer.from('ab'), Buffer.from('cde')];
    const w = new Writer();
    w.records(parts, false);
    w.records(parts, true);
    w.records(null, false);
    w.records(null, true);
    w.records(parts[0]!, true);
    const chunks = w.finish();
    assert.ok(chunks.includes(parts[0]!) && chunks.includes(parts[1]!));
    const expected = new Bytes().i32(5).raw(Buffer.from('abcde')).uvarint(6).raw(Buffer.from('abcde'))
      .i32(-1).uvarint(0).uvarint(3).raw(Buffer.from('ab')).build();
    assert.deepEqual(Buffer.concat(chunks), expected);
  });

  it('reserveInt32/setInt32 patch a size prefix across growth and refs', () => {
    const w = new Writer(16);
    w.int8(9);
    const at = w.reserveInt32();
    for (let i = 0; i < 100; i++) w.int32(i);
    w.appendRef(Buffer.alloc(50, 1));
    const later = w.reserveInt32();
    w.int8(7);
    w.setInt32(at, w.length - at - 4);
    w.setInt32(later, -5);
    const all = Buffer.concat(w.finish());
    assert.equal(all[0], 9);
    assert.equal(all.readInt32BE(1), all.length - 5);
    assert.equal(all.readInt32BE(later), -5);
    assert.equal(all[all.length - 1], 7);
  });

  it('spare bytes handed back by finish() never overlap chunks already returned', () => {
    const a = new Writer(64);
    const b = new Writer(64);
    a.int32(1);
    b.int32(2);
    const fromA = a.finish();
    const c = new Writer(64);
    c.int32(3);
    const fromB = b.finish();
    const d = new Writer(64);
    d.raw(Buffer.alloc(64, 0xee));
    const fromC = c.finish();
    const fromD = d.finish();
    assert.deepEqual(Buffer.concat(fromA), new Bytes().i32(1).build());
    assert.deepEqual(Buffer.concat(fromB), new Bytes().i32(2).build());
    assert.deepEqual(Buffer.concat(fromC), new Bytes().i32(3).build());
    assert.deepEqual(Buffer.concat(fromD), Buffer.alloc(64, 0xee));
  });

  it('out-of-range fixed-width values throw instead of wrapping', () => {
    assert.throws(() => written((w) => w.int8(128)), RangeError);
    assert.throws(() => written((w) => w.int16(40000)), RangeError);
    assert.throws(() => written((w) => w.int32(2 ** 31)), RangeError);
    assert.throws(() => written((w) => w.uint16(-1)), RangeError);
    assert.throws(() => written((w) => w.uint32(2 ** 32)), RangeError);
    assert.throws(() => written((w) => w.int32(1.5)), RangeError);
    assert.throws(() => written((w) => w.int32(Number.NaN)), RangeError);
  });

  it('bytes fields are copied, so the source can be reused', () => {
    const src = Buffer.from('xyz');
    const w = new Writer();
    w.bytes(src);
    src.fill(0);
    assert.deepEqual(Buffer.concat(w.finish()), new Bytes().bytes(Buffer.from('xyz')).build());
  });
});
