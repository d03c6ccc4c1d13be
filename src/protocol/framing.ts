// Kafka's frame layer for the requesting side of a connection: a request is a 4-byte big-endian
// length, then the request header and body; a response is a length, then its header and body.
// Used by our client and by the quorum transport between controllers. Pure over Buffers; any
// thread. The server's side (net/connection.ts) frames with its own byte budget.

import { writeRequestHeader } from './header.js';
import { ProtocolError } from './reader.js';
import type { AnyApi } from './schema.js';
import { Writer } from './writer.js';

/** One request as a frame (length prefix included), in chunks ready for the socket. */
export function encodeRequestFrame(api: AnyApi, version: number, correlationId: number, clientId: string, req: unknown): Buffer[] {
  const w = new Writer();
  const sizeAt = w.reserveInt32();
  const flexible = api.isFlexible(version);
  writeRequestHeader(w, { apiKey: api.key, apiVersion: version, correlationId, clientId }, flexible);
  api.encodeRequest(version, req, w);
  w.setInt32(sizeAt, w.length - 4);
  return w.finish();
}

/** Splits a byte stream into frames (4-byte big-endian length, then that many bytes). */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = -1;

  constructor(private readonly maxFrame: number) {}

  /** Calls onFrame for each complete frame; throws ProtocolError on an impossible length. */
  push(data: Buffer, onFrame: (frame: Buffer) => void): void {
    this.chunks.push(data);
    this.buffered += data.length;
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 4) return;
        const size = this.take(4).readInt32BE(0);
        if (size < 0 || size > this.maxFrame) throw new ProtocolError(`response frame of ${size} bytes (limit ${this.maxFrame})`);
        this.need = size;
      }
      if (this.buffered < this.need) return;
      const frame = this.take(this.need);
      this.need = -1;
      onFrame(frame);
    }
  }

  /** The next n buffered bytes: a view when they lie in one chunk, else one copy. */
  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const chunk = this.chunks[0] as Buffer;
      const used = Math.min(chunk.length, n - at);
      chunk.copy(out, at, 0, used);
      at += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    return out;
  }
}
