// The request log of the Kafka listeners (main thread; each shard keeps one for the connections
// placed on it, placed_connections.ts, its slow counts posted to main): one `debug` line per request answered
// (client id, API and version, request bytes, latency) and a `warn` line for a request served
// slower than --slow-request-ms. Serving time leaves out the time a request waited by design
// (a long-poll fetch parked for min_bytes), so idle consumers are never reported as slow.
// Cost when debug is off: the level is read once, at construction, so a request pays one
// boolean test and one comparison; nothing is formatted or allocated. Slow-request lines are limited to one
// per API per second (RepeatLimiter; the next line says how many were left out), so an overload
// that makes every request slow does not also flood the log; every one is still counted in
// sluice_slow_requests_total.
import type { Logger } from '../common/logger.js';
import type { RequestHeader } from '../protocol/header.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import type { BrokerMetrics } from '../metrics/metrics.js';

/** At most one slow-request line per API per this interval. */
const SLOW_LOG_INTERVAL_MS = 1000;
/** APIs tracked by the limiter; the broker has fewer. */
const MAX_LOGGED_APIS = 128;

export class RequestLog {
  private readonly debug: boolean;
  private readonly limiter: RepeatLimiter;

  constructor(
    private readonly log: Logger,
    private readonly slowMs: number,
    private readonly metrics: Pick<BrokerMetrics, 'requestSlow'>,
    now: () => number = () => performance.now(),
  ) {
    this.debug = log.isLevelEnabled('debug');
    this.limiter = new RepeatLimiter(SLOW_LOG_INTERVAL_MS, now, MAX_LOGGED_APIS);
  }

  /**
   * A request was answered `ms` after it was decoded, `parkedMs` of which it waited by design (a
   * long-poll fetch parked for data). `requestBytes`: its frame, without the length prefix.
   * Positional, so that a request costs no allocation when nothing is logged.
   */
  served(header: RequestHeader, api: string, version: number, requestBytes: number, ms: number, parkedMs: number): void {
    const servingMs = ms - parkedMs;
    if (this.debug) {
      this.log.debug(
        { clientId: header.clientId, api, version, correlationId: header.correlationId, requestBytes, ms: round(ms), servingMs: round(servingMs) },
        'request',
      );
    }
    if (servingMs < this.slowMs) return;
    this.metrics.requestSlow(api);
    const verdict = this.limiter.offer(api);
    if (!verdict.log) return;
    this.log.warn(
      { clientId: header.clientId, api, version, requestBytes, ms: round(ms), servingMs: round(servingMs), thresholdMs: this.slowMs, suppressed: verdict.suppressed },
      'slow request',
    );
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
