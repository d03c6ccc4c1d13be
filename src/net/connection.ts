// One client connection: framing, request dispatch in arrival order, responses written in
// request order, and every bound that protects the broker from it. It runs on the main thread,
// or (--connection-placement shards) on the shard thread main handed the socket to, with
// handlers that forward each request's frame to main undecoded (BoundHandler.forwards;
// placed_connections.ts).
//
// Flow: socket bytes -> chunks -> complete frames -> dispatch (decode header + body, run the
// handler) -> response slots, flushed strictly in order. A socket made with `readsFor` (a placed
// connection's: net.Server's accepted sockets cannot be) skips the chunks: an InPlaceFrameReader
// (common/in_place_frames.ts) reads into one staging buffer per thread, copied straight into each
// frame's own buffer, and a frame of DIRECT_FRAME_MIN bytes or more straight into a pooled buffer
// once its size is known. No frame is gathered from chunks or copied twice, and no buffer is
// allocated per read (measured for ~1 MB frames: 18% less broker CPU per 1 KiB message under
// librdkafka's producer, 5.08 -> 4.17 us; for 64 KiB ones, see DIRECT_FRAME_MIN).
// Dispatch stops (and the socket is paused) while: the in-flight bound is reached, a barrier
// request (metadata change) runs, a decoded request waits (the listener's admission delay on a
// first request, or its priority class's turn in the main thread's RequestScheduler), a shard
// this connection feeds has a full ring, the socket's write side is backed up, or the
// bytes this connection's responses may still grow to (queued to send plus reserved by in-flight
// fetches) reach maxQueuedResponseBytes: a client that does not read cannot grow broker memory
// past that bound plus one record batch (a fetch always returns at least one batch). Reading also
// stops while the next frame waits for room under the held-bytes bound (HeldBytes), and, on a
// socket read in place, for the rest of the loop's turn after each TURN_READ_BYTES.
// A frame length outside [REQUEST_FRAME_MIN, maxRequestBytes], a malformed request, an unknown
// API key, or an unsupported version of an API other than ApiVersions closes this connection
// only (Kafka does the same, and clients such as kafka-python's version probe rely on it).
// On a SASL listener (`sasl` given) a SaslSession gates dispatch: before authentication only
// ApiVersions and the SASL APIs pass, frames are bounded by SASL_MAX_RECEIVE_BYTES, raw tokens
// (after a v0 handshake) are answered here, and a failed authentication closes the connection
// once its answer is sent. Without it, nothing of this is on the path.
// With client quotas configured (`quotas` active), each served request is charged to its
// (user, client id), the user being the principal's name as in Kafka (the SASL user, else the mTLS
// certificate's subject, else ANONYMOUS), and a client over its quota is answered at once with throttle_time_ms set
// and then muted (nothing more is read or dispatched) for that long, as KIP-219 has it. With
// none configured a request pays one constant-time check.
// Responses leave through a ResponseSink: the socket, or the addon's sender when `native` is
// given (the connection then never writes to the socket itself, and responses may keep their
// records as leased segment-file ranges until they are handed to the sink).
import type { OnReadOpts, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ShardPort } from '../actors/shard_port.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { CloseConnection, CloseHooks, EncodedBody, NO_RESPONSE, type BoundHandler, type HandlerContext, type HandlerResult, type HandlerTable } from './handler.js';
import { unsupportedApiVersionsResponse } from './handlers/api_versions.js';
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import { ProduceApi } from '../protocol/apis/produce.js';
import { isFlexibleRequest } from '../protocol/apis/index.js';
import { readRequestHeader, writeResponseHeader, type RequestHeader } from '../protocol/header.js';
import { Reader } from '../protocol/reader.js';
import { Writer, type MessageChunk } from '../protocol/writer.js';
import { FrameHolds, FramePool } from '../common/frame_pool.js';
import { InPlaceFrameReader, threadStaging, type FrameAdmission } from '../common/in_place_frames.js';
import type { NativeSender } from './native_sender.js';
import { NativeSink, SocketSink, type ResponseSink } from './response_sink.js';
import { priorityClassOf, type RequestScheduler } from './request_scheduler.js';
import type { RequestLog } from './request_log.js';
import type { Admission } from './connection_quotas.js';
import { SASL_MAX_RECEIVE_BYTES, type SaslAuthenticator, type SaslSession } from './sasl_session.js';
import type { AclAuthority, ConnectionAuthorizer } from './acl_authority.js';
import { peerUser } from './listener_security.js';
import type { QuotaCharge, QuotaGate } from './client_quota_gate.js';
import { ANONYMOUS_USER } from '../coordinator/client_quotas.js';

/** api key + version + correlation id + client id length: the smallest valid request. */
export const REQUEST_FRAME_MIN = 10;

export interface ConnectionLimits {
  maxRequestBytes: number;
  maxInflight: number;
  idleTimeoutMs: number;
  /** Bound on response bytes queued to send plus reserved by in-flight requests, per connection. */
  maxQueuedResponseBytes: number;
}

/** Admits, delays or refuses a connection by its first decoded request. */
export type FirstRequestGate = (apiKey: number, version: number, req: unknown) => Admission;

/**
 * The budget for request frames read from sockets but not yet dispatched (Kafka's
 * queued.max.request.bytes: main has one, each shard its share). A frame takes its whole size once
 * its length is read, before its body, so a frame being read always has its room and completes. A
 * connection whose next frame finds no room stops reading until there is, as Kafka mutes the
 * channel. Waiting connections get room in the order they asked: after bytes come back (once the
 * call that gave them returned), each retries in turn until the first that still finds none, so a
 * large frame is not passed over forever by smaller ones. Only a frame larger than the whole bound
 * is refused, by closing its connection. Not counted: bytes a connection read past its last
 * admitted frame, at most one socket read (64 KiB) each, since it stops reading while its next
 * frame waits.
 */
export class HeldBytes {
  used = 0;
  /**
   * Waiting connections' retries, in the order they began to wait: each returns false while its
   * frame still finds no room (it keeps its place). One per connection, so bounded by their count.
   */
  private readonly waiters = new Set<() => boolean>();
  private wakeQueued = false;
  /** `onWait` counts each connection that begins to wait (sluice_request_memory_waits_total). */
  constructor(readonly max: number, private readonly onWait: () => void = () => {}) {}
  tryTake(n: number): boolean {
    if (this.used + n > this.max) return false;
    this.used += n;
    return true;
  }
  give(n: number): void {
    this.used -= n;
    this.wakeSoon();
  }
  /** `retry` waits its turn for room; a connection already waiting keeps its place. */
  whenFreed(retry: () => boolean): void {
    if (this.waiters.has(retry)) return;
    this.waiters.add(retry);
    this.onWait();
  }
  /** A connection that closed while waiting: those behind it may fit already. */
  cancel(retry: () => boolean): void {
    if (this.waiters.delete(retry)) this.wakeSoon();
  }
  /** Connections waiting for room (tests and introspection). */
  get waiting(): number {
    return this.waiters.size;
  }
  private wakeSoon(): void {
    if (this.waiters.size === 0 || this.wakeQueued) return;
    this.wakeQueued = true;
    queueMicrotask(() => this.wake());
  }
  private wake(): void {
    this.wakeQueued = false;
    for (const retry of this.waiters) {
      if (!retry()) return;
      this.waiters.delete(retry);
    }
  }
}

interface Slot {
  done: boolean;
  chunks: MessageChunk[] | null;
  /** Segment fds the response's file chunks lease; given back once written or dropped. */
  leases: number[] | null;
  /** Response bytes reserved by the handler (reserveResponseBytes); released when it completes. */
  reserved: number;
  /** Time the handler reported waiting by design (HandlerContext.parked), left out of its serving time. */
  parkedMs: number;
  /** What the request is charged against under client quotas; null: not charged (none configured, or exempt). */
  charge?: QuotaCharge | null;
  /** The handler's synchronous run on this thread, charged as request time. */
  handlerMs?: number;
}

/** What a connection uses besides its socket: the bound handlers and the broker-wide bookkeeping. */
export interface ConnectionServices {
  readonly handlers: HandlerTable;
  readonly metrics: Pick<BrokerMetrics, 'protocolError' | 'recordRequest' | 'addSocketBytesIn' | 'addSocketBytesOut'>;
  /** Gives back segment fds a response's file chunks leased. */
  releaseLeases(leases: number[]): void;
  /** Shards whose port is blocked (inbound ring full) right now. */
  blockedShards(): readonly Pick<ShardPort, 'whenUnblocked'>[];
  /** Orders decoded requests by priority class when the main thread is saturated; absent: each runs at once. */
  readonly scheduler?: Pick<RequestScheduler, 'tryRunNow' | 'submit'>;
  /** Told of every request answered (the debug request log, slow requests); absent: nothing logged. */
  readonly requestLog?: Pick<RequestLog, 'served'>;
  /** The client listener's ACLs; absent or null: requests are not authorised (the controller listener). */
  readonly acls?: AclAuthority | null;
  /** Client quotas (KIP-219 throttling); absent: none. */
  readonly quotas?: Pick<QuotaGate, 'active' | 'chargeOf' | 'charge'>;
}

/** Whether any of `blocked` is: then `resume` runs once every one has drained. */
export function resumeWhenUnblocked(blocked: readonly Pick<ShardPort, 'whenUnblocked'>[], resume: () => void): boolean {
  if (blocked.length === 0) return false;
  void Promise.all(blocked.map((s) => s.whenUnblocked())).then(resume);
  return true;
}

/** A response as framed on the wire: its size, header, then the body the handler answered (throws if the body does not fit its version). */
function frameResponse(correlationId: number, h: BoundHandler, version: number, res: unknown): MessageChunk[] {
  const w = new Writer(256);
  const at = w.reserveInt32();
  writeResponseHeader(w, correlationId, h.api.key, h.api.isFlexible(version));
  if (res instanceof EncodedBody) for (const c of res.chunks) w.appendRef(c);
  else h.api.encodeResponse(version, res, w);
  w.setInt32(at, w.length - 4);
  return w.finishChunks();
}

/**
 * A frame's request header and (with `body`) its body decoded by `h`, whose api and version the
 * caller checked; without `body` the request is the frame itself (a forwarding handler's). A
 * string: why it is malformed.
 */
export function decodeRequest(frame: Buffer, h: BoundHandler, version: number, body: boolean): { header: RequestHeader; req: unknown } | string {
  try {
    const r = new Reader(frame);
    const header = readRequestHeader(r, isFlexibleRequest);
    return { header, req: body ? h.api.decodeRequest(version, r) : frame };
  } catch (err) {
    return `malformed ${h.api.name} v${version} request: ${(err as Error).message}`;
  }
}

/**
 * A frame at least this large, on a socket read through `readTarget`/`received`, is read into a
 * pooled buffer, straight once its size is known; a smaller one into a buffer of its own, copied
 * from the staging buffer. At 64 KiB, frames of 64 KiB batches (just under it) were gathered from
 * two staging copies and concatenated: 4 GB allocated in a 10 s run and a mark-compact on the shard
 * every ~40 ms.
 */
const DIRECT_FRAME_MIN = 16 * 1024;
/**
 * A socket read through `readTarget`/`received` stops, after each this many bytes, until its
 * thread's loop reaches the check phase (setImmediate), so that one connection's burst cannot hold
 * the loop. libuv reads a readable socket up to 32 times per turn, and a read into a large frame's
 * buffer takes as much as the socket holds.
 */
export const TURN_READ_BYTES = 1 << 20;
/** Idle large-frame buffers a thread keeps for its connections' next large frames (frame_pool.ts). */
const DIRECT_FRAME_POOL_BYTES = 16 << 20;
let directFrames: FramePool | null = null;

/**
 * A socket's `onread` options reading for the connection `of()` returns (see `readsInPlace`).
 * Node asks for the first buffer while constructing the socket, before its connection exists.
 */
export function readsFor(of: () => Connection | null): OnReadOpts {
  return {
    buffer: () => of()?.readTarget() ?? threadStaging(),
    callback: (n, buf) => {
      of()!.received(n, buf as Buffer);
      return true;
    },
  };
}

export class Connection {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private frameSize = -1;
  /** Reads the socket when it was made with readsFor (placed connections): frames bypass `chunks`. */
  private readonly reader: InPlaceFrameReader | null;
  private readonly frames: Buffer[] = [];
  private readonly inflight: Slot[] = [];
  private barrier = false;
  /** A decoded request waits (its connection's admission delay, its priority class's turn); nothing behind it is dispatched. */
  private requestWaiting = false;
  private waitingShards = false;
  private writeBlocked = false;
  /** A flush is queued behind the microtasks already pending (flushSoon). */
  private flushQueued = false;
  /** No more requests are read or dispatched; the connection closes once in-flight ones are answered. */
  private ending = false;
  private closed = false;
  private readonly closeHooks = new CloseHooks();
  private onIdle: (() => void) | null = null;
  private readonly sink: ResponseSink;
  /** Sum of the in-flight slots' reservations. */
  private reservedBytes = 0;
  /** This connection's SASL state on a SASL listener, null otherwise. */
  private readonly sasl: SaslSession | null;
  /** The subject of the client's verified TLS certificate (mTLS), null without one. */
  private readonly tlsUser: string | null;
  private readonly authorizer: ConnectionAuthorizer | null;
  /** Muted for its client quota (KIP-219): nothing is dispatched until the timer ends it. */
  private muteTimer: NodeJS.Timeout | null = null;
  private mutedUntil = 0;
  /** Reading stopped until the held-bytes bound has room (HeldBytes calls retryHeld in turn). */
  private heldWait = false;
  /** Bytes read in place since the last yield (TURN_READ_BYTES). */
  private readSinceYield = 0;
  /** The socket stopped reading until the loop's check phase (TURN_READ_BYTES). */
  private yielding = false;
  private readonly retryHeld = (): boolean => this.retryAfterHeld();

  constructor(
    private readonly socket: Socket,
    private readonly services: ConnectionServices,
    private readonly limits: ConnectionLimits,
    private readonly held: HeldBytes,
    private readonly log: Logger,
    private readonly onClose: (c: Connection) => void,
    native: NativeSender | null = null,
    /** Decides the connection on its first decoded request (the listener's per-IP bounds); null: admitted. */
    private admit: FirstRequestGate | null = null,
    /** A SASL listener's authenticator; null: no authentication. */
    private readonly saslAuth: SaslAuthenticator | null = null,
    /**
     * The socket was made with `onread` calling this connection's readTarget and received (no
     * 'data' events): large frames are then read in place. Sockets a net.Server accepts cannot be.
     */
    readsInPlace = false,
  ) {
    this.reader = readsInPlace ? new InPlaceFrameReader((directFrames ??= new FramePool(DIRECT_FRAME_POOL_BYTES, DIRECT_FRAME_MIN)), (size) => this.admitFrame(size)) : null;
    if (this.reader !== null) this.reader.onFrame = (frame) => this.frames.push(frame);
    this.sasl = saslAuth === null ? null : saslAuth.session();
    this.tlsUser = peerUser(socket);
    this.authorizer = services.acls == null ? null : services.acls.forConnection(() => {
      const user = this.user;
      return user === null ? null : `User:${user}`;
    }, socket.remoteAddress ?? '');
    socket.setNoDelay(true);
    socket.setTimeout(limits.idleTimeoutMs, () => this.close());
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const events = {
      onDrain: () => {
        this.writeBlocked = false;
        this.pump();
      },
      onError: () => this.close(),
    };
    const nativeSink = native === null ? null : NativeSink.open(socket, native, events, limits.idleTimeoutMs);
    this.sink = nativeSink ?? new SocketSink(socket, events);
    // A native sink keeps the socket half-open on the peer's FIN (Node would shut our write side
    // down under queued responses); as Node does, the connection then ends once what was already
    // handed to the sink is sent.
    if (nativeSink !== null) socket.on('end', () => this.close(true));
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
  }

  /** Who the client authenticated as (its principal's name): the SASL user, else its verified certificate's subject; null: neither. */
  private get user(): string | null {
    return this.sasl?.user ?? this.tlsUser;
  }

  /** Kafka's spelling of the peer's address in group descriptions ("/127.0.0.1"). */
  private get clientHost(): string {
    return `/${this.socket.remoteAddress ?? ''}`;
  }

  get remote(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  /**
   * Stops reading, lets in-flight requests finish and their responses flush, then closes.
   * Used for shutdown and for bad input: requests a client pipelined before a bad frame are
   * still answered, as Kafka does.
   */
  drain(): Promise<void> {
    this.ending = true;
    this.socket.pause();
    this.dropUnread();
    if (this.inflight.length === 0 || this.closed) {
      this.close(true);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.onIdle = () => {
        this.close(true);
        resolve();
      };
    });
  }

  /** `graceful`: responses already handed to the sink are still sent before the socket closes. */
  close(graceful = false): void {
    if (this.closed) {
      if (!graceful) this.sink.close(false);
      return;
    }
    this.closed = true;
    if (this.muteTimer !== null) clearTimeout(this.muteTimer);
    this.dropUnread();
    for (const slot of this.inflight) {
      this.releaseLeases(slot);
      this.releaseReservation(slot);
    }
    this.sink.close(graceful);
    this.onClose(this);
    this.onIdle?.();
    this.closeHooks.run();
  }

  /** Room for responses left under the bound: what is queued to send and what is reserved count against it. */
  private responseRoom(): number {
    return this.limits.maxQueuedResponseBytes - this.reservedBytes - this.sink.queuedBytes;
  }

  private reserveResponseBytes(slot: Slot, want: number, atLeast: number): number {
    const granted = Math.max(1, Math.min(want, this.responseRoom()));
    // The response may still carry one whole batch beyond the grant, so that much is held too.
    const held = Math.max(granted, Math.min(want, atLeast));
    slot.reserved += held;
    this.reservedBytes += held;
    return granted;
  }

  private releaseReservation(slot: Slot): void {
    this.reservedBytes -= slot.reserved;
    slot.reserved = 0;
  }

  private releaseLeases(slot: Slot): void {
    if (slot.leases !== null && slot.leases.length > 0) this.services.releaseLeases(slot.leases);
  }

  /** Bad input: one log line and one metric per connection, then drain and close. */
  private reject(kind: string, detail: string, logged = false): void {
    if (this.ending || this.closed) return;
    if (!logged) this.log.warn({ remote: this.remote, kind, detail }, 'closing connection after bad input');
    this.services.metrics.protocolError(kind);
    void this.drain();
  }

  private dropUnread(): void {
    this.held.cancel(this.retryHeld);
    this.heldWait = false;
    // A frame read in place holds its whole size from its length on: what has not arrived yet is given back too.
    const partial = this.reader?.abandon() ?? -1;
    const admitted = this.reader !== null ? partial : this.frameSize;
    this.held.give(admitted < 0 ? 0 : 4 + admitted);
    for (const f of this.frames) this.held.give(f.length + 4);
    this.buffered = 0;
    this.frameSize = -1;
    this.chunks = [];
    this.frames.length = 0;
  }

  /**
   * Where the socket's next read lands (its `onread.buffer`): the rest of the large frame being
   * received, else this thread's staging buffer, which `received` copies out of at once.
   */
  readTarget(): Buffer {
    return this.reader?.target() ?? threadStaging();
  }

  /** `n` bytes were read into `buf`, the last buffer readTarget gave (the socket's `onread.callback`). */
  received(n: number, buf: Buffer): void {
    const reader = this.reader;
    // A socket read through readsFor for a connection not told so: the staging buffer is reused by the next read.
    if (reader === null) return this.onData(Buffer.from(buf.subarray(0, n)));
    this.services.metrics.addSocketBytesIn(n);
    if (this.closed || this.ending) return;
    reader.received(n, buf);
    if (reader.waiting && !this.heldWait) this.waitForHeld();
    if ((this.readSinceYield += n) >= TURN_READ_BYTES) this.yieldTurn();
    this.pump();
  }

  /** Stops reading until the loop's check phase; dispatch goes on (TURN_READ_BYTES). */
  private yieldTurn(): void {
    this.readSinceYield = 0;
    this.yielding = true;
    setImmediate(() => {
      this.yielding = false;
      if (!this.closed && !this.ending) this.pump();
    });
  }

  private waitForHeld(): void {
    this.heldWait = true;
    this.socket.pause();
    this.held.whenFreed(this.retryHeld);
  }

  /**
   * This connection's turn after bytes came back to the held-bytes bound: reads on if its next
   * frame has room now. False: still none, and it keeps waiting (and its place).
   */
  private retryAfterHeld(): boolean {
    if (this.closed || this.ending) return true;
    this.heldWait = false;
    const reader = this.reader;
    if (reader !== null) {
      reader.retry();
      if (reader.waiting) this.heldWait = true;
    } else if (!this.extractFrames()) {
      return true; // refused: closing
    }
    if (this.heldWait) return false;
    this.pump();
    return true;
  }

  /**
   * The connection's next frame announced `size` bytes. The whole frame is taken from the
   * held-bytes bound now, before its body is read (a placed connection's buffer for it exists
   * before its bytes arrive): a client announcing large frames cannot make the broker hold more than
   * the bound allows, and a frame being read always completes. Without room now the connection
   * waits (its socket stops until bytes come back); a frame larger than the whole bound could never
   * be read, and is refused: the connection closes.
   */
  private admitFrame(size: number): FrameAdmission {
    const problem = this.frameSizeProblem(size);
    if (problem !== null) {
      this.reject('frame-size', problem);
      return 'refuse';
    }
    if (this.held.tryTake(4 + size)) return 'read';
    if (4 + size <= this.held.max) return 'wait';
    this.reject('buffer-bound', `request frame of ${size} bytes exceeds the bound of ${this.held.max} buffered request bytes`);
    return 'refuse';
  }

  /** Why a request frame of `size` bytes is refused on this connection now, or null. */
  private frameSizeProblem(size: number): string | null {
    // Unauthenticated SASL clients send small raw tokens and never large frames.
    const unauthenticated = this.sasl !== null && this.sasl.unauthenticated;
    const min = unauthenticated ? 0 : REQUEST_FRAME_MIN;
    const max = unauthenticated ? Math.min(SASL_MAX_RECEIVE_BYTES, this.limits.maxRequestBytes) : this.limits.maxRequestBytes;
    return size < min || size > max ? `request frame of ${size} bytes outside [${min}, ${max}]` : null;
  }

  private onData(chunk: Buffer): void {
    this.services.metrics.addSocketBytesIn(chunk.length);
    if (this.closed || this.ending) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    // Read before the socket stopped: framed once the waiting length has room.
    if (this.heldWait) return;
    if (!this.extractFrames()) return;
    this.pump();
  }

  /** Moves complete frames from the chunk list to `frames`; false if the connection was closed. */
  private extractFrames(): boolean {
    for (;;) {
      if (this.frameSize < 0) {
        if (this.buffered < 4) return true;
        const size = this.peekInt32();
        const admission = this.admitFrame(size);
        if (admission === 'refuse') return false;
        if (admission === 'wait') {
          // The length stays in the chunks: retryAfterHeld reads it again.
          this.waitForHeld();
          return true;
        }
        this.frameSize = size;
      }
      if (this.buffered < 4 + this.frameSize) return true;
      const frame = this.take(4 + this.frameSize).subarray(4);
      this.frameSize = -1;
      this.frames.push(frame);
    }
  }

  private peekInt32(): number {
    const first = this.chunks[0]!;
    if (first.length >= 4) return first.readInt32BE(0);
    return Buffer.concat(this.chunks, 4).readInt32BE(0);
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.chunks[0]!;
        const want = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, want);
        filled += want;
        if (want === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(want);
      }
    }
    this.buffered -= n;
    return out;
  }

  private canDispatch(): boolean {
    return (
      !this.closed &&
      !this.ending &&
      !this.barrier &&
      !this.requestWaiting &&
      !this.waitingShards &&
      !this.writeBlocked &&
      this.muteTimer === null &&
      this.inflight.length < this.limits.maxInflight &&
      this.responseRoom() > 0
    );
  }

  private pump(): void {
    while (this.frames.length > 0 && this.canDispatch()) {
      const frame = this.frames.shift()!;
      this.held.give(frame.length + 4);
      this.dispatch(frame);
    }
    if (this.closed || this.ending) return;
    if (this.frames.length > 0 || !this.canDispatch() || this.heldWait || this.yielding) this.socket.pause();
    else this.socket.resume();
  }

  /** Whether a frame on a SASL listener goes on to dispatch as a request (else it was handled or refused here). */
  private passesSasl(session: SaslSession, frame: Buffer): boolean {
    if (session.expectsRawToken) {
      this.answerRawToken(session, frame);
      return false;
    }
    if (frame.length < REQUEST_FRAME_MIN) {
      this.reject('frame-size', `request frame of ${frame.length} bytes, under ${REQUEST_FRAME_MIN}`);
      return false;
    }
    const refusal = session.refusal(frame.readInt16BE(0));
    if (refusal !== null) {
      this.reject('unauthenticated', refusal);
      return false;
    }
    return true;
  }

  /** A raw SASL token (KIP-43 framing): answered as a length and a token, a refusal by closing after the failure delay. */
  private answerRawToken(session: SaslSession, token: Buffer): void {
    const slot: Slot = { done: false, chunks: null, leases: null, reserved: 0, parkedMs: 0 };
    this.inflight.push(slot);
    const answer = this.saslAuth!.answer(session, token, this.clientHost);
    if (answer instanceof Promise) {
      this.requestWaiting = true;
      void answer.then(() => {
        slot.done = true;
        this.flush();
        void this.drain();
      });
      return;
    }
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(answer.token.length, 0);
    slot.chunks = answer.token.length === 0 ? [length] : [length, answer.token];
    slot.done = true;
    this.flush();
  }

  private dispatch(frame: Buffer): void {
    if (this.sasl !== null && !this.passesSasl(this.sasl, frame)) return;
    const apiKey = frame.readInt16BE(0);
    const version = frame.readInt16BE(2);
    const h = this.services.handlers.get(apiKey);
    if (!h) return this.reject('unknown-api', `unknown api key ${apiKey}`);
    if (version < h.api.minVersion || version > h.api.maxVersion) {
      if (apiKey !== ApiVersionsApi.key) return this.reject('unsupported-version', `unsupported version ${version} of api ${h.api.name}`);
      return this.respondUnsupportedApiVersions(frame.readInt32BE(4));
    }
    const decoded = decodeRequest(frame, h, version, h.forwards !== true);
    if (typeof decoded === 'string') return this.reject('malformed', decoded);
    const { header, req } = decoded;
    const admit = this.admit;
    if (admit !== null) {
      this.admit = null;
      const verdict = admit(apiKey, version, req);
      // The listener counted and logged the refusal; Kafka too closes without an answer.
      if (verdict.kind === 'refuse') return this.close();
      if (verdict.delayMs > 0) {
        this.requestWaiting = true;
        setTimeout(() => {
          this.requestWaiting = false;
          if (!this.closed) this.route(apiKey, h, version, header, req, frame, false);
        }, verdict.delayMs);
        return;
      }
    }
    this.route(apiKey, h, version, header, req, frame, true);
  }

  /**
   * Hands a decoded request to the scheduler (or runs it when there is none). `inline`: called
   * from pump, which goes on dispatching by itself; otherwise dispatch resumes once it has run.
   */
  private route(apiKey: number, h: BoundHandler, version: number, header: RequestHeader, req: unknown, frame: Buffer, inline: boolean): void {
    const scheduler = this.services.scheduler;
    if (scheduler === undefined || scheduler.tryRunNow()) {
      this.execute(h, version, header, req, frame);
      if (!inline) this.pump();
      return;
    }
    let running = true;
    this.requestWaiting = true;
    scheduler.submit(priorityClassOf(apiKey, version, req), () => {
      this.requestWaiting = false;
      if (this.closed) return;
      this.execute(h, version, header, req, frame);
      if (!(inline && running)) this.pump();
    });
    running = false;
  }

  /** Runs a decoded request's handler; its response takes the next slot. */
  private execute(h: BoundHandler, version: number, header: RequestHeader, req: unknown, frame: Buffer): void {
    const requestBytes = frame.length;
    const slot: Slot = { done: false, chunks: null, leases: this.sink.sendsFiles ? [] : null, reserved: 0, parkedMs: 0 };
    this.inflight.push(slot);
    const started = performance.now();
    const quotas = this.services.quotas;
    if (quotas !== undefined && quotas.active) slot.charge = quotas.chargeOf(h.api.key, version, req, this.authorizer);
    // A Produce's batches leave with the handler's call (copied to a ring or to a shard's slabs),
    // or are staged by reference by this thread's shard, which holds the frame until their commit
    // settles: the frame's pooled buffer takes the next large frame once nobody holds it. Other
    // requests may keep views of their frame (group metadata), so theirs never goes back.
    const frameHolds = h.api.key === ProduceApi.key && directFrames !== null ? new FrameHolds(directFrames, frame) : null;
    const ctx: HandlerContext = {
      header,
      version,
      clientHost: this.clientHost,
      fileLeases: slot.leases,
      reserveResponseBytes: (want, atLeast) => this.reserveResponseBytes(slot, want, atLeast),
      onConnectionClose: (key, fn) => this.closeHooks.add(key, fn),
      parked: (ms) => {
        slot.parkedMs += ms;
      },
      sasl: this.sasl,
      authorizer: this.authorizer,
      requestFrame: frameHolds,
    };
    let result: HandlerResult<unknown> | Promise<HandlerResult<unknown>>;
    try {
      result = h.handle(ctx, req);
    } catch (err) {
      frameHolds?.letGo();
      return this.failed(h, err);
    }
    frameHolds?.letGo();
    if (slot.charge != null) slot.handlerMs = performance.now() - started;
    if (result instanceof Promise) {
      if (h.barrier) this.barrier = true;
      result.then(
        (res) => this.complete(slot, h, version, header, requestBytes, res, started),
        (err: unknown) => this.failed(h, err),
      );
      this.watchShards();
    } else {
      this.complete(slot, h, version, header, requestBytes, result, started);
    }
  }

  /** Stops dispatching while any shard's inbound ring is full (backpressure to this socket). */
  private watchShards(): void {
    if (this.waitingShards) return;
    this.waitingShards = resumeWhenUnblocked(this.services.blockedShards(), () => {
      this.waitingShards = false;
      this.pump();
    });
  }

  private complete(slot: Slot, h: BoundHandler, version: number, header: RequestHeader, requestBytes: number, res: HandlerResult<unknown>, started: number): void {
    if (h.barrier) this.barrier = false;
    this.releaseReservation(slot);
    const ms = performance.now() - started;
    this.services.metrics.recordRequest(h.api.name, ms / 1000);
    this.services.requestLog?.served(header, h.api.name, version, requestBytes, ms, slot.parkedMs);
    if (this.closed) return this.releaseLeases(slot);
    if (res instanceof CloseConnection) {
      slot.done = true;
      this.flush();
      this.reject(res.kind, res.detail, res.logged);
      return;
    }
    if (res !== NO_RESPONSE) {
      try {
        slot.chunks = frameResponse(header.correlationId, h, version, res);
      } catch (err) {
        // A handler answered something its version cannot carry: a bug, but one that must cost this
        // connection only, never the process and every other client with it.
        slot.done = true;
        return this.failed(h, err);
      }
    }
    const throttleMs = slot.charge != null
      ? this.chargeQuota(slot, slot.charge, header, version, h, requestBytes, res, started + ms)
      : res instanceof EncodedBody ? res.throttleMs : 0;
    slot.done = true;
    this.flushSoon();
    if (throttleMs > 0) this.mute(throttleMs);
    // A refused authentication ends the connection once its answer is on its way.
    if (this.sasl !== null && this.sasl.failed) {
      void this.drain();
      return;
    }
    this.pump();
  }

  /**
   * Charges a served request to its client's quotas and, when that asks for a throttle, makes its
   * response carry throttle_time_ms (encoded again: only throttled responses pay that).
   */
  private chargeQuota(
    slot: Slot, charge: QuotaCharge, header: RequestHeader, version: number, h: BoundHandler, requestBytes: number, res: HandlerResult<unknown>, completedAt: number,
  ): number {
    const responseBytes = slot.chunks === null ? 0 : slot.chunks.reduce((n, c) => n + c.length, 0);
    // The handler's synchronous run plus this response's encoding (since the handler completed).
    const serveMs = (slot.handlerMs ?? 0) + (performance.now() - completedAt);
    const throttleMs = this.services.quotas!.charge(
      charge, this.user ?? ANONYMOUS_USER, header.clientId ?? '', charge === 'fetch' ? responseBytes : requestBytes, serveMs,
    );
    if (throttleMs > 0 && slot.chunks !== null && typeof res === 'object' && res !== null && !(res instanceof EncodedBody) && !(res instanceof CloseConnection)) {
      slot.chunks = frameResponse(header.correlationId, h, version, { ...res, throttleTimeMs: throttleMs });
    }
    return throttleMs;
  }

  /** Stops reading and dispatching for `ms` (KIP-219's channel mute); a longer mute extends it. */
  private mute(ms: number): void {
    const until = performance.now() + ms;
    if (this.closed || until <= this.mutedUntil) return;
    this.mutedUntil = until;
    if (this.muteTimer !== null) clearTimeout(this.muteTimer);
    this.socket.pause();
    this.muteTimer = setTimeout(() => {
      this.muteTimer = null;
      this.pump();
    }, ms);
  }

  private respondUnsupportedApiVersions(correlationId: number): void {
    const w = new Writer(64);
    const at = w.reserveInt32();
    writeResponseHeader(w, correlationId, ApiVersionsApi.key, false);
    ApiVersionsApi.encodeResponse(0, unsupportedApiVersionsResponse(), w);
    w.setInt32(at, w.length - 4);
    this.inflight.push({ done: true, chunks: w.finish(), leases: null, reserved: 0, parkedMs: 0 });
    this.flush();
  }

  private failed(h: BoundHandler, err: unknown): void {
    if (h.barrier) this.barrier = false;
    this.log.error({ err, api: h.api.name }, 'request handler failed');
    this.services.metrics.protocolError('internal');
    this.close();
  }

  /**
   * Flushes once the microtasks already queued have run. A group commit answers its produces in one
   * pass, and each answer reaches complete() as its own microtask: the first queues this flush
   * behind the rest, so a connection's answers go out in one write (one sendmsg, one wake-up of
   * the client) rather than one each. Requests that waited for in-flight room are dispatched after
   * it, as the slots it writes are what frees that room.
   */
  private flushSoon(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      if (this.closed) return;
      this.flush();
      this.pump();
    });
  }

  private flush(): void {
    if (this.inflight.length === 0 || !this.inflight[0]!.done) return;
    let out: MessageChunk[] | null = null;
    const written: Slot[] = [];
    while (this.inflight.length > 0 && this.inflight[0]!.done) {
      const slot = this.inflight.shift()!;
      written.push(slot);
      if (slot.chunks === null) continue;
      if (out === null) out = slot.chunks;
      else for (const c of slot.chunks) out.push(c);
    }
    if (out !== null) {
      let bytes = 0;
      for (const c of out) bytes += c.length;
      this.services.metrics.addSocketBytesOut(bytes);
      if (!this.sink.write(out)) this.writeBlocked = true;
    }
    // The sink has read or dup'd every file chunk: the segment fds may be retired now.
    for (const slot of written) this.releaseLeases(slot);
    if (this.inflight.length === 0) this.onIdle?.();
  }
}
