// Client connections handed to shards (main thread; --connection-placement shards, issue 16
// stage A). Main accepts (paused: it never reads a placed connection's bytes, so what a client
// pipelined stays in the kernel's buffer for the shard), admits by the listener's accept-time
// bounds (KafkaServer), dups the socket's fd, destroys its own handle and posts the copy to the
// shard with the fewest placed connections over that shard's placement port
// (placement_messages.ts; the shard side is placed_connections.ts). The shard's Connection
// forwards every request's frame here, and a PlacedConnection, main's record of that connection,
// serves it through the listener's real handler table: the first request meets the listener's
// admission gate, requests run in arrival order through the request scheduler, under the
// connection's ACL authorizer (its principal: ANONYMOUS, as placed listeners are plaintext
// without SASL), with its close hooks, request metrics and client quotas (a throttle is
// answered in throttle_time_ms and the shard's Connection mutes that long); the request log is
// the shard's, told how long a handler here parked (`parkedMs` of the answer). Answers
// are encoded bodies (records as Buffers: fileLeases null), moved back without a copy; the
// shard frames and sends them in request order; while a shard port a forwarded request fed is
// blocked, the connection's next ones wait here (watchShards). The record lives until the shard
// reports the connection closed, which is when KafkaServer gives back its count, descriptors and
// per-IP slot.
// Shards serve some requests themselves (placed_serving.ts) from a snapshot main keeps on each:
// every partition this broker leads, with the shard hosting it (the same list for every shard:
// each reaches its peers' partitions over the shard mesh). `changed()` (anything the snapshot holds may
// have changed) bumps the snapshot revision at once and posts the shards new snapshots a turn
// later; every answer carries the revision, which fences the shard's own serving until its
// snapshot caught up. The shards report what they served (and every placed socket's bytes) at
// most once a second, and at once when a metrics scrape asks (`trafficReported`); main adds it to
// the broker's metrics and counts per shard the requests served there and those forwarded here
// (/v1/health).
import type { Socket } from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ShardTable } from '../actors/shard_table.js';
import type { ClusterView } from '../cluster/cluster_view.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import type { RequestHeader } from '../protocol/header.js';
import { Writer } from '../protocol/writer.js';
import { ANONYMOUS_USER } from '../coordinator/client_quotas.js';
import type { ConnectionAuthorizer } from './acl_authority.js';
import { decodeRequest, resumeWhenUnblocked, type ConnectionServices, type FirstRequestGate } from './connection.js';
import { CloseConnection, CloseHooks, EncodedBody, NO_RESPONSE, type BoundHandler, type HandlerContext, type HandlerResult } from './handler.js';
import type { ForwardedAnswer, PlacedListenerInfo, PlacedTraffic, PlacementSnapshot, PlacementToMain, PlacementToShard, SnapshotPartition } from './placement_messages.js';
import { priorityClassOf } from './request_scheduler.js';

/** A response body as one fresh buffer, to be moved to the shard (records are Buffers here: no file leases). */
function encodeBody(h: BoundHandler, version: number, res: unknown): Uint8Array {
  let chunks: readonly Buffer[];
  if (res instanceof EncodedBody) chunks = res.chunks;
  else {
    const w = new Writer(256);
    h.api.encodeResponse(version, res, w);
    chunks = w.finish();
  }
  let bytes = 0;
  for (const c of chunks) bytes += c.length;
  const body = new Uint8Array(bytes);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return body;
}

interface Forwarded {
  readonly seq: number;
  readonly frame: Buffer;
  /** A Fetch's grant of the connection's queued-response room on its shard. */
  readonly responseBytes: number | undefined;
}

/** Main's record of one connection placed on a shard: serves its forwarded requests, holds its close hooks. */
export class PlacedConnection {
  private readonly queue: Forwarded[] = [];
  /** A request waits (its admission delay, its priority class's turn): the ones behind it wait too, keeping arrival order. */
  private waiting = false;
  /** The listener refused the connection on its first request: what the shard forwarded behind it is not served. */
  private refused = false;
  private closed = false;
  private readonly closeHooks = new CloseHooks();
  private readonly authorizer: ConnectionAuthorizer | null;
  private readonly clientHost: string;
  private whenClosed: Array<() => void> = [];

  constructor(
    readonly id: number,
    readonly shard: number,
    private readonly port: MessagePort,
    address: string,
    private readonly services: ConnectionServices,
    private readonly log: Logger,
    private admit: FirstRequestGate | null,
    private readonly onClose: (c: PlacedConnection) => void,
    /** Main's snapshot revision now, which each answer carries. */
    private readonly revision: () => number,
  ) {
    this.clientHost = `/${address}`;
    this.authorizer = services.acls == null ? null : services.acls.forConnection(() => null, address);
  }

  /** Asks the shard to stop reading, answer what is in flight and close; resolves once it reported the close. */
  drain(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.post({ kind: 'drain', id: this.id });
    return new Promise((resolve) => this.whenClosed.push(resolve));
  }

  /** The shard closed the connection (or died): runs its close hooks, gives back what it holds. */
  closedOnShard(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.closeHooks.run();
    this.onClose(this);
    for (const resolve of this.whenClosed) resolve();
    this.whenClosed = [];
  }

  receive(seq: number, frame: Uint8Array, responseBytes: number | undefined): void {
    if (this.closed) return;
    this.queue.push({ seq, frame: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), responseBytes });
    this.pump();
  }

  private post(m: PlacementToShard, transfer?: ArrayBuffer[]): void {
    this.port.postMessage(m, transfer);
  }

  private answer(seq: number, answer: ForwardedAnswer, parkedMs = 0): void {
    if (this.closed) return;
    this.post({ kind: 'answer', id: this.id, seq, answer, revision: this.revision(), parkedMs }, answer.kind === 'body' ? [answer.body.buffer as ArrayBuffer] : undefined);
  }

  private pump(): void {
    while (!this.waiting && !this.closed && this.queue.length > 0) this.start(this.queue.shift()!);
  }

  private start(forwarded: Forwarded): void {
    const { seq, frame } = forwarded;
    if (this.refused) return this.answer(seq, { kind: 'none' });
    const version = frame.readInt16BE(2);
    // The shard's Connection looked the API and version up in the same table.
    const h = this.services.handlers.get(frame.readInt16BE(0))!;
    const decoded = decodeRequest(frame, h, version, true);
    if (typeof decoded === 'string') return this.answer(seq, { kind: 'close', reason: 'malformed', detail: decoded, logged: false });
    const { header, req } = decoded;
    const admit = this.admit;
    if (admit !== null) {
      this.admit = null;
      const verdict = admit(h.api.key, version, req);
      if (verdict.kind === 'refuse') {
        // The listener counted and logged the refusal; as on main, the client gets no answer, to
        // this request or any it pipelined behind it.
        this.refused = true;
        this.post({ kind: 'drain', id: this.id });
        return this.answer(seq, { kind: 'none' });
      }
      if (verdict.delayMs > 0) {
        this.waiting = true;
        setTimeout(() => {
          this.waiting = false;
          this.route(forwarded, h, version, header, req);
          this.pump();
        }, verdict.delayMs);
        return;
      }
    }
    this.route(forwarded, h, version, header, req);
  }

  private route(forwarded: Forwarded, h: BoundHandler, version: number, header: RequestHeader, req: unknown): void {
    if (this.closed) return;
    const scheduler = this.services.scheduler;
    if (scheduler === undefined || scheduler.tryRunNow()) return this.execute(forwarded, h, version, header, req);
    this.waiting = true;
    scheduler.submit(priorityClassOf(h.api.key, version, req), () => {
      this.waiting = false;
      if (this.closed) return;
      this.execute(forwarded, h, version, header, req);
      this.pump();
    });
  }

  private execute({ seq, frame, responseBytes }: Forwarded, h: BoundHandler, version: number, header: RequestHeader, req: unknown): void {
    const started = performance.now();
    const requestBytes = frame.length;
    const quotas = this.services.quotas;
    const charge = quotas !== undefined && quotas.active ? quotas.chargeOf(h.api.key, version, req, this.authorizer) : null;
    let parkedMs = 0;
    const ctx: HandlerContext = {
      header,
      version,
      clientHost: this.clientHost,
      fileLeases: null,
      // The shard reserved the room before forwarding; the answer stays within the grant.
      ...(responseBytes === undefined ? {} : { reserveResponseBytes: (want: number) => Math.min(want, responseBytes) }),
      onConnectionClose: (key, fn) => this.closeHooks.add(key, fn),
      parked: (ms) => {
        parkedMs += ms;
      },
      sasl: null,
      authorizer: this.authorizer,
    };
    let result: HandlerResult<unknown> | Promise<HandlerResult<unknown>>;
    try {
      result = h.handle(ctx, req);
    } catch (err) {
      return this.failed(seq, h, err);
    }
    const handlerMs = performance.now() - started;
    const complete = (res: HandlerResult<unknown>): void => {
      const ms = performance.now() - started;
      this.services.metrics.recordRequest(h.api.name, ms / 1000);
      // The request log is the shard's, which times the request as its client saw it.
      if (res === NO_RESPONSE) return this.answer(seq, { kind: 'none' }, parkedMs);
      if (res instanceof CloseConnection) return this.answer(seq, { kind: 'close', reason: res.kind, detail: res.detail, logged: res.logged }, parkedMs);
      const completedAt = performance.now();
      let body: Uint8Array;
      let throttleMs = 0;
      try {
        body = encodeBody(h, version, res);
        if (charge != null) {
          throttleMs = quotas!.charge(
            charge, ANONYMOUS_USER, header.clientId ?? '', charge === 'fetch' ? body.length : requestBytes, handlerMs + (performance.now() - completedAt),
          );
          if (throttleMs > 0 && typeof res === 'object' && res !== null && !(res instanceof EncodedBody)) body = encodeBody(h, version, { ...res, throttleTimeMs: throttleMs });
        }
      } catch (err) {
        // A handler answered something its version cannot carry: a bug, costing this connection only.
        return this.failed(seq, h, err);
      }
      this.answer(seq, { kind: 'body', body, throttleMs }, parkedMs);
    };
    if (result instanceof Promise) {
      result.then(complete, (err: unknown) => this.failed(seq, h, err));
      this.watchShards();
    } else complete(result);
  }

  /**
   * Holds this connection's next forwarded requests while a shard port it fed is blocked (a full
   * ring), as a connection read on main stops reading: they wait here, not in the port's bounded
   * overflow queue, which refuses what passes its bound. The shard's Connection stops reading once
   * its in-flight bound is reached, so the client is held back, not failed.
   */
  private watchShards(): void {
    if (this.waiting) return;
    this.waiting = resumeWhenUnblocked(this.services.blockedShards(), () => {
      this.waiting = false;
      this.pump();
    });
  }

  private failed(seq: number, h: BoundHandler, err: unknown): void {
    this.log.error({ err, api: h.api.name }, 'request handler failed');
    // The shard's Connection counts the protocol error as it closes.
    this.answer(seq, { kind: 'close', reason: 'internal', detail: `${h.api.name} handler failed`, logged: true });
  }
}

/** A placed connection's services as its listener serves it, and how its listener admits it. */
export interface PlacedServices {
  readonly services: ConnectionServices;
  readonly gate: FirstRequestGate | null;
  readonly onClose: (c: PlacedConnection) => void;
}

/** What main builds the shards' snapshots from. */
export interface SnapshotSource {
  readonly view: Pick<ClusterView, 'localId' | 'topics' | 'partition'>;
  readonly table: Pick<ShardTable, 'handleOf' | 'shardOf'>;
  partitionDir(topic: string, partition: number): string;
  /** Whether shards may serve placed connections' requests at all now (PlacementSnapshot.open). */
  open(): boolean;
  readonly limits: PlacementSnapshot['limits'];
}

/** Metrics scrapes waiting for the shards' traffic reports at once, at most. */
const MAX_REPORTS_ASKED = 8;

/** Per shard: requests its placed connections had served there, and forwarded to main. */
export interface PlacedRequests {
  readonly served: readonly number[];
  readonly forwarded: readonly number[];
}

/** The shards' placement ports and main's records of every placed connection. */
export class ConnectionPlacement {
  private readonly placedOn: number[];
  private readonly served: number[];
  private readonly forwarded: number[];
  private readonly records = new Map<number, PlacedConnection>();
  private nextId = 1;
  /** Scrapes waiting for every shard's traffic report, by the number they asked with. */
  private readonly reportsAsked = new Map<number, { remaining: number; done: () => void }>();
  private nextAsk = 1;
  /** Why a socket could not be handed over, said once. */
  private warned = false;
  private source: SnapshotSource | null = null;
  /** The revision of the snapshots the shards are sent next (or were sent last, when not `dirty`). */
  private revision = 0;
  private dirty = false;

  constructor(
    private readonly ports: readonly MessagePort[],
    private readonly dupFd: (fd: number) => number,
    private readonly metrics: Pick<
      BrokerMetrics,
      | 'protocolError' | 'requestMemoryWaited' | 'addMessagesIn' | 'addBytesIn' | 'addBytesOut' | 'addReplicaBytesServed' | 'addSocketBytesIn' | 'addSocketBytesOut' | 'addRequestTimes'
      | 'addFetchServeTimes' | 'requestSlow'
    >,
    private readonly log: Logger,
    private readonly settings: Pick<PlacedListenerInfo, 'fetchLimits' | 'slowRequestMs'>,
  ) {
    this.placedOn = ports.map(() => 0);
    this.served = ports.map(() => 0);
    this.forwarded = ports.map(() => 0);
    ports.forEach((port, shard) => {
      port.on('message', (m: PlacementToMain) => this.onMessage(shard, m));
      // Placed connections keep the broker up through its listeners, not through these ports.
      port.unref();
    });
  }

  /** Tells every shard about a listener whose connections it will be handed (before any of them). */
  addListener(info: Omit<PlacedListenerInfo, 'fetchLimits' | 'slowRequestMs'>): void {
    const listener: PlacedListenerInfo = { ...info, ...this.settings };
    for (const port of this.ports) port.postMessage({ kind: 'listener', listener } satisfies PlacementToShard);
  }

  /** Connections placed on each shard now. */
  get perShard(): readonly number[] {
    return this.placedOn;
  }

  /**
   * Resolves once every shard reported what it served until now (a metrics scrape awaits it, with
   * a deadline: a shard that died never answers). Each shard answers on the same port its
   * earlier reports came by, so they are all counted by then.
   */
  trafficReported(): Promise<void> {
    const asked = this.nextAsk++;
    // A shard that died never answers: the oldest waits are let go rather than kept forever.
    for (const [old, ask] of this.reportsAsked) {
      if (this.reportsAsked.size < MAX_REPORTS_ASKED) break;
      ask.done();
      this.reportsAsked.delete(old);
    }
    const reported = new Promise<void>((done) => {
      this.reportsAsked.set(asked, { remaining: this.ports.length, done });
      for (const port of this.ports) port.postMessage({ kind: 'reportTraffic', asked } satisfies PlacementToShard);
    });
    return reported.finally(() => this.reportsAsked.delete(asked));
  }

  get requests(): PlacedRequests {
    return { served: [...this.served], forwarded: [...this.forwarded] };
  }

  /** From now on the shards serve what their snapshot covers; until then they forward everything. */
  serveFrom(source: SnapshotSource): void {
    this.source = source;
    this.changed();
  }

  /** Something a snapshot holds may have changed: answers from now on fence the shards' serving until they have the next one. */
  changed(): void {
    if (this.source === null || this.dirty) return;
    this.dirty = true;
    this.revision++;
    // A burst of changes (an image published, then partitions opened) makes one snapshot.
    setImmediate(() => this.postSnapshots());
  }

  private postSnapshots(): void {
    const source = this.source!;
    this.dirty = false;
    const { view, table } = source;
    const partitions: SnapshotPartition[] = [];
    for (const topic of view.topics()) {
      for (let partition = 0; partition < topic.partitions; partition++) {
        const handle = table.handleOf(topic.name, partition);
        const record = handle < 0 ? undefined : view.partition(topic.name, partition);
        if (record === undefined || record.leader !== view.localId) continue;
        const shard = table.shardOf(handle);
        if (shard >= 0) partitions.push({ topic, record, handle, shard, dir: source.partitionDir(topic.name, partition) });
      }
    }
    const snapshot: PlacementSnapshot = { revision: this.revision, localId: view.localId, open: source.open(), partitions, limits: source.limits };
    for (const port of this.ports) port.postMessage({ kind: 'snapshot', snapshot } satisfies PlacementToShard);
  }

  private onTraffic(shard: number, t: PlacedTraffic): void {
    if (t.asked !== undefined) {
      const ask = this.reportsAsked.get(t.asked);
      if (ask !== undefined && --ask.remaining === 0) ask.done();
    }
    this.served[shard]! += t.served;
    const m = this.metrics;
    m.addMessagesIn(t.messagesIn);
    m.addBytesIn(t.bytesIn);
    m.addBytesOut(t.bytesOut);
    m.addReplicaBytesServed(t.replicaBytesOut);
    m.addSocketBytesIn(t.socketBytesIn);
    m.addSocketBytesOut(t.socketBytesOut);
    m.requestMemoryWaited(t.requestMemoryWaits);
    for (const [api, times] of t.requests) m.addRequestTimes(api, times);
    for (const [kind, times] of t.fetchServes) m.addFetchServeTimes(kind, times);
    for (const api of t.slowRequests) m.requestSlow(api);
  }

  /**
   * Hands an accepted, paused socket to the shard with the fewest placed connections and destroys
   * main's handle; null (the socket untouched) when its fd cannot be had or duplicated.
   */
  place(socket: Socket, listener: string, how: PlacedServices): PlacedConnection | null {
    const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    let copy: number;
    try {
      if (typeof fd !== 'number' || fd < 0) throw new Error('the accepted socket has no file descriptor');
      copy = this.dupFd(fd);
    } catch (err) {
      if (!this.warned) this.log.warn({ err }, 'a connection could not be handed to a shard: served on main');
      this.warned = true;
      return null;
    }
    let shard = 0;
    for (let i = 1; i < this.placedOn.length; i++) if (this.placedOn[i]! < this.placedOn[shard]!) shard = i;
    const id = this.nextId++;
    const port = this.ports[shard]!;
    const record = new PlacedConnection(id, shard, port, socket.remoteAddress ?? '', how.services, this.log, how.gate, (c) => {
      this.records.delete(c.id);
      this.placedOn[c.shard]!--;
      how.onClose(c);
    }, () => this.revision);
    socket.destroy();
    this.records.set(id, record);
    this.placedOn[shard]!++;
    port.postMessage({ kind: 'adopt', id, fd: copy, listener } satisfies PlacementToShard);
    return record;
  }

  /** A shard died: its connections died with it. */
  failShard(shard: number): void {
    for (const r of [...this.records.values()]) if (r.shard === shard) r.closedOnShard();
  }

  private onMessage(shard: number, m: PlacementToMain): void {
    switch (m.kind) {
      case 'request':
        this.forwarded[shard]!++;
        this.records.get(m.id)?.receive(m.seq, m.frame, m.responseBytes);
        return;
      case 'traffic':
        return this.onTraffic(shard, m.traffic);
      case 'protocolError':
        this.metrics.protocolError(m.error);
        return;
      case 'closed':
        this.records.get(m.id)?.closedOnShard();
        return;
    }
  }
}
