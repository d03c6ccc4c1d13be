// Admin HTTP endpoint (main thread): GET /v1/health, GET /metrics (Prometheus), GET /v1/actors,
// GET /v1/quorum (the metadata quorum as this node sees it; 404 on a node without one), the
// reports of admin_reports.ts (/v1/cluster, /v1/topics, /v1/groups, /v1/reassignments),
// GET /v1/traffic (cumulative bytes, records and latency buckets), this broker's own figures and
// the whole cluster's gathered from every broker (cluster_overview.ts: /v1/broker,
// /v1/cluster/overview, /v1/cluster/topics) and the web console: its static
// files (console/ in the package, uPlot from node_modules, or both from the single executable's
// assets) at / and /console/*.
// Read-only and small by design: plain node:http, bounded connections, bounded time per request,
// no request bodies read, a fixed table of paths (nothing read from disk by a client's name).
// Shard figures are pulled per scrape with a deadline, so a stuck shard makes /metrics report
// main-thread figures instead of hanging the scraper.
// Optionally HTTPS (--admin-ssl-cert-file/--admin-ssl-key-file) and guarded by a bearer token
// (--admin-token-file): every data path then answers 401 without `Authorization: Bearer TOKEN`;
// /v1/health still answers a bare status to anyone (liveness probes carry no token), and the
// console's static files are served to anyone (they hold no broker data; the page asks for the
// token and sends it on its own requests). Both are read again by reload() (SIGHUP).

import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../common/logger.js';
import type { ShardSnapshot } from '../actors/shard_snapshot.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import type { AdminReports } from './admin_reports.js';
import type { ClusterFanout } from './cluster_overview.js';
import type { BearerToken, TlsMaterial } from './listener_security.js';
import { CONSOLE_FILES, consoleAssetKey, type ConsoleFile } from './console_files.js';
import { embeddedText, runsEmbedded } from '../native/embedded.js';

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
  /** Cluster, topic, reassignment and group reports; absent, those paths answer 404. */
  reports?: Pick<AdminReports, 'cluster' | 'topics' | 'groups' | 'reassignments'>;
  /** This broker's own figures and the whole cluster's (cluster_overview.ts); absent, those paths answer 404. */
  fanout?: Pick<ClusterFanout, 'own' | 'overview' | 'topics'>;
  /** Certificate and key for HTTPS; null serves plain HTTP. */
  tls?: TlsMaterial | null;
  /** The token requests must carry; null asks none. */
  token?: BearerToken | null;
  /** Where the console's static files are; defaults to console/ of this package. */
  consoleDir?: string;
  /** Defaults: 64 connections, 10 s per request, 5 s for shard snapshots / actor listings. */
  maxConnections?: number;
  requestTimeoutMs?: number;
  collectTimeoutMs?: number;
}

export interface AdminServer {
  readonly port: number;
  /** Reads the TLS files and the token again; what fails to load is kept as it was, and logged. */
  reload(): void;
  close(): Promise<void>;
}

/** `authorized` says whether the request carried the token (always true when none is set). */
type Handler = (res: ServerResponse, authorized: boolean) => Promise<void>;

/**
 * The console may run only its own scripts (whatever a broker string holds can never become
 * code), is never framed, and its files are served with their declared types.
 */
const CONSOLE_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** This package's console/ folder (the compiled file sits at dist/src/net/). */
function defaultConsoleDir(): string {
  return fileURLToPath(new URL('../../../console/', import.meta.url));
}

/**
 * The console's files read once at start: from the single executable's assets when this process
 * is one, else from console/ and node_modules. A file missing from the installation answers 404
 * saying so, and the broker starts all the same.
 */
function consoleRoutes(dir: string): [string, Handler][] {
  const require = createRequire(import.meta.url);
  const read = (f: ConsoleFile): Buffer | null => {
    try {
      // getAsset throws for a key the executable does not carry.
      if (runsEmbedded()) return Buffer.from(embeddedText(consoleAssetKey(f)) ?? '', 'utf8');
      return readFileSync('console' in f.from ? `${dir}/${f.from.console}` : require.resolve(f.from.module));
    } catch {
      return null;
    }
  };
  const files = CONSOLE_FILES.map((f) => ({ path: f.path, type: f.type, body: read(f), what: consoleAssetKey(f) }));
  return files.map(({ path, type, body, what }): [string, Handler] => [path, async (res) => {
    if (body === null) return sendJson(res, 404, { error: `the console's ${what} is missing from this installation` });
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache', ...CONSOLE_HEADERS });
    res.end(body);
  }]);
}

/** Paths anyone may read with a token set: the health status (its details only with the token) and the console's files. */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/v1/health', ...CONSOLE_FILES.map((f) => f.path)]);

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

/** A JSON report from `source` (404 when the server has none), bounded by the collect deadline. */
function reportRoute<S>(source: S | undefined, what: string, make: (s: S) => unknown, collectMs: number): Handler {
  return async (res) => {
    if (source === undefined) return sendJson(res, 404, { error: `this server does not report ${what}` });
    sendJson(res, 200, await withDeadline(Promise.resolve(make(source)), collectMs, what));
  };
}

function reportRoutes(opts: AdminServerOptions, collectMs: number): [string, Handler][] {
  const { reports, fanout } = opts;
  return [
    ['/v1/cluster', reportRoute(reports, 'the cluster', (r) => r.cluster(), collectMs)],
    ['/v1/topics', reportRoute(reports, 'topics', (r) => r.topics(), collectMs)],
    ['/v1/groups', reportRoute(reports, 'groups', (r) => r.groups(), collectMs)],
    ['/v1/reassignments', reportRoute(reports, 'reassignments', (r) => r.reassignments(), collectMs)],
    ['/v1/broker', reportRoute(fanout, "this broker's figures", (f) => f.own(), collectMs)],
    ['/v1/cluster/overview', reportRoute(fanout, "the cluster's overview", (f) => f.overview(), collectMs)],
    ['/v1/cluster/topics', reportRoute(fanout, "the cluster's topics", (f) => f.topics(), collectMs)],
  ];
}

function routes(opts: AdminServerOptions, collectMs: number): ReadonlyMap<string, Handler> {
  const { logger, metrics } = opts;
  return new Map<string, Handler>([
    ['/v1/health', async (res, authorized) => {
      const { status, failing, details } = opts.health();
      const code = status === 'ready' && failing.length === 0 ? 200 : 503;
      sendJson(res, code, authorized ? { ...details, status, ...(failing.length > 0 ? { failing } : {}) } : { status });
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
    ['/v1/traffic', async (res) => {
      sendJson(res, 200, { atMs: Date.now(), ...await metrics.traffic() });
    }],
    ...reportRoutes(opts, collectMs),
    ...consoleRoutes(opts.consoleDir ?? defaultConsoleDir()),
  ]);
}

function dispatch(table: ReadonlyMap<string, Handler>, token: BearerToken | null, logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
  const handler = table.get(path);
  if (handler === undefined) return sendJson(res, 404, { error: 'not found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendJson(res, 405, { error: 'method not allowed' });
  }
  const authorized = token === null || token.admits(req.headers.authorization);
  if (!authorized && !PUBLIC_PATHS.has(path)) {
    res.setHeader('www-authenticate', 'Bearer realm="sluice-admin"');
    return sendJson(res, 401, { error: 'this admin endpoint needs Authorization: Bearer <token> (the broker\'s --admin-token-file)' });
  }
  handler(res, authorized).catch((err: unknown) => {
    logger.error({ err, path }, 'admin request failed');
    if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
    else res.destroy();
  });
}

export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const table = routes(opts, opts.collectTimeoutMs ?? 5000);
  const tls = opts.tls ?? null;
  const token = opts.token ?? null;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // Nothing reads bodies; discard any so the connection can be reused.
    req.resume();
    dispatch(table, token, opts.logger, req, res);
  };
  const server = tls === null ? createHttpServer(onRequest) : createHttpsServer({ ...tls.context }, onRequest);
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
  opts.logger.info({ host: opts.host, port, https: tls !== null, token: token !== null }, 'admin HTTP listening');
  return {
    port,
    reload() {
      if (tls !== null && 'setSecureContext' in server) {
        try {
          server.setSecureContext(tls.reload());
        } catch (err) {
          opts.logger.error({ err }, 'admin HTTP certificate reload failed; it keeps its previous certificate');
        }
      }
      try {
        token?.reload();
      } catch (err) {
        opts.logger.error({ err }, 'admin token file reload failed; the previous token stays in force');
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
