// The Kafka protocol listener: accepts sockets up to maxConnections and while the descriptor
// budget has room for them (the admin listener's descriptors are reserved apart, so clients never
// starve it), owns the set of live connections and the global budget of buffered request bytes,
// and drains them on shutdown.
// With a native sender every connection's responses go through the addon (falling back to the
// socket per connection when its fd is unusable).
import { createServer, type Server } from 'node:net';
import type { Logger } from 'pino';
import { CONNECTION_FDS, type DescriptorBudget } from '../common/descriptor_budget.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { Connection, HeldBytes, type ConnectionLimits, type ConnectionServices } from './connection.js';
import type { NativeSender } from './native_sender.js';

export interface KafkaServerOptions extends ConnectionLimits {
  host: string;
  port: number;
  maxConnections: number;
  maxPartialRequestBytes: number;
}

/** At most one log line per this interval about connections refused for descriptors. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

export class KafkaServer {
  private readonly connections = new Set<Connection>();
  private readonly held: HeldBytes;
  private server: Server | null = null;
  /** One kind of line: connections refused for descriptors. */
  private readonly refusals = new RepeatLimiter(REFUSAL_LOG_INTERVAL_MS, () => performance.now(), 1);

  constructor(
    private readonly services: ConnectionServices & { readonly metrics: Pick<BrokerMetrics, 'connectionOpened' | 'connectionClosed' | 'connectionRejected'> },
    private readonly opts: KafkaServerOptions,
    private readonly log: Logger,
    private readonly descriptors: DescriptorBudget,
    private readonly native: NativeSender | null = null,
  ) {
    this.held = new HeldBytes(opts.maxPartialRequestBytes);
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  async listen(): Promise<number> {
    const server = createServer({ noDelay: true }, (socket) => {
      if (!this.descriptors.tryAcquire('connections', CONNECTION_FDS)) {
        socket.destroy();
        this.refused();
        return;
      }
      const conn = new Connection(socket, this.services, this.opts, this.held, this.log, (c) => {
        if (!this.connections.delete(c)) return;
        this.descriptors.release('connections', CONNECTION_FDS);
        this.services.metrics.connectionClosed();
      }, this.native);
      this.connections.add(conn);
      this.services.metrics.connectionOpened();
    });
    server.maxConnections = this.opts.maxConnections;
    server.on('drop', () => this.services.metrics.connectionRejected('max-connections'));
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
    await Promise.all([...this.connections].map((c) => c.drain()));
    await closed;
  }
}
