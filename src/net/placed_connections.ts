// Client connections placed on this shard (shard worker thread; --connection-placement shards,
// issue 16 stage A). Main accepted each one and handed over a dup of its socket fd; here it
// becomes a socket of this thread, run by the same Connection class as on main (framing,
// request order, in-flight bound, barriers, bounds on buffered and queued bytes, idle timeout),
// with a handler table whose every handler forwards the request's frame, undecoded, to main
// (which decodes it once and runs its real handler) and answers with what main sends back.
// Main's answers are matched by (connection, sequence number); a closed connection's late ones
// are dropped. Every close is reported to main, which keeps the connection's record (count,
// descriptors, per-IP bounds, close hooks) until then. Responses leave through this shard's own
// native sender (a sender thread per shard; inline sends on this thread for small answers), so a
// fetch served here sends its records from the segment files with sendfile, as main does.
// Produce, Fetch, ListOffsets and OffsetForLeaderEpoch are decided per request: after the
// connection's first request (always forwarded, for the listener's admission gate on main),
// served on this shard when main's snapshot covers every partition they name, whichever shard
// hosts them (the peers' over the shard mesh), else forwarded (placed_serving.ts); a forward is
// posted only once the Produces served here before it are answered. A forwarded Fetch first
// reserves its answer's room under the connection's queued-response bound, and main answers
// within that grant. A connection stops reading while a mesh port
// it fed is blocked, as main's connections do on main's rings. Socket bytes are counted here, for
// every placed connection; a large request is read straight into its own buffer (readsFor). The
// request log of placed connections is kept here, timing each request as its client saw it (a
// forwarded one's park on main, as main's answer reports it, left out of its serving time); slow
// ones are counted in the traffic report.
import { Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { RingShardPort } from '../actors/ring_shard_port.js';
import type { Shard } from '../actors/shard.js';
import { apiByKey } from '../protocol/apis/index.js';
import { Connection, HeldBytes, readsFor, type ConnectionServices } from './connection.js';
import { FetchApi } from '../protocol/apis/fetch.js';
import { CloseConnection, EncodedBody, NO_RESPONSE, type BoundHandler, type HandlerContext, type HandlerResult } from './handler.js';
import { DEFAULT_SENDER_LIMITS, nativeSender, type NativeSender, type SenderLimits } from './native_sender.js';
import { PlacedServing, ServedProduces } from './placed_serving.js';
import { RequestLog } from './request_log.js';
import type { ForwardedAnswer, PlacedListenerInfo, PlacementToMain, PlacementToShard } from './placement_messages.js';

interface PlacedListener {
  readonly info: PlacedListenerInfo;
  readonly held: HeldBytes;
}

/** Takes main's answer to one forwarded request, and how long its handler waited by design. */
type Unanswered = (answer: ForwardedAnswer, parkedMs: number) => void;

/** One placed connection: its Connection and the forwarded requests main has yet to answer. */
interface Placed {
  readonly connection: Connection;
  readonly unanswered: Map<number, Unanswered>;
}

const noop = (): void => undefined;

function resultOf(answer: ForwardedAnswer): HandlerResult<unknown> {
  switch (answer.kind) {
    case 'body':
      return new EncodedBody([Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength)], answer.throttleMs);
    case 'none':
      return NO_RESPONSE;
    case 'close':
      return new CloseConnection(answer.reason, answer.detail, answer.logged);
  }
}

/**
 * Bounds of this shard's native sender: each queued file range holds a dup'd fd, and every shard
 * has a sender besides main's, so each keeps a quarter of main's item bounds.
 */
const SHARD_SENDER_LIMITS: SenderLimits = {
  ...DEFAULT_SENDER_LIMITS,
  maxConnectionItems: DEFAULT_SENDER_LIMITS.maxConnectionItems / 4,
  maxItems: DEFAULT_SENDER_LIMITS.maxItems / 4,
};

export class PlacedConnections {
  private readonly listeners = new Map<string, PlacedListener>();
  /** This thread's native sender (opened with the first connection), or null where the addon has none (said once). */
  private sender: NativeSender | null | undefined;
  private readonly open = new Map<number, Placed>();
  private readonly serving: PlacedServing;
  private readonly decidedHere: ReadonlySet<number>;
  /** The request log of every placed connection of this shard (made with the first listener, which brings the threshold). */
  private requestLog: RequestLog | null = null;

  constructor(
    private readonly port: MessagePort,
    private readonly log: Logger,
    shard: Shard,
    peers: readonly (RingShardPort | null)[],
  ) {
    this.serving = new PlacedServing(shard, peers, (traffic) => this.post({ kind: 'traffic', traffic }));
    this.decidedHere = new Set(this.serving.apiKeys);
    port.on('message', (m: PlacementToShard) => this.onMessage(m));
    // Idle connections do not keep the worker alive; its sockets and the control channel do.
    port.unref();
  }

  private post(m: PlacementToMain, transfer?: ArrayBuffer[]): void {
    this.port.postMessage(m, transfer);
  }

  private onMessage(m: PlacementToShard): void {
    switch (m.kind) {
      case 'listener':
        this.listeners.set(m.listener.name, { info: m.listener, held: new HeldBytes(m.listener.maxPartialRequestBytes, () => this.serving.requestMemoryWaited()) });
        this.requestLog ??= new RequestLog(this.log, m.listener.slowRequestMs, this.serving);
        return;
      case 'adopt':
        return this.adopt(m.id, m.fd, m.listener);
      case 'snapshot':
        this.serving.update(m.snapshot);
        return;
      case 'reportTraffic':
        this.serving.reportNow(m.asked);
        return;
      case 'answer': {
        this.serving.answeredAt(m.revision);
        const placed = this.open.get(m.id);
        const answered = placed?.unanswered.get(m.seq);
        if (answered === undefined) return;
        placed!.unanswered.delete(m.seq);
        answered(m.answer, m.parkedMs);
        return;
      }
      case 'drain':
        void this.open.get(m.id)?.connection.drain();
        return;
    }
  }

  private adopt(id: number, fd: number, listenerName: string): void {
    const listener = this.listeners.get(listenerName);
    if (listener === undefined) {
      // Main posts a listener before its connections; a missing one is a bug, and the fd must not leak.
      this.log.error({ listener: listenerName }, 'connection placed for a listener this shard does not know');
      new Socket({ fd }).destroy();
      this.post({ kind: 'closed', id });
      return;
    }
    const unanswered = new Map<number, Unanswered>();
    let nextSeq = 0;
    const produces = new ServedProduces();
    const { fetchMaxBytes, messageMaxBytes } = listener.info.fetchLimits;
    const forward = (ctx: HandlerContext, frame: Buffer): Promise<HandlerResult<unknown>> =>
      new Promise((resolve) => {
        // Unanswered from now on, so what follows is forwarded too, and posted in this order.
        const seq = nextSeq++;
        unanswered.set(seq, (answer, parkedMs) => {
          if (parkedMs > 0) ctx.parked?.(parkedMs);
          resolve(resultOf(answer));
        });
        // A Fetch's answer is held here until sent: it takes its room under the connection's bound now, as one served here would.
        const responseBytes = frame.readInt16BE(0) === FetchApi.key ? ctx.reserveResponseBytes?.(fetchMaxBytes, messageMaxBytes) : undefined;
        // A copy of the frame alone (it is a view into a larger socket chunk), moved to main without a second copy.
        const copy = new Uint8Array(frame);
        produces.whenIdle(() => this.post({ kind: 'request', id, seq, frame: copy, ...(responseBytes === undefined ? {} : { responseBytes }) }, [copy.buffer]));
      });
    const handlers = new Map<number, BoundHandler>();
    for (const [key, barrier] of listener.info.apis) {
      const api = apiByKey.get(key);
      if (api === undefined) continue;
      const handle: BoundHandler['handle'] = this.decidedHere.has(key)
        // A connection's first request is always main's: it meets the listener's admission gate
        // (per-IP bounds, or a broker's replica fetcher admitted outside them) there.
        ? (ctx, frame) => this.serving.handle(ctx, frame as Buffer, nextSeq === 0 || unanswered.size > 0, forward, produces)
        : (ctx, frame) => forward(ctx, frame as Buffer);
      handlers.set(key, { api, barrier, forwards: true, handle });
    }
    const services: ConnectionServices = {
      handlers,
      // Main counts the requests it serves and their timings, PlacedServing those served here; protocol errors are found here.
      metrics: {
        protocolError: (kind) => this.post({ kind: 'protocolError', error: kind }),
        recordRequest: noop,
        addSocketBytesIn: (n) => this.serving.socketBytes(n, 0),
        addSocketBytesOut: (n) => this.serving.socketBytes(0, n),
      },
      releaseLeases: (leases) => this.serving.releaseLeases(leases),
      blockedShards: () => this.serving.blockedShards(),
      requestLog: this.requestLog ?? undefined,
    };
    // Reads go where the connection says (a large produce straight into its frame's buffer), so
    // the socket is made before the connection it reads for. Node's Socket constructor takes
    // `onread` (its types list it under connect() only).
    let connection: Connection | null = null;
    const options: SocketConstructorOpts & { onread: OnReadOpts } = { fd, readable: true, writable: true, onread: readsFor(() => connection) };
    const socket = new Socket(options);
    connection = new Connection(socket, services, listener.info.limits, listener.held, this.log, () => {
      if (!this.open.delete(id)) return;
      this.post({ kind: 'closed', id });
    }, this.nativeSender(), null, null, true);
    this.open.set(id, { connection, unanswered });
  }

  private nativeSender(): NativeSender | null {
    if (this.sender !== undefined) return this.sender;
    const opened = nativeSender(SHARD_SENDER_LIMITS);
    if (typeof opened === 'string') this.log.warn({ reason: opened }, 'placed connections: no native sender on this shard; responses are socket writes');
    return (this.sender = typeof opened === 'string' ? null : opened);
  }
}
