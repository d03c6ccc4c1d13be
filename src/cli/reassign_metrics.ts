// The CLI-side sampler a reassignment driver feeds its executor from (`sluice reassign …`): every
// call scrapes each broker's admin /metrics (bounded time and size; a broker that does not answer
// is left out of that sample and counted) and turns the window since the previous call into the
// executor's MetricsSample (cluster_metrics.ts holds the arithmetic). CLI process.
import type { MetricsSample } from '../cluster/expansion/executor.js';
import type { BrokerStanding } from '../client/admin.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { sampleBetween, scrapeOf, type BrokerScrape, type Capacities } from './cluster_metrics.js';
import { parsePrometheusText } from './prometheus_text.js';

/** Bound on one broker's /metrics answer (a broker with 10k partitions and groups stays far below). */
export const MAX_METRICS_BYTES = 32 * 1024 * 1024;

export interface MetricsEndpoint {
  readonly id: number;
  /** The broker's /metrics URL. */
  readonly url: string;
}

export type FetchImpl = (url: string, init: { readonly signal: AbortSignal; readonly headers: Record<string, string> }) => Promise<Response>;

export interface ClusterMetricsSamplerOptions {
  /** The brokers to scrape, asked again at every sample (brokers join and leave during a reassignment). */
  readonly endpoints: () => Promise<readonly MetricsEndpoint[]>;
  readonly capacities: Capacities;
  readonly fetchImpl?: FetchImpl;
  /** The Authorization header for brokers whose admin HTTP asks a bearer token (--admin-token-file). */
  readonly authorization?: string;
  /** Bound on one broker's scrape, body included. */
  readonly timeoutMs: number;
  /** The clock the window is measured with (ms). */
  readonly now?: () => number;
}

/** The /metrics URL of every unfenced broker that registered an admin address (https for brokers with --admin-ssl-cert-file). */
export function metricsEndpoints(brokers: readonly BrokerStanding[], scheme: 'http' | 'https' = 'http'): MetricsEndpoint[] {
  return brokers
    .filter((b) => b.state !== 'fenced' && b.adminAddress !== null)
    .map((b) => ({ id: b.id, url: `${scheme}://${b.adminAddress}/metrics` }));
}

async function boundedText(res: Response, maxBytes: number): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel();
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `metrics answer passes ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class ClusterMetricsSampler {
  private previous: Map<number, BrokerScrape> | null = null;
  private lastUnanswered: readonly number[] = [];
  private unansweredTotal = 0;
  private readonly fetchImpl: FetchImpl;
  private readonly now: () => number;

  constructor(private readonly options: ClusterMetricsSamplerOptions) {
    this.fetchImpl = options.fetchImpl ?? ((url, init) => fetch(url, init));
    this.now = options.now ?? Date.now;
  }

  /** Brokers left out of the last sample because their scrape failed. */
  get unanswered(): readonly number[] {
    return this.lastUnanswered;
  }

  /** Failed scrapes since this sampler was made. */
  get failedScrapes(): number {
    return this.unansweredTotal;
  }

  /** Scrapes every broker and returns the sample of the window since the previous call (the first call only primes: zeros). */
  async sample(): Promise<MetricsSample> {
    const endpoints = await this.options.endpoints();
    const scraped = await Promise.all(endpoints.map(async (e) => ({ id: e.id, scrape: await this.scrape(e.url).catch(() => null) })));
    const current = new Map<number, BrokerScrape>();
    const failed: number[] = [];
    for (const { id, scrape } of scraped) {
      if (scrape === null) failed.push(id);
      else current.set(id, scrape);
    }
    this.lastUnanswered = failed;
    this.unansweredTotal += failed.length;
    const sample = sampleBetween(current, this.previous, this.options.capacities);
    // A broker that failed keeps its last scrape, so its next answer still spans a window.
    if (this.previous !== null) for (const id of failed) {
      const kept = this.previous.get(id);
      if (kept !== undefined) current.set(id, kept);
    }
    this.previous = current;
    return sample;
  }

  private async scrape(url: string): Promise<BrokerScrape> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const authorization = this.options.authorization;
    const res = await this.fetchImpl(url, { signal, headers: authorization === undefined ? {} : { authorization } });
    if (!res.ok) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${url}: HTTP ${res.status}`);
    const text = await boundedText(res, MAX_METRICS_BYTES);
    return scrapeOf(parsePrometheusText(text), this.now());
  }
}
