// Test-only byte builder for golden protocol frames (main thread, tests only).
// Golden tests write the expected wire bytes by hand from the Kafka spec, independently of the
// codec under test; this class is deliberately naive (one Buffer per call, concat at the end) so
// that it shares no code with src/net/protocol.

export class Bytes {
  private readonly parts: Buffer[] = [];

  private push(size: number, fill: (b: Buffer) => void): this {
    const b = Buffer.alloc(size);
    fill(b);
    this.parts.push(b);
    return this;
  }

  i8(v: number): this { return this.push(1, (b) => b.writeInt8(v)); }
  i16(v: number): this { return this.push(2, (b) => b.writeInt16BE(v)); }
  i32(v: number): this { return this.push(4, (b) => b.writeInt32BE(v)); }
  i64(v: number | bigint): this { return this.push(8, (b) => b.writeBigInt64BE(BigInt(v))); }
  u16(v: number): this { return this.push(2, (b) => b.writeUInt16BE(v)); }
  u32(v: number): this { return this.push(4, (b) => b.writeUInt32BE(v)); }
  f64(v: number): this { return this.push(8, (b) => b.writeDoubleBE(v)); }
  bool(v: boolean): this { return this.i8(v ? 1 : 0); }

  /** Unsigned LEB128 varint, as used for compact lengths and tag numbers. */
  uvarint(v: number | bigint): this {
    const out: number[] = [];
    let n = BigInt(v);
    do {
      let byte = Number(n & 0x7fn);
      n >>= 7n;
      if (n !== 0n) byte |= 0x80;
      out.push(byte);
    } while (n !== 0n);
    this.parts.push(Buffer.from(out));
    return this;
  }

  /** Zigzag signed varint (record-level fields). */
  varint(v: number | bigint): this {
    const z = (BigInt(v) << 1n) ^ (BigInt(v) < 0n ? -1n : 0n);
    return this.uvarint(BigInt.asUintN(64, z));
  }

  /** Classic STRING / NULLABLE_STRING: int16 length (-1 = null) then UTF-8. */
  str(s: string | null): this {
    if (s === null) return this.i16(-1);
    const b = Buffer.from(s, 'utf8');
    return this.i16(b.length).raw(b);
  }

  /** COMPACT_(NULLABLE_)STRING: uvarint(length + 1) (0 = null) then UTF-8. */
  cstr(s: string | null): this {
    if (s === null) return this.uvarint(0);
    const b = Buffer.from(s, 'utf8');
    return this.uvarint(b.length + 1).raw(b);
  }

  /** Classic BYTES / NULLABLE_BYTES: int32 length (-1 = null). */
  bytes(b: Buffer | null): this {
    if (b === null) return this.i32(-1);
    return this.i32(b.length).raw(b);
  }

  /** COMPACT_(NULLABLE_)BYTES: uvarint(length + 1) (0 = null). */
  cbytes(b: Buffer | null): this {
    if (b === null) return this.uvarint(0);
    return this.uvarint(b.length + 1).raw(b);
  }

  /** Classic array length (int32, -1 = null). */
  arr(n: number | null): this { return this.i32(n === null ? -1 : n); }

  /** Compact array length (uvarint n + 1, 0 = null). */
  carr(n: number | null): this { return this.uvarint(n === null ? 0 : n + 1); }

  /** 16-byte UUID from 32 hex chars. */
  uuid(hex: string): this {
    if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`bad uuid hex ${hex}`);
    return this.raw(Buffer.from(hex, 'hex'));
  }

  /** Empty tagged-field buffer. */
  tags0(): this { return this.uvarint(0); }

  /** One tagged field: tag, size, then the body built by `body`. Caller writes the count first. */
  tag(tag: number, body: Bytes): this {
    const b = body.build();
    return this.uvarint(tag).uvarint(b.length).raw(b);
  }

  raw(buf: Buffer | Uint8Array): this {
    this.parts.push(Buffer.from(buf));
    return this;
  }

  build(): Buffer { return Buffer.concat(this.parts); }
}
