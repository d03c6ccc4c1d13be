// Where a connection's responses go (main thread): the socket through libuv (SocketSink), or the
// addon's sender thread, which then owns the socket's whole write side (NativeSink). Both keep
// responses in write order, signal backpressure the same way (write() returns false, onDrain
// later) and end the socket only after the last queued response, when asked to close gracefully.
// Invariants of NativeSink: JS never calls socket.write(); socket.destroy() runs only after the
// sender detached, so no queued byte is written after the connection is gone and the sender's
// dup of the fd keeps the socket open until it is done with it. A small write made while nothing
// is queued is first tried inline (NativeSender.trySend: one sendmsg on this thread, on the
// sender's dup, file ranges only if their bytes are in the page cache); only what the socket did
// not take is queued. Bytes sent inline
// never count as queued, so queuedBytes, backpressure and a graceful close see them as sent.
import { readSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { NativeSender, SenderListener } from './native_sender.js';
import type { MessageChunk } from '../protocol/writer.js';

export interface ResponseSink {
  /** True when the sink sends FileChunks itself (handlers may then answer with file ranges). */
  readonly sendsFiles: boolean;
  /** Queues the chunks of one or more responses, in order; false = backed up, wait for onDrain. */
  write(chunks: readonly MessageChunk[]): boolean;
  /** Bytes handed to the sink and not yet sent. */
  readonly queuedBytes: number;
  /** Destroys the socket: after everything queued was sent if `graceful`, else now. */
  close(graceful: boolean): void;
}

export interface SinkEvents {
  /** The sink accepts writes again after write() returned false. */
  onDrain(): void;
  /** Writing failed; the connection should close (ungracefully). */
  onError(): void;
}

/** Reads a file chunk that reached a socket sink (only when a handler ignored `sendsFiles`). */
function readChunk(c: Exclude<MessageChunk, Buffer>): Buffer {
  const buf = Buffer.allocUnsafe(c.length);
  let done = 0;
  while (done < c.length) {
    const n = readSync(c.fd, buf, done, c.length - done, c.position + done);
    if (n === 0) throw new Error(`file chunk of fd ${c.fd} ends early`);
    done += n;
  }
  return buf;
}

export class SocketSink implements ResponseSink {
  readonly sendsFiles = false;
  private blocked = false;

  get queuedBytes(): number {
    return this.socket.writableLength;
  }

  constructor(
    private readonly socket: Socket,
    events: SinkEvents,
  ) {
    socket.on('drain', () => {
      this.blocked = false;
      events.onDrain();
    });
  }

  write(chunks: readonly MessageChunk[]): boolean {
    this.socket.cork();
    for (const c of chunks) if (!this.socket.write(Buffer.isBuffer(c) ? c : readChunk(c))) this.blocked = true;
    this.socket.uncork();
    return !this.blocked;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Queued bytes above which write() reports backpressure, and below which it lifts. */
const HIGH_WATER_BYTES = 1 << 20;
const LOW_WATER_BYTES = 256 * 1024;
/** Node refreshes a socket's idle timer on writes; native sends refresh it at most this often. */
const ACTIVITY_REFRESH_MS = 1_000;
/**
 * Largest write tried inline (the addon holds the same bound). A cap keeps the thread from
 * spending long in one sendmsg (on loopback the receiving side's TCP work runs inside it too);
 * what inline sends save is the sender thread's wake-up and its report, which matter for small
 * answers (produce acks, offset commits, heartbeats) and for a tailing consumer's or follower's
 * answers (~64 KiB each at 100k msgs/s of 1 KiB), and little next to the copy of a large one. At
 * 64 KiB, half of those answers went through the sender thread: raising the cap to 256 KiB took
 * 4.6 % off the broker's CPU per message at 100k msgs/s, acks=1 (librdkafka e2e, 4 alternating
 * pairs). File ranges go inline only when all their bytes are in the page cache (the addon reads
 * them with RWF_NOWAIT), so the thread never waits for the disk.
 */
export const INLINE_MAX_BYTES = 256 * 1024;
/** The addon gathers at most this many chunks into one inline sendmsg. */
const INLINE_MAX_CHUNKS = 64;

/** What is left of `chunks` after its first `sent` bytes. */
function unsent(chunks: readonly MessageChunk[], sent: number): MessageChunk[] {
  let i = 0;
  let left = sent;
  while (i < chunks.length && left >= chunks[i]!.length) left -= chunks[i++]!.length;
  const rest = chunks.slice(i);
  const first = rest[0];
  if (first === undefined || left === 0) return rest;
  rest[0] = Buffer.isBuffer(first) ? first.subarray(left) : { fd: first.fd, position: first.position + left, length: first.length - left };
  return rest;
}

export class NativeSink implements ResponseSink, SenderListener {
  readonly sendsFiles = true;
  private queued = 0;
  private blocked = false;
  private closing = false;
  private detaching = false;
  /** A write failed: onError is on its way, nothing more is written. */
  private broken = false;
  private lastRefresh = 0;
  private closeTimer: NodeJS.Timeout | null = null;

  get queuedBytes(): number {
    return this.queued;
  }

  private constructor(
    private readonly socket: Socket,
    private readonly sender: NativeSender,
    private readonly events: SinkEvents,
    private readonly idleTimeoutMs: number,
    private readonly id: number,
  ) {}

  /** A native sink for `socket`, or null when its fd is not usable (the caller falls back). */
  static open(socket: Socket, sender: NativeSender, events: SinkEvents, idleTimeoutMs: number): NativeSink | null {
    // `_handle.fd` is a Node internal: accept only a plain non-negative number.
    const handle = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle;
    const fd = handle?.fd;
    if (typeof fd !== 'number' || !Number.isInteger(fd) || fd < 0) return null;
    let sink: NativeSink | null = null;
    try {
      const id = sender.attach(fd, {
        drained: (n) => sink?.drained(n),
        failed: () => sink?.failed(),
        detached: () => sink?.detached(),
      });
      sink = new NativeSink(socket, sender, events, idleTimeoutMs, id);
    } catch {
      return null;
    }
    // The peer's FIN must not make Node shut our write side down under queued responses.
    socket.allowHalfOpen = true;
    return sink;
  }

  write(chunks: readonly MessageChunk[]): boolean {
    if (this.closing || this.broken) return false;
    try {
      const rest = this.queued === 0 ? this.sendInline(chunks) : chunks;
      if (rest.length > 0) this.queued += this.sender.enqueue(this.id, rest);
    } catch {
      // Told after this write returns: the connection closes itself from onError.
      this.broken = true;
      queueMicrotask(() => this.events.onError());
      return false;
    }
    if (this.queued > HIGH_WATER_BYTES) this.blocked = true;
    return !this.blocked;
  }

  /**
   * Sends a small write at once (nothing of this connection is queued: the caller checked, and
   * the addon checks again against what the sender thread still holds); returns what is left to
   * queue behind the bytes the socket took.
   */
  private sendInline(chunks: readonly MessageChunk[]): readonly MessageChunk[] {
    if (chunks.length > INLINE_MAX_CHUNKS) return chunks;
    let bytes = 0;
    for (const c of chunks) bytes += c.length;
    if (bytes > INLINE_MAX_BYTES) return chunks;
    const sent = this.sender.trySend(this.id, chunks);
    if (sent === 0) return chunks;
    this.refreshActivity();
    return unsent(chunks, sent);
  }

  close(graceful: boolean): void {
    if (this.closing && !graceful) return this.detach();
    if (this.closing) return;
    this.closing = true;
    if (!graceful || this.queued === 0) return this.detach();
    // A peer that stops reading must not hold the connection forever.
    this.closeTimer = setTimeout(() => this.detach(), this.idleTimeoutMs);
    this.closeTimer.unref();
  }

  drained(bytes: number): void {
    this.queued -= bytes;
    if (this.closing) {
      if (this.queued <= 0) this.detach();
      return;
    }
    this.refreshActivity();
    if (this.blocked && this.queued <= LOW_WATER_BYTES) {
      this.blocked = false;
      this.events.onDrain();
    }
  }

  /** Bytes left for the peer: the socket's idle timer restarts, as Node's own writes do. */
  private refreshActivity(): void {
    const now = Date.now();
    if (now - this.lastRefresh >= ACTIVITY_REFRESH_MS) {
      this.lastRefresh = now;
      this.socket.setTimeout(this.idleTimeoutMs);
    }
  }

  failed(): void {
    if (this.closing) this.detach();
    else this.events.onError();
  }

  private detach(): void {
    if (this.detaching) return;
    this.detaching = true;
    this.closing = true;
    if (this.closeTimer !== null) clearTimeout(this.closeTimer);
    this.sender.detach(this.id);
  }

  /** The sender let go of the socket: only now may libuv close it. */
  detached(): void {
    this.socket.destroy();
  }
}
