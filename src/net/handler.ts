// The contract between the connection layer and the per-API handlers in src/net/handlers.
// A handler decodes nothing itself: it receives the decoded request and returns the response
// object (or NO_RESPONSE for acks=0 produce, or an EncodedBody it shares between requests). Each handler declares the few dependencies it
// uses as its own `Deps` type; the broker binds them once at startup (bindHandler), so the
// connection sees only bound handlers and a handler's test passes plain objects.
// `barrier` handlers change metadata; the connection dispatches nothing after them until they
// finish, so a client that pipelines CreateTopics then Produce sees its topic.
import type { FrameKeeper } from '../common/frame_pool.js';
import type { RequestHeader } from '../protocol/header.js';
import type { Api, Wire } from '../protocol/schema.js';
import type { SaslSession } from './sasl_session.js';
import type { ConnectionAuthorizer } from './acl_authority.js';

export type { Wire };

export const NO_RESPONSE: unique symbol = Symbol('no-response');

/** Answer nothing and close the connection once earlier requests are answered (acks=0 errors). */
export class CloseConnection {
  constructor(
    readonly kind: string,
    readonly detail: string,
    /** The handler has logged it already (once per interval): the connection closes without its own line. */
    readonly logged = false,
  ) {}
}

/**
 * A response body already encoded for the request's version, sent by reference after the
 * header (for answers shared by many requests, such as the all-topics Metadata response).
 */
export class EncodedBody {
  constructor(
    readonly chunks: readonly Buffer[],
    /** A client-quota throttle the body already answers (a request main served for a shard): the connection mutes that long. */
    readonly throttleMs = 0,
  ) {}
}

export type HandlerResult<Res> = Wire<Res> | typeof NO_RESPONSE | CloseConnection | EncodedBody;

/** What the connection knows about one request. */
export interface HandlerContext {
  readonly header: RequestHeader;
  readonly version: number;
  /** The client's address as group descriptions show it. */
  readonly clientHost: string;
  /**
   * Set when the connection sends file ranges natively: a handler may then answer records as
   * FileChunks over leased segment fds, pushing each lease here (the connection gives them back).
   * Absent or null: records must be Buffers.
   */
  readonly fileLeases?: number[] | null;
  /**
   * Reserves room for a response of up to `want` bytes under the connection's bound on queued
   * response bytes and returns how many the handler may produce (1 to `want`). The response may
   * exceed the grant by one whole batch of up to `atLeast` bytes (Kafka's first-batch rule), so
   * that much is held too. Released when the handler completes. Absent: no bound (unit tests).
   */
  readonly reserveResponseBytes?: (want: number, atLeast: number) => number;
  /**
   * Runs `fn` once when this connection closes, registered under `key` (a key already registered
   * is kept as it is). At most MAX_CLOSE_HOOKS per connection: false when refused. Absent: the
   * connection cannot tell (unit tests).
   */
  readonly onConnectionClose?: (key: string, fn: () => void) => boolean;
  /**
   * Reports `ms` the request waited by design (a long-poll fetch parked for min_bytes): the
   * slow-request log counts serving time, not that. Absent: not reported (unit tests).
   */
  readonly parked?: (ms: number) => void;
  /** The connection's SASL state on a SASL listener; absent or null elsewhere. */
  readonly sasl?: SaslSession | null;
  /** What this connection's principal may do (ACLs); absent or null: everything (unit tests, the controller listener). */
  readonly authorizer?: ConnectionAuthorizer | null;
  /**
   * Lends the request's frame, whose views the decoded request's byte fields are, past the
   * handler's return (a Produce's batches staged by reference on the connection's shard). Absent
   * or null: those views are read during the call only.
   */
  readonly requestFrame?: FrameKeeper | null;
}

/** Close hooks one connection keeps (the controller listener registers one per broker incarnation seen). */
export const MAX_CLOSE_HOOKS = 8;

/** What handlers asked to run when one connection closes (HandlerContext.onConnectionClose), by key. */
export class CloseHooks {
  private readonly hooks = new Map<string, () => void>();
  private ran = false;

  /** A key already registered is kept as it is; false when refused (closed already, or MAX_CLOSE_HOOKS held). */
  add(key: string, fn: () => void): boolean {
    if (this.hooks.has(key)) return true;
    if (this.ran || this.hooks.size >= MAX_CLOSE_HOOKS) return false;
    this.hooks.set(key, fn);
    return true;
  }

  /** Runs every hook once; later adds are refused. */
  run(): void {
    this.ran = true;
    const hooks = [...this.hooks.values()];
    this.hooks.clear();
    for (const fn of hooks) fn();
  }
}

export interface Handler<Req, Res, Deps> {
  readonly api: Api<Req, Res>;
  readonly barrier?: boolean;
  handle(ctx: HandlerContext, req: Req, deps: Deps): HandlerResult<Res> | Promise<HandlerResult<Res>>;
}

/** A handler with its dependencies supplied, as the connection dispatches it. */
export interface BoundHandler {
  readonly api: Api<unknown, unknown>;
  readonly barrier: boolean;
  /**
   * The handler takes the request frame (header and body bytes) as its request, undecoded: a
   * connection placed on a shard forwards it whole to main, which decodes it once there, or (the
   * data-plane APIs, placed_serving.ts) decodes it itself when it may serve it. The connection
   * still reads the header (correlation id, request log) and checks the version.
   */
  readonly forwards?: boolean;
  handle(ctx: HandlerContext, req: unknown): HandlerResult<unknown> | Promise<HandlerResult<unknown>>;
}

/** Handlers by API key. */
export type HandlerTable = ReadonlyMap<number, BoundHandler>;

export function handler<Req, Res, Deps>(h: Handler<Req, Res, Deps>): Handler<Req, Res, Deps> {
  return h;
}

/** Supplies a handler's dependencies; the request type stays tied to the api through the closure. */
export function bindHandler<Req, Res, Deps>(h: Handler<Req, Res, Deps>, deps: Deps): BoundHandler {
  return {
    api: h.api as unknown as Api<unknown, unknown>,
    barrier: h.barrier === true,
    handle: (ctx, req) => h.handle(ctx, req as Req, deps) as HandlerResult<unknown> | Promise<HandlerResult<unknown>>,
  };
}
