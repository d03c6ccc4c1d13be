// Shared by the Connection unit tests (test process, main thread): a server-side Connection on an
// accepted socket with the given handlers and default bounds, and a client socket connected to a
// test server listening on a free loopback port.
import { Socket, type Server } from 'node:net';
import { createLogger } from '../../src/common/logger.js';
import { Connection, HeldBytes } from '../../src/net/connection.js';
import type { BoundHandler } from '../../src/net/handler.js';

/** Serves `socket` with `handlers`: no metrics, no shards, 8 requests in flight, 4 MiB of queued answers. */
export function serveWith(socket: Socket, handlers: ReadonlyMap<number, BoundHandler>): Connection {
  const services = {
    handlers: new Map(handlers),
    metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} },
    releaseLeases: () => {},
    blockedShards: () => [],
  };
  const limits = { maxRequestBytes: 1 << 20, maxInflight: 8, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 1 << 22 };
  return new Connection(socket, services, limits, new HeldBytes(1 << 24), createLogger('silent'), () => {});
}

/** A client socket connected to `server`, which listens on 127.0.0.1 (made to, on a free port, if it does not yet). */
export async function connectTo(server: Server): Promise<Socket> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const client = new Socket();
  await new Promise<void>((resolve) => client.connect(port, '127.0.0.1', resolve));
  return client;
}
