// The request log of the Kafka listeners (main thread): one `debug` line per request answered
// (client id, API and version, request bytes, latency) and a `warn` line for a request served
// slower than --slow-request-ms. Serving time leaves out the time a request waited by design
// (a long-poll fetch parked for min_bytes), so idle consumers are never reported as slow.
// Cost when debug is off: the level is read once, at construction, so a request pays one
// boolean test and one comparison; nothing is formatted. Slow-request lines are limited to one
// per API per second (RepeatLimiter; the next line says how many were left out), so an overload
// that makes every request slow does not also flood the log; every one is still counted in
// sluice_slow_requests_total.
import type { Logger } from '../common/logger.js';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import type { BrokerMetrics } from '../metrics/metrics.js';

/** At most one slow-request line per API per this interval. */
const SLOW_LOG_INTERVAL_MS = 1000;
/** APIs tracked by the limiter; the broker has fewer. */
const MAX_LOGGED_APIS = 128;

export interface ServedRequest {
  readonly clientId: string | null;
  readonly api: string;
  readonly version: number;
  readonly correlationId: number;
  /** Size of the request frame. */
  readonly requestBytes: number;
  /** From decoded to answered. */
  readonly ms: number;
  /** `ms` less the time it waited by design (a long-poll fetch parked for data). */
  readonly servingMs: number;
}

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

  served(r: ServedRequest): void {
    if (this.debug) {
      this.log.debug(
        { clientId: r.clientId, api: r.api, version: r.version, correlationId: r.correlationId, requestBytes: r.requestBytes, ms: round(r.ms), servingMs: round(r.servingMs) },
        'request',
      );
    }
    if (r.servingMs < this.slowMs) return;
    this.metrics.requestSlow(r.api);
    const verdict = this.limiter.offer(r.api);
    if (!verdict.log) return;
    this.log.warn(
      { clientId: r.clientId, api: r.api, version: r.version, requestBytes: r.requestBytes, ms: round(r.ms), servingMs: round(r.servingMs), thresholdMs: this.slowMs, suppressed: verdict.suppressed },
      'slow request',
    );
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
