// What main and a shard say to each other about client connections placed on the shard
// (--connection-placement shards, issue 16 stage A), over the shard's placement MessagePort
// (ShardHost creates it beside the event port; none of it rides the data-plane rings).
// Main → shard: a listener's settings once, before any of its connections; each adopted
// connection (a dup'd socket fd, owned by the shard from then on); each forwarded request's
// answer; a drain (the listener is closing). Shard → main: each request, forwarded whole as its
// frame; each protocol error; each close, after which main drops its record of the connection.
// Stage A's second half adds serving on the shard (placed_serving.ts): main → shard, a snapshot of
// what the data-plane handlers read for the partitions this broker leads (every one, each with the
// shard hosting it: a shard reaches its peers' over the shard mesh), each with a revision that
// main's answers carry as a fence; shard → main, the traffic the shard served
// itself (metrics), posted at most once a second.
import type { BucketCounts } from '../common/bucket_histogram.js';
import type { PartitionRecord, TopicImage } from '../cluster/cluster_view.js';
import type { FetchKind } from '../metrics/metrics.js';
import type { ConnectionLimits } from './connection.js';

/** A client listener as its placed connections need it on a shard. */
export interface PlacedListenerInfo {
  readonly name: string;
  readonly limits: ConnectionLimits;
  /** The listener's handler table as API key and barrier flag (the shard forwards every API, keeping barriers). */
  readonly apis: readonly (readonly [key: number, barrier: boolean])[];
  /** This shard's share of the bound on bytes of requests not yet fully received. */
  readonly maxPartialRequestBytes: number;
  /**
   * The broker's fetch.max.bytes and message.max.bytes: what a forwarded Fetch reserves of its
   * connection's bound on queued response bytes before it goes to main (as a Fetch served on main
   * or here reserves it), main answering no more than the grant.
   */
  readonly fetchLimits: { readonly fetchMaxBytes: number; readonly messageMaxBytes: number };
  /** The broker's --slow-request-ms: the shard keeps the request log of its placed connections. */
  readonly slowRequestMs: number;
}

/** One partition this broker leads, as main's view and shard table have it. */
export interface SnapshotPartition {
  readonly topic: TopicImage;
  readonly record: PartitionRecord;
  readonly handle: number;
  /** The shard hosting it. */
  readonly shard: number;
  /** Its directory, whose cached segment fds the shard's reader drops when the partition leaves the snapshot. */
  readonly dir: string;
}

/**
 * What the shard's handlers read, as of main's snapshot `revision`. `open`: the shard may serve
 * requests itself at all (no ACL is enforced on its ANONYMOUS connections, no client quota is
 * configured, the broker is not handing its leaderships over); otherwise it forwards everything.
 */
export interface PlacementSnapshot {
  readonly revision: number;
  readonly localId: number;
  readonly open: boolean;
  readonly partitions: readonly SnapshotPartition[];
  readonly limits: { readonly maxProduceBatchBytes: number; readonly fetchMaxBytes: number; readonly messageMaxBytes: number };
}

/** What a shard served itself since its last report (main adds it to the broker's metrics). */
export interface PlacedTraffic {
  readonly served: number;
  readonly messagesIn: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Of bytesOut, those served to followers. */
  readonly replicaBytesOut: number;
  readonly socketBytesIn: number;
  readonly socketBytesOut: number;
  /** Times a placed connection stopped reading for the held-bytes bound (sluice_request_memory_waits_total). */
  readonly requestMemoryWaits: number;
  /**
   * Durations of the requests served here, per API (request metrics), and of the fetches that did
   * not park, by kind: bucket counts of REQUEST_LATENCY_BOUNDS, only for those with any.
   */
  readonly requests: readonly (readonly [api: string, times: BucketCounts])[];
  readonly fetchServes: readonly (readonly [kind: FetchKind, times: BucketCounts])[];
  /** The API of each request the shard's request log found slow (sluice_slow_requests_total). */
  readonly slowRequests: readonly string[];
  /** Set on the report main asked for (`reportTraffic`), to its `asked`. */
  readonly asked?: number;
}

/** Main's answer to one forwarded request: its encoded response body, none (acks=0), or close the connection. */
export type ForwardedAnswer =
  | { readonly kind: 'body'; readonly body: Uint8Array; readonly throttleMs: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'close'; readonly reason: string; readonly detail: string; readonly logged: boolean };

export type PlacementToShard =
  | { readonly kind: 'listener'; readonly listener: PlacedListenerInfo }
  | { readonly kind: 'adopt'; readonly id: number; readonly fd: number; readonly listener: string }
  | { readonly kind: 'snapshot'; readonly snapshot: PlacementSnapshot }
  /**
   * `revision`: main's snapshot revision when it answered; the shard serves nothing itself until
   * its snapshot reaches it. `parkedMs`: how long the handler waited by design (a long-poll Fetch),
   * which the shard's request log leaves out of the serving time.
   */
  | { readonly kind: 'answer'; readonly id: number; readonly seq: number; readonly answer: ForwardedAnswer; readonly revision: number; readonly parkedMs: number }
  | { readonly kind: 'drain'; readonly id: number }
  /** Report the traffic served so far now (a metrics scrape), with `asked` in the report. */
  | { readonly kind: 'reportTraffic'; readonly asked: number };

export type PlacementToMain =
  /** `responseBytes`: a Fetch's grant of its connection's queued-response room (PlacedListenerInfo.fetchLimits). */
  | { readonly kind: 'request'; readonly id: number; readonly seq: number; readonly frame: Uint8Array; readonly responseBytes?: number }
  | { readonly kind: 'protocolError'; readonly error: string }
  | { readonly kind: 'traffic'; readonly traffic: PlacedTraffic }
  | { readonly kind: 'closed'; readonly id: number };
