// One client connection to a Kafka broker (ours or Apache Kafka), over our protocol codec.
// Runs on whichever thread owns it (CLI, tests, later the producer/consumer). Owns its socket,
// the frame reader and the queue of requests awaiting answers.
// Invariants: requests are written in call order and Kafka answers them in order, so the oldest
// in-flight request owns the next response (a correlation id that does not match it is a
// protocol violation and closes the connection). At most `maxInflight` requests are on the wire
// and at most `maxQueued` wait behind them; responses above `maxResponseBytes` close the
// connection. A request timeout closes the connection too (as Java's client does): after a
// lost answer, every later answer would be attributed to the wrong request. A `noResponse`
// request (Produce with acks=0, which Kafka never answers) takes no in-flight slot and resolves
// once the socket has taken its bytes, so it cannot be mistaken for the owner of a response.

import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { encodeRequestFrame, FrameReader } from '../protocol/framing.js';
import { readResponseHeader } from '../protocol/header.js';
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import type { ApiVersionsResponse } from '../protocol/apis/api_versions.js';
import { Reader } from '../protocol/reader.js';
import type { AnyApi, Api } from '../protocol/schema.js';

export const CLIENT_SOFTWARE_NAME = 'sluice';
export const CLIENT_SOFTWARE_VERSION = '0.1.0';

export interface ConnectionOptions {
  host: string;
  port: number;
  /** Sent in every request header; default 'sluice'. */
  clientId?: string;
  /** Per request, from the call until its answer; default 30 s. Also bounds connecting. */
  requestTimeoutMs?: number;
  /** Requests on the wire at once; default 16. */
  maxInflight?: number;
  /** Requests waiting for an in-flight slot; default 1024. */
  maxQueued?: number;
  /** Largest response frame accepted; default 128 MiB. */
  maxResponseBytes?: number;
}

export interface RequestOptions {
  /** Overrides the connection's request timeout (e.g. for long-polling fetches). */
  timeoutMs?: number;
  /**
   * The broker sends no answer (Produce with acks=0): resolve with undefined once the request is
   * written, without taking an in-flight slot.
   */
  noResponse?: boolean;
}

export interface VersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

/** The connection failed or was closed; every request on it fails with this. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

interface Pending {
  readonly api: AnyApi;
  readonly version: number;
  readonly correlationId: number;
  readonly frame: Buffer[];
  /** Replaces api.decodeResponse (only the ApiVersions probe needs this). */
  readonly decode: ((r: Reader) => unknown) | null;
  readonly noResponse: boolean;
  readonly resolve: (res: unknown) => void;
  readonly reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

const INT32_MAX = 0x7fffffff;

export class KafkaConnection {
  private readonly inflight: Pending[] = [];
  private readonly queued: Pending[] = [];
  private readonly frames: FrameReader;
  private readonly clientId: string;
  private readonly timeoutMs: number;
  private readonly maxInflight: number;
  private readonly maxQueued: number;
  private nextCorrelationId = 0;
  private failure: ConnectionError | null = null;
  private versions: ReadonlyMap<number, VersionRange> = new Map();
  private readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket, opts: ConnectionOptions) {
    this.clientId = opts.clientId ?? 'sluice';
    this.timeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.maxInflight = opts.maxInflight ?? 16;
    this.maxQueued = opts.maxQueued ?? 1024;
    this.frames = new FrameReader(opts.maxResponseBytes ?? 128 * 1024 * 1024);
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (err) => this.fail(new ConnectionError(`connection error: ${err.message}`, { cause: err })));
    this.closed = new Promise((resolve) => socket.once('close', () => {
      this.fail(new ConnectionError('connection closed'));
      resolve();
    }));
  }

  /** Connects and negotiates API versions (ApiVersions v3, falling back to v0). */
  static async connect(opts: ConnectionOptions): Promise<KafkaConnection> {
    const timeoutMs = opts.requestTimeoutMs ?? 30_000;
    const socket = await openSocket(opts.host, opts.port, timeoutMs);
    const conn = new KafkaConnection(socket, opts);
    try {
      conn.versions = await conn.negotiateVersions();
    } catch (err) {
      conn.socket.destroy();
      throw err;
    }
    return conn;
  }

  /** False once the connection failed or was closed (every later request would fail). */
  get isOpen(): boolean {
    return this.failure === null;
  }

  /** The broker's advertised version range per API key. */
  get brokerVersions(): ReadonlyMap<number, VersionRange> {
    return this.versions;
  }

  /** min(our max, broker max), checked against both minimums. */
  versionFor(api: AnyApi): number {
    const broker = this.versions.get(api.key);
    if (broker === undefined) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `broker does not support ${api.name}`);
    }
    const version = Math.min(api.maxVersion, broker.maxVersion);
    if (version < Math.max(api.minVersion, broker.minVersion)) {
      throw new KafkaError(
        ErrorCode.UNSUPPORTED_VERSION,
        `no common ${api.name} version (ours ${api.minVersion}-${api.maxVersion}, ` +
          `broker ${broker.minVersion}-${broker.maxVersion})`,
      );
    }
    return version;
  }

  /** Sends one request and resolves with its decoded response (in request order). */
  request<Req, Res>(api: Api<Req, Res>, req: Req, version: number | undefined, options: RequestOptions & { noResponse: true }): Promise<undefined>;
  request<Req, Res>(api: Api<Req, Res>, req: Req, version?: number, options?: RequestOptions & { noResponse?: false }): Promise<Res>;
  request<Req, Res>(api: Api<Req, Res>, req: Req, version?: number, options?: RequestOptions): Promise<Res | undefined> {
    try {
      const v = version ?? this.versionFor(api);
      if (v < api.minVersion || v > api.maxVersion) {
        const range = `${api.minVersion}-${api.maxVersion}`;
        throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `${api.name} v${v} is outside ${range}`);
      }
      const timeoutMs = options?.timeoutMs ?? this.timeoutMs;
      return this.send(api, v, req, timeoutMs, null, options?.noResponse === true) as Promise<Res | undefined>;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Closes the socket; requests still waiting fail with ConnectionError. */
  async close(): Promise<void> {
    this.fail(new ConnectionError('connection closed by client'));
    await this.closed;
  }

  private async negotiateVersions(): Promise<Map<number, VersionRange>> {
    const request = { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION };
    let res = await this.send(ApiVersionsApi, 3, request, this.timeoutMs, decodeApiVersionsProbe, false) as ApiVersionsResponse;
    if (res.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      res = await this.send(ApiVersionsApi, 0, request, this.timeoutMs, null, false) as ApiVersionsResponse;
    }
    if (res.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(res.errorCode as ErrorCode, `ApiVersions failed: ${errorName(res.errorCode)}`);
    }
    return new Map(res.apiKeys.map((k) => [k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion }]));
  }

  private send(
    api: AnyApi, version: number, req: unknown, timeoutMs: number, decode: Pending['decode'], noResponse: boolean,
  ): Promise<unknown> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.queued.length >= this.maxQueued) {
      return Promise.reject(new ConnectionError(`more than ${this.maxQueued} requests queued`));
    }
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = correlationId === INT32_MAX ? 0 : correlationId + 1;
    const frame = encodeRequestFrame(api, version, correlationId, this.clientId, req);
    return new Promise((resolve, reject) => {
      const pending: Pending = { api, version, correlationId, frame, decode, noResponse, resolve, reject, timer: undefined };
      pending.timer = setTimeout(() => this.onTimeout(pending, timeoutMs), timeoutMs);
      this.queued.push(pending);
      this.pump();
    });
  }

  private pump(): void {
    if (this.queued.length === 0 || this.inflight.length >= this.maxInflight) return;
    this.socket.cork();
    while (this.queued.length > 0 && this.inflight.length < this.maxInflight) {
      const next = this.queued.shift() as Pending;
      if (next.noResponse) {
        this.writeUnanswered(next);
        continue;
      }
      this.inflight.push(next);
      for (const chunk of next.frame) this.socket.write(chunk);
    }
    this.socket.uncork();
  }

  /** Written and done: the timeout no longer applies and no response will be matched to it. */
  private writeUnanswered(p: Pending): void {
    clearTimeout(p.timer);
    const last = p.frame.length - 1;
    p.frame.forEach((chunk, i) => {
      if (i < last) this.socket.write(chunk);
      else this.socket.write(chunk, (err) => (err ? p.reject(this.failure ?? new ConnectionError(`write failed: ${err.message}`)) : p.resolve(undefined)));
    });
  }

  private onData(data: Buffer): void {
    try {
      this.frames.push(data, (frame) => this.onFrame(frame));
    } catch (err) {
      this.fail(err instanceof ConnectionError ? err : new ConnectionError(String(err), { cause: err }));
    }
  }

  private onFrame(frame: Buffer): void {
    const head = this.inflight[0];
    if (head === undefined) throw new ConnectionError('response received with no request outstanding');
    const r = new Reader(frame);
    const correlationId = readResponseHeader(r, head.api.key, head.api.isFlexible(head.version));
    if (correlationId !== head.correlationId) {
      throw new ConnectionError(`response correlation id ${correlationId}, expected ${head.correlationId}`);
    }
    this.inflight.shift();
    clearTimeout(head.timer);
    try {
      // A body that fails to decode fails its request only: the framing is intact.
      head.resolve(head.decode === null ? head.api.decodeResponse(head.version, r) : head.decode(r));
    } catch (err) {
      head.reject(err instanceof Error ? err : new Error(String(err)));
    }
    this.pump();
  }

  private onTimeout(pending: Pending, timeoutMs: number): void {
    pending.timer = undefined;
    const message = `${pending.api.name} v${pending.version} got no response within ${timeoutMs} ms`;
    pending.reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, message));
    this.fail(new ConnectionError(`connection closed after a request timed out (${message})`));
  }

  /** First failure wins; every outstanding request fails with it and the socket goes. */
  private fail(err: ConnectionError): void {
    if (this.failure === null) this.failure = err;
    for (const p of this.inflight.splice(0).concat(this.queued.splice(0))) {
      clearTimeout(p.timer);
      p.reject(this.failure);
    }
    this.socket.destroy();
  }
}

/**
 * A broker that does not know the ApiVersions version we sent answers with a v0-shaped body
 * (error code, then a classic array), which a v3 decode would misread; the error code leads
 * both shapes, so it tells which decoder applies.
 */
function decodeApiVersionsProbe(r: Reader): unknown {
  const errorCode = new Reader(r.buf, r.offset, r.end).int16();
  return ApiVersionsApi.decodeResponse(errorCode === ErrorCode.UNSUPPORTED_VERSION ? 0 : 3, r);
}

function openSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectionError(`connect to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(new ConnectionError(`cannot connect to ${host}:${port}: ${err.message}`, { cause: err }));
    };
    socket.once('error', onError);
  });
}
