// Admin HTTP endpoint (main thread): GET /v1/health, GET /metrics (Prometheus), GET /v1/actors,
// GET /v1/quorum (the metadata quorum as this node sees it; 404 on a node without one).
// Read-only and small by design: plain node:http, bounded connections, bounded time per request,
// no request bodies read. Shard figures are pulled per scrape with a deadline, so a stuck shard
// makes /metrics report main-thread figures instead of hanging the scraper.

import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../common/logger.js';
import type { ShardSnapshot } from '../actors/shard_snapshot.js';
import type { BrokerMetrics } from '../metrics/metrics.js';

export type HealthStatus = 'starting' | 'ready' | 'draining';

/** Default bound on admin HTTP connections; the descriptor budget reserves that many. */
export const MAX_ADMIN_CONNECTIONS = 64;

export interface AdminServerOptions {
  host: string;
  port: number;
  logger: Logger;
  metrics: BrokerMetrics;
  /** HTTP 200 only when `status` is ready and nothing is `failing` (e.g. the metadata quorum is lost). */
  health(): { status: HealthStatus; failing: readonly string[]; details: Record<string, unknown> };
  actors(): Promise<unknown>;
  snapshots(): Promise<ShardSnapshot[]>;
  /** The metadata quorum's report; absent on a node that does not run the quorum. */
  quorum?: () => unknown;
  /** Defaults: 64 connections, 10 s per request, 5 s for shard snapshots / actor listings. */
  maxConnections?: number;
  requestTimeoutMs?: number;
  collectTimeoutMs?: number;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

type Handler = (res: ServerResponse) => Promise<void>;

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value, null, 2)}\n`);
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

function routes(opts: AdminServerOptions, collectMs: number): ReadonlyMap<string, Handler> {
  const { logger, metrics } = opts;
  return new Map<string, Handler>([
    ['/v1/health', async (res) => {
      const { status, failing, details } = opts.health();
      sendJson(res, status === 'ready' && failing.length === 0 ? 200 : 503, { ...details, status, ...(failing.length > 0 ? { failing } : {}) });
    }],
    ['/v1/quorum', async (res) => {
      if (opts.quorum === undefined) return sendJson(res, 404, { error: 'this node does not run the metadata quorum (no --controller-voters)' });
      sendJson(res, 200, opts.quorum());
    }],
    ['/metrics', async (res) => {
      try {
        metrics.applyShardSnapshots(await withDeadline(opts.snapshots(), collectMs, 'shard snapshots'));
      } catch (err) {
        // Serve what the main thread knows; shard figures keep their previous values.
        logger.warn({ err }, 'metrics scrape without fresh shard snapshots');
      }
      send(res, 200, metrics.contentType, await metrics.metricsText());
    }],
    ['/v1/actors', async (res) => {
      sendJson(res, 200, await withDeadline(opts.actors(), collectMs, 'actor listing'));
    }],
  ]);
}

function dispatch(table: ReadonlyMap<string, Handler>, logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
  const handler = table.get(path);
  if (handler === undefined) return sendJson(res, 404, { error: 'not found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendJson(res, 405, { error: 'method not allowed' });
  }
  handler(res).catch((err: unknown) => {
    logger.error({ err, path }, 'admin request failed');
    if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
    else res.destroy();
  });
}

export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const table = routes(opts, opts.collectTimeoutMs ?? 5000);
  const server = createServer((req, res) => {
    // Nothing reads bodies; discard any so the connection can be reused.
    req.resume();
    dispatch(table, opts.logger, req, res);
  });
  server.maxConnections = opts.maxConnections ?? MAX_ADMIN_CONNECTIONS;
  server.requestTimeout = opts.requestTimeoutMs ?? 10_000;
  server.headersTimeout = Math.min(server.requestTimeout, 10_000);
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 64;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => opts.logger.error({ err }, 'admin server error'));
  const port = (server.address() as AddressInfo).port;
  opts.logger.info({ host: opts.host, port }, 'admin HTTP listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
