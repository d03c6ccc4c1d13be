// Test helper: raw TCP conversations with a broker, for bad-input and fuzz tests. Runs on the
// test's main thread. Invariants: every wait is bounded; collected response bytes are capped;
// sockets are always destroyed when a conversation ends.

import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { writeRequestHeader } from '../../src/protocol/header.js';
import type { AnyApi } from '../../src/protocol/schema.js';
import { Writer } from '../../src/protocol/writer.js';

export interface Outcome {
  /** Complete response frames (without their length prefix). */
  frames: Buffer[];
  /** The broker closed (or reset) the connection. */
  closed: boolean;
  /** Milliseconds from the last write until close (or until we gave up). */
  elapsedMs: number;
}

const MAX_COLLECT = 4 << 20;

/** Splits collected bytes into whole frames; a trailing partial frame is dropped. */
export function splitFrames(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (data.length - pos >= 4) {
    const size = data.readInt32BE(pos);
    if (size < 0 || data.length - pos - 4 < size) break;
    out.push(data.subarray(pos + 4, pos + 4 + size));
    pos += 4 + size;
  }
  return out;
}

/** One raw connection; collects everything the broker sends from the moment it connects. */
export class RawConn {
  private readonly parts: Buffer[] = [];
  private collected = 0;
  private isClosed = false;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      if (this.collected < MAX_COLLECT) this.parts.push(d);
      this.collected += d.length;
      this.wake();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.isClosed = true;
      this.wake();
    });
  }

  static open(port: number, timeoutMs = 3000): Promise<RawConn> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port });
      const conn = new RawConn(s);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`connect to ${port} timed out`));
      }, timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(conn);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  frames(): Buffer[] {
    return splitFrames(Buffer.concat(this.parts));
  }

  write(...chunks: Buffer[]): void {
    for (const c of chunks) if (!this.socket.destroyed) this.socket.write(c);
  }

  /** Half-closes our side (a client that sends and hangs up). */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Waits until the broker closes, or `frames` response frames arrived and `quietMs` passed
   * without more data, or `timeoutMs` passed.
   */
  async wait(opts: { frames?: number; timeoutMs?: number; quietMs?: number } = {}): Promise<Outcome> {
    const start = Date.now();
    const deadline = start + (opts.timeoutMs ?? 3000);
    const want = opts.frames ?? 0;
    const quietMs = opts.quietMs ?? 150;
    let lastSize = -1;
    let lastChange = start;
    while (!this.isClosed && Date.now() < deadline) {
      if (this.collected !== lastSize) {
        lastSize = this.collected;
        lastChange = Date.now();
      }
      if (this.frames().length >= want && Date.now() - lastChange >= quietMs) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(quietMs, Math.max(1, deadline - Date.now())));
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
    return { frames: this.frames(), closed: this.isClosed, elapsedMs: Date.now() - start };
  }

  private wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
}

/** Opens a connection, writes, waits as RawConn.wait does, and destroys it. */
export async function converse(port: number, chunks: readonly Buffer[], opts: { frames?: number; timeoutMs?: number; quietMs?: number; endWrite?: boolean } = {}): Promise<Outcome> {
  const conn = await RawConn.open(port);
  try {
    conn.write(...chunks);
    if (opts.endWrite === true) conn.end();
    return await conn.wait(opts);
  } finally {
    conn.destroy();
  }
}

/** A request frame (length prefix included) from our codec. */
export function requestFrame(api: AnyApi, version: number, correlationId: number, req: unknown, clientId: string | null = 'raw'): Buffer {
  const w = new Writer();
  const at = w.reserveInt32();
  writeRequestHeader(w, { apiKey: api.key, apiVersion: version, correlationId, clientId }, api.isFlexible(version));
  api.encodeRequest(version, req, w);
  w.setInt32(at, w.length - 4);
  return Buffer.concat(w.finish());
}

/** A frame with a v1 request header and an arbitrary body (for keys/versions we do not define). */
export function rawFrame(apiKey: number, version: number, correlationId: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const w = new Writer();
  const at = w.reserveInt32();
  writeRequestHeader(w, { apiKey, apiVersion: version, correlationId, clientId: 'raw' }, false);
  w.raw(body);
  w.setInt32(at, w.length - 4);
  return Buffer.concat(w.finish());
}

export function lengthPrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
