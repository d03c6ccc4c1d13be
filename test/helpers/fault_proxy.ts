// Test helper: a fault-injecting TCP proxy on 127.0.0.1 in front of one broker's Kafka listener,
// for the replication fault suite's slow-follower row. Runs on the test's main thread. A broker
// started with --advertised-kafka-addr of the proxy is reached through it by clients and by the
// other brokers' replica fetchers alike; the proxy forwards bytes unchanged both ways, reads the
// request frames to find the Fetch requests of one chosen replica (replica_id before Fetch v15,
// the ReplicaState tagged field from v15), and holds the responses to those for a delay and/or a
// throughput cap. Responses leave in the order they came (Kafka answers a connection in request
// order), so one held answer holds those behind it on its connection.
// Bounds: connections, tracked Fetch correlation ids per connection, the largest frame it reads,
// and the response bytes held per connection (past it the proxy stops reading from the broker);
// close() destroys every connection and clears every timer.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { FetchApi } from '../../src/protocol/apis/fetch.js';
import { FrameReader } from '../../src/protocol/framing.js';
import { readRequestHeader } from '../../src/protocol/header.js';
import { Reader } from '../../src/protocol/reader.js';

const HOST = '127.0.0.1';
const FETCH_KEY = FetchApi.key;
/** The first Fetch version whose replica id travels in the tagged ReplicaState (KIP-903). */
const REPLICA_STATE_VERSION = 15;

export interface FaultProxyOptions {
  /** The port to listen on; default 0 (a free one). */
  readonly port?: number;
  readonly maxConnections?: number;
  /** Largest request or response frame read; a larger one closes its connection. */
  readonly maxFrameBytes?: number;
  /** Response bytes held per connection before the proxy stops reading from the broker. */
  readonly maxHeldBytes?: number;
}

/** Whose Fetch answers to hold, and how. */
export interface SlowReplica {
  readonly replicaId: number;
  /** Each answer leaves no sooner than this after it arrived from the broker. */
  readonly delayMs: number;
  /** Throughput cap on those answers (bytes per second); unset: none. */
  readonly bytesPerSecond?: number;
}

interface Held {
  readonly frame: Buffer;
  /** performance.now() at which it may leave; 0: as soon as everything before it has. */
  releaseAt: number;
}

/** Bound on Fetch requests awaiting an answer on one connection (a replica fetcher has one). */
const MAX_TRACKED_FETCHES = 1024;

/** One client connection and its connection to the broker. */
class ProxiedConnection {
  /** Correlation ids of Fetch requests, with the replica id each came from. */
  private readonly fetches = new Map<number, number>();
  private readonly held: Held[] = [];
  private heldBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** When the throughput cap lets the next slowed answer go. */
  private capFreeAt = 0;
  private downBlocked = false;
  /** The broker ended its side: the client's ends once everything held has left. */
  private upEnded = false;
  private closed = false;

  constructor(
    private readonly down: Socket,
    private readonly up: Socket,
    private readonly proxy: FaultProxy,
    maxFrameBytes: number,
    private readonly maxHeldBytes: number,
  ) {
    const requests = new FrameReader(maxFrameBytes);
    const responses = new FrameReader(maxFrameBytes);
    down.on('data', (data: Buffer) => {
      try {
        requests.push(data, (frame) => this.noteRequest(frame));
      } catch {
        this.destroy();
        return;
      }
      if (!up.write(data)) {
        down.pause();
        up.once('drain', () => down.resume());
      }
    });
    up.on('data', (data: Buffer) => {
      try {
        responses.push(data, (frame) => this.answer(frame));
      } catch {
        this.destroy();
      }
    });
    down.on('drain', () => {
      this.downBlocked = false;
      this.flow();
    });
    // A half-close is passed on; anything else ends both sides.
    down.on('end', () => up.end());
    up.on('end', () => {
      this.upEnded = true;
      this.pump();
    });
    for (const s of [down, up]) {
      s.on('error', () => this.destroy());
      s.on('close', () => this.destroy());
    }
  }

  /** Re-times what is held after the proxy's slowness changed. */
  retime(): void {
    this.capFreeAt = 0;
    for (const h of this.held) if (h.releaseAt !== 0) h.releaseAt = this.releaseTime(h.frame.length);
    this.pump();
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.held.length = 0;
    this.heldBytes = 0;
    this.down.destroy();
    this.up.destroy();
    this.proxy.forget(this);
  }

  private noteRequest(frame: Buffer): void {
    if (frame.length < 8 || frame.readInt16BE(0) !== FETCH_KEY) return;
    const r = new Reader(frame);
    const header = readRequestHeader(r, (_key, version) => FetchApi.isFlexible(version));
    const request = FetchApi.decodeRequest(header.apiVersion, r);
    const replicaId = header.apiVersion >= REPLICA_STATE_VERSION ? request.replicaState.replicaId : request.replicaId;
    if (this.fetches.size >= MAX_TRACKED_FETCHES) throw new RangeError(`more than ${MAX_TRACKED_FETCHES} Fetch requests unanswered on one connection`);
    this.fetches.set(header.correlationId, replicaId);
  }

  private answer(frame: Buffer): void {
    const correlationId = frame.length >= 4 ? frame.readInt32BE(0) : -1;
    const replicaId = this.fetches.get(correlationId);
    this.fetches.delete(correlationId);
    const slow = this.proxy.slowness;
    const slowed = slow !== null && replicaId === slow.replicaId;
    if (slowed) this.proxy.slowedAnswers++;
    if (!slowed && this.held.length === 0) {
      this.send(frame);
      return;
    }
    this.held.push({ frame, releaseAt: slowed ? this.releaseTime(frame.length) : 0 });
    this.heldBytes += frame.length;
    this.pump();
  }

  /** When a slowed answer of `bytes` may leave: after the delay, and after the cap let earlier ones go. */
  private releaseTime(bytes: number): number {
    const slow = this.proxy.slowness;
    if (slow === null) return 0;
    const now = performance.now();
    let at = now + slow.delayMs;
    if (slow.bytesPerSecond !== undefined) {
      at = Math.max(at, this.capFreeAt);
      this.capFreeAt = at + (bytes * 1000) / slow.bytesPerSecond;
    }
    return at;
  }

  private pump(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const now = performance.now();
    for (let head = this.held[0]; head !== undefined && head.releaseAt <= now; head = this.held[0]) {
      this.held.shift();
      this.heldBytes -= head.frame.length;
      this.send(head.frame);
    }
    const next = this.held[0];
    if (next !== undefined) this.timer = setTimeout(() => this.pump(), Math.max(1, next.releaseAt - now));
    else if (this.upEnded) this.down.end();
    this.flow();
  }

  private send(frame: Buffer): void {
    const size = Buffer.allocUnsafe(4);
    size.writeInt32BE(frame.length, 0);
    this.down.write(size);
    if (!this.down.write(frame)) this.downBlocked = true;
    this.flow();
  }

  /** Reads from the broker only while the client keeps up and the held answers are within bound. */
  private flow(): void {
    if (this.downBlocked || this.heldBytes > this.maxHeldBytes) this.up.pause();
    else this.up.resume();
  }
}

export class FaultProxy {
  /** The slowness in force; null: every answer passes at once. */
  slowness: SlowReplica | null = null;
  /** Answers held under a slowness so far (a row can check its fault really happened). */
  slowedAnswers = 0;
  /** Client connections accepted so far. */
  accepted = 0;
  private readonly connections = new Set<ProxiedConnection>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** A proxy on a free loopback port forwarding to `targetPort` (which need not be listening yet). */
  static async start(targetPort: number, opts: FaultProxyOptions = {}): Promise<FaultProxy> {
    const maxConnections = opts.maxConnections ?? 256;
    const maxFrameBytes = opts.maxFrameBytes ?? 128 << 20;
    const maxHeldBytes = opts.maxHeldBytes ?? 64 << 20;
    let proxy: FaultProxy | null = null;
    const server = createServer((down) => {
      if (proxy === null || proxy.connections.size >= maxConnections) {
        down.destroy();
        return;
      }
      proxy.accepted++;
      down.setNoDelay(true);
      const up = connect({ host: HOST, port: targetPort });
      up.setNoDelay(true);
      proxy.connections.add(new ProxiedConnection(down, up, proxy, maxFrameBytes, maxHeldBytes));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, HOST, () => resolve());
    });
    const address = server.address();
    proxy = new FaultProxy(server, typeof address === 'object' && address !== null ? address.port : 0);
    return proxy;
  }

  get address(): string {
    return `${HOST}:${this.port}`;
  }

  /** Holds `slow.replicaId`'s Fetch answers from now on; null lifts it, releasing what is held at once. */
  slow(slow: SlowReplica | null): void {
    this.slowness = slow;
    for (const c of this.connections) c.retime();
  }

  /** Called by a connection once both its sockets are destroyed. */
  forget(c: ProxiedConnection): void {
    this.connections.delete(c);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.destroy();
    await closed;
  }
}
