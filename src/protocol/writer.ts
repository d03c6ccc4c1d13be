// Chunked big-endian writer for outgoing frames (main thread, response encode).
// Invariants: bytes written so far = concatenation of `chunks` + cur[segStart, pos). Growth
// starts a new, larger owned buffer instead of copying; appendRef() seals the current segment
// and inserts the caller's buffer as its own chunk, so record payloads reach the socket without
// a copy. Referenced buffers must stay unmodified until the chunks have been written out.
// Owned buffers are carved from a per-thread slab (one ArrayBuffer allocation per SLAB_BYTES of
// small writers instead of one per writer); finish() hands the unused tail of the last carve
// back. A finished chunk therefore keeps its slab alive: hold chunks only until they are sent.
// A records payload may also name FileChunks (bytes still in a segment file, sent natively);
// a message holding any is finished with finishChunks(), never finish().

const TWO_32 = 4294967296;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** Owned buffers stop doubling here; larger ones are sized to the single write that needs them. */
const MAX_GROWTH = 1 << 20;
const SLAB_BYTES = 256 * 1024;
const EMPTY = Buffer.alloc(0);
const MAX_CARVE = SLAB_BYTES / 8;

let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

function carve(size: number): Buffer {
  if (size > MAX_CARVE) return Buffer.allocUnsafeSlow(size);
  if (slab.length - slabUsed < size) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const b = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += size;
  return b;
}

/** Returns the unused tail of `b` to the slab if `b` is still its most recent carve. */
function giveBack(b: Buffer, used: number): void {
  if (b.buffer === slab.buffer && b.byteOffset + b.length === slabUsed) slabUsed = b.byteOffset + used;
}

/** Message bytes that stay in a file until sent: `length` bytes of `fd` from `position`. */
export interface FileChunk {
  readonly fd: number;
  readonly position: number;
  readonly length: number;
}

export type MessageChunk = Buffer | FileChunk;

function checkInt(v: number, min: number, max: number): void {
  if (!(v >= min && v <= max) || Math.floor(v) !== v) throw new RangeError(`value ${v} outside ${min}..${max}`);
}

export class Writer {
  private cur: Buffer;
  private pos = 0;
  private segStart = 0;
  private readonly chunks: MessageChunk[] = [];
  private sealedBytes = 0;
  private hasFiles = false;

  constructor(initialBytes = 256) {
    this.cur = carve(initialBytes > 16 ? initialBytes : 16);
  }

  /** Total bytes so far, including referenced chunks. */
  get length(): number {
    return this.sealedBytes + this.pos - this.segStart;
  }

  private ensure(n: number): void {
    if (this.cur.length - this.pos < n) this.grow(n);
  }

  private grow(n: number): void {
    this.seal();
    giveBack(this.cur, this.pos);
    const doubled = Math.min(this.cur.length * 2, MAX_GROWTH);
    this.cur = carve(n > doubled ? n : doubled < 256 ? 256 : doubled);
    this.pos = 0;
    this.segStart = 0;
  }

  private seal(): void {
    if (this.pos > this.segStart) {
      this.chunks.push(this.cur.subarray(this.segStart, this.pos));
      this.sealedBytes += this.pos - this.segStart;
      this.segStart = this.pos;
    }
  }

  // Fixed-width writes store bytes directly (typed-array stores truncate to 8 bits) after a
  // range check, so a wrong value fails loudly instead of wrapping on the wire.

  int8(v: number): void {
    checkInt(v, -128, 127);
    this.ensure(1);
    this.cur[this.pos++] = v;
  }

  int16(v: number): void {
    checkInt(v, -32768, 32767);
    this.put16(v);
  }

  uint16(v: number): void {
    checkInt(v, 0, 65535);
    this.put16(v);
  }

  int32(v: number): void {
    checkInt(v, -2147483648, 2147483647);
    this.put32(v);
  }

  uint32(v: number): void {
    checkInt(v, 0, 4294967295);
    this.put32(v);
  }

  private put16(v: number): void {
    this.ensure(2);
    const b = this.cur;
    const p = this.pos;
    b[p] = v >>> 8;
    b[p + 1] = v;
    this.pos = p + 2;
  }

  private put32(v: number): void {
    this.ensure(4);
    const b = this.cur;
    const p = this.pos;
    b[p] = v >>> 24;
    b[p + 1] = v >>> 16;
    b[p + 2] = v >>> 8;
    b[p + 3] = v;
    this.pos = p + 4;
  }

  float64(v: number): void { this.ensure(8); this.pos = this.cur.writeDoubleBE(v, this.pos); }
  bool(v: boolean): void { this.ensure(1); this.cur[this.pos++] = v ? 1 : 0; }

  /** int64 from a JS number; values beyond ±2^63 (e.g. a rounded Long.MAX_VALUE) clamp. */
  int64(v: number): void {
    if (Number.isSafeInteger(v)) {
      this.ensure(8);
      const hi = Math.floor(v / TWO_32);
      const lo = v - hi * TWO_32;
      const b = this.cur;
      const p = this.pos;
      b[p] = hi >>> 24;
      b[p + 1] = hi >>> 16;
      b[p + 2] = hi >>> 8;
      b[p + 3] = hi;
      b[p + 4] = lo >>> 24;
      b[p + 5] = lo >>> 16;
      b[p + 6] = lo >>> 8;
      b[p + 7] = lo;
      this.pos = p + 8;
      return;
    }
    if (!Number.isInteger(v)) throw new RangeError(`int64 value ${v} is not an integer`);
    this.ensure(8);
    const big = BigInt(v);
    this.pos = this.cur.writeBigInt64BE(big > INT64_MAX ? INT64_MAX : big < INT64_MIN ? INT64_MIN : big, this.pos);
  }

  /** Unsigned LEB128; accepts 0..2^53 (compact lengths, tags, and zigzagged varlongs). */
  uvarint(v: number): void {
    if (v >= 0 && v < 0x80 && (v | 0) === v) {
      this.ensure(1);
      this.cur[this.pos++] = v;
      return;
    }
    if (!(v >= 0 && v <= 2 ** 53) || !Number.isInteger(v)) throw new RangeError(`uvarint value ${v}`);
    this.ensure(10);
    const b = this.cur;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[p++] = v;
    this.pos = p;
  }

  /** Zigzag signed 32-bit varint. */
  varint(v: number): void {
    checkInt(v, -2147483648, 2147483647);
    this.varlong(v);
  }

  /** Zigzag signed 64-bit varint (exact within ±2^52). */
  varlong(v: number): void {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  uuid(hex: string): void {
    this.ensure(16);
    if (hex.length !== 32 || this.cur.write(hex, this.pos, 16, 'hex') !== 16) {
      throw new RangeError(`uuid must be 32 hex chars, got ${JSON.stringify(hex)}`);
    }
    this.pos += 16;
  }

  string(s: string): void {
    // Worst case 3 bytes per UTF-16 unit; write first, then fill in the measured length.
    this.ensure(2 + s.length * 3);
    const at = this.pos;
    const n = this.cur.write(s, at + 2, 'utf8');
    if (n > 0x7fff) throw new RangeError(`string of ${n} bytes exceeds int16 length`);
    this.cur.writeInt16BE(n, at);
    this.pos = at + 2 + n;
  }

  nullableString(s: string | null): void {
    if (s === null) this.int16(-1);
    else this.string(s);
  }

  compactString(s: string): void {
    if (s.length <= 42) {
      // At most 126 bytes, so the uvarint(length + 1) prefix is exactly one byte.
      this.ensure(1 + s.length * 3);
      const at = this.pos;
      const n = this.cur.write(s, at + 1, 'utf8');
      this.cur[at] = n + 1;
      this.pos = at + 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.uvarint(n + 1);
    this.ensure(n);
    this.pos += this.cur.write(s, this.pos, 'utf8');
  }

  compactNullableString(s: string | null): void {
    if (s === null) this.uvarint(0);
    else this.compactString(s);
  }

  /** Copies `b` into the owned buffer (for small opaque fields; records use appendRef). */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.cur.set(b, this.pos);
    this.pos += b.length;
  }

  bytes(b: Uint8Array): void {
    this.int32(b.length);
    this.raw(b);
  }

  nullableBytes(b: Uint8Array | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }

  compactBytes(b: Uint8Array): void {
    this.uvarint(b.length + 1);
    this.raw(b);
  }

  compactNullableBytes(b: Uint8Array | null): void {
    if (b === null) this.uvarint(0);
    else this.compactBytes(b);
  }

  /** Records payload (one buffer or chunks), length-prefixed, appended by reference. */
  records(v: Buffer | readonly MessageChunk[] | null, compact: boolean): void {
    if (v === null) {
      if (compact) this.uvarint(0);
      else this.int32(-1);
      return;
    }
    if (Buffer.isBuffer(v)) {
      if (compact) this.uvarint(v.length + 1);
      else this.int32(v.length);
      this.appendRef(v);
      return;
    }
    const chunks = v as readonly MessageChunk[];
    let total = 0;
    for (let i = 0; i < chunks.length; i++) total += chunks[i]!.length;
    if (compact) this.uvarint(total + 1);
    else this.int32(total);
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      if (Buffer.isBuffer(c)) this.appendRef(c);
      else this.appendFile(c);
    }
  }

  /** Appends a file range as its own chunk (it is never read here). */
  appendFile(c: FileChunk): void {
    if (c.length === 0) return;
    this.seal();
    this.chunks.push(c);
    this.sealedBytes += c.length;
    this.hasFiles = true;
  }

  /** Appends `buf` as its own chunk, by reference, no copy. */
  appendRef(buf: Buffer): void {
    if (buf.length === 0) return;
    this.seal();
    this.chunks.push(buf);
    this.sealedBytes += buf.length;
  }

  /** Reserves 4 contiguous owned bytes (e.g. a size prefix) and returns their message offset. */
  reserveInt32(): number {
    this.ensure(4);
    const at = this.length;
    this.pos += 4;
    return at;
  }

  /** Fills bytes reserved by reserveInt32 (they always lie inside one owned segment). */
  setInt32(at: number, v: number): void {
    if (at >= this.sealedBytes) {
      this.cur.writeInt32BE(v, this.segStart + (at - this.sealedBytes));
      return;
    }
    let start = 0;
    for (const chunk of this.chunks) {
      if (at < start + chunk.length) {
        if (Buffer.isBuffer(chunk)) chunk.writeInt32BE(v, at - start);
        return;
      }
      start += chunk.length;
    }
  }

  /**
   * Chunks in order; concatenated they are the message. Call once, when writing is done: the
   * writer gives its spare owned bytes back and must not be written to afterwards.
   */
  finish(): Buffer[] {
    if (this.hasFiles) throw new Error('message holds file chunks: use finishChunks()');
    return this.finishChunks() as Buffer[];
  }

  /** finish() for a message that may hold FileChunks. */
  finishChunks(): MessageChunk[] {
    this.seal();
    giveBack(this.cur, this.pos);
    this.cur = EMPTY;
    this.pos = 0;
    this.segStart = 0;
    return this.chunks;
  }
}
