// What main and a shard say to each other about client connections placed on the shard
// (--connection-placement shards, issue 16 stage A), over the shard's placement MessagePort
// (ShardHost creates it beside the event port; none of it rides the data-plane rings).
// Main → shard: a listener's settings once, before any of its connections; each adopted
// connection (a dup'd socket fd, owned by the shard from then on); each forwarded request's
// answer; a drain (the listener is closing). Shard → main: each request, forwarded whole as its
// frame; each protocol error; each close, after which main drops its record of the connection.
import type { ConnectionLimits } from './connection.js';

/** A client listener as its placed connections need it on a shard. */
export interface PlacedListenerInfo {
  readonly name: string;
  readonly limits: ConnectionLimits;
  /** The listener's handler table as API key and barrier flag (the shard forwards every API, keeping barriers). */
  readonly apis: readonly (readonly [key: number, barrier: boolean])[];
  /** This shard's share of the bound on bytes of requests not yet fully received. */
  readonly maxPartialRequestBytes: number;
}

/** Main's answer to one forwarded request: its encoded response body, none (acks=0), or close the connection. */
export type ForwardedAnswer =
  | { readonly kind: 'body'; readonly body: Uint8Array; readonly throttleMs: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'close'; readonly reason: string; readonly detail: string; readonly logged: boolean };

export type PlacementToShard =
  | { readonly kind: 'listener'; readonly listener: PlacedListenerInfo }
  | { readonly kind: 'adopt'; readonly id: number; readonly fd: number; readonly listener: string }
  | { readonly kind: 'answer'; readonly id: number; readonly seq: number; readonly answer: ForwardedAnswer }
  | { readonly kind: 'drain'; readonly id: number };

export type PlacementToMain =
  | { readonly kind: 'request'; readonly id: number; readonly seq: number; readonly frame: Uint8Array }
  | { readonly kind: 'protocolError'; readonly error: string }
  | { readonly kind: 'closed'; readonly id: number };
