// Per-IP connection bounds of the Kafka listener (main thread): Kafka's max.connections.per.ip
// (with max.connections.per.ip.overrides) and max.connection.creation.rate, which Kafka applies
// per listener and which is applied here per listener and per IP; an IP's own rate may be set apart
// (KIP-612's ip quotas: `ipRate`, the address's quota, else the <default> ip's, else the listener's).
// The rate is a generic cell rate (GCRA): one connection per 1/rate s, with a burst of one
// second's worth. As Kafka's acceptor does, a connection beyond the rate is delayed, not refused,
// until its slot comes (a refused client reconnects after its backoff and would come back at once,
// the churn the limit is there to damp); only one whose slot is more than maxThrottleMs away is
// refused, so delayed connections are bounded by rate x maxThrottleMs per IP and per listener.
// Brokers' replica fetchers never reach here (the listener admits them by their first request),
// so a client storm from their own IP (loopback) cannot lock them out.
// The IP table is bounded: an IP is forgotten once it has no connection and no future slot
// reserved; when maxTrackedIps are held the oldest IP without connections is evicted, and with none
// such a new IP is refused. An evicted IP's next slot stays as the first slot of every IP the table
// does not hold (the evicted one may be back at once): no IP beats its rate by being forgotten, and
// while the table is full of IPs with slots ahead, a new IP waits at most that long. Pure; `now` is
// passed in (ms).

/** How long a connection beyond the creation rate may wait for its slot before it is refused instead. */
export const MAX_CONNECTION_THROTTLE_MS = 1000;

export interface ConnectionQuotaOptions {
  /** Kafka's max.connections.per.ip. */
  readonly maxPerIp: number;
  /** Kafka's max.connections.per.ip.overrides: a cap per IP address. */
  readonly overrides: ReadonlyMap<string, number>;
  /** Kafka's max.connection.creation.rate, per second, for the listener and for each IP without an ip quota. */
  readonly creationRate: number;
  /** An IP's connection_creation_rate quota (per second), read at each connection; undefined: none, the creation rate applies. */
  readonly ipRate?: (ip: string) => number | undefined;
  /** A connection whose slot is further away than this is refused rather than delayed. */
  readonly maxThrottleMs: number;
  readonly maxTrackedIps: number;
}

export type RefusalReason = 'per-ip-cap' | 'creation-rate' | 'ip-table-full';

export type Admission =
  | { readonly kind: 'admit'; readonly delayMs: number }
  | { readonly kind: 'refuse'; readonly reason: RefusalReason };

interface IpState {
  open: number;
  /** Theoretical arrival time of the next conforming connection (GCRA). */
  tat: number;
}

/** A burst of one second's worth: Kafka measures the rate over a one-second quota window. */
function burstToleranceMs(intervalMs: number): number {
  return Math.max(0, 1000 - intervalMs);
}

export class ConnectionQuotas {
  private readonly ips = new Map<string, IpState>();
  private listenerTat = Number.NEGATIVE_INFINITY;
  /** The latest next slot of an IP evicted with slots ahead: where an IP the table does not hold starts. */
  private forgottenTat = Number.NEGATIVE_INFINITY;
  /** Time between connections at the rate, and how far ahead of it a burst may run. */
  private readonly intervalMs: number;
  private readonly toleranceMs: number;

  constructor(private readonly opts: ConnectionQuotaOptions) {
    if (!(opts.creationRate > 0) || !(opts.maxPerIp >= 1) || !(opts.maxThrottleMs >= 0) || !(opts.maxTrackedIps >= 1)) {
      throw new RangeError('ConnectionQuotas: creationRate > 0, maxPerIp >= 1, maxThrottleMs >= 0 and maxTrackedIps >= 1');
    }
    this.intervalMs = 1000 / opts.creationRate;
    this.toleranceMs = burstToleranceMs(this.intervalMs);
  }

  /** Connections from `ip` counted open. */
  openFrom(ip: string): number {
    return this.ips.get(ip)?.open ?? 0;
  }

  get trackedIps(): number {
    return this.ips.size;
  }

  capOf(ip: string): number {
    return this.opts.overrides.get(ip) ?? this.opts.maxPerIp;
  }

  /** Decides a new client connection from `ip`; an admitted one counts as open until release(ip). */
  admit(ip: string, now: number): Admission {
    let state = this.ips.get(ip);
    if (state === undefined) {
      if (!this.makeRoom(now)) return { kind: 'refuse', reason: 'ip-table-full' };
      state = { open: 0, tat: this.forgottenTat };
    }
    if (state.open >= this.capOf(ip)) return { kind: 'refuse', reason: 'per-ip-cap' };
    const ipRate = this.opts.ipRate?.(ip);
    const ipInterval = ipRate === undefined ? this.intervalMs : 1000 / ipRate;
    const delayMs = Math.max(0, this.listenerTat - this.toleranceMs - now, state.tat - burstToleranceMs(ipInterval) - now);
    if (delayMs > this.opts.maxThrottleMs) return { kind: 'refuse', reason: 'creation-rate' };
    this.listenerTat = Math.max(this.listenerTat, now) + this.intervalMs;
    state.tat = Math.max(state.tat, now) + ipInterval;
    state.open++;
    // Re-inserted last: the map's order is the order IPs last connected (eviction takes the first).
    this.ips.delete(ip);
    this.ips.set(ip, state);
    return { kind: 'admit', delayMs };
  }

  release(ip: string, now: number): void {
    const state = this.ips.get(ip);
    if (state === undefined || state.open === 0) throw new Error(`no connection from ${ip} is counted open`);
    state.open--;
    if (state.open === 0 && state.tat <= now) this.ips.delete(ip);
  }

  /** Whether a new IP fits, forgetting or evicting idle ones when the table is full. */
  private makeRoom(now: number): boolean {
    if (this.ips.size < this.opts.maxTrackedIps) return true;
    let oldestIdle: string | null = null;
    let oldestIdleTat = 0;
    for (const [ip, s] of this.ips) {
      if (s.open > 0) continue;
      if (s.tat <= now) this.ips.delete(ip);
      else if (oldestIdle === null) {
        oldestIdle = ip;
        oldestIdleTat = s.tat;
      }
    }
    if (this.ips.size < this.opts.maxTrackedIps) return true;
    if (oldestIdle === null) return false;
    this.forgottenTat = Math.max(this.forgottenTat, oldestIdleTat);
    this.ips.delete(oldestIdle);
    return true;
  }
}
