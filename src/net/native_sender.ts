// The addon's socket sender as seen from JS (main thread; one per thread that uses it, opened on
// first use). A connection attached here has its whole write side owned by the addon's sender
// thread: one ordered queue of copied bytes and file ranges per connection (sendfile for the
// ranges), so JS must never write to that socket itself. The one exception goes through the
// addon too: trySend writes a small answer at once on this thread (its file ranges only if their
// bytes are in the page cache), on the sender's dup, and only while the sender thread holds
// nothing of the connection (the addon checks), so order is kept and the sender thread's wake-up
// and its report are skipped. Reports (bytes sent, failure, detach done)
// come back on this thread and are routed to the connection's listener by id.
// Invariants: a listener stays registered until its 'detached' report, so late reports of a
// detached connection are dropped here; ids are never reused. Limits bound connections, items
// per connection and in total (each file range holds a dup'd fd), and bytes per connection.
import { loadAddon, type IoMode, type NativeAddon } from '../native/addon.js';
import type { MessageChunk } from '../protocol/writer.js';

export interface SenderListener {
  /** `bytes` more left the queue (sent). */
  drained(bytes: number): void;
  /** A send failed (EPIPE, ECONNRESET, ...): the queue was dropped; the connection should close. */
  failed(code: string): void;
  /** Detach finished: the sender closed its dup of the socket and every queued file fd. */
  detached(): void;
}

export interface SenderLimits {
  readonly maxConnections: number;
  readonly maxConnectionBytes: number;
  readonly maxConnectionItems: number;
  readonly maxItems: number;
}

/** Each queued file range holds a dup'd fd: the item bounds keep them far below RLIMIT_NOFILE. */
export const DEFAULT_SENDER_LIMITS: SenderLimits = {
  maxConnections: 100_000,
  maxConnectionBytes: 1 << 30,
  maxConnectionItems: 16_384,
  maxItems: 32_768,
};

const NO_BUFFERS: Buffer[] = [];

/** The addon's form of chunks: [fd, position, length] per chunk (fd -1: the next Buffer of bufs). */
function encodeChunks(chunks: readonly MessageChunk[]): { meta: Float64Array; bufs: Buffer[]; bytes: number } {
  const meta = new Float64Array(chunks.length * 3);
  let bufs = NO_BUFFERS;
  let bytes = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    bytes += c.length;
    if (Buffer.isBuffer(c)) {
      if (bufs === NO_BUFFERS) bufs = [];
      bufs.push(c);
      meta[3 * i] = -1;
    } else {
      meta[3 * i] = c.fd;
      meta[3 * i + 1] = c.position;
      meta[3 * i + 2] = c.length;
    }
  }
  return { meta, bufs, bytes };
}

export class NativeSender {
  private readonly listeners = new Map<number, SenderListener>();

  constructor(private readonly addon: NativeAddon) {}

  /** Connections attached and not yet reported detached. */
  get attached(): number {
    return this.listeners.size;
  }

  /** Takes over the write side of socket `fd` (dup'd now); throws at the connection limit. */
  attach(fd: number, listener: SenderListener): number {
    const id = this.addon.senderAttach(fd);
    this.listeners.set(id, listener);
    return id;
  }

  /** Queues chunks in order; buffers are copied and file fds dup'd before this returns. Returns the bytes queued. */
  enqueue(id: number, chunks: readonly MessageChunk[]): number {
    const { meta, bufs, bytes } = encodeChunks(chunks);
    this.addon.senderEnqueue(id, meta, bufs);
    return bytes;
  }

  /**
   * Writes what the socket takes of `chunks` now, on this thread, if nothing of the connection is
   * with the sender thread and every file range's bytes are in the page cache; returns the bytes
   * written (0: none of that holds, or the socket is full), which the caller must not enqueue
   * again. Throws with the errno's name when the socket failed: the connection is failed then, as
   * after a failed() report (which does not follow).
   */
  trySend(id: number, chunks: readonly MessageChunk[]): number {
    const { meta, bufs } = encodeChunks(chunks);
    return this.addon.senderTrySend(id, meta, bufs);
  }

  /** Drops the queue; the listener hears detached() once the fds are closed. */
  detach(id: number): void {
    this.addon.senderDetach(id);
  }

  /** Called by the addon on this thread. */
  report(id: number, bytes: number, status: string | null): void {
    const l = this.listeners.get(id);
    if (l === undefined) return;
    if (status === null) l.drained(bytes);
    else if (status === 'detached') {
      this.listeners.delete(id);
      l.detached();
    } else l.failed(status);
  }
}

let sender: NativeSender | string | undefined;

/** This thread's sender, opened on first call, or why there is none. */
export function nativeSender(limits: SenderLimits = DEFAULT_SENDER_LIMITS): NativeSender | string {
  if (sender !== undefined) return sender;
  const addon = loadAddon();
  if (typeof addon === 'string') return (sender = addon);
  // senderTrySend is the sender's newest export: an addon with it has the rest.
  if (typeof addon.senderTrySend !== 'function') return (sender = 'native addon predates the socket sender\'s inline sends: rebuild it');
  const s = new NativeSender(addon);
  try {
    addon.senderOpen((id, bytes, _items, status) => s.report(id, bytes, status), limits.maxConnections, limits.maxConnectionBytes, limits.maxConnectionItems, limits.maxItems);
    sender = s;
  } catch (err) {
    sender = `native sender failed to start: ${(err as Error).message}`;
  }
  return sender;
}

/** The sender for broker io `mode`: none for 'node'; 'native' throws when unavailable; 'auto' falls back and says why. */
export function selectSender(mode: IoMode): { sender: NativeSender | null; note: string } {
  if (mode === 'node') return { sender: null, note: 'io=node' };
  const s = nativeSender();
  if (typeof s !== 'string') return { sender: s, note: '' };
  if (mode === 'native') throw new Error(`io=native but the native socket sender is unavailable: ${s}`);
  return { sender: null, note: s };
}
