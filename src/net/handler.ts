// The contract between the connection layer and the per-API handlers in src/net/handlers.
// A handler decodes nothing itself: it receives the decoded request and returns the response
// object (or NO_RESPONSE for acks=0 produce). `barrier` handlers change metadata; the
// connection dispatches nothing after them until they finish, so a client that pipelines
// CreateTopics then Produce sees its topic.
import type { RequestHeader } from '../protocol/header.js';
import type { Api, Wire } from '../protocol/schema.js';

export type { Wire };
import type { BrokerContext } from './broker_context.js';

export const NO_RESPONSE: unique symbol = Symbol('no-response');

/** Answer nothing and close the connection once earlier requests are answered (acks=0 errors). */
export class CloseConnection {
  constructor(
    readonly kind: string,
    readonly detail: string,
  ) {}
}

export type HandlerResult<Res> = Wire<Res> | typeof NO_RESPONSE | CloseConnection;

export interface HandlerContext {
  readonly broker: BrokerContext;
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
}

export interface Handler<Req, Res> {
  readonly api: Api<Req, Res>;
  readonly barrier?: boolean;
  handle(ctx: HandlerContext, req: Req): HandlerResult<Res> | Promise<HandlerResult<Res>>;
}

/** Keeps the request/response types tied to the api while storing handlers in one table. */
export function handler<Req, Res>(h: Handler<Req, Res>): Handler<unknown, unknown> {
  return h as unknown as Handler<unknown, unknown>;
}
