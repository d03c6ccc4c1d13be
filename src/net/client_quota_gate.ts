// The connection layer's side of client quotas (main thread): which request counts against which
// quota, what it is charged, and the throttle time KIP-219 answers (the connection then mutes
// itself for as long). Produce counts its request bytes against producer_byte_rate, a consumer's
// Fetch its response bytes against consumer_byte_rate, and every request its serving time against
// request_percentage: the time its handler ran synchronously on the main thread plus the encoding
// of its response (not the time it waited for a shard, the disk or a long poll, which is not the
// broker's work for it). Exempt, as in Kafka: other brokers' replica fetches (a Fetch with a
// replica id, from a principal with CLUSTER_ACTION on the cluster: one without it is refused and
// charged as a consumer's) and what a client must send before it can be throttled (ApiVersions,
// the SASL APIs).
// With no quota configured the connection asks `active` once per request and nothing else.
import type { ClientQuotaKey, ClientQuotas } from '../coordinator/client_quotas.js';
import { permitsReplication, type ConnectionAuthorizer } from './acl_authority.js';
import type { BrokerMetrics } from '../metrics/metrics.js';
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import { FetchApi, type FetchRequest } from '../protocol/apis/fetch.js';
import { ProduceApi } from '../protocol/apis/produce.js';
import { SaslAuthenticateApi, SaslHandshakeApi } from '../protocol/apis/sasl.js';

/** What a request is charged against: its byte-rate quota, if any, besides request time. */
export type QuotaCharge = 'produce' | 'fetch' | 'request';

const EXEMPT_APIS: ReadonlySet<number> = new Set([ApiVersionsApi.key, SaslHandshakeApi.key, SaslAuthenticateApi.key]);

const BYTE_QUOTA: Readonly<Record<'produce' | 'fetch', ClientQuotaKey>> = { produce: 'producer_byte_rate', fetch: 'consumer_byte_rate' };

/** Whether a Fetch comes from another broker's replica fetcher (a consumer's has replica id -1). */
function isReplicaFetch(version: number, req: FetchRequest): boolean {
  return (version >= 15 ? req.replicaState.replicaId : req.replicaId) >= 0;
}

export class QuotaGate {
  constructor(
    private readonly quotas: ClientQuotas,
    private readonly metrics: Pick<BrokerMetrics, 'quotaThrottled'>,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Whether any quota is configured (constant time). */
  get active(): boolean {
    return this.quotas.active;
  }

  /** What a decoded request from a connection with `authorizer` (null: ACLs not enforced) is charged against; null: exempt. */
  chargeOf(apiKey: number, version: number, req: unknown, authorizer: ConnectionAuthorizer | null): QuotaCharge | null {
    if (EXEMPT_APIS.has(apiKey)) return null;
    if (apiKey === ProduceApi.key) return 'produce';
    if (apiKey === FetchApi.key) return isReplicaFetch(version, req as FetchRequest) && permitsReplication(authorizer) ? null : 'fetch';
    return 'request';
  }

  /**
   * Charges a served request: `bytes` (Produce: the request's, Fetch: the response's) against
   * its byte-rate quota and `serveMs` against the request quota. Answers the throttle time, the
   * longer of the two as Kafka answers it, and counts it.
   */
  charge(charge: QuotaCharge, user: string, clientId: string, bytes: number, serveMs: number): number {
    const now = this.clock();
    const byBytes = charge === 'request' ? 0 : this.quotas.record(BYTE_QUOTA[charge], user, clientId, bytes, now);
    const byTime = this.quotas.record('request_percentage', user, clientId, serveMs, now);
    const throttleMs = Math.max(byBytes, byTime);
    if (throttleMs > 0) this.metrics.quotaThrottled(byBytes >= byTime ? charge : 'request', throttleMs);
    return throttleMs;
  }
}
