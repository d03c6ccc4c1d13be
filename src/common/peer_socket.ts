// The one way a node opens a connection to another node's Kafka or controller listener (any
// thread: replica fetchers on shard workers, the controller client and the quorum transport on
// the main thread): TCP, or TLS verifying the peer against the configured CA and presenting this
// node's own certificate (for listeners that ask for one: mTLS), then, with credentials, SASL
// (SaslHandshake v1 and SaslAuthenticate: PLAIN, or SCRAM proving the peer knows the credential
// too) before the connection is handed over. The socket exists at once, so callers can tie their
// state to it; they write nothing and read nothing until `ready` resolves. `ready` rejects with a
// KafkaError, NETWORK_EXCEPTION for a refused, lost or silent peer; a PeerAuthenticationError when
// the peer was reached but the two did not authenticate each other: a failed TLS handshake (an
// untrusted certificate either way), or SASL_AUTHENTICATION_FAILED naming the user, never the
// password. The socket is destroyed then. A plaintext connection may be read in place (the
// caller's InPlaceFrameReader through the socket's `onread`, SASL answers included); a TLS one is
// always read through 'data' events.
import { connect as netConnect, type OnReadOpts, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { SaslAuthenticateApi, SaslHandshakeApi } from '../protocol/apis/sasl.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FrameReader, encodeRequestFrame } from '../protocol/framing.js';
import type { InPlaceFrameReader } from './in_place_frames.js';
import { readResponseHeader } from '../protocol/header.js';
import { Reader } from '../protocol/reader.js';
import type { Api } from '../protocol/schema.js';
import { randomNonce, type SaslMechanism } from './sasl_mechanisms.js';
import { ScramClient } from './scram_client.js';

/** Who a node authenticates as on a SASL listener (plain data: it crosses to worker threads). */
export interface PeerCredentials {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  readonly password: string;
}

/** PEM text (plain data, as PeerCredentials): the CA peers are verified against, and this node's certificate and key. */
export interface PeerTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** How to reach a peer's listener: TLS (null: plaintext) and SASL (null: none). */
export interface PeerSecurity {
  readonly tls: PeerTls | null;
  readonly sasl: PeerCredentials | null;
}

export const PLAINTEXT_PEER: PeerSecurity = { tls: null, sasl: null };

/** The peer's listener was reached, but TLS or SASL between the two failed: worth saying once, not just retrying. */
export class PeerAuthenticationError extends KafkaError {}

/** Bound on a SASL answer (Kafka's sasl.server.max.receive.size is the same order). */
const MAX_SASL_ANSWER_BYTES = 1 << 20;

/** How a caller reads a plaintext connection in place: its frame reader, and the socket's `onread` feeding it. */
export interface InPlaceReading {
  readonly reader: InPlaceFrameReader;
  readonly onread: OnReadOpts;
}

export interface PeerConnection {
  readonly socket: Socket;
  /** Resolves once the connection is secured and authenticated, and the socket is the caller's. */
  readonly ready: Promise<void>;
}

export function connectPeer(host: string, port: number, security: PeerSecurity, timeoutMs: number, clientId: string, inPlace: InPlaceReading | null = null): PeerConnection {
  const tls = security.tls;
  // Node reads TLS sockets itself: they cannot be read in place.
  const reader = tls === null ? inPlace?.reader ?? null : null;
  // An IP address is verified against the certificate's IP SANs; SNI only carries host names.
  const socket: Socket = tls === null
    ? netConnect({ host, port, ...(inPlace === null ? {} : { onread: inPlace.onread }) })
    : tlsConnect({ host, port, ca: tls.ca, cert: tls.cert, key: tls.key, ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }) });
  socket.setNoDelay(true);
  const ready = secure(socket, host, port, tls !== null, timeoutMs).then(() => {
    if (security.sasl !== null) return authenticate(socket, `${host}:${port}`, security.sasl, timeoutMs, clientId, reader);
    return undefined;
  });
  ready.catch(() => socket.destroy());
  return { socket, ready };
}

/** Waits for the TCP connection, and for the TLS handshake over it. */
function secure(socket: Socket, host: string, port: number, tls: boolean, timeoutMs: number): Promise<void> {
  let reached = false;
  socket.once('connect', () => {
    reached = true;
  });
  return new Promise((resolve, reject) => {
    const settle = (err: KafkaError | null): void => {
      clearTimeout(timer);
      socket.off(tls ? 'secureConnect' : 'connect', opened);
      socket.off('error', failed);
      socket.off('close', closed);
      if (err === null) resolve();
      else reject(err);
    };
    const timer = setTimeout(() => settle(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `no connection to ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    const opened = (): void => settle(null);
    const failed = (err: Error): void => settle(tls && reached
      ? new PeerAuthenticationError(ErrorCode.NETWORK_EXCEPTION, `TLS handshake with ${host}:${port} failed: ${err.message}`)
      : new KafkaError(ErrorCode.NETWORK_EXCEPTION, `cannot connect to ${host}:${port}: ${err.message}`));
    const closed = (): void => settle(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `cannot connect to ${host}:${port}`));
    socket.once(tls ? 'secureConnect' : 'connect', opened);
    socket.once('error', failed);
    socket.once('close', closed);
  });
}

async function authenticate(socket: Socket, peer: string, c: PeerCredentials, timeoutMs: number, clientId: string, inPlace: InPlaceFrameReader | null): Promise<void> {
  const exchange = new SaslExchangeSocket(socket, peer, timeoutMs, clientId, inPlace);
  try {
    const handshake = await exchange.request(SaslHandshakeApi, 1, { mechanism: c.mechanism });
    if (handshake.errorCode !== ErrorCode.NONE) throw new Error(`the listener offers ${handshake.mechanisms.join(', ') || 'no mechanism'}`);
    if (c.mechanism === 'PLAIN') {
      await exchange.step(Buffer.from(`\0${c.username}\0${c.password}`, 'utf8'));
      return;
    }
    const scram = new ScramClient(c.mechanism, c.username, c.password, randomNonce());
    const serverFirst = await exchange.step(Buffer.from(scram.first(), 'utf8'));
    const serverFinal = await exchange.step(Buffer.from(scram.final(serverFirst.toString('utf8')), 'utf8'));
    if (!scram.verifies(serverFinal.toString('utf8'))) throw new Error('the peer did not prove it knows the credential');
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new PeerAuthenticationError(ErrorCode.SASL_AUTHENTICATION_FAILED, `${peer} refused ${c.mechanism} authentication as ${c.username}: ${why}`);
  } finally {
    exchange.release();
  }
}

/**
 * The SASL exchange's requests, one at a time, on a socket it reads until released: through 'data'
 * events, or as the frames of the caller's in-place reader (whose reading fails the socket on a
 * bad frame, which ends the exchange through 'close').
 */
class SaslExchangeSocket {
  private readonly frames = new FrameReader(MAX_SASL_ANSWER_BYTES);
  private waiting: { resolve: (frame: Buffer) => void; reject: (err: Error) => void } | null = null;
  private broken: Error | null = null;
  private correlationId = 0;
  private readonly onFrame = (frame: Buffer): void => {
    const w = this.waiting;
    this.waiting = null;
    if (w === null) throw new Error('an answer to no request');
    w.resolve(frame);
  };
  private readonly onData = (data: Buffer): void => {
    try {
      this.frames.push(data, this.onFrame);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  };
  private readonly onEnd = (): void => this.fail(new Error('the connection closed'));

  constructor(
    private readonly socket: Socket,
    private readonly peer: string,
    private readonly timeoutMs: number,
    private readonly clientId: string,
    private readonly inPlace: InPlaceFrameReader | null,
  ) {
    if (inPlace === null) socket.on('data', this.onData);
    else inPlace.onFrame = this.onFrame;
    socket.on('error', this.onEnd);
    socket.on('close', this.onEnd);
  }

  async step(token: Buffer): Promise<Buffer> {
    const answer = await this.request(SaslAuthenticateApi, 2, { authBytes: token });
    if (answer.errorCode !== ErrorCode.NONE) throw new Error(answer.errorMessage ?? `error ${answer.errorCode}`);
    return answer.authBytes;
  }

  async request<Req, Res>(api: Api<Req, Res>, version: number, body: Req): Promise<Res> {
    if (this.broken !== null) throw this.broken;
    const correlationId = ++this.correlationId;
    const frame = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`${api.name} unanswered after ${this.timeoutMs} ms`)), this.timeoutMs);
      this.waiting = {
        resolve: (f) => { clearTimeout(timer); resolve(f); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      for (const chunk of encodeRequestFrame(api, version, correlationId, this.clientId, body)) this.socket.write(chunk);
    });
    const r = new Reader(frame);
    if (readResponseHeader(r, api.key, api.isFlexible(version)) !== correlationId) throw new Error(`${this.peer} answered out of order`);
    return api.decodeResponse(version, r);
  }

  private fail(err: Error): void {
    this.broken ??= err;
    const w = this.waiting;
    this.waiting = null;
    w?.reject(err);
  }

  /** Hands the socket back: its data is the caller's from now on. */
  release(): void {
    if (this.inPlace === null) this.socket.off('data', this.onData);
    else this.inPlace.onFrame = null;
    this.socket.off('error', this.onEnd);
    this.socket.off('close', this.onEnd);
  }
}
