// The dynamic replication throttle of a reassignment (DESIGN §7, expansion research §1.3 and
// goal 5): from each broker's CPU, NIC and disk utilisation it recomputes the KIP-73 rate the
// broker may spend on moving replicas, so that every resource stays under its target while at
// least `headroomShare` (≥ 0.8) of the room left below the target goes to the copy. Per-link caps
// (same rack, same AZ, cross AZ) bound each copy stream as well. Pure; any thread. The executor
// calls it at most every `intervalMs` (≤ 5 s) with the latest sample.
//
// The rate model: a broker's rate bounds all its copy traffic, sent and received together. A
// resource r of a broker has a capacity C_r in replication bytes/s (NIC bandwidth per direction,
// disk bandwidth, and for CPU the replication bytes/s that would use all of it), a measured
// utilisation u_r (all traffic, the copy included; the NIC's is its busier direction's) and a
// target t_r. Replication costs at most rate_now / C_r of r, so the copy may grow to
//     allowance_r = rate_now + share · (t_r − u_r) · C_r
// and the broker's rate is the least allowance over CPU, NIC and disk (a negative headroom makes
// it fall below what flows now: the throttle backs off), clamped to [minRate, maxRate].
//
// Link types: two brokers share a link of type `same-rack` when their racks are equal, `same-az`
// when the racks differ but their AZs are equal, `cross-az` otherwise. A rack's AZ is
// `azByRack[rack]` when the option maps it, else the part of the rack name before its first '/'
// ("use1-az1/r7" is in AZ "use1-az1"), else the rack itself. A broker without a rack shares
// `same-rack` with another rackless broker (a cluster with no racks) and `cross-az` with any
// other (nothing says it is near). A broker's rate is at most the sum over its copy streams of
// the cap of each stream's link type, since a KIP-73 rate is per broker, not per stream.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

export type LinkType = 'same-rack' | 'same-az' | 'cross-az';

export interface ThrottleTargets {
  /** Utilisations (0..1) the throttle keeps each broker under, e.g. NIC 0.7. */
  readonly cpu: number;
  readonly nic: number;
  readonly disk: number;
}

export interface ThrottleOptions {
  readonly targets: ThrottleTargets;
  /** The share of the headroom below the targets given to the copy; at least 0.8. */
  readonly headroomShare: number;
  /** KIP-73 rates are at least 1 KB/s; a rate never drops under this. */
  readonly minBytesPerSec: number;
  readonly maxBytesPerSec: number;
  /** The rate before the first utilisation sample. */
  readonly initialBytesPerSec: number;
  /** How often the executor recomputes the rate; at most 5 s. */
  readonly intervalMs: number;
  /** Bytes/s one copy stream may use on a link of each type. */
  readonly linkCaps: Readonly<Record<LinkType, number>>;
  /** Racks' AZs where the rack name does not carry it before a '/'. */
  readonly azByRack: Readonly<Record<string, string>>;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  targets: { cpu: 0.7, nic: 0.7, disk: 0.8 },
  headroomShare: 0.8,
  minBytesPerSec: 1024,
  maxBytesPerSec: 2 * 1024 ** 3,
  initialBytesPerSec: 10 * 1024 ** 2,
  intervalMs: 5000,
  linkCaps: { 'same-rack': 1024 ** 3, 'same-az': 512 * 1024 ** 2, 'cross-az': 128 * 1024 ** 2 },
  azByRack: {},
};

/** One broker's utilisation, as a sample reports it. */
export interface BrokerUsage {
  readonly id: number;
  /** Utilisation 0..1 of all traffic, the replication copy included. */
  readonly cpu: number;
  readonly nic: number;
  readonly disk: number;
  /** Capacities in replication bytes/s (CPU: the copy rate that would use all of it). */
  readonly cpuBytesPerSec: number;
  readonly nicBytesPerSec: number;
  readonly diskBytesPerSec: number;
  /** Throttled copy traffic through the broker now (in plus out), part of the utilisations. */
  readonly replicationBytesPerSec: number;
}

/** Rejects options outside the bounds the design promises (share ≥ 0.8, interval ≤ 5 s). */
export function checkThrottleOptions(o: ThrottleOptions): void {
  const bad = (what: string): never => {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `throttle: ${what}`);
  };
  if (!(o.headroomShare >= 0.8 && o.headroomShare <= 1)) bad('headroomShare must be in [0.8, 1]');
  if (!(o.intervalMs > 0 && o.intervalMs <= 5000)) bad('intervalMs must be in (0, 5000]');
  if (!(o.minBytesPerSec >= 1024 && o.maxBytesPerSec >= o.minBytesPerSec)) bad('need 1024 ≤ minBytesPerSec ≤ maxBytesPerSec');
  for (const t of [o.targets.cpu, o.targets.nic, o.targets.disk]) if (!(t > 0 && t <= 1)) bad('targets must be in (0, 1]');
  for (const c of Object.values(o.linkCaps)) if (!(c >= o.minBytesPerSec)) bad('link caps must be at least minBytesPerSec');
}

/** The AZ of a rack (see the file's head). */
export function azOf(rack: string, azByRack: Readonly<Record<string, string>>): string {
  const mapped = azByRack[rack];
  if (mapped !== undefined) return mapped;
  const slash = rack.indexOf('/');
  return slash > 0 ? rack.slice(0, slash) : rack;
}

export function linkType(a: string | null, b: string | null, azByRack: Readonly<Record<string, string>>): LinkType {
  if (a === null || b === null) return a === b ? 'same-rack' : 'cross-az';
  if (a === b) return 'same-rack';
  return azOf(a, azByRack) === azOf(b, azByRack) ? 'same-az' : 'cross-az';
}

/**
 * The copy rate a broker may use given its utilisation: the least allowance over its resources,
 * clamped to the options' bounds and to `linkCapBytesPerSec` (the sum of its streams' link caps;
 * Infinity when none bind).
 */
export function brokerRate(u: BrokerUsage, o: ThrottleOptions, linkCapBytesPerSec = Infinity): number {
  const allowance = (used: number, target: number, capacity: number): number =>
    u.replicationBytesPerSec + o.headroomShare * (target - used) * capacity;
  const raw = Math.min(
    allowance(u.cpu, o.targets.cpu, u.cpuBytesPerSec),
    allowance(u.nic, o.targets.nic, u.nicBytesPerSec),
    allowance(u.disk, o.targets.disk, u.diskBytesPerSec),
    linkCapBytesPerSec,
    o.maxBytesPerSec,
  );
  // Whole KiB: a rate that wobbles by a few bytes would rewrite the config at every pass.
  return Math.max(o.minBytesPerSec, Math.floor(raw / 1024) * 1024);
}

/** One copy stream: the leader it reads from and the broker it fills. */
export interface CopyStream {
  readonly from: number;
  readonly to: number;
}

/**
 * Every involved broker's rate: from its utilisation where the sample has it (else the initial
 * rate), capped by the link caps of the streams it sends or receives. Sorted by broker id.
 */
export function throttleRates(
  streams: readonly CopyStream[],
  racks: ReadonlyMap<number, string | null>,
  usage: ReadonlyMap<number, BrokerUsage>,
  o: ThrottleOptions,
): Map<number, number> {
  const caps = new Map<number, number>();
  for (const s of streams) {
    const cap = o.linkCaps[linkType(racks.get(s.from) ?? null, racks.get(s.to) ?? null, o.azByRack)];
    caps.set(s.from, (caps.get(s.from) ?? 0) + cap);
    caps.set(s.to, (caps.get(s.to) ?? 0) + cap);
  }
  const rates = new Map<number, number>();
  for (const id of [...caps.keys()].sort((a, b) => a - b)) {
    const cap = caps.get(id) ?? Infinity;
    const u = usage.get(id);
    rates.set(id, u === undefined ? Math.max(o.minBytesPerSec, Math.min(o.initialBytesPerSec, cap)) : brokerRate(u, o, cap));
  }
  return rates;
}
