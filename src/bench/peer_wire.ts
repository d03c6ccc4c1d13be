// The wire vocabulary `sluice bench --vs` speaks to its peers (bench driver, main thread): Redis's
// RESP2 (commands out, replies in) and the NATS client protocol (PUB/SUB out; INFO, MSG, PING,
// +OK, -ERR in). Pure: bytes in, parsed values out, incremental over a socket's chunks.
// Bounds: a reader holds at most one unparsed frame plus one chunk; a frame larger than
// MAX_FRAME_BYTES is refused (the peer is a server we started, so that means a bug, not a load).

export const MAX_FRAME_BYTES = 64 << 20;

const CRLF = Buffer.from('\r\n');

/** A RESP2 reply: simple string, error, integer, bulk string (null when nil), array (null when nil). */
export type RespValue = string | RespError | number | Buffer | null | RespValue[];

export class RespError {
  constructor(readonly message: string) {}
}

/** One command as a RESP array of bulk strings. */
export function respCommand(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a) : a;
    parts.push(Buffer.from(`$${b.length}\r\n`), b, CRLF);
  }
  return Buffer.concat(parts);
}

/** The unparsed bytes so far plus a new chunk, refused past MAX_FRAME_BYTES. */
function appendChunk(pending: Buffer, chunk: Buffer, what: string): Buffer {
  const all = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  if (all.length > MAX_FRAME_BYTES) throw new RangeError(`${what} over ${MAX_FRAME_BYTES} bytes`);
  return all;
}

type Parsed<T> = { value: T; end: number } | null;

function line(buf: Buffer, at: number): Parsed<string> {
  const cr = buf.indexOf(CRLF, at);
  return cr < 0 ? null : { value: buf.toString('latin1', at, cr), end: cr + 2 };
}

function parseResp(buf: Buffer, at: number): Parsed<RespValue> {
  if (at >= buf.length) return null;
  const head = line(buf, at + 1);
  if (head === null) return null;
  switch (buf[at]) {
    case 0x2b: return { value: head.value, end: head.end }; // +
    case 0x2d: return { value: new RespError(head.value), end: head.end }; // -
    case 0x3a: return { value: Number(head.value), end: head.end }; // :
    case 0x24: { // $
      const n = Number(head.value);
      if (n < 0) return { value: null, end: head.end };
      if (n > MAX_FRAME_BYTES) throw new RangeError(`RESP bulk string of ${n} bytes`);
      return head.end + n + 2 > buf.length ? null : { value: buf.subarray(head.end, head.end + n), end: head.end + n + 2 };
    }
    case 0x2a: { // *
      const n = Number(head.value);
      if (n < 0) return { value: null, end: head.end };
      const items: RespValue[] = [];
      let end = head.end;
      for (let i = 0; i < n; i++) {
        const item = parseResp(buf, end);
        if (item === null) return null;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default: throw new RangeError(`not a RESP reply (first byte 0x${(buf[at] ?? 0).toString(16)})`);
  }
}

/** Feeds socket chunks; yields every complete reply in order. */
export class RespReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RespValue[] {
    this.pending = appendChunk(this.pending, chunk, 'RESP reply');
    const out: RespValue[] = [];
    let at = 0;
    for (;;) {
      const r = parseResp(this.pending, at);
      if (r === null) break;
      out.push(r.value);
      at = r.end;
    }
    this.pending = this.pending.subarray(at);
    return out;
  }
}

/** A NATS server-to-client operation. */
export type NatsOp =
  | { readonly op: 'INFO'; readonly info: string }
  | { readonly op: 'MSG'; readonly subject: string; readonly sid: string; readonly replyTo: string | null; readonly payload: Buffer }
  | { readonly op: 'PING' | 'PONG' | '+OK' }
  | { readonly op: '-ERR'; readonly message: string };

/** Feeds socket chunks; yields every complete operation in order. */
export class NatsReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): NatsOp[] {
    this.pending = appendChunk(this.pending, chunk, 'NATS message');
    const out: NatsOp[] = [];
    let at = 0;
    for (;;) {
      const head = line(this.pending, at);
      if (head === null) break;
      const [op = '', ...args] = head.value.split(' ').filter((s) => s !== '');
      if (op === 'MSG') {
        // MSG <subject> <sid> [reply-to] <#bytes>
        const size = Number(args[args.length - 1]);
        if (!(size >= 0 && size <= MAX_FRAME_BYTES)) throw new RangeError(`bad NATS MSG line: ${head.value}`);
        if (head.end + size + 2 > this.pending.length) break;
        out.push({ op: 'MSG', subject: args[0] ?? '', sid: args[1] ?? '', replyTo: args.length === 4 ? (args[2] ?? null) : null, payload: this.pending.subarray(head.end, head.end + size) });
        at = head.end + size + 2;
        continue;
      }
      if (op === 'INFO') out.push({ op: 'INFO', info: args.join(' ') });
      else if (op === 'PING' || op === 'PONG' || op === '+OK') out.push({ op });
      else if (op === '-ERR') out.push({ op: '-ERR', message: args.join(' ') });
      else throw new RangeError(`unknown NATS operation: ${head.value.slice(0, 80)}`);
      at = head.end;
    }
    this.pending = this.pending.subarray(at);
    return out;
  }
}

/** PUB <subject> [reply-to] <#bytes> with its payload. */
export function natsPub(subject: string, replyTo: string | null, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`PUB ${subject}${replyTo === null ? '' : ` ${replyTo}`} ${payload.length}\r\n`), payload, CRLF]);
}
