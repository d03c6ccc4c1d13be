// Bounds-checked big-endian reader over one received frame (main thread, request decode).
// Invariants: `offset` never passes `end`; every read checks the bytes it needs first and throws
// ProtocolError otherwise, so a hostile frame can only make us fail, never read past its end or
// allocate by a length it merely claims. Byte results (bytes, records) are views, never copies.

export class ProtocolError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`malformed Kafka frame: ${reason}`);
    this.name = 'ProtocolError';
    this.reason = reason;
  }
}

const TWO_32 = 4294967296;

export class Reader {
  offset: number;
  readonly end: number;
  readonly buf: Buffer;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    if (offset < 0 || end > buf.length || offset > end) {
      throw new ProtocolError(`reader window ${offset}..${end} outside buffer of ${buf.length}`);
    }
    this.buf = buf;
    this.offset = offset;
    this.end = end;
  }

  remaining(): number {
    return this.end - this.offset;
  }

  /** Advances past `n` bytes and returns where they start. */
  private take(n: number): number {
    const o = this.offset;
    if (n > this.end - o) throw new ProtocolError(`need ${n} bytes at ${o}, frame ends at ${this.end}`);
    this.offset = o + n;
    return o;
  }

  skip(n: number): void {
    if (n < 0) throw new ProtocolError(`negative skip ${n}`);
    this.take(n);
  }

  /** A reader over the next `n` bytes; this reader moves past them. */
  sub(n: number): Reader {
    const o = this.take(n);
    return new Reader(this.buf, o, o + n);
  }

  int8(): number { return this.buf.readInt8(this.take(1)); }
  int16(): number { return this.buf.readInt16BE(this.take(2)); }
  int32(): number { return this.buf.readInt32BE(this.take(4)); }
  uint16(): number { return this.buf.readUInt16BE(this.take(2)); }
  uint32(): number { return this.buf.readUInt32BE(this.take(4)); }
  float64(): number { return this.buf.readDoubleBE(this.take(8)); }
  bool(): boolean { return this.buf[this.take(1)] !== 0; }

  /** int64 as a JS number (exact within ±2^53; beyond that, nearest double). */
  int64(): number {
    const o = this.take(8);
    return this.buf.readInt32BE(o) * TWO_32 + this.buf.readUInt32BE(o + 4);
  }

  /** Unsigned LEB128 of at most 32 bits (5 bytes), as Kafka's compact lengths and tags use. */
  uvarint(): number {
    const o = this.offset;
    if (o < this.end) {
      const b0 = this.buf[o]!;
      if (b0 < 0x80) {
        this.offset = o + 1;
        return b0;
      }
    }
    return this.uvarintSlow();
  }

  private uvarintSlow(): number {
    const b = this.buf;
    let o = this.offset;
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (o >= this.end) throw new ProtocolError('truncated varint');
      const byte = b[o++]!;
      if (i < 4) {
        value |= (byte & 0x7f) << (7 * i);
      } else if (byte >= 0x80) {
        break;
      } else if (byte > 0x0f) {
        throw new ProtocolError('varint exceeds 32 bits');
      } else {
        value += byte * 0x10000000;
      }
      if (byte < 0x80) {
        this.offset = o;
        return value;
      }
    }
    throw new ProtocolError('varint longer than 5 bytes');
  }

  /** Zigzag signed 32-bit varint. */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /** Zigzag signed 64-bit varint (up to 10 bytes), as a JS number. */
  varlong(): number {
    const b = this.buf;
    const start = this.offset;
    let o = start;
    let u = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++, scale *= 128) {
      if (o >= this.end) throw new ProtocolError('truncated varlong');
      const byte = b[o++]!;
      u += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        this.offset = o;
        // Take the zigzag sign from the first byte: exact even when u has lost precision.
        return (b[start]! & 1) === 1 ? -(u + 1) / 2 : u / 2;
      }
    }
    throw new ProtocolError('varlong longer than 10 bytes');
  }

  uuid(): string {
    const o = this.take(16);
    return this.buf.toString('hex', o, o + 16);
  }

  private utf8(len: number): string {
    const o = this.take(len);
    return this.buf.toString('utf8', o, o + len);
  }

  string(): string {
    const len = this.int16();
    if (len < 0) throw new ProtocolError(len === -1 ? 'null in non-nullable string' : `string length ${len}`);
    return this.utf8(len);
  }

  nullableString(): string | null {
    const len = this.int16();
    if (len === -1) return null;
    if (len < 0) throw new ProtocolError(`string length ${len}`);
    return this.utf8(len);
  }

  compactString(): string {
    const n = this.uvarint();
    if (n === 0) throw new ProtocolError('null in non-nullable compact string');
    return this.utf8(n - 1);
  }

  compactNullableString(): string | null {
    const n = this.uvarint();
    return n === 0 ? null : this.utf8(n - 1);
  }

  private view(len: number): Buffer {
    const o = this.take(len);
    return this.buf.subarray(o, o + len);
  }

  bytes(): Buffer {
    const len = this.int32();
    if (len < 0) throw new ProtocolError(len === -1 ? 'null in non-nullable bytes' : `bytes length ${len}`);
    return this.view(len);
  }

  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len === -1) return null;
    if (len < 0) throw new ProtocolError(`bytes length ${len}`);
    return this.view(len);
  }

  compactBytes(): Buffer {
    const n = this.uvarint();
    if (n === 0) throw new ProtocolError('null in non-nullable compact bytes');
    return this.view(n - 1);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint();
    return n === 0 ? null : this.view(n - 1);
  }

  /** Classic array count; -1 means null, other negatives are malformed. */
  arrayLength(): number {
    const n = this.int32();
    if (n < -1) throw new ProtocolError(`array length ${n}`);
    return n;
  }

  /** Compact array count; -1 means null. */
  compactArrayLength(): number {
    return this.uvarint() - 1;
  }

  /** Skips a tag buffer whose fields this version does not declare. */
  skipTags(): void {
    for (let n = this.uvarint(); n > 0; n--) {
      this.uvarint();
      this.skip(this.uvarint());
    }
  }

  /**
   * Rejects an element count the rest of the frame cannot hold, given that each element takes at
   * least `minElementBytes` (treated as 1 if smaller), so a claimed count never drives a loop
   * or an allocation beyond the frame's own size.
   */
  checkCount(n: number, minElementBytes: number): void {
    if (n * (minElementBytes > 1 ? minElementBytes : 1) > this.end - this.offset) {
      throw new ProtocolError(`array of ${n} elements cannot fit in ${this.end - this.offset} bytes`);
    }
  }
}
