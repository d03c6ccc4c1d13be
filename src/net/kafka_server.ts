// The Kafka protocol listener: accepts sockets up to maxConnections and while the descriptor
// budget has room for them (the admin listener's descriptors are reserved apart, so clients never
// starve it), owns the set of live connections and the global budget of buffered request bytes,
// and drains them on shutdown.
// With a native sender every connection's responses go through the addon (falling back to the
// socket per connection when its fd is unusable).
// With `admission` (the client listener) each connection is decided by its first request: a
// replica Fetch from a registered broker at its current epoch (how this broker's peers' fetchers
// open every connection) is admitted outside the per-IP bounds, so a client storm from the same
// IP cannot starve replication; any other goes through ConnectionQuotas (per-IP cap, creation
// rate: delayed or refused). Refusals are counted by reason and logged at most once per interval.
// With `security` the listener speaks TLS (node:tls; responses then go through the TLS socket,
// never the native sender, which would bypass encryption) and/or SASL (each connection gets a
// SaslSession); a client that fails the TLS handshake (a plaintext client on a TLS port, a
// missing or untrusted client certificate under mTLS) is dropped before any request is read.
// reloadTls() swaps the certificate for new connections; open ones keep theirs.
// With `placement` (--connection-placement shards, a plaintext listener without SASL) each
// accepted connection, paused, is handed to a shard (connection_placement.ts) once the accept-time
// bounds (connection count, descriptors) admit it; main keeps a record of it, counted here until
// the shard reports it closed, and serves the requests the shard forwards. A socket that cannot
// be handed over is served here.
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { CONNECTION_FDS, type DescriptorBudget } from '../common/descriptor_budget.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { FetchApi, type FetchRequest } from '../protocol/apis/fetch.js';
import { Connection, HeldBytes, type ConnectionLimits, type ConnectionServices, type FirstRequestGate } from './connection.js';
import type { Admission, ConnectionQuotas } from './connection_quotas.js';
import type { NativeSender } from './native_sender.js';
import type { ConnectionPlacement, PlacedConnection } from './connection_placement.js';
import { subjectPrincipal, type TlsMaterial } from './listener_security.js';
import type { SaslAuthenticator } from './sasl_session.js';

export interface KafkaServerOptions extends ConnectionLimits {
  host: string;
  port: number;
  maxConnections: number;
  maxPartialRequestBytes: number;
}

/** At most one log line per this interval about connections refused, per reason. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** Reasons a connection is refused: descriptors plus ConnectionQuotas' three. */
const REFUSAL_KINDS = 4;

/** The client listener's per-IP bounds and how it recognises another broker's replica fetcher. */
export interface ListenerAdmission {
  readonly quotas: ConnectionQuotas;
  /** Whether `id` is a registered broker whose current epoch is `epoch`. */
  isBroker(id: number, epoch: number): boolean;
  readonly now: () => number;
  readonly metrics: Pick<BrokerMetrics, 'connectionThrottled' | 'brokerConnectionAdmitted'>;
}

/** How a client listener authenticates: TLS (null: plaintext) and SASL (null: none). */
export interface ListenerSecurity {
  /** The listener's name, for logs. */
  readonly name: string;
  readonly tls: TlsMaterial | null;
  readonly sasl: SaslAuthenticator | null;
}

export class KafkaServer {
  private readonly connections = new Set<Connection>();
  /** Connections handed to shards, until each shard reports its close. */
  private readonly placed = new Set<PlacedConnection>();
  private readonly held: HeldBytes;
  private server: Server | TlsServer | null = null;
  /** One kind of line per refusal reason. */
  private readonly refusals = new RepeatLimiter(REFUSAL_LOG_INTERVAL_MS, () => performance.now(), REFUSAL_KINDS);

  constructor(
    private readonly services: ConnectionServices & { readonly metrics: Pick<BrokerMetrics, 'connectionOpened' | 'connectionClosed' | 'connectionRejected' | 'requestMemoryWaited'> },
    private readonly opts: KafkaServerOptions,
    private readonly log: Logger,
    private readonly descriptors: DescriptorBudget,
    private readonly native: NativeSender | null = null,
    private readonly admission: ListenerAdmission | null = null,
    private readonly security: ListenerSecurity | null = null,
    private readonly placement: ConnectionPlacement | null = null,
  ) {
    this.held = new HeldBytes(opts.maxPartialRequestBytes, () => services.metrics.requestMemoryWaited(1));
  }

  get connectionCount(): number {
    return this.connections.size + this.placed.size;
  }

  private get name(): string {
    return this.security?.name ?? 'PLAINTEXT';
  }

  async listen(): Promise<number> {
    const tls = this.security?.tls ?? null;
    const placement = this.placement;
    if (placement !== null) {
      placement.addListener({
        name: this.name,
        limits: { maxRequestBytes: this.opts.maxRequestBytes, maxInflight: this.opts.maxInflight, idleTimeoutMs: this.opts.idleTimeoutMs, maxQueuedResponseBytes: this.opts.maxQueuedResponseBytes },
        apis: [...this.services.handlers.values()].map((h) => [h.api.key, h.barrier] as const),
        maxPartialRequestBytes: Math.max(1, Math.floor(this.opts.maxPartialRequestBytes / placement.perShard.length)),
      });
    }
    // A connection to place is accepted paused: main never reads its bytes, the shard does.
    const server = tls === null
      ? createServer({ noDelay: true, pauseOnConnect: placement !== null }, (socket) => this.accept(socket))
      : createTlsServer({ ...tls.context, noDelay: true, requestCert: tls.requestCert, rejectUnauthorized: tls.requireCert }, (socket) => this.acceptTls(socket, tls));
    server.maxConnections = this.opts.maxConnections;
    server.on('drop', () => this.services.metrics.connectionRejected('max-connections'));
    // Failed TLS handshakes (plaintext clients, bad certificates) are counted; node has already dropped the socket.
    if (tls !== null) server.on('tlsClientError', () => this.services.metrics.connectionRejected('tls-handshake'));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : this.opts.port;
  }

  /** New connections get certificates read again from their files; false (and the old ones kept) when that failed. */
  reloadTls(): boolean {
    const tls = this.security?.tls ?? null;
    const server = this.server;
    if (tls === null || server === null || !('setSecureContext' in server)) return true;
    try {
      server.setSecureContext(tls.reload());
      return true;
    } catch (err) {
      this.log.error({ err, listener: this.security?.name }, 'TLS certificate reload failed; the listener keeps its previous certificate');
      return false;
    }
  }

  /** A TLS client past its handshake: one that sent a certificate must have sent a valid one (ssl-client-auth requested). */
  private acceptTls(socket: TLSSocket, tls: TlsMaterial): void {
    if (tls.requestCert) {
      const cert = socket.getPeerCertificate();
      const presented = Object.keys(cert).length > 0;
      if (presented && !socket.authorized) {
        this.services.metrics.connectionRejected('tls-client-certificate');
        socket.destroy();
        return;
      }
      if (presented) this.log.debug({ listener: this.security?.name, remote: socket.remoteAddress, principal: subjectPrincipal(cert) }, 'TLS client certificate accepted');
    }
    this.accept(socket);
  }

  private accept(socket: Socket): void {
    // Node counts only the sockets main still holds toward server.maxConnections.
    if (this.placement !== null && this.connectionCount >= this.opts.maxConnections) {
      socket.destroy();
      this.services.metrics.connectionRejected('max-connections');
      return;
    }
    if (!this.descriptors.tryAcquire('connections', CONNECTION_FDS)) {
      socket.destroy();
      this.refused();
      return;
    }
    const ip = socket.remoteAddress ?? '';
    let counted = false;
    const gate: FirstRequestGate | null = this.admission === null ? null : (apiKey, version, req) => {
      const verdict = this.admitFirst(ip, apiKey, version, req);
      counted = verdict.kind === 'admit' && !verdict.broker;
      return verdict;
    };
    const released = (): void => {
      if (counted) this.admission!.quotas.release(ip, this.admission!.now());
      this.descriptors.release('connections', CONNECTION_FDS);
      this.services.metrics.connectionClosed();
    };
    if (this.placement !== null) {
      const placed = this.placement.place(socket, this.name, {
        services: this.services,
        gate,
        onClose: (p) => {
          if (this.placed.delete(p)) released();
        },
      });
      if (placed !== null) {
        this.placed.add(placed);
        this.services.metrics.connectionOpened();
        return;
      }
    }
    const conn = new Connection(socket, this.services, this.opts, this.held, this.log, (c) => {
      if (this.connections.delete(c)) released();
    }, this.security?.tls != null ? null : this.native, gate, this.security?.sasl ?? null);
    this.connections.add(conn);
    this.services.metrics.connectionOpened();
    // Accepted paused for a handoff that did not happen.
    if (this.placement !== null) socket.resume();
  }

  /** A replica fetcher of a registered broker passes; any other first request meets the per-IP bounds. */
  private admitFirst(ip: string, apiKey: number, version: number, req: unknown): Admission & { readonly broker?: boolean } {
    const admission = this.admission!;
    if (apiKey === FetchApi.key && version >= 15) {
      const replica = (req as FetchRequest).replicaState;
      if (replica.replicaId >= 0 && admission.isBroker(replica.replicaId, replica.replicaEpoch)) {
        admission.metrics.brokerConnectionAdmitted();
        return { kind: 'admit', delayMs: 0, broker: true };
      }
    }
    const verdict = admission.quotas.admit(ip, admission.now());
    if (verdict.kind === 'refuse') this.quotaRefused(ip, verdict.reason);
    else if (verdict.delayMs > 0) admission.metrics.connectionThrottled(verdict.delayMs / 1000);
    return verdict;
  }

  private quotaRefused(ip: string, reason: string): void {
    this.services.metrics.connectionRejected(reason);
    const verdict = this.refusals.offer(reason);
    if (!verdict.log) return;
    const quotas = this.admission!.quotas;
    this.log.warn(
      { reason, refused: verdict.suppressed + 1, ip, openFromIp: quotas.openFrom(ip), capForIp: quotas.capOf(ip), trackedIps: quotas.trackedIps },
      'client connections refused by the per-IP bounds (max.connections.per.ip, max.connection.creation.rate)',
    );
  }

  private refused(): void {
    this.services.metrics.connectionRejected('descriptors');
    const verdict = this.refusals.offer('descriptors');
    if (!verdict.log) return;
    const d = this.descriptors;
    this.log.warn(
      { refused: verdict.suppressed + 1, connections: this.connections.size, limit: d.limit, reserved: d.reserved, partitionFds: d.holding('partitions') },
      'connections refused: the file descriptor budget is exhausted (raise ulimit -n or lower --max-connections)',
    );
  }

  /** Stops accepting, then lets every connection finish its in-flight requests. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([...[...this.connections].map((c) => c.drain()), ...[...this.placed].map((p) => p.drain())]);
    await closed;
  }
}
