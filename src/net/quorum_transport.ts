// The metadata quorum's transport between controllers (main thread): carries the Raft core's
// messages as KRaft's Kafka requests over TCP (quorum_wire.ts maps them).
//
// Outbound: one connection per peer controller (the configured voters, plus voters added later
// whose endpoints a `voters` entry carries: learnPeers), opened when there is something to send and
// reopened after a failure with jittered exponential backoff. Request Messages wait in a bounded
// queue per peer; when it is full the oldest is dropped (Raft tolerates lost messages, and the
// newest message of a node supersedes its older ones). At most `maxInflightPerPeer` requests are
// on the wire; Kafka answers a connection's requests in order, so the oldest in-flight request
// owns the next response, and a response that fails its request's correlation id, or a request
// unanswered for `requestTimeoutMs`, closes the connection (what is in flight is lost).
// Responses become response Messages for the core. Every connection failure (reset, refused,
// timed out, protocol violation) is reported through `unreachable`: when a peer process dies on
// this host its sockets reset at once, and the core need not wait for its fetch timeout.
// Connections are secured as the controller listener's protocol asks (common/peer_socket.ts);
// a peer that refuses this node's credentials or certificate is reported through
// `authenticationRefused` once per episode (until a connection to it succeeds).
//
// Inbound: a server handler passes each quorum request it decoded to `receive`, which gives the
// core its Message and resolves once the core sends the response Message of the same API
// addressed to the requester (at most one pending request per peer and API, and at most
// `maxPendingInbound` in all; a newer request from a peer supersedes the older one, which is
// answered REQUEST_TIMED_OUT, as is one the core leaves unanswered for `requestTimeoutMs`).
// EndQuorumEpoch is acknowledged at once: the core sends nothing back for it. Requests the
// mapping refuses (another cluster, malformed) are answered with their error and never reach
// the core.
import type { Socket } from 'node:net';
import { connectPeer, PeerAuthenticationError, type PeerSecurity } from '../common/peer_socket.js';
import {
  endQuorumEpochAnswer,
  errorResponseOf,
  isRequestMessage,
  messageOfRequest,
  messageOfResponse,
  requestOf,
  responseOf,
  type QuorumRequest,
  type QuorumResponse,
  type RequestMessage,
} from '../coordinator/raft/quorum_wire.js';
import type { Message, NodeId } from '../coordinator/raft/types.js';
import type { VoterEndpoints } from '../coordinator/raft/entry_batches.js';
import { apiByKey } from '../protocol/apis/index.js';
import { fullJitterDelay, type BackoffOptions } from '../protocol/backoff.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FrameReader, encodeRequestFrame } from '../protocol/framing.js';
import { readResponseHeader } from '../protocol/header.js';
import { ProtocolError, Reader } from '../protocol/reader.js';
import type { AnyApi } from '../protocol/schema.js';

export interface QuorumPeer {
  readonly id: NodeId;
  readonly host: string;
  readonly port: number;
}

export interface QuorumTransportOptions {
  readonly self: NodeId;
  readonly clusterId: string;
  /** The controllers this node sends to (itself excluded), as configured; learnPeers adds voters added since. */
  readonly peers: readonly QuorumPeer[];
  /** Bound on peers known, configured and learned (the voter limit). */
  readonly maxPeers: number;
  /** Hands a message from the network to the local core (RaftNode.step, via its driver). */
  readonly deliver: (m: Message) => void;
  /** Whether `id` is a voter as the local core sees it now (a fetcher that is not is an observer). */
  readonly isVoter: (id: NodeId) => boolean;
  /** Told when the connection to a peer fails (RaftNode.reportUnreachable, via its driver). */
  readonly unreachable?: (id: NodeId, refused: boolean) => void;
  /** Unsent request Messages kept per peer; beyond it the oldest is dropped. */
  readonly maxQueuedPerPeer: number;
  readonly maxInflightPerPeer: number;
  /** KRaft's controller.quorum.request.timeout.ms: for our requests and for the core's answers. */
  readonly requestTimeoutMs: number;
  /** Inbound requests awaiting the core's answer, over all peers. */
  readonly maxPendingInbound: number;
  /** Largest response frame accepted from a peer. */
  readonly maxResponseBytes: number;
  readonly backoff?: BackoffOptions;
  readonly random?: () => number;
  /** TLS and SASL towards the peers' controller listeners. */
  readonly security: PeerSecurity;
  /** Told when peer `id` refused to authenticate this node (once until a connection to it succeeds). */
  readonly authenticationRefused?: (id: NodeId, err: PeerAuthenticationError) => void;
}

/** What the transport lost or refused, for metrics and tests. */
export interface QuorumTransportStats {
  /** Request Messages dropped: queue full, unknown peer, or lost with a failed connection. */
  dropped: number;
  /** Responses that refused our request or did not map to a Message. */
  refused: number;
  /** Response Messages from the core with no request left to answer (late or superseded). */
  unanswerable: number;
  /** Connections to peers that failed (refused, reset, timed out, protocol violation). */
  connectionFailures: number;
}

interface Inflight {
  readonly message: RequestMessage;
  readonly api: AnyApi;
  readonly version: number;
  readonly correlationId: number;
  readonly sentAt: number;
}

interface PendingInbound {
  readonly apiKey: QuorumRequest['apiKey'];
  readonly resolve: (res: QuorumResponse) => void;
  readonly timer: NodeJS.Timeout;
}

const CLIENT_ID = 'sluice-quorum';

/** The outbound connection to one peer and the requests waiting for it. */
class PeerLink {
  private socket: Socket | null = null;
  private connected = false;
  private frames: FrameReader;
  private readonly queue: RequestMessage[] = [];
  private readonly inflight: Inflight[] = [];
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private timeoutTimer: NodeJS.Timeout | null = null;
  private nextCorrelationId = 0;
  private closed = false;
  private refusalReported = false;

  constructor(readonly peer: QuorumPeer, private readonly transport: QuorumTransport, private readonly opts: QuorumTransportOptions) {
    this.frames = new FrameReader(opts.maxResponseBytes);
  }

  send(m: RequestMessage): void {
    if (this.closed) return;
    this.queue.push(m);
    if (this.queue.length > this.opts.maxQueuedPerPeer) {
      this.queue.shift();
      this.transport.stats.dropped++;
    }
    this.pump();
  }

  close(): void {
    this.closed = true;
    this.clearTimers();
    this.socket?.destroy();
    this.socket = null;
  }

  private pump(): void {
    if (this.socket === null) {
      if (this.reconnectTimer === null && this.queue.length > 0) this.connect();
      return;
    }
    if (!this.connected) return;
    while (this.queue.length > 0 && this.inflight.length < this.opts.maxInflightPerPeer) this.write(this.queue.shift()!);
  }

  private connect(): void {
    const { socket, ready } = connectPeer(this.peer.host, this.peer.port, this.opts.security, this.opts.requestTimeoutMs, CLIENT_ID);
    this.socket = socket;
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(socket, err.code === 'ECONNREFUSED'));
    socket.on('close', () => this.fail(socket));
    ready.then(
      () => {
        if (this.socket !== socket) return;
        this.connected = true;
        this.attempt = 0;
        this.refusalReported = false;
        socket.on('data', (data: Buffer) => {
          if (this.socket !== socket) return;
          try {
            this.frames.push(data, (frame) => this.onFrame(frame));
          } catch (err) {
            if (!(err instanceof ProtocolError)) throw err;
            this.fail();
          }
        });
        this.pump();
      },
      (err: unknown) => {
        if (err instanceof PeerAuthenticationError && !this.refusalReported && !this.closed) {
          this.refusalReported = true;
          this.opts.authenticationRefused?.(this.peer.id, err);
        }
        this.fail(socket);
      },
    );
  }

  private write(m: RequestMessage): void {
    const req = requestOf(m, this.opts.clusterId);
    const api = apiByKey.get(req.apiKey)!;
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) | 0;
    this.inflight.push({ message: m, api, version: req.version, correlationId, sentAt: Date.now() });
    for (const chunk of encodeRequestFrame(api, req.version, correlationId, CLIENT_ID, req.body)) this.socket!.write(chunk);
    if (this.inflight.length === 1) this.armTimeout();
  }

  private onFrame(frame: Buffer): void {
    const head = this.inflight[0];
    if (head === undefined) throw new ProtocolError('response with no request outstanding');
    const r = new Reader(frame);
    if (readResponseHeader(r, head.api.key, head.api.isFlexible(head.version)) !== head.correlationId) {
      throw new ProtocolError(`response does not answer request ${head.correlationId}`);
    }
    this.inflight.shift();
    this.armTimeout();
    let answer: Message | null;
    try {
      // A body that fails to decode or map loses its request only: the framing is intact.
      const body = head.api.decodeResponse(head.version, r);
      answer = messageOfResponse(head.message, { apiKey: head.api.key, body } as QuorumResponse);
    } catch (err) {
      if (!(err instanceof KafkaError) && !(err instanceof ProtocolError)) throw err;
      this.transport.stats.refused++;
      answer = null;
    }
    if (answer !== null) this.opts.deliver(answer);
    this.pump();
  }

  private armTimeout(): void {
    if (this.timeoutTimer !== null) clearTimeout(this.timeoutTimer);
    this.timeoutTimer = null;
    const head = this.inflight[0];
    if (head === undefined) return;
    const left = Math.max(0, head.sentAt + this.opts.requestTimeoutMs - Date.now());
    this.timeoutTimer = setTimeout(() => this.fail(), left);
  }

  /** Drops the connection and what is in flight on it; reconnects after a backoff if requests wait. `refused`: nothing listens at the peer's address. */
  private fail(socket: Socket | null = this.socket, refused = false): void {
    if (socket !== this.socket || this.socket === null) return;
    this.transport.stats.connectionFailures++;
    this.transport.stats.dropped += this.inflight.length;
    this.inflight.length = 0;
    this.clearTimers();
    this.socket.destroy();
    this.socket = null;
    this.connected = false;
    this.frames = new FrameReader(this.opts.maxResponseBytes);
    if (this.closed) return;
    this.opts.unreachable?.(this.peer.id, refused);
    const delay = fullJitterDelay(this.attempt++, this.opts.backoff, this.opts.random);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.pump();
    }, delay);
  }

  private clearTimers(): void {
    if (this.timeoutTimer !== null) clearTimeout(this.timeoutTimer);
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.timeoutTimer = null;
    this.reconnectTimer = null;
  }
}

export class QuorumTransport {
  readonly stats: QuorumTransportStats = { dropped: 0, refused: 0, unanswerable: 0, connectionFailures: 0 };
  private readonly links = new Map<NodeId, PeerLink>();
  private readonly pending = new Map<string, PendingInbound>();

  constructor(private readonly opts: QuorumTransportOptions) {
    for (const peer of opts.peers.slice(0, opts.maxPeers)) this.links.set(peer.id, new PeerLink(peer, this, opts));
  }

  /** Ids of the peers this transport can send to. */
  get peerIds(): NodeId[] {
    return [...this.links.keys()];
  }

  /**
   * Voters' endpoints from a `voters` entry: a voter not known yet gets a link to its first
   * listener, one whose listener moved gets a new link; beyond `maxPeers` new voters are ignored
   * (the voter limit bounds them anyway). Voters that carry no endpoint keep what is configured.
   */
  learnPeers(endpoints: VoterEndpoints): void {
    for (const [id, listeners] of endpoints) {
      const listener = listeners[0];
      if (id === this.opts.self || listener === undefined) continue;
      const known = this.links.get(id);
      if (known?.peer.host === listener.host && known.peer.port === listener.port) continue;
      if (known === undefined && this.links.size >= this.opts.maxPeers) continue;
      known?.close();
      this.links.set(id, new PeerLink({ id, host: listener.host, port: listener.port }, this, this.opts));
    }
  }

  /** Sends a Message from the local core: a request to its peer, or the answer to a pending inbound request. */
  send(m: Message): void {
    if (isRequestMessage(m)) {
      const link = this.links.get(m.to);
      if (link === undefined) this.stats.dropped++;
      else link.send(m);
      return;
    }
    const res = responseOf(m);
    const key = pendingKey(m.to, res.apiKey);
    const waiting = this.pending.get(key);
    if (waiting === undefined) {
      this.stats.unanswerable++;
      return;
    }
    this.settle(key, waiting, res);
  }

  /**
   * The inbound hook a server handler calls with a decoded quorum request: resolves with the
   * response to send (the core's answer, or an error response).
   */
  receive(req: QuorumRequest): Promise<QuorumResponse> {
    let m: RequestMessage;
    try {
      m = messageOfRequest(req, { self: this.opts.self, clusterId: this.opts.clusterId, isVoter: this.opts.isVoter });
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return Promise.resolve(errorResponseOf(req.apiKey, err.code));
    }
    if (m.type === 'endQuorumEpoch') {
      this.opts.deliver(m);
      return Promise.resolve(endQuorumEpochAnswer(m));
    }
    const key = pendingKey(m.from, req.apiKey);
    const older = this.pending.get(key);
    if (older !== undefined) this.settle(key, older, errorResponseOf(older.apiKey, ErrorCode.REQUEST_TIMED_OUT));
    if (this.pending.size >= this.opts.maxPendingInbound) return Promise.resolve(errorResponseOf(req.apiKey, ErrorCode.REQUEST_TIMED_OUT));
    const answer = new Promise<QuorumResponse>((resolve) => {
      const timer = setTimeout(() => {
        const self = this.pending.get(key);
        if (self !== undefined && self.timer === timer) this.settle(key, self, errorResponseOf(req.apiKey, ErrorCode.REQUEST_TIMED_OUT));
      }, this.opts.requestTimeoutMs);
      this.pending.set(key, { apiKey: req.apiKey, resolve, timer });
    });
    this.opts.deliver(m);
    return answer;
  }

  /** Closes every peer connection and answers what is pending inbound with REQUEST_TIMED_OUT. */
  close(): void {
    for (const link of this.links.values()) link.close();
    for (const [key, waiting] of this.pending) this.settle(key, waiting, errorResponseOf(waiting.apiKey, ErrorCode.REQUEST_TIMED_OUT));
  }

  private settle(key: string, waiting: PendingInbound, res: QuorumResponse): void {
    clearTimeout(waiting.timer);
    this.pending.delete(key);
    waiting.resolve(res);
  }
}

function pendingKey(peer: NodeId, apiKey: number): string {
  return `${peer}/${apiKey}`;
}
