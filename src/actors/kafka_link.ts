// A shard worker's TCP link to another broker's Kafka listener, carrying one request at a time
// (the replica fetcher's loop never has two in flight). Lives on the shard worker thread that
// created it. Framing and header codecs are the wire vocabulary's (protocol/framing.ts,
// protocol/header.ts); this file owns only the socket, the one pending request and its deadline.
// Every failure is a KafkaError: NETWORK_EXCEPTION for a lost or refused connection,
// REQUEST_TIMED_OUT for a silent peer, CORRUPT_MESSAGE for a frame that breaks the protocol or
// passes the link's frame bound. Any failure closes the socket; the next connect() opens afresh.
// A link given credentials or TLS settings secures every connection it opens before connect()
// resolves (common/peer_socket.ts: TLS, then SASL; a refusal is SASL_AUTHENTICATION_FAILED naming
// the user, never the password).
// A plaintext link reads its answers in place (common/in_place_frames.ts): a large answer lands in
// a buffer of the shard's FramePool, which the caller gives back with the answer's release() once
// nothing reads its records any more (the replica fetcher: once the logs wrote them). An answer
// never released is simply collected. A TLS link reads 'data' events, and release() does nothing.
import type { Socket } from 'node:net';
import { FramePool } from '../common/frame_pool.js';
import { InPlaceFrameReader } from '../common/in_place_frames.js';
import { connectPeer, PLAINTEXT_PEER, type PeerSecurity } from '../common/peer_socket.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FrameReader, encodeRequestFrame } from '../protocol/framing.js';
import { readResponseHeader } from '../protocol/header.js';
import { ProtocolError, Reader } from '../protocol/reader.js';
import type { Api } from '../protocol/schema.js';

/** Bytes a link has read and written (shared by the links of one owner; cumulative). */
export interface LinkBytes {
  in: number;
  out: number;
}

/** A decoded answer, whose byte fields may be views of a pooled frame. */
export interface LinkAnswer<Res> {
  readonly body: Res;
  /** Nothing reads the answer any more: its frame may take a later answer. Call at most once. */
  release(): void;
}

/**
 * Idle answer frames the links of this thread (a shard's replica fetchers) keep for their next
 * large answers. A replica fetch answer is at most replica.fetch.response.max.bytes plus one batch
 * (~11 MiB by default); frames up to a quarter of the bound, 8 MiB, are pooled, which covers a
 * catch-up of up to eight partitions at 1 MiB each.
 */
const LINK_FRAME_POOL_BYTES = 32 << 20;
/** Answers from this size up are read in place; smaller ones are copied out of the staging buffer. */
const LINK_FRAME_MIN = 64 * 1024;
let linkFrames: FramePool | null = null;

interface Pending {
  readonly correlationId: number;
  readonly decode: (frame: Buffer) => unknown;
  readonly resolve: (answer: LinkAnswer<unknown>) => void;
  readonly reject: (err: KafkaError) => void;
  readonly timer: NodeJS.Timeout;
}

export class KafkaLink {
  private socket: Socket | null = null;
  /** The socket is secured and authenticated: requests may go. */
  private opened = false;
  private pending: Pending | null = null;
  private nextCorrelation = 0;

  /** `maxFrameBytes` bounds one response: a longer one closes the link before it is buffered. */
  constructor(
    private readonly clientId: string,
    private readonly maxFrameBytes: number,
    private readonly bytes: LinkBytes = { in: 0, out: 0 },
    private readonly security: PeerSecurity = PLAINTEXT_PEER,
  ) {}

  /** Whether a connection is open (not merely being opened). */
  get connected(): boolean {
    return this.socket !== null && this.opened;
  }

  /** Opens the connection, secured and authenticated as the link's security says (a no-op while one is open). */
  async connect(host: string, port: number, timeoutMs: number): Promise<void> {
    if (this.socket !== null) return;
    const corrupt = (err: unknown): KafkaError => new KafkaError(ErrorCode.CORRUPT_MESSAGE, `bad answer from ${host}:${port}: ${(err as Error).message}`);
    const reader = this.security.tls === null ? this.inPlaceReader() : null;
    const inPlace = reader === null ? null : {
      reader,
      onread: reader.socketOptions((n, buf) => {
        this.bytes.in += n;
        try {
          reader.received(n, buf);
        } catch (err) {
          this.fail(socket, corrupt(err));
        }
      }),
    };
    const { socket, ready } = connectPeer(host, port, this.security, timeoutMs, this.clientId, inPlace);
    this.socket = socket;
    const lost = (): void => this.fail(socket, new KafkaError(ErrorCode.NETWORK_EXCEPTION, `connection to ${host}:${port} lost`));
    socket.on('error', lost);
    socket.on('close', lost);
    try {
      await ready;
    } catch (err) {
      this.fail(socket, err as KafkaError);
      throw err;
    }
    if (this.socket !== socket) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `connection to ${host}:${port} closed while it opened`);
    this.opened = true;
    if (reader !== null) {
      reader.onFrame = (frame) => this.answer(frame);
      return;
    }
    const frames = new FrameReader(this.maxFrameBytes);
    socket.on('data', (data: Buffer) => {
      this.bytes.in += data.length;
      try {
        frames.push(data, (frame) => this.answer(frame));
      } catch (err) {
        this.fail(socket, corrupt(err));
      }
    });
  }

  private inPlaceReader(): InPlaceFrameReader {
    const pool = (linkFrames ??= new FramePool(LINK_FRAME_POOL_BYTES, LINK_FRAME_MIN));
    return new InPlaceFrameReader(pool, (size) => {
      if (size < 0 || size > this.maxFrameBytes) throw new ProtocolError(`response frame of ${size} bytes (limit ${this.maxFrameBytes})`);
      return 'read';
    });
  }

  /** Sends one request and resolves with its decoded response; the link must be connected and idle. */
  request<Req, Res>(api: Api<Req, Res>, version: number, body: Req, timeoutMs: number): Promise<LinkAnswer<Res>> {
    const socket = this.socket;
    if (socket === null || !this.opened) return Promise.reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'link not connected'));
    if (this.pending !== null) return Promise.reject(new KafkaError(ErrorCode.INVALID_REQUEST, 'a request is already in flight on this link'));
    const correlationId = (this.nextCorrelation = (this.nextCorrelation + 1) | 0);
    const frame = encodeRequestFrame(api, version, correlationId, this.clientId, body);
    const flexible = api.isFlexible(version);
    const decode = (bytes: Buffer): Res => {
      const r = new Reader(bytes);
      if (readResponseHeader(r, api.key, flexible) !== correlationId) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `answer does not carry correlation id ${correlationId}`);
      return api.decodeResponse(version, r);
    };
    return new Promise<LinkAnswer<Res>>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(socket, new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${api.name} unanswered after ${timeoutMs} ms`)), timeoutMs);
      this.pending = { correlationId, decode, resolve: resolve as (answer: LinkAnswer<unknown>) => void, reject, timer };
      for (const chunk of frame) {
        this.bytes.out += chunk.length;
        socket.write(chunk);
      }
    });
  }

  /** Closes the connection; a request in flight fails with NETWORK_EXCEPTION. */
  close(): void {
    if (this.socket !== null) this.fail(this.socket, new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'link closed'));
  }

  private answer(frame: Buffer): void {
    const head = this.pending;
    if (head === null) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, 'an answer to no request');
    this.pending = null;
    clearTimeout(head.timer);
    let body: unknown;
    try {
      body = head.decode(frame);
    } catch (err) {
      head.reject(err instanceof KafkaError ? err : new KafkaError(ErrorCode.CORRUPT_MESSAGE, (err as Error).message));
      throw err;
    }
    head.resolve({ body, release: () => linkFrames?.give(frame) });
  }

  private fail(socket: Socket, err: KafkaError): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.opened = false;
    socket.destroy();
    const head = this.pending;
    this.pending = null;
    if (head !== null) {
      clearTimeout(head.timer);
      head.reject(err);
    }
  }
}
